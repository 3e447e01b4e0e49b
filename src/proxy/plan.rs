//! Turns the raw `proxy` arguments into a validated plan, before anything starts.

use super::args::ProxyArgs;
use super::keys::*;
use super::Experiment;
use crate::cpu::affinity::Placement;
use crate::error::usage;
use crate::harness::Rounds;
use crate::plan::distinct;
use crate::results::Params;
use crate::transport::Transport;
use crate::units::{format_size, parse_size};
use anyhow::Result;
use std::time::Duration;

const DEFAULT_SIZES: [u64; 3] = [0, 4 << 10, 64 << 10];
/// With `--quick`: the small ones, which `sockbench run` measures too.
const QUICK_SIZES: [u64; 2] = [0, 4 << 10];
/// The largest response the app server gives.
pub const MAX_SIZE: u64 = 1 << 20;
const DEFAULT_WORKERS: u32 = 1;
const MAX_WORKERS: u32 = 64;
/// wrk's `-c` when not given, and the Redis family's.
const DEFAULT_CONNECTIONS: u32 = 50;
/// nginx holds two connections per client (its and the upstream's) and every
/// worker may open 4096 (`nginx.rs`).
const MAX_CONNECTIONS: u32 = 1_024;
/// The overrun app server's listen backlog when not given: small enough that 50
/// connections overrun it on a 2-core machine, as php-fpm's 511 is overrun by
/// traffic its few workers cannot keep up with.
const DEFAULT_APP_BACKLOG: u32 = 8;
/// Linux holds a backlog to `net.core.somaxconn`, 4096 by default.
const MAX_APP_BACKLOG: u32 = 4_096;
/// How long nginx's sites in front of the overrun app server wait for a
/// connection to it (`proxy_connect_timeout`): far under the second a dropped SYN
/// waits for its retransmission, so such a request fails within the trial rather
/// than holding it for seconds. (A connection to a backlog with room is made at
/// once, within the connect call, so nothing else waits that long.)
pub const OVERLOAD_CONNECT_TIMEOUT: Duration = Duration::from_millis(50);
/// The hops measured by default: the ones nginx reaches an app server over.
pub const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
/// What `sockbench run` measures of the family (`family.rs`): the hop one request
/// at a time, kept and renewed, what nginx itself costs, and many clients at
/// once. Left for `sockbench proxy`: connect, whose connection to nginx costs the
/// same in every column and says what keepalive already does, and overload, a
/// trap of one configuration (a small backlog) rather than a cost of the hop.
pub const RUN_EXPERIMENTS: [Experiment; 4] = [
    Experiment::Request,
    Experiment::Keepalive,
    Experiment::Direct,
    Experiment::Concurrent,
];
/// The keepalive experiment's response size: the hop alone.
pub const KEEPALIVE_SIZE: u64 = 0;

/// What a connect trial spends besides its timed loop: 20 untimed connections.
const CONNECT_AROUND: Duration = Duration::from_millis(5);
/// What a concurrent trial spends besides its timed loop: its untimed requests
/// (10 ms at most)…
const CONCURRENT_AROUND: Duration = Duration::from_millis(15);
/// …and opening each connection (nginx's upstream connection with it).
const CONNECTION_START: Duration = Duration::from_micros(200);
/// What an overload trial spends besides its timed loop and its connections: its
/// untimed requests and, at its end, the requests still waiting for a connection
/// to the app server ([`OVERLOAD_CONNECT_TIMEOUT`] at most).
const OVERLOAD_AROUND: Duration = Duration::from_millis(65);

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// One request at a time on one connection (request, keepalive, direct).
    pub requests: Duration,
    /// A new connection per request.
    pub connect: Duration,
    /// Many connections at once.
    pub concurrent: Duration,
    /// Many connections at once, the app server overrun.
    pub overload: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        requests: Duration::from_millis(500),
        connect: Duration::from_millis(500),
        concurrent: Duration::from_millis(1_000),
        overload: Duration::from_millis(1_000),
    };
    pub const QUICK: Budget = Budget {
        requests: Duration::from_millis(60),
        connect: Duration::from_millis(40),
        concurrent: Duration::from_millis(60),
        overload: Duration::from_millis(60),
    };
}

/// A validated `proxy` run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyPlan {
    pub transports: Vec<Transport>,
    pub experiments: Vec<Experiment>,
    pub rounds: Rounds,
    pub placements: Vec<Placement>,
    pub sizes: Vec<u64>,
    pub workers: u32,
    /// Connections at once in the concurrent and overload experiments.
    pub connections: u32,
    /// The overrun app server's listen backlog (overload).
    pub app_backlog: u32,
    pub budget: Budget,
}

impl ProxyPlan {
    pub fn from_args(args: &ProxyArgs) -> Result<ProxyPlan> {
        let transports = match &args.transports {
            Some(list) => distinct("--transports", list)?,
            None => DEFAULT_TRANSPORTS.to_vec(),
        };
        super::FAMILY.check_transports(&transports).map_err(usage)?;
        let experiments = args.experiments.as_deref().unwrap_or(&Experiment::ALL);
        if experiments.is_empty() {
            return Err(usage(
                "--experiments is empty; name at least one experiment",
            ));
        }
        let workers = args.workers.unwrap_or(DEFAULT_WORKERS);
        if !(1..=MAX_WORKERS).contains(&workers) {
            return Err(usage(format!(
                "--proxy-workers must be between 1 and {MAX_WORKERS}, not {workers}"
            )));
        }
        let connections = args.connections.unwrap_or(DEFAULT_CONNECTIONS);
        if !(1..=MAX_CONNECTIONS).contains(&connections) {
            return Err(usage(format!(
                "-c/--connections must be between 1 and {MAX_CONNECTIONS}, not {connections}"
            )));
        }
        if experiments.contains(&Experiment::Concurrent)
            || experiments.contains(&Experiment::Overload)
        {
            crate::plan::check_open_files("-c/--connections", u64::from(connections))?;
        }
        let app_backlog = args.app_backlog.unwrap_or(DEFAULT_APP_BACKLOG);
        if !(1..=MAX_APP_BACKLOG).contains(&app_backlog) {
            return Err(usage(format!(
                "--app-backlog must be between 1 and {MAX_APP_BACKLOG}, not {app_backlog}"
            )));
        }
        Ok(ProxyPlan {
            transports,
            experiments: distinct("--experiments", experiments)?,
            rounds: crate::plan::rounds(args.measuring.trials, args.measuring.quick)?,
            placements: crate::plan::placements(&args.measuring.placement, Placement::Same)?,
            sizes: match &args.sizes {
                Some(texts) => sizes(texts)?,
                None if args.measuring.quick => QUICK_SIZES.to_vec(),
                None => DEFAULT_SIZES.to_vec(),
            },
            workers,
            connections,
            app_backlog,
            budget: if args.measuring.quick {
                Budget::QUICK
            } else {
                Budget::FULL
            },
        })
    }

    /// The rounds of an experiment and how long each of its trials runs.
    pub fn timing(&self, experiment: Experiment) -> crate::harness::estimate::Timing {
        let b = &self.budget;
        let (trial, around) = match experiment {
            Experiment::Request | Experiment::Keepalive | Experiment::Direct => {
                (b.requests, Duration::ZERO)
            }
            Experiment::Connect => (b.connect, CONNECT_AROUND),
            Experiment::Concurrent => (
                b.concurrent,
                CONCURRENT_AROUND + CONNECTION_START * self.connections,
            ),
            Experiment::Overload => (
                b.overload,
                OVERLOAD_AROUND + CONNECTION_START * self.connections,
            ),
        };
        crate::harness::estimate::Timing {
            rounds: self.rounds,
            trial,
            around,
        }
    }

    /// The cases an experiment runs, one table section each.
    pub fn cases(&self, experiment: Experiment) -> Vec<Params> {
        let ms = |d: Duration| d.as_millis() as u64;
        let base = Params::default().with(DURATION_MS, ms(self.budget.requests));
        let smallest = self.sizes.iter().copied().min().unwrap_or(0);
        let by_size = || {
            self.sizes
                .iter()
                .map(|&size| base.clone().with(SIZE, size))
                .collect()
        };
        match experiment {
            Experiment::Request | Experiment::Direct => by_size(),
            Experiment::Keepalive => ["on", "off"]
                .into_iter()
                .map(|on| {
                    base.clone()
                        .with(SIZE, KEEPALIVE_SIZE)
                        .with(UPSTREAM_KEEPALIVE, on.to_string())
                })
                .collect(),
            Experiment::Connect => vec![Params::default()
                .with(DURATION_MS, ms(self.budget.connect))
                .with(SIZE, smallest)],
            Experiment::Concurrent => vec![Params::default()
                .with(DURATION_MS, ms(self.budget.concurrent))
                .with(CONNECTIONS, u64::from(self.connections))
                .with(SIZE, smallest)],
            Experiment::Overload => vec![Params::default()
                .with(DURATION_MS, ms(self.budget.overload))
                .with(CONNECTIONS, u64::from(self.connections))
                .with(BACKLOG, u64::from(self.app_backlog))
                .with(CONNECT_TIMEOUT_MS, ms(OVERLOAD_CONNECT_TIMEOUT))
                .with(SIZE, smallest)],
        }
    }
}

fn sizes(texts: &[String]) -> Result<Vec<u64>> {
    let sizes = texts
        .iter()
        .map(|t| {
            let size = parse_size(t).map_err(|e| usage(format!("--sizes: {e}")))?;
            if size > MAX_SIZE {
                return Err(usage(format!(
                    "--sizes: {} is over the app server's largest response, {}",
                    format_size(size),
                    format_size(MAX_SIZE)
                )));
            }
            Ok(size)
        })
        .collect::<Result<Vec<u64>>>()?;
    distinct("--sizes", &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct TestCli {
        #[command(flatten)]
        args: ProxyArgs,
    }

    fn plan(argv: &[&str]) -> Result<ProxyPlan> {
        let cli = TestCli::try_parse_from(std::iter::once("proxy").chain(argv.iter().copied()))?;
        ProxyPlan::from_args(&cli.args)
    }

    #[test]
    fn defaults_are_unix_tcp_and_tls_every_experiment_and_small_sizes() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.transports, DEFAULT_TRANSPORTS);
        assert_eq!(p.experiments, Experiment::ALL);
        assert_eq!(p.workers, 1);
        let sizes: Vec<_> = p
            .cases(Experiment::Request)
            .iter()
            .map(|c| c.get(SIZE))
            .collect();
        assert_eq!(sizes, [Some(0), Some(4096), Some(65536)]);
        let kept: Vec<_> = p
            .cases(Experiment::Keepalive)
            .iter()
            .map(|c| c.get(UPSTREAM_KEEPALIVE))
            .collect();
        assert_eq!(kept, [Some("on".to_string()), Some("off".to_string())]);
        let many = &p.cases(Experiment::Concurrent)[0];
        assert_eq!((many.get(CONNECTIONS), many.get(SIZE)), (Some(50), Some(0)));
        assert_eq!(p.cases(Experiment::Connect)[0].get(SIZE), Some(0));
    }

    #[test]
    fn the_one_size_of_connect_concurrent_and_overload_is_the_smallest_asked() {
        let p = plan(&["--sizes", "64KiB,4KiB", "-c", "7", "--app-backlog", "2"]).unwrap();
        for e in [
            Experiment::Connect,
            Experiment::Concurrent,
            Experiment::Overload,
        ] {
            let cases = p.cases(e);
            assert_eq!(cases.len(), 1, "{e}");
            assert_eq!(cases[0].get(SIZE), Some(4096), "{e}");
        }
        assert_eq!(p.cases(Experiment::Concurrent)[0].get(CONNECTIONS), Some(7));
        let overload = &p.cases(Experiment::Overload)[0];
        assert_eq!(
            (overload.get(CONNECTIONS), overload.get(BACKLOG)),
            (Some(7), Some(2))
        );
        assert_eq!(overload.get(CONNECT_TIMEOUT_MS), Some(50));
    }

    #[test]
    fn bad_input_is_refused_in_one_line() {
        for bad in [
            &["--proxy-workers", "0"][..],
            &["--sizes", "2MiB"],
            &["--sizes", "4KiB,4KiB"],
            &["--transports", "tcp6"],
            &["--sizes", "lots"],
            &["-c", "0"],
            &["-c", "5000"],
            &["--app-backlog", "0"],
            &["--app-backlog", "100000"],
        ] {
            let e = plan(bad).expect_err(&format!("{bad:?} should be refused"));
            assert_eq!(e.to_string().lines().count(), 1, "{bad:?}: {e}");
        }
    }
}
