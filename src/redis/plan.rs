//! Turns the raw `redis` arguments into a validated plan, before anything starts.

use super::args::RedisArgs;
use super::keys::*;
use super::url::{self, UserUrl};
use super::Experiment;
use crate::cpu::affinity::Placement;
use crate::cpu::{Meter, COUNTING_SHARE};
use crate::error::usage;
use crate::harness::Rounds;
use crate::plan::{distinct, DEFAULT_TRANSPORTS};
use crate::results::Params;
use crate::transport::Transport;
use crate::units::{format_size, parse_size};
use anyhow::Result;
use std::time::Duration;

const DEFAULT_SIZES: [u64; 3] = [64, 4 << 10, 64 << 10];
const MAX_SIZE: u64 = 1 << 20;
const DEFAULT_DEPTH: u32 = 16;
const MAX_DEPTH: u32 = 1_024;
const DEFAULT_CLIENTS: u32 = 50;
const MAX_CLIENTS: u32 = 1_024;

/// What a connect trial spends besides its timed loop: 20 untimed connections.
const CONNECT_AROUND: Duration = Duration::from_millis(50);
/// Connecting one client of a concurrent trial (a TLS handshake over tls) and its
/// untimed requests.
const CLIENT_START: Duration = Duration::from_millis(2);

/// Where the server comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A throwaway `redis-server` on these transports.
    Throwaway(Vec<Transport>),
    /// The user's servers.
    User(Vec<UserUrl>),
}

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub round_trips: Duration,
    pub connect: Duration,
    pub concurrent: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        round_trips: Duration::from_millis(500),
        connect: Duration::from_millis(1_000),
        concurrent: Duration::from_millis(1_000),
    };
    pub const QUICK: Budget = Budget {
        round_trips: Duration::from_millis(60),
        connect: Duration::from_millis(100),
        concurrent: Duration::from_millis(125),
    };

    /// This budget, or for a counting trial's `meter` its share of it.
    pub fn for_trial(&self, meter: &Meter) -> Budget {
        if !meter.counting() {
            return *self;
        }
        Budget {
            round_trips: self.round_trips / COUNTING_SHARE,
            connect: self.connect / COUNTING_SHARE,
            concurrent: self.concurrent / COUNTING_SHARE,
        }
    }
}

/// A validated `redis` run.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisPlan {
    pub source: Source,
    pub experiments: Vec<Experiment>,
    pub rounds: Rounds,
    pub placements: Vec<Placement>,
    pub sizes: Vec<u64>,
    pub depth: u32,
    pub clients: u32,
    pub budget: Budget,
}

impl RedisPlan {
    pub fn from_args(args: &RedisArgs) -> Result<RedisPlan> {
        let source = match (&args.transports, args.urls.is_empty()) {
            (Some(_), false) => {
                return Err(usage(
                    "--transports and --url do not go together; each --url is measured over \
                     the transport it names",
                ))
            }
            (_, false) => Source::User(urls(&args.urls)?),
            (Some(list), true) => {
                let transports = distinct("--transports", list)?;
                super::FAMILY.check_transports(&transports).map_err(usage)?;
                Source::Throwaway(crate::plan::buildable("redis", transports)?)
            }
            (None, true) => Source::Throwaway(DEFAULT_TRANSPORTS.to_vec()),
        };
        let experiments = args.experiments.as_deref().unwrap_or(&Experiment::ALL);
        if experiments.is_empty() {
            return Err(usage(
                "--experiments is empty; name at least one experiment",
            ));
        }
        let depth = bounded("-P/--pipeline", args.pipeline, DEFAULT_DEPTH, MAX_DEPTH)?;
        let clients = bounded("-c/--clients", args.clients, DEFAULT_CLIENTS, MAX_CLIENTS)?;
        if experiments.contains(&Experiment::Concurrent) {
            crate::plan::check_open_files("-c/--clients", u64::from(clients))?;
        }
        let placements = crate::plan::placements(
            &args.measuring.placement,
            if args.urls.is_empty() {
                Placement::Same
            } else {
                Placement::Free
            },
        )?;
        Ok(RedisPlan {
            source,
            experiments: distinct("--experiments", experiments)?,
            rounds: crate::plan::rounds(args.measuring.trials, args.measuring.quick)?,
            placements,
            sizes: match &args.sizes {
                Some(texts) => sizes(texts)?,
                None => DEFAULT_SIZES.to_vec(),
            },
            depth,
            clients,
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
        crate::harness::estimate::Timing {
            rounds: self.rounds,
            trial: match experiment {
                Experiment::Ping | Experiment::Get | Experiment::Pipeline => b.round_trips,
                Experiment::Connect => b.connect,
                Experiment::Concurrent => b.concurrent,
            },
            around: match experiment {
                Experiment::Connect => CONNECT_AROUND,
                Experiment::Concurrent => CLIENT_START * self.clients,
                _ => Duration::ZERO,
            },
        }
    }

    /// The cases an experiment runs, one table section each.
    pub fn cases(&self, experiment: Experiment) -> Vec<Params> {
        let ms = |d: Duration| d.as_millis() as u64;
        let round_trips = Params::default().with(DURATION_MS, ms(self.budget.round_trips));
        match experiment {
            Experiment::Ping => vec![round_trips],
            Experiment::Get => self
                .sizes
                .iter()
                .map(|&size| round_trips.clone().with(SIZE, size))
                .collect(),
            Experiment::Pipeline => vec![round_trips.with(DEPTH, u64::from(self.depth))],
            Experiment::Connect => {
                vec![Params::default().with(DURATION_MS, ms(self.budget.connect))]
            }
            Experiment::Concurrent => vec![Params::default()
                .with(CLIENTS, u64::from(self.clients))
                .with(DURATION_MS, ms(self.budget.concurrent))],
        }
    }
}

/// Each `--url`, its name told apart from the others'.
fn urls(texts: &[String]) -> Result<Vec<UserUrl>> {
    let urls: Vec<UserUrl> = texts.iter().map(|t| url::parse(t)).collect::<Result<_>>()?;
    for (i, u) in urls.iter().enumerate() {
        if urls[..i].iter().any(|o| o.label == u.label) {
            return Err(usage(format!(
                "two --url are named {}; name them apart with NAME=URL",
                u.label
            )));
        }
    }
    Ok(urls)
}

fn bounded(flag: &str, given: Option<u32>, default: u32, max: u32) -> Result<u32> {
    let n = given.unwrap_or(default);
    if !(1..=max).contains(&n) {
        return Err(usage(format!(
            "{flag} must be between 1 and {max}, not {n}"
        )));
    }
    Ok(n)
}

fn sizes(texts: &[String]) -> Result<Vec<u64>> {
    let sizes = texts
        .iter()
        .map(|t| {
            let size = parse_size(t).map_err(|e| usage(format!("-d/--sizes: {e}")))?;
            if !(1..=MAX_SIZE).contains(&size) {
                return Err(usage(format!(
                    "-d/--sizes: {} is outside 1 B to {}",
                    format_size(size),
                    format_size(MAX_SIZE)
                )));
            }
            Ok(size)
        })
        .collect::<Result<Vec<u64>>>()?;
    distinct("-d/--sizes", &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{FromArgMatches, Parser};

    #[derive(Parser)]
    struct TestCli {
        #[command(flatten)]
        args: RedisArgs,
    }

    fn plan(argv: &[&str]) -> Result<RedisPlan> {
        let cli = TestCli::try_parse_from(std::iter::once("redis").chain(argv.iter().copied()))?;
        let _ = RedisArgs::from_arg_matches;
        RedisPlan::from_args(&cli.args)
    }

    #[test]
    fn defaults_are_redis_benchmarks_and_every_experiment() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.source, Source::Throwaway(DEFAULT_TRANSPORTS.to_vec()));
        assert_eq!(p.experiments, Experiment::ALL);
        assert_eq!((p.depth, p.clients), (16, 50));
        let gets = p.cases(Experiment::Get);
        let sizes: Vec<_> = gets.iter().map(|c| c.get(SIZE)).collect();
        assert_eq!(sizes, [Some(64), Some(4096), Some(65536)]);
        assert_eq!(p.cases(Experiment::Pipeline)[0].get(DEPTH), Some(16));
        assert_eq!(p.cases(Experiment::Concurrent)[0].get(CLIENTS), Some(50));
    }

    #[test]
    fn bad_input_is_refused_in_one_line() {
        for bad in [
            &["-P", "0"][..],
            &["-c", "5000"],
            &["-d", "2MiB"],
            &["-d", "64,64"],
            &["--transports", "unix-abstract"],
            &["--transports", "tcp", "--url", "redis://127.0.0.1"],
            &[
                "--url",
                "a=redis://127.0.0.1",
                "--url",
                "a=redis://127.0.0.1:2",
            ],
            &["--url", "redis://192.0.2.1"],
        ] {
            let e = plan(bad).expect_err(&format!("{bad:?} should be refused"));
            assert_eq!(e.to_string().lines().count(), 1, "{bad:?}: {e}");
        }
    }
}
