//! `concurrent`: C clients on T threads running a script for D seconds, like
//! `pgbench -f script.sql -c C -j T -T D`.
//!
//! Each thread drives its share of the connections through libpq's asynchronous
//! interface and one `poll(2)` over their sockets, the way pgbench does, rather than
//! one OS thread per connection: with 2 cores and 10 clients, threads would measure
//! the scheduler. A warm-up runs first and is not counted. Latencies go into one
//! HdrHistogram per thread (recording is a counter increment, no allocation), merged
//! after the run. With `connect_per_transaction`, every transaction opens and closes
//! its own connection, like `pgbench -C`.
//!
//! A transaction (or a connection) that waits longer than [`OP_LIMIT`] means its
//! server stalled: the trial ends with that error, and a thread that fails ends the
//! measured window at once rather than when the trial would have ended.

use super::PgTarget;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate};
use crate::harness::threads::on_threads_while;
use crate::postgres::libpq::{wait_any, Conn, Step, TxOutcome, Wait, OP_LIMIT};
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use anyhow::{anyhow, bail, Context, Result};
use hdrhistogram::Histogram;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one run does.
#[derive(Debug, Clone)]
pub struct Load {
    pub clients: u32,
    pub threads: u32,
    pub duration: Duration,
    pub warmup: Duration,
    /// The transaction: commands sent one after the other.
    pub script: Vec<CString>,
    pub connect_per_transaction: bool,
}

/// What one thread counted in the measured window.
struct Tally {
    histogram: Histogram<u64>,
    failed: u64,
    connections: u64,
}

/// One client connection and where its transaction stands.
struct Client {
    conn: Option<Conn>,
    state: State,
    started: Instant,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Idle,
    Connecting(Step),
    Running(usize),
}

/// Longest latency the histograms hold; longer ones count as this.
const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// One trial on `target`.
/// The meter counts the measured window only, from the thread that waits for the
/// clients.
pub fn trial(target: &PgTarget, load: &Load, meter: &mut Meter) -> Result<Trial> {
    let threads = load.threads.clamp(1, load.clients);
    let start = Instant::now() + Duration::from_millis(50);
    let measured_from = start + load.warmup;
    let end = measured_from + load.duration;
    let failed = AtomicBool::new(false);
    let window = || {
        sleep_until(measured_from, &failed);
        meter.start();
        sleep_until(end, &failed);
        meter.end();
    };
    let tallies = on_threads_while(
        threads as usize,
        |t| {
            let t = t as u32;
            let share = load.clients / threads + u32::from(t < load.clients % threads);
            let tally = drive(target, load, share, start, measured_from, end);
            if tally.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            tally
        },
        window,
    )?;
    let mut merged = histogram();
    let (mut failed, mut connections) = (0, 0);
    for tally in tallies {
        merged.add(&tally.histogram).map_err(|e| anyhow!("{e:?}"))?;
        failed += tally.failed;
        connections += tally.connections;
    }
    let count = merged.len();
    if count == 0 && failed > 0 {
        bail!("every transaction failed ({failed} of them); check the script against the server");
    }
    let elapsed_ns = nanos(load.duration);
    meter.stop(count);
    let q = |q: f64| merged.value_at_quantile(q) as f64;
    Ok(Trial {
        metrics: Metrics {
            tps: Some(rate(count, elapsed_ns)),
            latency_ns: (count > 0).then(|| Percentiles {
                mean: merged.mean(),
                p50: q(0.50),
                p99: q(0.99),
                p999: q(0.999),
            }),
            failed: Some(failed),
            ..Metrics::default()
        },
        count,
        elapsed_ns,
        connections: Some(connections),
        ..Trial::default()
    })
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds")
}

/// One thread: opens its clients, then keeps each busy until `end`.
fn drive(
    target: &PgTarget,
    load: &Load,
    clients: u32,
    start: Instant,
    measured_from: Instant,
    end: Instant,
) -> Result<Tally> {
    let mut tally = Tally {
        histogram: histogram(),
        failed: 0,
        connections: 0,
    };
    let mut all: Vec<Client> = (0..clients)
        .map(|_| {
            let conn = if load.connect_per_transaction {
                None
            } else {
                tally.connections += 1;
                Some(Conn::connect(&target.params)?)
            };
            Ok(Client {
                conn,
                state: State::Idle,
                started: start,
            })
        })
        .collect::<Result<_, crate::postgres::libpq::PgError>>()
        .context("cannot open the clients' connections")?;
    let mut waits: Vec<Wait> = Vec::with_capacity(all.len());
    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    let mut stall_checked = start;
    loop {
        let now = Instant::now();
        // Checked once per wake-up (at most 100 ms apart), never per transaction.
        if now >= end || crate::interrupt::interrupted() {
            break;
        }
        if now - stall_checked >= Duration::from_secs(1) {
            stall_checked = now;
            check_stalls(&all, now)?;
        }
        for c in all.iter_mut().filter(|c| c.state == State::Idle) {
            begin(c, target, load, now, &mut tally)?;
        }
        waits.clear();
        waits.extend(all.iter().map(|c| {
            let write = c.state == State::Connecting(Step::Write);
            Wait::new(c.conn.as_ref(), write)
        }));
        let limit = (end - now).clamp(Duration::from_millis(1), Duration::from_millis(100));
        wait_any(&mut waits, limit).map_err(|e| anyhow!("poll failed: {e}"))?;
        for (c, wait) in all.iter_mut().zip(&waits) {
            if wait.ready() {
                progress(c, load, measured_from, end, &mut tally)?;
            }
        }
    }
    Ok(tally)
}

/// An error when a client has waited longer than [`OP_LIMIT`] for its server.
fn check_stalls(all: &[Client], now: Instant) -> Result<()> {
    for c in all {
        if let (Some(conn), false) = (&c.conn, c.state == State::Idle) {
            if now - c.started > OP_LIMIT {
                return Err(conn.stalled().into());
            }
        }
    }
    Ok(())
}

/// Starts a client's next transaction.
fn begin(
    c: &mut Client,
    target: &PgTarget,
    load: &Load,
    now: Instant,
    tally: &mut Tally,
) -> Result<()> {
    c.started = now;
    if load.connect_per_transaction {
        tally.connections += 1;
        c.conn = Some(Conn::start(&target.params)?);
        c.state = State::Connecting(Step::Write);
    } else {
        send(c, load, 0)?;
    }
    Ok(())
}

fn send(c: &mut Client, load: &Load, command: usize) -> Result<()> {
    let conn = c.conn.as_ref().context("no connection")?;
    conn.send(&load.script[command])?;
    c.state = State::Running(command);
    Ok(())
}

/// Advances a client whose socket is ready.
fn progress(
    c: &mut Client,
    load: &Load,
    measured_from: Instant,
    end: Instant,
    tally: &mut Tally,
) -> Result<()> {
    let conn = c.conn.as_ref().context("no connection")?;
    match c.state {
        State::Idle => Ok(()),
        State::Connecting(_) => match conn.advance()? {
            Step::Ready => send(c, load, 0),
            step => {
                c.state = State::Connecting(step);
                Ok(())
            }
        },
        State::Running(command) => match conn.receive()? {
            TxOutcome::Pending => Ok(()),
            outcome => {
                let failed = outcome == TxOutcome::Failed;
                if !failed && command + 1 < load.script.len() {
                    return send(c, load, command + 1);
                }
                let done = Instant::now();
                if c.started >= measured_from && done <= end {
                    if failed {
                        tally.failed += 1;
                    } else {
                        tally.histogram.saturating_record(nanos(done - c.started));
                    }
                }
                if load.connect_per_transaction {
                    c.conn = None;
                }
                c.state = State::Idle;
                Ok(())
            }
        },
    }
}

/// Sleeps until `at`, or until Ctrl-C or a client thread failed, in slices of at
/// most 50 ms.
fn sleep_until(at: Instant, failed: &AtomicBool) {
    loop {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() || crate::interrupt::interrupted() || failed.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
