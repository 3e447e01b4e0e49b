//! `request`, `keepalive` and `direct`: one client on one kept connection, one
//! request at a time, answered again and again: the round trip an application's
//! user pays per request, through nginx or straight to the app server.

use super::http::{self, Ask, HttpConn, HttpError, HttpRequest, Status};
use super::keys::*;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::{Conn, Connector, Endpoint, TlsVersion};
use anyhow::Result;
use std::io;
use std::time::{Duration, Instant};

/// Untimed requests first: at most this many, for at most [`WARMUP_TIME`] (nginx's
/// upstream connections, the caches and the app server's buffers warm up).
const WARMUP_REQUESTS: usize = 200;
const WARMUP_TIME: Duration = Duration::from_millis(20);

/// Who may answer on a connection, checked on each before anything is sent on it
/// (an app server's Unix socket in a directory its account can change).
pub type PeerCheck<'a> = &'a dyn Fn(&Conn) -> Result<()>;

/// A check that passes every connection: nginx's port, or a server the user named.
pub fn anyone(_: &Conn) -> Result<()> {
    Ok(())
}

/// One trial on one connection to `endpoint` for `budget`, each request asking
/// `ask`, every connection's peer passing `peer`. A server that closes the
/// connection after a response (gunicorn's sync workers do after each) is
/// connected to again for the next request, within the request's time.
pub fn trial(
    endpoint: &Endpoint,
    ask: &Ask,
    budget: Duration,
    meter: &mut Meter,
    peer: PeerCheck,
) -> Result<Trial> {
    let request = ask.request(true)?;
    let connector = Connector::new(endpoint, TlsVersion::V1_3)?;
    let first = http::connect(endpoint)?;
    peer(&first)?;
    let mut client = HttpConn::new(first, ask.body_room(), endpoint, http::LIMIT)?;
    let mut failed = 0u64;
    let end = Instant::now() + WARMUP_TIME;
    for _ in 0..WARMUP_REQUESTS {
        exchange(&connector, &mut client, &request, peer)?;
        if Instant::now() >= end {
            break;
        }
    }
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed(&mut samples, budget, || {
        let status = exchange(&connector, &mut client, &request, peer)?;
        failed += u64::from(!status.is_success());
        Ok::<(), HttpError>(())
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

/// One request and its response, on a new connection (its peer checked) when the
/// server closed the last one.
#[inline]
fn exchange(
    connector: &Connector,
    client: &mut HttpConn,
    request: &HttpRequest,
    peer: PeerCheck,
) -> Result<Status, HttpError> {
    if !client.is_open() {
        http::reconnect(connector, client)?;
        peer(client.conn()).map_err(|e| {
            HttpError::Failed(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{e:#}"),
            ))
        })?;
    }
    client.exchange(request)
}

/// Refuses a trial in which any request was answered with an error status: an
/// error answered fast would pass for a fast hop in its time and rate. (Only
/// `overload`, whose point is how many fail, keeps such trials, its failures
/// counted apart from its rate.)
pub(super) fn all_answered(failed: u64, requests: u64, endpoint: &Endpoint) -> Result<()> {
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {requests} requests to {endpoint} were answered with an error status \
             (not 2xx), so no time is reported for them: through nginx, 502 or 504 say it \
             could not reach the app server; otherwise the app server refused what was asked \
             (with --upstream or --app, give a --path it answers 2xx)"
        );
    }
    Ok(())
}
