//! `concurrent`: N clients at once (redis-benchmark's `-c`), each on its own
//! connection and thread, doing GETs of 64 bytes: the commands per second of all
//! together and the latency each sees.
//!
//! All clients connect and warm up first, then start together at a barrier; each
//! keeps its own pre-sized sample buffer, merged only after the run.

use super::keys::*;
use super::resp::Client;
use super::roundtrip::{set_value, Work};
use super::target::Target;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::harness::threads::on_threads;
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use anyhow::{Context, Result};
use std::sync::Barrier;
use std::time::Duration;

/// The value size every client GETs.
pub const VALUE_SIZE: u64 = 64;
const WARMUP_REQUESTS: usize = 100;

struct ClientRun {
    samples: Vec<u64>,
    elapsed_ns: u64,
}

/// The meter counts the clients' connects and warm-ups too: they run on the client
/// threads, which start together.
pub fn trial(
    target: &Target,
    clients: usize,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let work = Work::get(VALUE_SIZE, 1);
    set_value(&mut target.open(0)?, VALUE_SIZE)?;
    let capacity = (sample_capacity(budget) / clients.max(1)).max(1_000);
    let barrier = Barrier::new(clients);
    meter.start();
    let runs = on_threads(clients, |_| {
        client(target, &work, capacity, budget, &barrier)
    })?;
    let ops_per_s: f64 = runs
        .iter()
        .map(|r| rate(r.samples.len() as u64, r.elapsed_ns))
        .sum();
    let count: u64 = runs.iter().map(|r| r.samples.len() as u64).sum();
    meter.stop(count);
    let elapsed_ns = runs.iter().map(|r| r.elapsed_ns).max().unwrap_or(0);
    let mut all: Vec<u64> = runs.into_iter().flat_map(|r| r.samples).collect();
    Ok(Trial {
        metrics: Metrics::default()
            .with(RTT_NS, Percentiles::of(&mut all))
            .with(OPS_PER_S, ops_per_s),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One client. It always reaches the barrier, even when its connection failed, so
/// the other clients are never left waiting.
fn client(
    target: &Target,
    work: &Work,
    capacity: usize,
    budget: Duration,
    barrier: &Barrier,
) -> Result<ClientRun> {
    let prepared = (|| -> Result<Client> {
        let mut client = target.open(work.reply_bytes)?;
        for _ in 0..WARMUP_REQUESTS {
            client.exchange(&work.request, work.expect)?;
        }
        Ok(client)
    })();
    let mut samples = sample_buffer(capacity);
    barrier.wait();
    let mut client = prepared?;
    let elapsed_ns = timed(&mut samples, budget, || {
        client.exchange(&work.request, work.expect)
    })
    .with_context(|| target.endpoint.to_string())?;
    Ok(ClientRun {
        samples,
        elapsed_ns,
    })
}
