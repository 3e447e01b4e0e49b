//! `overload`: the php-fpm trap. Many more connections to nginx at once than the
//! app server's listen backlog, nginx opening a new upstream connection per
//! request (upstream keepalive off, nginx's default), so that the connections
//! nginx opens to the app server at once overflow the connections that may wait
//! for it to accept them. What a full backlog does differs by transport:
//!
//! - over a Unix socket, the connect fails at once (`EAGAIN`) and nginx answers
//!   502 Bad Gateway;
//! - over TCP, the kernel drops the SYN and the connect waits for its
//!   retransmission, a second later; nginx's sites here wait at most 50 ms
//!   (`proxy_connect_timeout`, `plan.rs`), so such a request fails with 504
//!   Gateway Timeout within the trial rather than holding it for seconds.
//!
//! So the figure that leads is the requests answered with a 2xx status per second,
//! with the failed ones counted apart and never in that rate. The connections are
//! driven as `concurrent.rs` drives them: one thread, each connection sending its
//! next request as soon as its response is read, a failed one included.

use super::concurrent::Clients;
use super::http::Ask;
use super::keys::*;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::Endpoint;
use anyhow::Result;
use std::time::Duration;

/// One trial of `connections` clients at once on `endpoint` (nginx's site in front
/// of the app server with the small backlog) for `budget`, each asking `ask`.
/// The trial's operations, for the CPU per operation, are the requests answered,
/// failed or not.
pub fn trial(
    endpoint: &Endpoint,
    connections: usize,
    ask: &Ask,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let mut clients = Clients::open(endpoint, connections, ask)?;
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let driven = clients.drive(&mut samples, budget)?;
    let requests = samples.len() as u64;
    meter.stop(requests);
    let ok = requests.saturating_sub(driven.failed);
    let metrics = Metrics::default()
        .with(OK_PER_S, rate(ok, driven.elapsed_ns))
        .with(FAILED, driven.failed)
        .with(REQ_PER_S, rate(requests, driven.elapsed_ns))
        .with(RTT_NS, Percentiles::of(&mut samples));
    Ok(Trial {
        metrics,
        count: requests,
        elapsed_ns: driven.elapsed_ns,
        ..Trial::default()
    })
}
