//! What every measuring command's plan shares: the arguments every one of them
//! takes, the number of rounds, the default transports. Each family's `plan.rs`
//! turns its raw arguments into a validated plan.
//!
//! Every check that can fail on bad input happens in a plan, before any server
//! starts, so a typo costs one clear line and no waiting.

use crate::cpu::affinity::{self, Placement};
use crate::error::usage;
use crate::harness::Rounds;
use crate::transport::Transport;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// What runs when `--transports` is not given.
pub const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
const MAX_TRIALS: u32 = 1_000;

/// Rounds without `--trials`: at least `min`, then more until settled, at most `max`
/// or `time_factor` times the time of the first `min`.
const DEFAULT_ROUNDS: Rounds = Rounds {
    min: 5,
    max: 20,
    time_factor: 3.0,
};
/// The same with `--quick` (and in `run`), which must stay within two minutes.
const QUICK_ROUNDS: Rounds = Rounds {
    min: 3,
    max: 8,
    time_factor: 1.4,
};

/// The rounds: exactly `--trials N` when given, else until settled.
pub fn rounds(given: Option<u32>, quick: bool) -> Result<Rounds> {
    match given {
        Some(n) if !(1..=MAX_TRIALS).contains(&n) => Err(usage(format!(
            "--trials must be between 1 and {MAX_TRIALS}, not {n}"
        ))),
        Some(n) => Ok(Rounds::fixed(n)),
        None if quick => Ok(QUICK_ROUNDS),
        None => Ok(DEFAULT_ROUNDS),
    }
}

/// The placements to measure, each once, checked against the CPUs this process
/// may use: `free` when none are given.
pub fn placements(given: &[Placement]) -> Result<Vec<Placement>> {
    let placements = if given.is_empty() {
        vec![Placement::Free]
    } else {
        dedup(given)
    };
    for &p in &placements {
        affinity::cpus_for(p, affinity::allowed()).map_err(usage)?;
    }
    Ok(placements)
}

/// `--help`'s account of the rounds.
fn rounds_help() -> String {
    let (d, q) = (DEFAULT_ROUNDS, QUICK_ROUNDS);
    format!(
        "Run exactly N rounds (every measurement once per round, transports in turn). \
         Without it: at least {} rounds, then more until every headline's 95% interval \
         is within ±{:.0}%, at most {} rounds or {}x the time of the first {} \
         (with --quick: {}, {}, {}x); then one counting trial of each with kernel counters \
         (switches, migrations, instructions), whose time is not used. Intervals: {}",
        d.min,
        crate::stats::SETTLED * 100.0,
        d.max,
        d.time_factor,
        d.min,
        q.min,
        q.max,
        q.time_factor,
        crate::stats::INTERVAL_METHOD,
    )
}

/// The items in their first order, each once.
pub fn dedup<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

/// The arguments of every measuring command.
#[derive(Debug, Clone, Default, Args)]
pub struct Measuring {
    /// Rounds of every measurement [default: see `Measuring::with_defaults`].
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Shorter timed loops and smaller batches, and fewer rounds unless --trials is given.
    #[arg(long)]
    pub quick: bool,

    /// Where client and server run: free (as the OS schedules), same (both pinned to
    /// one CPU), split (pinned to two different CPUs). Several make one table each;
    /// the server is pinned with every thread and process it starts (a PostgreSQL
    /// backend through its postmaster) [default: free].
    #[arg(long, value_name = "PLACEMENT", value_delimiter = ',')]
    pub placement: Vec<Placement>,

    /// Write the results to FILE as JSON, updated as each experiment finishes.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No progress bars (they are also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
}

impl Measuring {
    /// The quick suite, as `run` measures it.
    pub fn quick() -> Measuring {
        Measuring {
            quick: true,
            ..Measuring::default()
        }
    }
}

impl Measuring {
    /// A measuring command whose `--help` states the defaults this build uses.
    pub fn with_defaults(command: clap::Command) -> clap::Command {
        command.mut_arg("trials", |a| a.help(rounds_help()))
    }
}
