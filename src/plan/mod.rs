//! Turns raw command-line arguments into validated plans of trials, one file per
//! command.
//!
//! Every check that can fail on bad input happens here, before any server starts,
//! so a typo costs one clear line and no waiting.

pub mod postgres;
mod sockets;

pub use sockets::{ServerSource, SocketsPlan};

use crate::error::usage;
use crate::transport::Transport;
use anyhow::Result;

/// What runs when `--transports` is not given.
const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
const MAX_TRIALS: u32 = 1_000;
const DEFAULT_TRIALS: u32 = 5;
const QUICK_TRIALS: u32 = 3;

/// The number of trials: as given, else 5, or 3 with `--quick`.
fn trials(given: Option<u32>, quick: bool) -> Result<u32> {
    let trials = given.unwrap_or(if quick { QUICK_TRIALS } else { DEFAULT_TRIALS });
    if !(1..=MAX_TRIALS).contains(&trials) {
        return Err(usage(format!(
            "--trials must be between 1 and {MAX_TRIALS}, not {trials}"
        )));
    }
    Ok(trials)
}

/// The items in their first order, each once.
fn dedup<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}
