//! A difference of two figures that may be negative, where a ratio cannot go: the
//! mean of paired differences over rounds, with its 95% interval.

use super::t_975;
use serde::{Deserialize, Serialize};

/// The mean of paired differences `b[i] − a[i]`, round by round, with its 95%
/// interval (Student's t).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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

    /// The difference the other way round, `a[i] − b[i]`.
    pub fn negated(self) -> Difference {
        Difference {
            estimate: -self.estimate,
            low: -self.high,
            high: -self.low,
        }
    }

    /// Whether the rounds can tell it from zero, and it is positive.
    pub fn resolved(&self) -> bool {
        self.low > 0.0
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
}
