//! Percentiles of a latency sample.
//!
//! Uses the nearest-rank definition (Hyndman & Fan 1996, definition 1: the inverse of
//! the empirical distribution function): the p-th percentile is the smallest sample
//! with at least p of the samples at or below it. It always returns a value that was
//! really measured, which is what a latency table should show.

use serde::{Deserialize, Serialize};

/// Mean and tail of a latency sample, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
}

impl Percentiles {
    /// Summarises samples in nanoseconds; sorts them in place. `None` when empty.
    pub fn of(samples_ns: &mut [u64]) -> Option<Percentiles> {
        if samples_ns.is_empty() {
            return None;
        }
        samples_ns.sort_unstable();
        let sum: u128 = samples_ns.iter().map(|&s| s as u128).sum();
        Some(Percentiles {
            mean: sum as f64 / samples_ns.len() as f64,
            p50: percentile(samples_ns, 0.50) as f64,
            p99: percentile(samples_ns, 0.99) as f64,
            p999: percentile(samples_ns, 0.999) as f64,
        })
    }
}

/// The nearest-rank percentile `q` (0 < q ≤ 1) of sorted, non-empty samples.
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let sorted: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&sorted, 0.50), 50);
        assert_eq!(percentile(&sorted, 0.99), 99);
        assert_eq!(percentile(&sorted, 0.999), 100);
        assert_eq!(percentile(&sorted, 0.01), 1);
    }

    #[test]
    fn summary_of_unsorted_samples() {
        let mut samples = vec![40, 10, 30, 20];
        let p = Percentiles::of(&mut samples).unwrap();
        assert_eq!(p.mean, 25.0);
        assert_eq!(p.p50, 20.0);
        assert_eq!(p.p99, 40.0);
        assert_eq!(samples, vec![10, 20, 30, 40]);
    }

    #[test]
    fn single_sample_is_every_percentile() {
        let p = Percentiles::of(&mut [7]).unwrap();
        assert_eq!((p.mean, p.p50, p.p99, p.p999), (7.0, 7.0, 7.0, 7.0));
        assert!(Percentiles::of(&mut []).is_none());
    }
}
