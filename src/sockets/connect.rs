//! `connect`: open a connection, read the 12-byte greeting, close; again and again.
//!
//! This is the cost an application pays per new connection, without pooling. On TCP
//! the client closes first, so every connection leaves a TIME_WAIT socket holding an
//! ephemeral port. When the kernel does not reuse those on loopback
//! (`net.ipv4.tcp_tw_reuse` = 0), a trial is capped to the ports still free, and the
//! cap is recorded, so a run never fails half-way with `EADDRNOTAVAIL`.

use super::keys::*;
use super::Target;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate, sample_buffer, sample_capacity};
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::GREETING;
use crate::stats::Percentiles;
use crate::system;
use crate::transport::{closed_by_peer, Address};
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::time::{Duration, Instant};

/// Untimed connections before each trial, to warm caches and the server's thread.
const WARMUP: usize = 50;
/// Ports left alone for everything else on the machine when ports are capped.
const PORT_MARGIN: u64 = 2_000;

pub fn trial(target: &Target, budget: Duration, meter: &mut Meter) -> Result<Trial> {
    for _ in 0..WARMUP {
        target.open()?;
    }
    let uses_ports = target.transport.uses_tcp();
    let time_wait_before = uses_ports.then(system::time_wait_count).flatten();
    let mut capacity = sample_capacity(budget);
    let port_cap = if uses_ports {
        port_cap(target, time_wait_before)?
    } else {
        None
    };
    if let Some(cap) = port_cap {
        capacity = capacity.min(cap);
    }
    let server_before = target.server_count()?;

    let mut samples = sample_buffer(capacity);
    let mut greeting = [0u8; GREETING.len()];
    let connector = &target.connector;
    meter.start();
    let start = Instant::now();
    let deadline = start + budget;
    let mut prev = start;
    while samples.len() < capacity {
        let mut conn = connector.connect().with_context(|| refused(target))?;
        conn.read_exact(&mut greeting)
            .map_err(closed_by_peer)
            .with_context(|| target.endpoint.to_string())?;
        drop(conn);
        let now = Instant::now();
        samples.push(nanos(now - prev));
        prev = now;
        if &greeting != GREETING {
            bail!("{} sent a wrong greeting", target.endpoint);
        }
        if now >= deadline {
            break;
        }
    }
    let elapsed_ns = nanos(prev - start);
    meter.stop(samples.len() as u64);

    let server_after = target.server_count()?;
    let count = samples.len() as u64;
    let time_wait_after = uses_ports.then(system::time_wait_count).flatten();
    let port_limited = port_cap.is_some_and(|cap| samples.len() >= cap);
    Ok(Trial {
        metrics: Metrics::default()
            .with(CONN_PER_S, Some(rate(count, elapsed_ns)))
            .with(LATENCY_NS, Percentiles::of(&mut samples))
            .with(SERVER_COUNT, server_after - server_before)
            .with(TIME_WAIT_BEFORE, time_wait_before.map(|n| n as f64))
            .with(TIME_WAIT_AFTER, time_wait_after.map(|n| n as f64))
            .with(PORT_LIMITED, port_limited.then_some(1)),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// The most connections a trial may open without running out of ephemeral ports.
/// Where the kernel reuses TIME_WAIT ports (on loopback by default), half the
/// range; elsewhere (to a container's address over veth or a bridge, which the
/// default reuses not), what the sockets in TIME_WAIT towards the server leave,
/// counted in the client's own namespace (machine-wide `time_wait` when the
/// kernel reuses none).
fn port_cap(target: &Target, time_wait: Option<u64>) -> Result<Option<usize>> {
    let Some([low, high]) = system::ephemeral_ports() else {
        return Ok(None);
    };
    let range = u64::from(high.saturating_sub(low)) + 1;
    let dest = match &target.endpoint.address {
        Address::Ip(dest) => Some(*dest),
        _ => None,
    };
    if dest.is_some_and(system::reuses_time_wait_to) {
        // Reuse needs the TIME_WAIT socket to be a second old: leave half the range
        // for ports still too young.
        return Ok(Some((range / 2) as usize));
    }
    let off_loopback =
        dest.filter(|d| !d.ip().is_loopback() && system::loopback_reuses_time_wait());
    let Some(dest) = off_loopback else {
        let busy = time_wait.unwrap_or(0) + PORT_MARGIN;
        let free = range.saturating_sub(busy);
        if free < MIN_PORTS {
            bail!(
                "only {free} ephemeral ports are free ({} sockets in TIME_WAIT and \
                 net.ipv4.tcp_tw_reuse is 0); wait a minute for them to expire, or run \
                 'sysctl net.ipv4.tcp_tw_reuse=2'",
                time_wait.unwrap_or(0)
            );
        }
        return Ok(Some(free as usize));
    };
    // Off loopback the default reuses none, and TIME_WAIT lasts a minute: a
    // trial takes half of what is free, so that the next finds some, and one that
    // finds too few waits (untimed, Ctrl-C seen, within the watchdog's patience)
    // for earlier trials' to expire, as a client there would have to.
    let deadline = Instant::now() + PORT_WAIT;
    loop {
        let busy = system::time_wait_to(dest).unwrap_or(0) + PORT_MARGIN;
        let free = range.saturating_sub(busy);
        if free >= 2 * MIN_PORTS_OFF_LOOPBACK {
            return Ok(Some((free / 2) as usize));
        }
        if Instant::now() >= deadline {
            bail!(
                "only {free} ephemeral ports are free towards {}: the kernel reuses \
                 TIME_WAIT ports on loopback only (net.ipv4.tcp_tw_reuse=2); run fewer \
                 connect rounds, wait a minute, or run 'sysctl net.ipv4.tcp_tw_reuse=1' to \
                 reuse them everywhere",
                target.endpoint
            );
        }
        crate::interrupt::check()?;
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The fewest ports a trial starts with.
const MIN_PORTS: u64 = 1_000;
/// The fewest connections a trial off loopback makes.
const MIN_PORTS_OFF_LOOPBACK: u64 = 200;
/// How long a trial off loopback waits for ports, well within the watchdog's
/// patience with a server that does no work.
const PORT_WAIT: Duration = Duration::from_secs(5);

fn refused(target: &Target) -> String {
    format!(
        "connect to {} failed during the connect experiment (if this says 'address not \
         available', ephemeral ports ran out: set net.ipv4.tcp_tw_reuse=2)",
        target.endpoint
    )
}
