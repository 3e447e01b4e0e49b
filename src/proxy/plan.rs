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
/// The largest response the app server gives.
pub const MAX_SIZE: u64 = 1 << 20;
const DEFAULT_WORKERS: u32 = 1;
const MAX_WORKERS: u32 = 64;
/// The hops measured by default: the ones nginx reaches an app server over.
pub const DEFAULT_TRANSPORTS: [Transport; 2] = [Transport::Unix, Transport::Tcp];
/// The keepalive experiment's response size: the hop alone.
pub const KEEPALIVE_SIZE: u64 = 0;

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub requests: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        requests: Duration::from_millis(500),
    };
    pub const QUICK: Budget = Budget {
        requests: Duration::from_millis(60),
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
        Ok(ProxyPlan {
            transports,
            experiments: distinct("--experiments", experiments)?,
            rounds: crate::plan::rounds(args.measuring.trials, args.measuring.quick)?,
            placements: crate::plan::placements(&args.measuring.placement, Placement::Same)?,
            sizes: match &args.sizes {
                Some(texts) => sizes(texts)?,
                None => DEFAULT_SIZES.to_vec(),
            },
            workers,
            budget: if args.measuring.quick {
                Budget::QUICK
            } else {
                Budget::FULL
            },
        })
    }

    /// The rounds of an experiment and how long each of its trials runs.
    pub fn timing(&self, _experiment: Experiment) -> crate::harness::estimate::Timing {
        crate::harness::estimate::Timing {
            rounds: self.rounds,
            trial: self.budget.requests,
            around: Duration::ZERO,
        }
    }

    /// The cases an experiment runs, one table section each.
    pub fn cases(&self, experiment: Experiment) -> Vec<Params> {
        let base = Params::default().with(DURATION_MS, self.budget.requests.as_millis() as u64);
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
    fn defaults_are_unix_and_tcp_every_experiment_and_small_sizes() {
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
    }

    #[test]
    fn bad_input_is_refused_in_one_line() {
        for bad in [
            &["--proxy-workers", "0"][..],
            &["--sizes", "2MiB"],
            &["--sizes", "4KiB,4KiB"],
            &["--transports", "tls"],
            &["--sizes", "lots"],
        ] {
            let e = plan(bad).expect_err(&format!("{bad:?} should be refused"));
            assert_eq!(e.to_string().lines().count(), 1, "{bad:?}: {e}");
        }
    }
}
