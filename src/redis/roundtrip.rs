//! `ping`, `get` and `pipeline`: one connection, one request (or a pipeline of
//! them) answered again and again: the round trip an application pays per command
//! to a local Redis.

use super::keys::*;
use super::resp::{Encoded, Expect, RedisConn};
use super::target::Target;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use anyhow::{Context, Result};
use std::time::{Duration, Instant};

/// Untimed requests first: at most this many, for at most [`WARMUP_TIME`] (the
/// server is warm from the trials before; the connection and the caches are not).
const WARMUP_REQUESTS: usize = 500;
const WARMUP_TIME: Duration = Duration::from_millis(20);
/// How long the key a GET reads lives on the server, so that none stays behind on a
/// user's server: ten minutes.
const KEY_LIFETIME_MS: &str = "600000";

/// What one request is: its command, how many it pipelines, its expected reply.
pub struct Exchange {
    pub request: Encoded,
    pub expect: Expect,
    /// The largest reply, for the client's buffer.
    pub reply_bytes: usize,
    /// The pipeline experiment (at any depth, 1 included): its headline is the time
    /// per command.
    pub pipelined: bool,
}

impl Exchange {
    /// `PING`.
    pub fn ping() -> Exchange {
        Exchange {
            request: Encoded::new(&[b"PING"]),
            expect: Expect::Status("PONG"),
            reply_bytes: 0,
            pipelined: false,
        }
    }

    /// `GET` of a value of `size` bytes, one at a time.
    pub fn get(size: u64) -> Exchange {
        Exchange::pipeline(size, 1, false)
    }

    /// `GET`s of a value of `size` bytes, `depth` at a time, as the pipeline
    /// experiment (`pipelined`) or not.
    pub fn pipeline(size: u64, depth: u64, pipelined: bool) -> Exchange {
        let size = size as usize;
        Exchange {
            request: Encoded::pipelined(&[b"GET", key(size).as_bytes()], depth as usize),
            expect: Expect::Bulk(size),
            reply_bytes: (size + 32) * depth as usize,
            pipelined,
        }
    }
}

/// The key a GET of `size` bytes reads.
fn key(size: usize) -> String {
    format!("sockbench:value:{size}")
}

/// Sets the value a GET of `size` bytes reads (untimed), living ten minutes.
pub fn set_value(client: &mut RedisConn, size: u64) -> Result<()> {
    let value = vec![b'x'; size as usize];
    let set = Encoded::new(&[
        b"SET",
        key(size as usize).as_bytes(),
        &value,
        b"PX",
        KEY_LIFETIME_MS.as_bytes(),
    ]);
    client
        .exchange(&set, Expect::Status("OK"))
        .context("cannot SET the value GET reads")
}

/// One trial of `work` on one connection for `budget`.
pub fn trial(
    target: &Target,
    work: &Exchange,
    size: Option<u64>,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let mut client = target.open(work.reply_bytes)?;
    if let Some(size) = size {
        set_value(&mut client, size)?;
    }
    let end = Instant::now() + WARMUP_TIME;
    for _ in 0..WARMUP_REQUESTS {
        client.exchange(&work.request, work.expect)?;
        if Instant::now() >= end {
            break;
        }
    }
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed(&mut samples, budget, || {
        client.exchange(&work.request, work.expect)
    })?;
    let commands = samples.len() as u64 * work.request.commands() as u64;
    meter.stop(commands);
    let rtt = Percentiles::of(&mut samples);
    let mut metrics = Metrics::default()
        .with(RTT_NS, rtt)
        .with(OPS_PER_S, rate(commands, elapsed_ns));
    if work.pipelined {
        // The pipeline's median round trip, shared by its commands.
        let depth = work.request.commands() as f64;
        metrics.set(PER_COMMAND_NS, rtt.map(|p| p.p50 / depth));
    }
    Ok(Trial {
        metrics,
        count: commands,
        elapsed_ns,
        ..Trial::default()
    })
}
