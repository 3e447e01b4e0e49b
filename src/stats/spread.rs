//! Median and range of one figure over repeated trials.
//!
//! With the handful of trials a benchmark can afford (3 to 10), the median is the
//! robust centre and the min–max range is the honest spread: it hides nothing and
//! assumes no distribution.

use serde::{Deserialize, Serialize};

/// A result whose min–max range is wider than this fraction of its median is flagged
/// as noisy.
pub const NOISY_SPREAD: f64 = 0.10;

/// The median of values (mean of the two middle ones for an even count).
pub fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "median of no values");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// A figure's median and range over trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        Spread {
            median: median(values),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// (max − min) / median; 0 for a zero median.
    pub fn relative(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }

    pub fn is_noisy(&self) -> bool {
        self.relative() > NOISY_SPREAD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn spread_and_noise_flag() {
        let s = Spread::of(&[100.0, 104.0, 98.0]);
        assert_eq!((s.median, s.min, s.max), (100.0, 98.0, 104.0));
        assert!((s.relative() - 0.06).abs() < 1e-12);
        assert!(!s.is_noisy());
        assert!(Spread::of(&[100.0, 130.0, 90.0]).is_noisy());
    }
}
