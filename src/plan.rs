//! What every measuring command's plan shares: the arguments every one of them
//! takes, the number of rounds, the default transports. Each family's `plan.rs`
//! turns its raw arguments into a validated plan.
//!
//! Every check that can fail on bad input happens in a plan, before any server
//! starts, so a typo costs one clear line and no waiting.

use crate::error::usage;
use crate::transport::Transport;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// What runs when `--transports` is not given.
pub const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
const MAX_TRIALS: u32 = 1_000;
const DEFAULT_TRIALS: u32 = 5;
const QUICK_TRIALS: u32 = 3;

/// The number of trials: as given, else 5, or 3 with `--quick`.
pub fn trials(given: Option<u32>, quick: bool) -> Result<u32> {
    let trials = given.unwrap_or(if quick { QUICK_TRIALS } else { DEFAULT_TRIALS });
    if !(1..=MAX_TRIALS).contains(&trials) {
        return Err(usage(format!(
            "--trials must be between 1 and {MAX_TRIALS}, not {trials}"
        )));
    }
    Ok(trials)
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
    /// Repetitions of every measurement; tables show the median and the range
    /// [default: see `Measuring::with_defaults`].
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Shorter timed loops and smaller batches, and 3 trials unless --trials is given.
    #[arg(long)]
    pub quick: bool,

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
        command.mut_arg("trials", |a| {
            a.help(format!(
                "Repetitions of every measurement; tables show the median and the range \
                 [default: {DEFAULT_TRIALS}, or {QUICK_TRIALS} with --quick]"
            ))
        })
    }
}
