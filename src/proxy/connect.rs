//! `connect`: a new connection to nginx for every request, as `ab` without `-k`
//! makes them: connect, one request, its whole response, the server's close, then
//! the client's. nginx keeps its upstream connections (`keepalive`), so what the
//! transport changes is the hop of each request; what every connection adds is the
//! client's TCP connection to nginx, the same in every column.
//!
//! How the connection ends is `ab`'s: `ab` sends HTTP/1.0 without `Keep-Alive`,
//! so the server closes after the response, and reads until that close. Here the
//! request is HTTP/1.1 with `Connection: close`, which nginx answers the same way
//! (it closes first, so the TIME_WAIT is on its side, and the client's ephemeral
//! ports are free again at once), and the client likewise reads until the close.

use super::http::{self, Ask, HttpConn, HttpError, HttpRequest};
use super::keys::*;
use crate::cpu::Meter;
use crate::harness::measure::{rate, sample_buffer, sample_capacity, timed};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::{Connector, Endpoint, TlsVersion};
use anyhow::{Context, Result};
use std::time::Duration;

/// Untimed connections first.
const WARMUP_CONNECTIONS: usize = 20;

/// One trial of new connections to `endpoint` (nginx) for `budget`, each asking
/// `ask`.
pub fn trial(endpoint: &Endpoint, ask: &Ask, budget: Duration, meter: &mut Meter) -> Result<Trial> {
    let request = ask.request(false)?;
    let connector = Connector::new(endpoint, TlsVersion::V1_3)?;
    // One client whose buffer every connection reuses; its first connection is
    // closed by the first warm-up one.
    let mut client = HttpConn::new(
        http::connect(endpoint)?,
        ask.body_room(),
        endpoint,
        http::LIMIT,
    )?;
    let mut failed = 0u64;
    for _ in 0..WARMUP_CONNECTIONS {
        once(&connector, &mut client, &request, &mut failed)
            .with_context(|| format!("a new connection to nginx at {endpoint}"))?;
    }
    failed = 0;
    let mut samples = sample_buffer(sample_capacity(budget));
    meter.start();
    let elapsed_ns = timed(&mut samples, budget, || {
        once(&connector, &mut client, &request, &mut failed)
    })
    .with_context(|| format!("a new connection to nginx at {endpoint}"))?;
    let requests = samples.len() as u64;
    meter.stop(requests);
    super::request::all_answered(failed, requests, endpoint)?;
    let metrics = Metrics::default()
        .with(REQ_PER_S, rate(requests, elapsed_ns))
        .with(CONNECTION_NS, Percentiles::of(&mut samples))
        .with(FAILED, failed);
    Ok(Trial {
        metrics,
        count: requests,
        elapsed_ns,
        ..Trial::default()
    })
}

/// One connection: connect (bounded, as every connection of the family's client
/// is), the request, its response, the server's close; the previous connection,
/// already closed by the server, is closed here.
#[inline]
fn once(
    connector: &Connector,
    client: &mut HttpConn,
    request: &HttpRequest,
    failed: &mut u64,
) -> Result<(), HttpError> {
    http::reconnect(connector, client)?;
    let status = client.exchange(request)?;
    *failed += u64::from(!status.is_success());
    client.until_closed()
}
