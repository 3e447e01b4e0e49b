//! `pingpong`: one connection, a `size`-byte request answered by a `size`-byte
//! response, again and again: the round trip a query to a local server pays.

use super::{nanos, rate, sample_capacity, Target};
use crate::results::{Metrics, Trial};
use crate::server::protocol::Request;
use crate::stats::Percentiles;
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Untimed round trips first: at most this many, for at most [`WARMUP_TIME`].
const WARMUP_ROUND_TRIPS: usize = 1_000;
const WARMUP_TIME: Duration = Duration::from_millis(50);

pub fn trial(target: &Target, size: u64, budget: Duration) -> Result<Trial> {
    let size = usize::try_from(size)?;
    let mut conn = target.session(Request::PingPong { size: size as u32 })?;
    let mut buf = vec![0xa5u8; size];

    let warmup_end = Instant::now() + WARMUP_TIME;
    for _ in 0..WARMUP_ROUND_TRIPS {
        conn.write_all(&buf)?;
        conn.read_exact(&mut buf)
            .with_context(|| format!("{} stopped echoing", target.endpoint))?;
        if Instant::now() >= warmup_end {
            break;
        }
    }

    // A receive timeout arms a kernel timer on every blocking read, which would be
    // measured; the warm-up has shown the server answers, and a server that dies
    // still ends the loop, because its socket closes.
    conn.set_read_timeout(None)?;

    let capacity = sample_capacity(budget);
    let mut samples = Vec::with_capacity(capacity);
    let start = Instant::now();
    let deadline = start + budget;
    let mut prev = start;
    while samples.len() < capacity {
        conn.write_all(&buf)?;
        conn.read_exact(&mut buf)?;
        let now = Instant::now();
        samples.push(nanos(now - prev));
        prev = now;
        if now >= deadline {
            break;
        }
    }
    let elapsed_ns = nanos(prev - start);

    let count = samples.len() as u64;
    Ok(Trial {
        metrics: Metrics {
            rtt_ns: Percentiles::of(&mut samples),
            ops_per_s: Some(rate(count, elapsed_ns)),
            ..Metrics::default()
        },
        count,
        elapsed_ns,
        ..Trial::default()
    })
}
