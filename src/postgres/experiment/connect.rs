//! `connect` and `auth`: many connections one after another, each connect, `SELECT 1`,
//! close, timed whole and phase by phase.
//!
//! The phases come from libpq's non-blocking connect: the time until the socket is
//! connected, the TLS handshake, the startup and authentication exchange, and the wait
//! until the backend is ready; then the query and the close. What a user's
//! application pays for a new connection is the whole.
//!
//! Two things the server does shape what the phases can show. It forks the backend
//! as soon as it accepts the socket, and the backend does the TLS handshake, so over
//! TLS part of the backend's start lands in the TLS phase. And it holds back its
//! "authentication ok" until the backend is ready for queries, so libpq sees
//! authentication and backend start as one phase.

use super::Target;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate, sample_buffer};
use crate::postgres::keys::*;
use crate::postgres::libpq::PgConn;
use crate::results::{Metrics, Trial};
use crate::stats::{median, Percentiles};
use anyhow::{Context, Result};
use std::time::{Duration, Instant};

/// Phases of one connection in nanoseconds: socket, tls, auth, ready, query, close.
type PhaseNs = [u64; 6];

/// One trial: up to `max` connections, for at most `limit`.
pub fn trial(target: &Target, max: u64, limit: Duration, meter: &mut Meter) -> Result<Trial> {
    let fail = || format!("a connection over {} failed", target.label);
    for _ in 0..3 {
        one(target).with_context(fail)?;
    }
    let mut samples: Vec<PhaseNs> = sample_buffer(max as usize);
    meter.start();
    let start = Instant::now();
    let deadline = start + limit;
    let mut end = start;
    while (samples.len() as u64) < max && end < deadline {
        let (sample, finished) = one(target).with_context(fail)?;
        samples.push(sample);
        end = finished;
    }
    let elapsed_ns = nanos(end - start);
    meter.stop(samples.len() as u64);
    let mut totals: Vec<u64> = samples.iter().map(|s| s.iter().sum()).collect();
    let phase = |i: usize| median(&samples.iter().map(|s| s[i] as f64).collect::<Vec<_>>());
    let count = samples.len() as u64;
    Ok(Trial {
        metrics: Metrics::default()
            .with(CONN_PER_S, Some(rate(count, elapsed_ns)))
            .with(CONNECT_NS, Percentiles::of(&mut totals))
            .with(
                PHASES_NS,
                (count > 0).then(|| Phases {
                    socket: phase(0),
                    tls: phase(1),
                    auth: phase(2),
                    ready: phase(3),
                    query: phase(4),
                    close: phase(5),
                }),
            ),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One connection, its phases, and the moment it was closed.
#[inline]
fn one(target: &Target) -> Result<(PhaseNs, Instant)> {
    let (conn, t) = PgConn::connect_timed(&target.params)?;
    let queried = {
        conn.exec(c"SELECT 1")?;
        Instant::now()
    };
    drop(conn);
    let closed = Instant::now();
    let sample = [
        nanos(t.connected - t.start),
        nanos(t.tls_done - t.connected),
        nanos(t.authenticated - t.tls_done),
        nanos(t.ready - t.authenticated),
        nanos(queried - t.ready),
        nanos(closed - queried),
    ];
    Ok((sample, closed))
}
