//! `concurrent`: N clients at once (redis-benchmark's `-c`), each on its own
//! connection, doing GETs of 64 bytes: the commands per second of all together and
//! the latency each sees, from sending a GET until its reply.
//!
//! As redis-benchmark does, one thread drives every connection: it sends on all,
//! then waits on them together (epoll) and, for each reply, reads it and sends that
//! connection's next GET. A thread per client would pay about two context switches
//! per GET that an event loop does not (measured on a Unix socket: 2.1 switches per
//! GET against 0.15, and 0.79× redis-benchmark's rate against 0.9× and more). The
//! connections stay blocking: one is read only when the kernel says its reply has
//! come, and the rest of a reply split in two reads follows at once.

use super::keys::*;
use super::resp::Client;
use super::roundtrip::{set_value, Work};
use super::target::{Target, WAIT};
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate, sample_buffer, sample_capacity};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::poller::{Poller, READABLE};
use anyhow::{Context, Result};
use std::io;
use std::time::{Duration, Instant};

/// The value size every client GETs.
pub const VALUE_SIZE: u64 = 64;
const WARMUP_REQUESTS: usize = 20;

pub fn trial(
    target: &Target,
    clients: usize,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let work = Work::get(VALUE_SIZE, 1);
    set_value(&mut target.open(0)?, VALUE_SIZE)?;
    let mut conns = Vec::with_capacity(clients);
    let poller = Poller::new()?;
    for i in 0..clients {
        let mut client = target.open(work.reply_bytes)?;
        for _ in 0..WARMUP_REQUESTS {
            client.exchange(&work.request, work.expect)?;
        }
        poller.add_token(client.conn().as_raw_fd(), READABLE, i as u64)?;
        conns.push(client);
    }
    let mut samples = sample_buffer(sample_capacity(budget));
    let mut sent = vec![Instant::now(); clients];
    let mut run = Loop {
        conns,
        poller,
        work: &work,
        sent: &mut sent,
    };
    meter.start();
    let elapsed_ns = run
        .drive(&mut samples, budget)
        .with_context(|| target.endpoint.to_string())?;
    let count = samples.len() as u64;
    meter.stop(count);
    Ok(Trial {
        metrics: Metrics::default()
            .with(RTT_NS, Percentiles::of(&mut samples))
            .with(OPS_PER_S, rate(count, elapsed_ns)),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

/// Every connection, what it sends and when it sent it.
struct Loop<'a> {
    conns: Vec<Client>,
    poller: Poller,
    work: &'a Work,
    sent: &'a mut [Instant],
}

impl Loop<'_> {
    /// GETs on every connection until `budget` has passed or `samples` is full;
    /// the GETs still out then are read and counted. One sample per GET, from its
    /// send to its reply. Returns the wall time until the last reply.
    fn drive(&mut self, samples: &mut Vec<u64>, budget: Duration) -> io::Result<u64> {
        let capacity = samples.capacity();
        let start = Instant::now();
        let deadline = start + budget;
        for (conn, sent) in self.conns.iter_mut().zip(self.sent.iter_mut()) {
            conn.send(&self.work.request)?;
            *sent = Instant::now();
        }
        let mut out = self.conns.len();
        let mut sending = true;
        let mut last = start;
        while out > 0 {
            let waited = Instant::now();
            let mut woken = false;
            for token in self.poller.ready(WAIT)? {
                woken = true;
                let i = token as usize;
                self.conns[i].receive(&self.work.request, self.work.expect)?;
                let now = Instant::now();
                last = now;
                if samples.len() < capacity {
                    samples.push(nanos(now - self.sent[i]));
                }
                sending = sending && now < deadline && samples.len() + out <= capacity;
                if sending {
                    self.conns[i].send(&self.work.request)?;
                    self.sent[i] = now;
                } else {
                    out -= 1;
                }
            }
            // Nothing ready: a signal (Ctrl-C) cut the wait short, or the server is
            // stuck.
            if !woken && waited.elapsed() >= WAIT {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the Redis server answered none of {out} GETs within {} s",
                        WAIT.as_secs()
                    ),
                ));
            }
        }
        Ok(nanos(last - start))
    }
}
