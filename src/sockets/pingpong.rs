//! `pingpong`: one connection, a `size`-byte request answered by a `size`-byte
//! response, again and again: the round trip a query to a local server pays.

use super::keys::*;
use super::{ready_for_timing, Target};
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::Request;
use crate::stats::Percentiles;
use crate::transport::{closed_by_peer, Conn};
use anyhow::{Context, Result};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// Untimed round trips first: at most this many, for at most [`WARMUP_TIME`].
const WARMUP_ROUND_TRIPS: usize = 1_000;
const WARMUP_TIME: Duration = Duration::from_millis(50);

pub fn trial(target: &Target, size: u64, budget: Duration, meter: &mut Meter) -> Result<Trial> {
    let size = usize::try_from(size)?;
    let mut conn = target.session(Request::PingPong { size: size as u32 })?;
    let mut buf = vec![0xa5u8; size];

    let mut sequence = warm_up(target, &mut conn, &mut buf, WARMUP_ROUND_TRIPS, WARMUP_TIME)?;

    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed_round_trips(&mut conn, &mut buf, &mut sequence, &mut samples, budget)
        .map_err(closed_by_peer)
        .with_context(|| target.endpoint.to_string())?;
    meter.stop(samples.len() as u64);

    let count = samples.len() as u64;
    Ok(Trial {
        metrics: Metrics::default()
            .with(RTT_NS, Percentiles::of(&mut samples))
            .with(OPS_PER_S, Some(rate(count, elapsed_ns))),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// Untimed round trips (at most `round_trips`, for at most `time`), then the
/// connection is made ready for a timed loop; returns the number of the last
/// message, which the timed loop's numbers follow.
pub(super) fn warm_up(
    target: &Target,
    conn: &mut Conn,
    buf: &mut [u8],
    round_trips: usize,
    time: Duration,
) -> Result<u64> {
    let end = Instant::now() + time;
    let mut sequence = 0;
    for _ in 0..round_trips {
        round_trip(conn, buf, &mut sequence)
            .map_err(|e| super::named_timeout(closed_by_peer(e)))
            .with_context(|| format!("{} stopped echoing", target.endpoint))?;
        if Instant::now() >= end {
            break;
        }
    }
    ready_for_timing(conn)?;
    Ok(sequence)
}

/// Round trips of `buf` until `samples` is full or `budget` has passed; one sample
/// per round trip, in nanoseconds. Returns the loop's wall time.
pub(super) fn timed_round_trips(
    conn: &mut Conn,
    buf: &mut [u8],
    sequence: &mut u64,
    samples: &mut Vec<u64>,
    budget: Duration,
) -> io::Result<u64> {
    timed(samples, budget, || round_trip(conn, buf, sequence))
}

/// One round trip of `buf`, numbered: the message carries the next number of
/// `sequence` in its first bytes (as many of its low bytes as fit), and its reply
/// must carry the same. A server that answers a message twice, or with an earlier
/// one, would otherwise be timed by the reply already waiting; as sockperf's
/// messages do, every reply is checked (a store and a compare of at most 8 bytes).
#[inline]
fn round_trip(conn: &mut Conn, buf: &mut [u8], sequence: &mut u64) -> io::Result<()> {
    *sequence += 1;
    let number = sequence.to_le_bytes();
    let marked = buf.len().min(number.len());
    buf[..marked].copy_from_slice(&number[..marked]);
    conn.write_all(buf)?;
    conn.read_message(buf)?;
    if buf[..marked] != number[..marked] {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the reply to message {sequence} was not its own (it carried another                  message's number): the server answers out of step, twice or late, so the                  trial is refused"
            ),
        ));
    }
    Ok(())
}
