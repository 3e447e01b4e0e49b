//! Differences of times that may be negative, where a ratio cannot go: TLS's extra
//! cost of a connection (tls minus tcp), an authentication method's cost over
//! trust, a fitted intercept. A difference too small for the rounds to tell from
//! zero is shown as "below resolution", never as a negative time.
//!
//! The rule, written once here: a difference is below resolution when its range
//! over trials (or, paired, its 95% interval) holds zero or lies below it.

use crate::stats::t_975;

/// What a table shows for a difference the rounds cannot tell from zero.
pub const BELOW_RESOLUTION: &str = "below resolution";

/// The note that explains [`BELOW_RESOLUTION`] under a table that shows it.
pub const BELOW_RESOLUTION_NOTE: &str = "below resolution: a difference (or fixed cost) \
     whose range over rounds, or 95% interval, holds zero or lies below it; the rounds \
     cannot tell it from nothing";

/// The mean of paired differences `b[i] − a[i]`, round by round, with its 95%
/// interval (Student's t).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Difference {
    /// `b[i] − a[i]` over the rounds both have; `None` with fewer than two.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Difference> {
        let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| b - a).collect();
        if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let variance = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = t_975(d.len() - 1) * (variance / n).sqrt();
        Some(Difference {
            estimate: mean,
            low: mean - half,
            high: mean + half,
        })
    }

    /// Whether the rounds can tell it from zero, and it is positive.
    pub fn resolved(&self) -> bool {
        self.low > 0.0
    }
}

/// Whether a cost measured once per trial is told from zero: every trial's
/// value is positive (with none, the median alone decides).
pub fn resolved(per_trial: &[f64], median: f64) -> bool {
    if per_trial.is_empty() {
        median > 0.0
    } else {
        per_trial.iter().all(|v| *v > 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_difference_with_students_t() {
        // d = 2, 4, 6: mean 4, s = 2, t(2) = 4.302653, half = 4.302653·2/√3.
        let d = Difference::paired(&[1.0, 1.0, 1.0], &[3.0, 5.0, 7.0]).unwrap();
        assert!((d.estimate - 4.0).abs() < 1e-12);
        let half = 4.302653 * 2.0 / 3f64.sqrt();
        assert!((d.low - (4.0 - half)).abs() < 1e-5, "{d:?}");
        assert!((d.high - (4.0 + half)).abs() < 1e-5, "{d:?}");
        assert!(!d.resolved(), "[−0.97, 8.97] holds zero");
        let tight = Difference::paired(&[1.0, 1.0, 1.0], &[3.0, 3.1, 2.9]).unwrap();
        assert!(tight.resolved());
        assert_eq!(Difference::paired(&[1.0], &[2.0]), None);
    }

    #[test]
    fn a_range_that_holds_zero_is_not_resolved() {
        assert!(resolved(&[2.4e6, 3.0e6, 1.5e7], 3.0e6));
        assert!(!resolved(&[-1.0e8, 2.4e6, 1.5e7], 2.4e6));
        assert!(!resolved(&[0.0, 1.0], 0.5));
        assert!(!resolved(&[], -5.0));
        assert!(resolved(&[], 5.0));
    }
}
