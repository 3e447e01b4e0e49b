//! Time in the concurrent experiment besides the clients: the Poisson schedule of a
//! fixed rate (pgbench `-R`), and the progress lines (pgbench `-P`) printed from the
//! waiting thread out of counters the clients' threads add to.

use crate::postgres::script::Rng;
use crate::report::format::duration_ns;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When a thread's next transaction is due: start times with exponential gaps, as
/// pgbench's throttling draws them, from a generator seeded per thread.
pub struct Throttle {
    pub next: Instant,
    /// Mean gap between two starts, seconds.
    mean_gap: f64,
    rng: Rng,
}

impl Throttle {
    pub fn new(per_second: f64, from: Instant, seed: u64) -> Throttle {
        let mut s = Throttle {
            next: from,
            mean_gap: 1.0 / per_second,
            rng: Rng::new(seed),
        };
        s.advance();
        s
    }

    /// Moves to the next start. Not capped, so the mean rate holds at any rate: a
    /// uniform in (0, 1] keeps a gap under 37 mean gaps.
    pub fn advance(&mut self) {
        let gap = -self.rng.unit().ln() * self.mean_gap;
        self.next += Duration::from_secs_f64(gap);
    }
}

/// What one thread's clients finished in the measured window so far, for progress
/// lines; on its own cache line, written by that thread only.
#[derive(Default)]
#[repr(align(64))]
pub struct Live {
    done: AtomicU64,
    failed: AtomicU64,
    latency_us: AtomicU64,
    latency_us2: AtomicU64,
    lag_us: AtomicU64,
}

impl Live {
    pub fn finished(&self, latency: Duration, lag: Option<Duration>, failed: bool) {
        if failed {
            self.failed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let us = latency.as_micros() as u64;
        self.done.fetch_add(1, Ordering::Relaxed);
        self.latency_us.fetch_add(us, Ordering::Relaxed);
        self.latency_us2
            .fetch_add(us.saturating_mul(us), Ordering::Relaxed);
        if let Some(lag) = lag {
            self.lag_us
                .fetch_add(lag.as_micros() as u64, Ordering::Relaxed);
        }
    }
}

/// Sums over the threads.
#[derive(Default, Clone, Copy)]
struct Totals {
    done: u64,
    failed: u64,
    latency_us: u64,
    latency_us2: u64,
    lag_us: u64,
}

/// Prints a line like pgbench's `-P` every `every` of the measured window.
pub struct Reporter<'a> {
    every: Duration,
    label: &'a str,
    from: Instant,
    next: Instant,
    live: &'a [Live],
    last: Totals,
}

impl<'a> Reporter<'a> {
    pub fn new(every: Duration, label: &'a str, from: Instant, live: &'a [Live]) -> Reporter<'a> {
        Reporter {
            every,
            label,
            from,
            next: from + every,
            live,
            last: Totals::default(),
        }
    }

    pub fn report_if_due(&mut self, now: Instant) {
        if now < self.next {
            return;
        }
        self.next += self.every;
        let mut t = Totals::default();
        for l in self.live {
            t.done += l.done.load(Ordering::Relaxed);
            t.failed += l.failed.load(Ordering::Relaxed);
            t.latency_us += l.latency_us.load(Ordering::Relaxed);
            t.latency_us2 += l.latency_us2.load(Ordering::Relaxed);
            t.lag_us += l.lag_us.load(Ordering::Relaxed);
        }
        let n = t.done - self.last.done;
        let seconds = self.every.as_secs_f64();
        let line = line(self.label, now - self.from, n, seconds, &t, &self.last);
        eprintln!("{}", crate::units::printable(&line));
        self.last = t;
    }
}

/// `progress: tcp, 10 clients: 5.0 s, 2345.6 tps, lat 4.262 ms stddev 1.031 ms, 0 failed`.
fn line(label: &str, at: Duration, n: u64, seconds: f64, t: &Totals, last: &Totals) -> String {
    let mut text = format!(
        "progress: {label}: {:.1} s, {:.1} tps",
        at.as_secs_f64(),
        n as f64 / seconds
    );
    if n > 0 {
        let sum = (t.latency_us - last.latency_us) as f64;
        let sum2 = (t.latency_us2 - last.latency_us2) as f64;
        let mean = sum / n as f64;
        let stddev = (sum2 / n as f64 - mean * mean).max(0.0).sqrt();
        text += &format!(
            ", lat {} stddev {}",
            duration_ns(mean * 1e3),
            duration_ns(stddev * 1e3)
        );
        if t.lag_us > 0 {
            let lag = (t.lag_us - last.lag_us) as f64 / n as f64;
            text += &format!(", lag {}", duration_ns(lag * 1e3));
        }
    }
    text + &format!(", {} failed", t.failed - last.failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_keeps_its_mean_rate() {
        let from = Instant::now();
        let mut s = Throttle::new(1000.0, from, 3);
        for _ in 0..9_999 {
            s.advance();
        }
        let seconds = (s.next - from).as_secs_f64();
        assert!((9.5..10.5).contains(&seconds), "{seconds}");
    }

    #[test]
    fn a_progress_line_reads_like_pgbench() {
        let t = Totals {
            done: 10,
            failed: 1,
            latency_us: 10_000,
            latency_us2: 10_000_000,
            lag_us: 0,
        };
        let got = line(
            "tcp",
            Duration::from_secs(2),
            10,
            1.0,
            &t,
            &Totals::default(),
        );
        assert!(
            got.starts_with("progress: tcp: 2.0 s, 10.0 tps, lat 1"),
            "{got}"
        );
        assert!(got.ends_with(", 1 failed"), "{got}");
    }
}
