//! `stream`: bytes flowing one way (server to client) in `write_size` writes, read
//! in reads of the same size: bulk transfer throughput. On one connection, or, as
//! iperf3's `-P`, on several at once, each on its own thread, the figure being
//! their total.
//!
//! Every stream connects and warms up first; then the CPU meter starts, and they
//! start together at a barrier. The throughput is all timed bytes over the window
//! from the first stream's start to the last one's end, so a stream that lags does
//! not inflate it.

use super::keys::*;
use super::{ready_for_timing, Target};
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate};
use crate::harness::threads::on_threads_while;
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::Request;
use crate::transport::{closed_by_peer, Conn};
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Bytes received before the clock starts, so buffers and windows have settled.
const WARMUP_BYTES: u64 = 8 << 20;
/// The deadline is checked once per this many reads: a clock read per 4 KiB read
/// would be a measurable share of the loop.
const READS_PER_CLOCK: u32 = 16;

/// One stream's timed part.
struct StreamRun {
    timed: u64,
    start: Instant,
    end: Instant,
}

/// One operation, for the CPU cost, is one `write_size` read. `bytes` bounds each
/// stream, `budget` the time.
pub fn trial(
    target: &Target,
    write_size: u64,
    streams: usize,
    bytes: u64,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    // The streams and this thread: once when all are warm, once to start.
    let warm = Barrier::new(streams + 1);
    let go = Barrier::new(streams + 1);
    let runs = on_threads_while(
        streams,
        |_| stream(target, write_size, bytes, budget, &warm, &go),
        || {
            warm.wait();
            meter.start();
            go.wait();
        },
    )?;
    let timed: u64 = runs.iter().map(|r| r.timed).sum();
    let first = runs.iter().map(|r| r.start).min();
    let last = runs.iter().map(|r| r.end).max();
    let elapsed_ns = match (first, last) {
        (Some(first), Some(last)) => nanos(last - first),
        _ => 0,
    };
    meter.stop(timed / write_size.max(1));

    Ok(Trial {
        metrics: Metrics::default().with(BYTES_PER_S, Some(rate(timed, elapsed_ns))),
        count: timed,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One stream. It always passes both barriers, even when its connection failed,
/// so the other streams and the meter are never left waiting.
fn stream(
    target: &Target,
    write_size: u64,
    bytes: u64,
    budget: Duration,
    warm: &Barrier,
    go: &Barrier,
) -> Result<StreamRun> {
    let prepared = (|| -> Result<_> {
        let mut conn = target.session(Request::Stream {
            write_size: u32::try_from(write_size)?,
            total_bytes: WARMUP_BYTES.saturating_add(bytes),
        })?;
        let mut buf = vec![0u8; usize::try_from(write_size)?];
        let untimed = warm_up(target, &mut conn, &mut buf)?;
        ready_for_timing(&conn)?;
        Ok((conn, buf, untimed))
    })();
    warm.wait();
    go.wait();
    let (mut conn, mut buf, untimed) = prepared?;
    let start = Instant::now();
    let (received, end) = timed_reads(target, &mut conn, &mut buf, untimed, bytes, start + budget)?;
    Ok(StreamRun {
        timed: received - untimed,
        start,
        end,
    })
}

/// Reads [`WARMUP_BYTES`]; returns how far past them the last read went (bytes
/// that are not timed, but count towards the stream's total).
fn warm_up(target: &Target, conn: &mut Conn, buf: &mut [u8]) -> Result<u64> {
    let mut warm = 0u64;
    while warm < WARMUP_BYTES {
        let n = conn
            .read(buf)
            .map_err(closed_by_peer)
            .with_context(|| format!("{} stopped streaming", target.endpoint))?;
        if n == 0 {
            bail!(
                "{} closed the stream early (the socket server exited or was killed)",
                target.endpoint
            );
        }
        warm += n as u64;
    }
    Ok(warm - WARMUP_BYTES)
}

/// The timed loop: reads until `bytes` have come (counting `received` already) or
/// the deadline has passed; returns the bytes received and when it ended.
fn timed_reads(
    target: &Target,
    conn: &mut Conn,
    buf: &mut [u8],
    mut received: u64,
    bytes: u64,
    deadline: Instant,
) -> Result<(u64, Instant)> {
    let mut reads = 0u32;
    while received < bytes {
        let n = conn
            .read(buf)
            .map_err(closed_by_peer)
            .with_context(|| target.endpoint.to_string())?;
        if n == 0 {
            bail!(
                "{} closed the stream early (the socket server exited or was killed)",
                target.endpoint
            );
        }
        received += n as u64;
        reads += 1;
        if reads == READS_PER_CLOCK {
            reads = 0;
            let end = Instant::now();
            if end >= deadline {
                return Ok((received, end));
            }
        }
    }
    Ok((received, Instant::now()))
}
