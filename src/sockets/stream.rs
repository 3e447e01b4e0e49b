//! `stream`: one connection, bytes flowing one way (server to client) in
//! `write_size` writes, read in reads of the same size: bulk transfer throughput.

use super::{ready_for_timing, Target};
use crate::cpu::Meter;
use crate::harness::measure::nanos;
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::Request;
use crate::transport::closed_by_peer;
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::time::{Duration, Instant};

/// Bytes received before the clock starts, so buffers and windows have settled.
const WARMUP_BYTES: u64 = 8 << 20;
/// The deadline is checked once per this many reads: a clock read per 4 KiB read
/// would be a measurable share of the loop.
const READS_PER_CLOCK: u32 = 16;

/// One operation, for the CPU cost, is one `write_size` read.
pub fn trial(
    target: &Target,
    write_size: u64,
    bytes: u64,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let mut conn = target.session(Request::Stream {
        write_size: u32::try_from(write_size)?,
        total_bytes: WARMUP_BYTES + bytes,
    })?;
    let mut buf = vec![0u8; usize::try_from(write_size)?];

    let mut warm = 0u64;
    while warm < WARMUP_BYTES {
        let n = conn
            .read(&mut buf)
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
    // The warm-up may have read a little past its share: those bytes are not timed.
    let untimed = warm - WARMUP_BYTES;
    let mut received = untimed;

    ready_for_timing(&conn)?;

    meter.start();
    let start = Instant::now();
    let deadline = start + budget;
    let mut reads = 0u32;
    let mut end = start;
    while received < bytes {
        let n = conn
            .read(&mut buf)
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
            end = Instant::now();
            if end >= deadline {
                break;
            }
        }
    }
    if received >= bytes {
        end = Instant::now();
    }
    let elapsed_ns = nanos(end - start);
    let timed = received - untimed;
    meter.stop(timed / write_size.max(1));

    Ok(Trial {
        metrics: Metrics {
            bytes_per_s: Some(crate::harness::measure::rate(timed, elapsed_ns)),
            ..Metrics::default()
        },
        count: timed,
        elapsed_ns,
        ..Trial::default()
    })
}
