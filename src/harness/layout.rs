//! Where in its page a trial's stack starts, moved from round to round.
//!
//! A client loop's speed depends on where its stack sits against the buffers it
//! touches (addresses that share their low 12 bits compete for the same cache sets
//! and alias in the CPU's store checks). The kernel starts each process's stack at
//! a random offset, so that placement is drawn once per run and held for all its
//! rounds: rounds cannot see it, and the same ratio moved from run to run beyond
//! its interval (PostgreSQL TLS ÷ TCP per query 1.47 in one run and 1.64 in the
//! next, each ±4%). With address randomization off (`setarch -R`) the runs agreed;
//! with it off and only the environment's size changed (which moves the stack),
//! they disagreed again. So each round runs its trials deeper in the stack by its
//! own amount, the same for every target of the round (their ratio compares like
//! with like), and the rounds together sample the offsets as separate runs would:
//! what differs between runs becomes what differs between rounds, which the
//! interval counts. See `bench/cross-run.sh`.

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;
use std::sync::OnceLock;

/// Offsets are drawn among this many steps of one frame below the caller's stack:
/// frames are multiples of 16 bytes, so 256 of them reach every 16-byte offset in a
/// 4 KiB page when a frame is an odd multiple of 16, and at least every 64-byte
/// (cache line) offset unless a frame is a multiple of 128.
const STEPS: u32 = 256;

/// An odd stride, so that consecutive rounds visit all [`STEPS`] depths before one
/// comes again, spread rather than in order.
const STRIDE: u32 = 97;

/// Runs `work` with the stack `depth(round)` frames deeper than the caller's.
pub fn shifted<R>(round: u32, work: impl FnOnce() -> R) -> R {
    let mut work = Some(work);
    let mut result = None;
    descend(depth(round), &mut || result = work.take().map(|w| w()));
    result.expect("the work ran at the bottom of the descent")
}

/// How many frames deep round `round` runs: a per-process start (so that a machine
/// without address randomization still varies between runs), then [`STRIDE`]
/// steps a round.
fn depth(round: u32) -> u32 {
    static START: OnceLock<u32> = OnceLock::new();
    let start = *START.get_or_init(|| {
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        (random % u64::from(STEPS)) as u32
    });
    start.wrapping_add(round.wrapping_mul(STRIDE)) % STEPS
}

/// `frames` nested calls, then `work`. Each call keeps a frame of its own (a local
/// the optimiser must keep, and work after the inner call so that it is not a
/// tail call).
#[inline(never)]
fn descend(frames: u32, work: &mut dyn FnMut()) {
    let pad = [0u8; 16];
    black_box(&pad);
    if frames == 0 {
        work();
    } else {
        descend(frames - 1, work);
    }
    black_box(&pad);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The address of a local of the work, at `round`.
    fn where_work_runs(round: u32) -> usize {
        shifted(round, || {
            let local = 0u8;
            black_box(&local) as *const u8 as usize
        })
    }

    #[test]
    fn rounds_run_at_many_offsets_in_a_page() {
        let mut offsets: Vec<usize> = (0..STEPS).map(|r| where_work_runs(r) % 4096).collect();
        offsets.sort_unstable();
        offsets.dedup();
        // Every cache line of the page at least, whatever the frame's size.
        let lines: std::collections::BTreeSet<usize> = offsets.iter().map(|o| o / 64).collect();
        assert!(lines.len() >= 32, "{} lines: {offsets:?}", lines.len());
    }

    #[test]
    fn the_same_round_runs_at_the_same_depth_and_results_come_back() {
        assert_eq!(where_work_runs(5), where_work_runs(5));
        assert_ne!(where_work_runs(5), where_work_runs(6));
        assert_eq!(shifted(3, || 42), 42);
    }
}
