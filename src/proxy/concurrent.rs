//! `concurrent`: many keep-alive connections to nginx at once (wrk's `-c`), each
//! sending its next request as soon as its response is read: the requests per
//! second of all together, and the round trip each request sees, from its send
//! until its whole response is read. nginx keeps its upstream connections, as many
//! idle as there are clients (`nginx.rs`), so the hop to the app server is the
//! kept one of `request`, many requests at once.
//!
//! As wrk and the Redis family's `concurrent` do, one thread drives every
//! connection ([`Clients`]): it sends on all, then waits on them together (epoll)
//! and, for each response, reads it and sends that connection's next request. The
//! connections stay blocking, a slice at a time: one is read only when the kernel
//! says its response has come, and the rest of a response split in two reads
//! follows at once. This holds because each connection has one request out at a
//! time and a response is read whole, so nothing is left in the client's buffer
//! where epoll could not see it. `overload.rs` drives its connections the same way.

use super::http::{self, Ask, HttpConn, HttpError, HttpRequest};
use super::keys::*;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate, sample_buffer, sample_capacity};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::poller::{Poller, READABLE};
use crate::transport::Endpoint;
use crate::wait::{Patience, SLICE};
use anyhow::{Context, Result};
use std::io;
use std::time::{Duration, Instant};

/// Untimed requests first, of all connections at once: at most this many per
/// connection, for at most [`WARMUP_TIME`] (nginx opens its upstream connections,
/// one per request out at once, and keeps them).
const WARMUP_PER_CONNECTION: usize = 10;
const WARMUP_TIME: Duration = Duration::from_millis(10);

/// One trial of `connections` clients at once on `endpoint` (nginx) for `budget`,
/// each asking `ask`.
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
    super::request::all_answered(driven.failed, requests, endpoint)?;
    let metrics = Metrics::default()
        .with(REQ_PER_S, rate(requests, driven.elapsed_ns))
        .with(RTT_NS, Percentiles::of(&mut samples))
        .with(FAILED, driven.failed);
    Ok(Trial {
        metrics,
        count: requests,
        elapsed_ns: driven.elapsed_ns,
        ..Trial::default()
    })
}

/// What a drive of the connections did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Driven {
    /// Wall time from the first send until the last response.
    pub elapsed_ns: u64,
    /// Responses with anything but a 2xx status (their round trips are samples too).
    pub failed: u64,
}

/// Keep-alive connections to one server, each with one request out at a time, and
/// everything their loop needs, made before it.
pub(super) struct Clients {
    conns: Vec<HttpConn>,
    poller: Poller,
    request: HttpRequest,
    /// When each connection sent its request out.
    sent: Vec<Instant>,
    /// The connections that finished in the last wake-up, as many as there are.
    finished: Vec<usize>,
    /// How long the responses may stop coming.
    quiet: Patience,
    /// `nginx at …`, for the error that says it stopped answering.
    server: String,
}

impl Clients {
    /// `connections` connections to `endpoint`, each asking `ask`, warmed up
    /// together.
    pub fn open(endpoint: &Endpoint, connections: usize, ask: &Ask) -> Result<Clients> {
        let request = ask.request(true)?;
        let poller = Poller::new()?;
        let mut conns = Vec::with_capacity(connections);
        for i in 0..connections {
            let conn = HttpConn::new(
                http::connect(endpoint)?,
                ask.body_room(),
                endpoint,
                http::LIMIT,
            )?;
            poller.add_token(conn.as_raw_fd(), READABLE, i as u64)?;
            conns.push(conn);
        }
        let mut clients = Clients {
            conns,
            poller,
            request,
            sent: vec![Instant::now(); connections],
            finished: Vec::with_capacity(connections),
            quiet: Patience::new(http::LIMIT),
            server: format!("nginx at {endpoint}"),
        };
        let mut warm = sample_buffer(connections * WARMUP_PER_CONNECTION);
        clients
            .drive(&mut warm, WARMUP_TIME)
            .context("the untimed requests before the trial")?;
        clients.watch_again()?;
        Ok(clients)
    }

    /// Requests on every connection until `budget` has passed or `samples` is
    /// full; the requests still out then are read and counted. One sample per
    /// request, from its send until its whole response. Every connection must be
    /// watched when it starts, and none is when it ends: [`Clients::watch_again`]
    /// before the next drive.
    pub fn drive(&mut self, samples: &mut Vec<u64>, budget: Duration) -> Result<Driven, HttpError> {
        let capacity = samples.capacity();
        let start = Instant::now();
        let deadline = start + budget;
        for (conn, sent) in self.conns.iter_mut().zip(self.sent.iter_mut()) {
            conn.start(&self.request)?;
            *sent = Instant::now();
        }
        let mut out = self.conns.len();
        let mut sending = true;
        let mut last = start;
        let mut failed = 0;
        let mut done = 0;
        while out > 0 {
            let mut woken = false;
            for token in self.poller.ready(SLICE).map_err(HttpError::Failed)? {
                woken = true;
                let i = token as usize;
                let status = self.conns[i].finish(&self.request)?;
                let now = Instant::now();
                last = now;
                failed += u64::from(!status.is_success());
                if samples.len() < capacity {
                    samples.push(nanos(now - self.sent[i]));
                }
                sending = sending && now < deadline && samples.len() + out <= capacity;
                if sending {
                    self.conns[i].start(&self.request)?;
                    self.sent[i] = now;
                } else {
                    self.finished.push(i);
                    out -= 1;
                }
            }
            // A finished connection is no longer watched: it has nothing out.
            // (Sized before the loop: no allocation.)
            for i in self.finished.drain(..) {
                self.poller
                    .remove(self.conns[i].as_raw_fd())
                    .map_err(HttpError::Failed)?;
                done += 1;
            }
            if woken {
                self.quiet.restart();
                continue;
            }
            // Nothing ready within a slice: Ctrl-C ends the trial, and so does a
            // server that has answered nothing for the limit. (A response that
            // comes a byte at a time is bounded by its connection.)
            let server = &self.server;
            self.quiet
                .check(|| format!("{server} answered none of {out} requests"))
                .map_err(HttpError::Failed)?;
        }
        debug_assert_eq!(done, self.conns.len());
        Ok(Driven {
            elapsed_ns: nanos(last - start),
            failed,
        })
    }

    /// Every connection watched again, after a drive that let each go.
    pub fn watch_again(&mut self) -> io::Result<()> {
        for (i, conn) in self.conns.iter().enumerate() {
            self.poller
                .add_token(conn.as_raw_fd(), READABLE, i as u64)?;
        }
        Ok(())
    }
}
