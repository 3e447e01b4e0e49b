//! `concurrent`: C clients on T threads running a script for D seconds, like
//! `pgbench -f script.sql -c C -j T -T D`, with pgbench's `-M`, `-R`, `-L`, `-P` and
//! `-r`.
//!
//! Each thread drives its share of the connections through libpq's asynchronous
//! interface and one `ppoll(2)` over their sockets, the way pgbench does, rather than
//! one OS thread per connection: with 2 cores and 10 clients, threads would measure
//! the scheduler (`drive.rs`). A warm-up runs first and is not counted. Latencies go
//! into one HdrHistogram per thread (recording is a counter increment, no
//! allocation), merged after the run. With `connect_per_transaction`, every
//! transaction opens and closes its own connection, like `pgbench -C`.
//!
//! With a rate (`pgbench -R`), each thread starts its transactions on a Poisson
//! schedule of its share of the rate (`schedule.rs`), and a transaction's latency
//! counts from when it was due, not from when a client was free to send it: a server
//! that falls behind shows it in the latency instead of slowing the schedule
//! (no coordinated omission). The progress lines (`pgbench -P`) are printed by the
//! thread that waits for the clients, from counters the clients' threads add to.
//!
//! A transaction (or a connection) that waits longer than [`OP_LIMIT`] means its
//! server stalled: the trial ends with that error, and a thread that fails ends the
//! measured window at once rather than when the trial would have ended.
//!
//! [`OP_LIMIT`]: crate::postgres::libpq::OP_LIMIT

mod drive;
mod schedule;

use super::Target;
use crate::cpu::Meter;
use crate::harness::measure::{nanos, rate};
use crate::harness::threads::on_threads_while;
use crate::postgres::keys::*;
use crate::postgres::libpq::Protocol;
use crate::postgres::script::Script;
use crate::results::{Metrics, Trial};
use crate::stats::Percentiles;
use anyhow::{anyhow, bail, Result};
use hdrhistogram::Histogram;
use schedule::{Live, Reporter};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one run does.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub clients: u32,
    pub threads: u32,
    pub duration: Duration,
    pub warmup: Duration,
    /// The transaction: commands sent one after the other.
    pub script: Script,
    pub connect_per_transaction: bool,
    pub protocol: Protocol,
    /// Transactions per second of all clients together (pgbench `-R`).
    pub rate: Option<f64>,
    /// Transactions later than this are counted (pgbench `-L`).
    pub latency_limit: Option<Duration>,
    /// Progress lines on stderr this often, labelled with this text (pgbench `-P`).
    pub progress: Option<(Duration, String)>,
    /// Time each command of the script (pgbench `-r`).
    pub per_command: bool,
}

/// What one thread counted in the measured window.
struct ThreadTally {
    histogram: Histogram<u64>,
    /// How late each transaction was sent after it was due, with a rate.
    lag: Histogram<u64>,
    failed: u64,
    connections: u64,
    late: u64,
    skipped: u64,
    /// Total time and count of each command of the script.
    command_ns: Vec<u64>,
    command_count: Vec<u64>,
}

impl ThreadTally {
    fn new(commands: usize) -> ThreadTally {
        ThreadTally {
            histogram: histogram(),
            lag: histogram(),
            failed: 0,
            connections: 0,
            late: 0,
            skipped: 0,
            command_ns: vec![0; commands],
            command_count: vec![0; commands],
        }
    }

    fn add(&mut self, other: &ThreadTally) -> Result<()> {
        self.histogram
            .add(&other.histogram)
            .map_err(|e| anyhow!("{e:?}"))?;
        self.lag.add(&other.lag).map_err(|e| anyhow!("{e:?}"))?;
        self.failed += other.failed;
        self.connections += other.connections;
        self.late += other.late;
        self.skipped += other.skipped;
        for (i, (ns, n)) in other
            .command_ns
            .iter()
            .zip(&other.command_count)
            .enumerate()
        {
            self.command_ns[i] += ns;
            self.command_count[i] += n;
        }
        Ok(())
    }
}

/// Longest latency the histograms hold; longer ones count as this.
const MAX_LATENCY_NS: u64 = 60_000_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds")
}

/// The window every thread works in: the first moment, and the measured part.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    measured_from: Instant,
    end: Instant,
}

impl Window {
    /// Whether a transaction due at `started` and done at `done` counts.
    fn counts(&self, started: Instant, done: Instant) -> bool {
        started >= self.measured_from && done <= self.end
    }
}

/// One trial on `target`.
/// The meter counts the measured window only, from the thread that waits for the
/// clients.
pub fn trial(target: &Target, load: &RunSpec, meter: &mut Meter) -> Result<Trial> {
    let threads = load.threads.clamp(1, load.clients);
    let start = Instant::now() + Duration::from_millis(50);
    let measured_from = start + load.warmup;
    let window = Window {
        start,
        measured_from,
        end: measured_from + load.duration,
    };
    let names: Vec<CString> = (0..load.script.commands.len())
        .map(|i| CString::new(format!("sockbench_{i}")))
        .collect::<Result<_, _>>()?;
    let live: Vec<Live> = (0..threads).map(|_| Live::default()).collect();
    let failed = AtomicBool::new(false);
    let side = meter.server_side();
    let wait = || {
        sleep_until(measured_from, &failed, None);
        meter.start();
        let mut reporter = load
            .progress
            .as_ref()
            .map(|(every, label)| Reporter::new(*every, label, measured_from, &live));
        sleep_until(window.end, &failed, reporter.as_mut());
        meter.end();
    };
    let tallies = on_threads_while(
        threads as usize,
        |t| {
            let share = load.clients / threads + u32::from((t as u32) < load.clients % threads);
            let first_id = (0..t as u32)
                .map(|u| load.clients / threads + u32::from(u < load.clients % threads))
                .sum();
            let progress = load.progress.is_some().then_some(&live[t]);
            let thread =
                drive::Thread::new(target, load, &names, window, t as u64, progress, &side);
            let tally = thread.run(share, first_id);
            if tally.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            tally
        },
        wait,
    )?;
    let mut merged = ThreadTally::new(load.script.commands.len());
    for tally in &tallies {
        merged.add(tally)?;
    }
    let count = merged.histogram.len();
    if count == 0 && merged.failed > 0 {
        bail!(
            "every transaction failed ({} of them); check the script against the server",
            merged.failed
        );
    }
    let elapsed_ns = nanos(load.duration);
    meter.stop(count);
    Ok(Trial {
        metrics: metrics(load, &merged, elapsed_ns).with(CONNECTIONS, merged.connections),
        count,
        elapsed_ns,
        ..Trial::default()
    })
}

fn metrics(load: &RunSpec, t: &ThreadTally, elapsed_ns: u64) -> Metrics {
    let count = t.histogram.len();
    let percentiles = |h: &Histogram<u64>| {
        let q = |q: f64| h.value_at_quantile(q) as f64;
        (!h.is_empty()).then(|| Percentiles {
            mean: h.mean(),
            p50: q(0.50),
            p99: q(0.99),
            p999: q(0.999),
        })
    };
    Metrics::default()
        .with(TPS, Some(rate(count, elapsed_ns)))
        .with(LATENCY_NS, percentiles(&t.histogram))
        .with(FAILED, Some(t.failed))
        .with(LATE, load.latency_limit.map(|_| t.late))
        .with(
            SKIPPED,
            load.latency_limit.and(load.rate).map(|_| t.skipped),
        )
        .with(LAG_NS, load.rate.and_then(|_| percentiles(&t.lag)))
        .with(
            PER_COMMAND_NS,
            load.per_command.then(|| {
                t.command_ns
                    .iter()
                    .zip(&t.command_count)
                    .map(|(&ns, &n)| if n == 0 { 0.0 } else { ns as f64 / n as f64 })
                    .collect()
            }),
        )
}

/// Sleeps until `at`, or until Ctrl-C or a client thread failed, in slices of at
/// most 50 ms, printing progress lines when due.
fn sleep_until(at: Instant, failed: &AtomicBool, mut reporter: Option<&mut Reporter>) {
    loop {
        let now = Instant::now();
        let left = at.saturating_duration_since(now);
        if left.is_zero() || crate::interrupt::interrupted() || failed.load(Ordering::Relaxed) {
            return;
        }
        if let Some(r) = reporter.as_deref_mut() {
            r.report_if_due(now);
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
