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
//! come, and the rest of a reply split in two reads follows at once. This holds
//! because each connection has one GET out at a time and a reply is read whole:
//! nothing is left in the client's buffer, nor in OpenSSL's (no read-ahead), where
//! epoll could not see it.

use super::keys::*;
use super::resp::RedisConn;
use super::roundtrip::{set_value, Exchange};
use super::target::Target;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate, sample_buffer, sample_capacity};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use crate::transport::poller::{Poller, READABLE};
use crate::transport::Endpoint;
use crate::wait::{Patience, SLICE};
use anyhow::Result;
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
    let work = Exchange::get(VALUE_SIZE);
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
        finished: Vec::with_capacity(clients),
        quiet: Patience::new(target.limit()),
        at: &target.endpoint,
    };
    meter.start();
    let elapsed_ns = run.drive(&mut samples, budget)?;
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
    conns: Vec<RedisConn>,
    poller: Poller,
    work: &'a Exchange,
    sent: &'a mut [Instant],
    /// The connections that finished in the last wake-up, as many as there are.
    finished: Vec<usize>,
    /// How long the replies may stop coming.
    quiet: Patience,
    /// Where the server is, for the error that says it stopped.
    at: &'a Endpoint,
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
            let mut woken = false;
            for token in self.poller.ready(SLICE)? {
                woken = true;
                let i = token as usize;
                self.conns[i].receive(&self.work.request, self.work.expect)?;
                debug_assert!(self.conns[i].drained(), "a reply left bytes behind");
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
                    self.finished.push(i);
                    out -= 1;
                }
            }
            // A finished connection is no longer watched: a close from the server
            // now is no error. (Sized before the loop: no allocation.)
            for i in self.finished.drain(..) {
                self.poller.remove(self.conns[i].conn().as_raw_fd())?;
            }
            if woken {
                self.quiet.restart();
                continue;
            }
            // Nothing ready within a slice: Ctrl-C ends the trial, and so does a
            // server that has answered nothing for the limit. (A reply that comes a
            // byte at a time is bounded by its client.)
            let at = self.at;
            self.quiet
                .check(|| format!("the Redis server at {at} answered none of {out} GETs"))?;
        }
        Ok(nanos(last - start))
    }
}
