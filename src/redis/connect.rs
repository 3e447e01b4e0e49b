//! `connect`: a new connection for every command, as an application without a
//! pool does it: connect, `AUTH` (the throwaway server needs a password; a user's
//! server when its URL has one), `PING`, close.

use super::keys::*;
use super::resp::{Encoded, Expect, RedisConn};
use super::target::Target;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use anyhow::Result;
use std::io;
use std::time::Duration;

/// Untimed connections first.
const WARMUP_CONNECTIONS: usize = 20;

pub fn trial(target: &Target, budget: Duration, meter: &mut Meter) -> Result<Trial> {
    let ping = Encoded::new(&[b"PING"]);
    // One client whose buffer every connection reuses; its first connection is
    // closed by the first timed one.
    let mut client = target.open(0)?;
    for _ in 0..WARMUP_CONNECTIONS {
        once(target, &mut client, &ping)?;
    }
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed(&mut samples, budget, || once(target, &mut client, &ping))?;
    let count = samples.len() as u64;
    meter.stop(count);
    Ok(Trial {
        metrics: Metrics::default()
            .with(LATENCY_NS, Percentiles::of(&mut samples))
            .with(CONN_PER_S, rate(count, elapsed_ns)),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One connection: connect, log in, PING; the previous connection closes here.
#[inline]
fn once(target: &Target, client: &mut RedisConn, ping: &Encoded) -> io::Result<()> {
    drop(client.swap(target.connect()?));
    target.log_in(client)?;
    client.exchange(ping, Expect::Status("PONG"))
}
