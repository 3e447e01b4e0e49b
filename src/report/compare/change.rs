//! How one run differs from the baseline run, as numbers: the change of a figure
//! (did the times change?) and the change of a transport's paired ratio to the
//! reference (did the gap between, say, unix and tcp change?).
//!
//! Both are cost ratios, X over A: time per operation, a rate's reciprocal, so
//! above 1 always means X took more time, whichever way the figure is better.
//!
//! **The change of the gap** is the ratio of the two runs' paired ratios,
//! `ratio_X / ratio_A`. It is computed from the per-round ratios of both runs
//! (other ÷ reference, round by round, the values each run's own paired interval
//! was computed from) with Welch's t on their logarithms ([`Interval::of_two`]):
//! its estimate is exactly X's paired ratio over A's, and the two runs' rounds are
//! independent, so their variances add. When a run's rounds cannot be paired again
//! (a record without its trials, or with a different count than its reference),
//! the stored 95% intervals give the same answer: each one's standard error on the
//! log scale is `(ln high − ln low) / (2·t)` with t for its n − 1 degrees of
//! freedom, and the two combine as Welch's do ([`of_intervals`]; a test checks
//! that both ways agree). Doubt: rounds of one run are assumed independent of each
//! other, which slow drift of a machine can make optimistic; pairing within a run
//! already removes most of it.

use crate::stats::{t_975, Interval, SETTLED};

/// What a change says, in the words a comparison prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOutcome {
    /// X takes less time (its interval lies below 1).
    Faster,
    /// X takes more time (its interval lies above 1).
    Slower,
    /// The interval holds 1 and lies within ±5%: whatever difference there is, is
    /// smaller than that.
    Same,
    /// The interval holds 1 but is too wide to say the two are the same, or there
    /// is no interval (fewer than two rounds).
    Unsettled,
}

/// A cost ratio X / A: its estimate and, with two rounds or more on both sides, its
/// 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub estimate: f64,
    pub interval: Option<Interval>,
}

impl Change {
    /// A change with its interval.
    pub fn of(interval: Interval) -> Change {
        Change {
            estimate: interval.estimate,
            interval: Some(interval),
        }
    }

    /// Which of the four outcomes the interval shows; one too wide to print
    /// ([`Interval::informative`]) is not settled whatever it excludes.
    pub fn outcome(&self) -> ChangeOutcome {
        let Some(i) = self.interval.filter(Interval::informative) else {
            return ChangeOutcome::Unsettled;
        };
        if i.high < 1.0 {
            ChangeOutcome::Faster
        } else if i.low > 1.0 {
            ChangeOutcome::Slower
        } else if i.low >= 1.0 / (1.0 + SETTLED) && i.high <= 1.0 + SETTLED {
            ChangeOutcome::Same
        } else {
            ChangeOutcome::Unsettled
        }
    }

    /// `×1.22 [1.06, 1.42]`, or `×1.05` without an interval; an interval too
    /// wide to say anything is not printed: `×1.05 (6 rounds in all: too few to bound it)`.
    pub fn numbers(&self) -> String {
        match self.interval {
            Some(i) if i.informative() => {
                format!("×{:.2} [{:.2}, {:.2}]", i.estimate, i.low, i.high)
            }
            Some(i) => format!(
                "×{:.2} ({} rounds in all: too few to bound it)",
                i.estimate, i.n
            ),
            None => format!("×{:.2}", self.estimate),
        }
    }
}

/// The change of a figure from A to X: `a` and `b` are each run's costs per trial
/// (time per operation; a rate's reciprocal), `medians` their costs of the
/// medians, used alone when a side has fewer than two trials.
pub fn of_figure(a: &[f64], b: &[f64], medians: (f64, f64)) -> Option<Change> {
    match Interval::of_two(a, b) {
        Some(i) => Some(Change::of(i)),
        None => estimate_only(medians.0, medians.1),
    }
}

/// The change of a paired ratio from A to X: from both runs' per-round ratios when
/// both have them, else from their stored intervals, else the estimates alone.
pub fn of_gap(
    rounds: (Option<Vec<f64>>, Option<Vec<f64>>),
    intervals: (Interval, Interval),
) -> Option<Change> {
    let (a, b) = intervals;
    if let (Some(ra), Some(rb)) = rounds {
        if let Some(i) = Interval::of_two(&ra, &rb) {
            return Some(Change::of(i));
        }
    }
    match of_intervals(&a, &b) {
        Some(i) => Some(Change::of(i)),
        None => estimate_only(a.estimate, b.estimate),
    }
}

/// `b / a` from two 95% intervals of geometric means, combined on the log scale:
/// each side's standard error from its half-width and its t, Welch–Satterthwaite
/// degrees of freedom rounded down (as [`Interval::of_two`] does).
pub fn of_intervals(a: &Interval, b: &Interval) -> Option<Interval> {
    let se2 = |i: &Interval| -> Option<f64> {
        let usable = i.n >= 2 && i.low > 0.0 && i.high >= i.low && i.high.is_finite();
        usable.then(|| ((i.high.ln() - i.low.ln()) / (2.0 * t_975(i.n as usize - 1))).powi(2))
    };
    let (sa, sb) = (se2(a)?, se2(b)?);
    let (na, nb) = (a.n as f64, b.n as f64);
    let se = (sa + sb).sqrt();
    let df = if se == 0.0 {
        na + nb - 2.0
    } else {
        (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
    };
    let d = b.estimate.ln() - a.estimate.ln();
    let half = t_975(df.floor() as usize) * se;
    Some(Interval {
        estimate: d.exp(),
        low: (d - half).exp(),
        high: (d + half).exp(),
        n: a.n + b.n,
    })
}

fn estimate_only(a: f64, b: f64) -> Option<Change> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    (ok(a) && ok(b)).then(|| Change {
        estimate: b / a,
        interval: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    // The Welch-on-logs reference of stats/interval.rs (SciPy), which does not
    // depend on the scale: here the values are per-round ratios to the reference.
    const B_OVER_A: (f64, f64, f64) = (1.2240570, 1.0576313, 1.4166711);

    #[test]
    fn the_gap_changes_by_the_ratio_of_the_paired_ratios_with_welch_on_their_logs() {
        let a = vec![1.00, 1.04, 0.98, 1.01, 0.99];
        let b = vec![1.20, 1.31, 1.18];
        let (ia, ib) = (Interval::of(&a).unwrap(), Interval::of(&b).unwrap());
        let change = of_gap((Some(a), Some(b)), (ia, ib)).unwrap();
        let i = change.interval.unwrap();
        assert!(close(i.estimate, B_OVER_A.0), "{i:?}");
        assert!(close(i.low, B_OVER_A.1), "{i:?}");
        assert!(close(i.high, B_OVER_A.2), "{i:?}");
        // Exactly X's paired ratio over A's.
        assert!(close(i.estimate, ib.estimate / ia.estimate));
        assert_eq!(change.outcome(), ChangeOutcome::Slower);
    }

    #[test]
    fn stored_intervals_give_what_the_rounds_give() {
        let a = [1.28, 1.35, 1.19, 1.31, 1.24];
        let b = [1.10, 1.52, 1.33, 1.05];
        let from_rounds = Interval::of_two(&a, &b).unwrap();
        let (ia, ib) = (Interval::of(&a).unwrap(), Interval::of(&b).unwrap());
        let from_intervals = of_intervals(&ia, &ib).unwrap();
        for (x, y) in [
            (from_rounds.estimate, from_intervals.estimate),
            (from_rounds.low, from_intervals.low),
            (from_rounds.high, from_intervals.high),
        ] {
            assert!((x - y).abs() < 1e-9, "{from_rounds:?} {from_intervals:?}");
        }
        // Without the rounds, the intervals are used.
        let change = of_gap((None, Some(b.to_vec())), (ia, ib)).unwrap();
        assert_eq!(change.interval, Some(from_intervals));
    }

    #[test]
    fn a_gap_that_stays_while_the_machine_swings_is_the_same() {
        // Both runs: tcp 1.5 times unix every round, though B is twice as slow.
        let rounds = || Some(vec![1.5, 1.5, 1.5, 1.5]);
        let i = Interval::of(&[1.5, 1.5, 1.5, 1.5]).unwrap();
        let gap = of_gap((rounds(), rounds()), (i, i)).unwrap();
        assert_eq!(gap.outcome(), ChangeOutcome::Same);
        assert_eq!(gap.numbers(), "×1.00 [1.00, 1.00]");
        let times = of_figure(&[10.0, 11.0, 10.5], &[20.0, 21.0, 20.5], (10.5, 20.5)).unwrap();
        assert_eq!(times.outcome(), ChangeOutcome::Slower);
        // Twice the rate is half the cost per operation: faster.
        let rate = |per_s: [f64; 3]| per_s.map(|r| 1.0 / r);
        let doubled = of_figure(
            &rate([100.0, 101.0, 99.0]),
            &rate([200.0, 202.0, 198.0]),
            (0.01, 0.005),
        );
        assert_eq!(doubled.unwrap().outcome(), ChangeOutcome::Faster);
    }

    #[test]
    fn a_wide_interval_is_not_settled_and_one_round_has_no_interval() {
        let wide = of_figure(&[10.0, 20.0, 12.0], &[11.0, 25.0, 9.0], (12.0, 11.0)).unwrap();
        assert_eq!(wide.outcome(), ChangeOutcome::Unsettled);
        let one = of_figure(&[10.0], &[12.0], (10.0, 12.0)).unwrap();
        assert_eq!(one.interval, None);
        assert_eq!(one.outcome(), ChangeOutcome::Unsettled);
        assert_eq!(one.numbers(), "×1.20");
        assert_eq!(of_figure(&[10.0], &[12.0], (0.0, 12.0)), None);
    }
}
