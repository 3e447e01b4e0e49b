//! `concurrent`: N clients, each on its own connection and thread, doing 64-byte
//! round trips at once: total round trips per second and the latency they see.
//!
//! All clients connect and warm up first, then start together at a barrier; each
//! keeps its own pre-sized sample buffer, merged only after the run.

use super::keys::*;
use super::pingpong::{timed_round_trips, warm_up};
use super::Target;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity};
use crate::harness::threads::on_threads;
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::Request;
use crate::stats::Percentiles;
use crate::transport::closed_by_peer;
use anyhow::{Context, Result};
use std::sync::Barrier;
use std::time::Duration;

/// Message size of every round trip.
pub const MESSAGE_SIZE: usize = 64;
const WARMUP_ROUND_TRIPS: usize = 200;
const WARMUP_TIME: Duration = Duration::from_millis(50);

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
    // Each client's buffer is sized for the whole machine's best rate, shared out.
    let capacity = (sample_capacity(budget) / clients.max(1)).max(1_000);
    let barrier = Barrier::new(clients);
    meter.start();
    let runs = on_threads(clients, |_| client(target, capacity, budget, &barrier))?;

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
            .with(OPS_PER_S, Some(ops_per_s)),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One client. It always reaches the barrier, even when its connection failed, so
/// the other clients are never left waiting.
fn client(
    target: &Target,
    capacity: usize,
    budget: Duration,
    barrier: &Barrier,
) -> Result<ClientRun> {
    let mut buf = [0x5au8; MESSAGE_SIZE];
    let prepared = (|| -> Result<_> {
        let size = MESSAGE_SIZE as u32;
        let mut conn = target.session(Request::PingPong { size })?;
        let sequence = warm_up(target, &mut conn, &mut buf, WARMUP_ROUND_TRIPS, WARMUP_TIME)?;
        Ok((conn, sequence))
    })();
    let mut samples = sample_buffer(capacity);
    barrier.wait();
    let (mut conn, mut sequence) = prepared?;
    let elapsed_ns = timed_round_trips(&mut conn, &mut buf, &mut sequence, &mut samples, budget)
        .map_err(closed_by_peer)
        .with_context(|| target.endpoint.to_string())?;
    Ok(ClientRun {
        samples,
        elapsed_ns,
    })
}
