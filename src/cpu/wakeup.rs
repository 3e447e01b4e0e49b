//! What waking a process on another CPU costs on this machine: the same one-byte
//! ping-pong over a Unix socket pair, with both threads pinned to one CPU and then
//! to two, in alternating rounds. The difference per round trip is what the
//! scheduler's placement adds to every request when client and server run apart
//! (two wakeups across CPUs, and the idle CPU coming back). On a virtual machine it
//! is often tens of microseconds, far more than a transport changes; the verdict
//! says so where it is. A measuring command runs it once, after its first
//! experiment, where nothing is timed.

use super::affinity;
use crate::stats::{Difference, Mean};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A round trip with client and server on one CPU and on two, and what two
/// adds, each with its 95% interval over the rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Wakeup {
    /// Both pinned to one CPU, ns per round trip.
    pub same_ns: Mean,
    /// Pinned to two CPUs, ns per round trip.
    pub split_ns: Mean,
    /// `split − same`, round by round: what running apart adds to a round trip.
    pub across_ns: Difference,
}

/// Alternating rounds: Student's t with 5 degrees of freedom.
const ROUNDS: usize = 6;
/// Each round's ping-pong stops at this many round trips or after this long.
const MOST_TRIPS: u32 = 20_000;
const ROUND_TIME: Duration = Duration::from_millis(40);
/// Round trips run first and not timed, so that both threads are running and
/// placed before the clock starts.
const WARMUP_TRIPS: u32 = 200;

/// Measures it on the first two CPUs this process may use (about half a
/// second); `None` with fewer than two, or where a thread cannot be pinned.
pub fn measure() -> Option<Wakeup> {
    let cpus = affinity::allowed();
    let (&a, &b) = (cpus.first()?, cpus.get(1)?);
    let mut same = Vec::with_capacity(ROUNDS);
    let mut split = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        // Which placement goes first alternates, so that a drift in the machine
        // lands on both.
        for apart in [round % 2 == 1, round % 2 == 0] {
            let ns = round_trip_ns(a, if apart { b } else { a })?;
            if apart {
                split.push(ns);
            } else {
                same.push(ns);
            }
        }
    }
    Some(Wakeup {
        same_ns: Mean::of(&same)?,
        split_ns: Mean::of(&split)?,
        across_ns: Difference::paired(&same, &split)?,
    })
}

/// The mean round trip of a one-byte ping-pong, the pinging thread on CPU
/// `client`, the answering one on `server`.
fn round_trip_ns(client: usize, server: usize) -> Option<f64> {
    let (mut ping, mut pong) = UnixStream::pair().ok()?;
    let answering = std::thread::spawn(move || -> Option<()> {
        affinity::pin(0, &[server]).ok()?;
        let mut byte = [0u8; 1];
        // Ends when the pinging side closes its end.
        while pong.read(&mut byte).ok()? == 1 {
            pong.write_all(&byte).ok()?;
        }
        Some(())
    });
    let timed = std::thread::spawn(move || -> Option<f64> {
        affinity::pin(0, &[client]).ok()?;
        let mut byte = [0u8; 1];
        let mut trip = |s: &mut UnixStream| -> Option<()> {
            s.write_all(&byte).ok()?;
            s.read_exact(&mut byte).ok()
        };
        for _ in 0..WARMUP_TRIPS {
            trip(&mut ping)?;
        }
        let start = Instant::now();
        let mut trips = 0u32;
        while trips < MOST_TRIPS {
            trip(&mut ping)?;
            trips += 1;
            if trips % 64 == 0 && start.elapsed() > ROUND_TIME {
                break;
            }
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(trips);
        drop(ping);
        Some(ns)
    });
    let ns = timed.join().ok()?;
    answering.join().ok()??;
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_give_both_placements_and_their_difference() {
        if affinity::allowed().len() < 2 {
            eprintln!("skipped: this process may use only one CPU");
            return;
        }
        let w = measure().expect("measured on two CPUs");
        assert!(
            w.same_ns.estimate > 0.0 && w.split_ns.estimate > 0.0,
            "{w:?}"
        );
        let d = w.split_ns.estimate - w.same_ns.estimate;
        assert!(
            (w.across_ns.estimate - d).abs() < 1e-6 * d.abs().max(1.0),
            "{w:?}"
        );
        // The calling thread's CPUs are untouched.
        assert_eq!(affinity::cpus_of(0).unwrap(), affinity::allowed());
    }
}
