//! `request`, `keepalive` and `direct`: one client on one kept connection, one
//! request at a time, answered again and again: the round trip an application's
//! user pays per request, through nginx or straight to the app server.

use super::http::{self, HttpConn, HttpRequest};
use super::keys::*;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::Endpoint;
use anyhow::Result;
use std::time::{Duration, Instant};

/// Untimed requests first: at most this many, for at most [`WARMUP_TIME`] (nginx's
/// upstream connections, the caches and the app server's buffers warm up).
const WARMUP_REQUESTS: usize = 200;
const WARMUP_TIME: Duration = Duration::from_millis(20);
/// The Host every request names: nginx and the app server answer any.
pub(super) const HOST: &str = "127.0.0.1";

/// One trial on one connection to `endpoint` for `budget`, responses of `size`.
pub fn trial(endpoint: &Endpoint, size: u64, budget: Duration, meter: &mut Meter) -> Result<Trial> {
    let request = HttpRequest::get(HOST, size as usize, true)?;
    let mut client = HttpConn::new(
        http::connect(endpoint)?,
        size as usize,
        endpoint,
        http::LIMIT,
    )?;
    let mut failed = 0u64;
    let end = Instant::now() + WARMUP_TIME;
    for _ in 0..WARMUP_REQUESTS {
        client.exchange(&request)?;
        if Instant::now() >= end {
            break;
        }
    }
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed(&mut samples, budget, || {
        let status = client.exchange(&request)?;
        failed += u64::from(!status.is_success());
        Ok::<(), http::HttpError>(())
    })?;
    let requests = samples.len() as u64;
    meter.stop(requests);
    all_answered(failed, requests, endpoint)?;
    let metrics = Metrics::default()
        .with(RTT_NS, Percentiles::of(&mut samples))
        .with(REQ_PER_S, rate(requests, elapsed_ns))
        .with(FAILED, failed);
    Ok(Trial {
        metrics,
        count: requests,
        elapsed_ns,
        ..Trial::default()
    })
}

/// Refuses a trial in which any request was answered with an error status: an
/// error answered fast would pass for a fast hop in its time and rate. (Only
/// `overload`, whose point is how many fail, keeps such trials, its failures
/// counted apart from its rate.)
pub(super) fn all_answered(failed: u64, requests: u64, endpoint: &Endpoint) -> Result<()> {
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {requests} requests to {endpoint} were answered with an error status \
             (nginx answers 502 or 504 when it cannot reach the app server), so no time is \
             reported for them"
        );
    }
    Ok(())
}
