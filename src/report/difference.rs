//! Differences of times that may be negative, where a ratio cannot go: TLS's extra
//! cost of a connection (tls minus tcp), an authentication method's cost over
//! trust, a fitted intercept. A difference too small for the rounds to tell from
//! zero is shown as "below resolution", never as a negative time.
//!
//! The rule, written once here: a difference is below resolution when its range
//! over trials (or, paired, its 95% interval) holds zero or lies below it.

pub use crate::stats::Difference;

/// What a table shows for a difference the rounds cannot tell from zero.
pub const BELOW_RESOLUTION: &str = "below resolution";

/// The note that explains [`BELOW_RESOLUTION`] under a table that shows it.
pub const BELOW_RESOLUTION_NOTE: &str = "below resolution: a difference (or fixed cost) \
     whose range over rounds, or 95% interval, holds zero or lies below it; the rounds \
     cannot tell it from nothing";

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
    fn a_range_that_holds_zero_is_not_resolved() {
        assert!(resolved(&[2.4e6, 3.0e6, 1.5e7], 3.0e6));
        assert!(!resolved(&[-1.0e8, 2.4e6, 1.5e7], 2.4e6));
        assert!(!resolved(&[0.0, 1.0], 0.5));
        assert!(!resolved(&[], -5.0));
        assert!(resolved(&[], 5.0));
    }
}
