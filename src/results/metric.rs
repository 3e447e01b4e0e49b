//! What a figure in [`Metrics`] is: its path in the result file, what it counts and
//! which way is better. Experiments declare their figures with these, as data, so
//! tables, charts, the verdict, comparisons and the loader's checks never guess a
//! unit from a name.

use super::Metrics;
use crate::stats::Interval;

/// What a figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds.
    Time,
    /// Operations per second.
    Rate,
    /// Bytes per second.
    ByteRate,
    /// A plain count.
    Count,
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// Which values a figure can have: the loader refuses any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Zero or more: a time, a rate, a count.
    NotNegative,
    /// Any: a difference or a fit, which may be below zero.
    Signed,
    /// A share of a whole, from 0 to 1.
    Share,
    /// A count that is exactly the figure `whole` less the figure `taken` beside it
    /// (in the same trial, or summed in the same record): the messages `lost` are
    /// those `sent` less those `received`, so neither is more than `sent`.
    Remainder {
        whole: &'static str,
        taken: &'static str,
    },
}

/// One figure of an experiment's [`Metrics`].
#[derive(Clone, Copy)]
pub struct Metric {
    /// Its path in the result file's `metrics`, e.g. `rtt_ns.p50`.
    pub name: &'static str,
    pub unit: Unit,
    pub better: Better,
    pub range: Range,
}

impl Metric {
    pub const fn new(name: &'static str, unit: Unit, better: Better) -> Metric {
        Metric {
            name,
            unit,
            better,
            range: Range::NotNegative,
        }
    }

    /// A figure that may be below zero (a difference, a fit's intercept).
    pub const fn signed(self) -> Metric {
        Metric {
            range: Range::Signed,
            ..self
        }
    }

    /// A share of a whole, from 0 to 1.
    pub const fn share(self) -> Metric {
        Metric {
            range: Range::Share,
            ..self
        }
    }

    /// A count that is `whole` less `taken` ([`Range::Remainder`]).
    pub const fn remainder(self, whole: &'static str, taken: &'static str) -> Metric {
        Metric {
            range: Range::Remainder { whole, taken },
            ..self
        }
    }

    /// Reads it from one trial's (or a record's median) metrics, by its path.
    pub fn read(&self, metrics: &Metrics) -> Option<f64> {
        metrics.number(self.name)
    }

    pub fn higher_is_better(&self) -> bool {
        self.better == Better::Higher
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// What the loader knows of an experiment: its headline, every figure it declares
/// (their units and ranges decide which values are possible) and the parameters
/// that set only how long it measured (a record's case is the others).
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub headline: Metric,
    pub figures: &'static [Metric],
    pub budgets: &'static [&'static str],
}

impl Declared {
    /// The declared figure whose path starts with `name` (`rtt_ns` for `rtt_ns.p50`).
    pub fn figure(&self, name: &str) -> Option<&'static Metric> {
        self.figures
            .iter()
            .find(|m| m.name.split('.').next() == Some(name))
    }
}

/// No number in a result file reaches this: no measured time (ns), rate (/s), size
/// or count comes near it. The loader refuses a larger one, and the intervals
/// sockbench writes are held below it ([`within_limits`]).
pub const MAX_MAGNITUDE: f64 = 1e15;

/// No rate, headline, interval bound or ratio in a result file is below this: one
/// operation in eleven days, a millionth of a nanosecond, a ratio of a million to
/// one. It keeps zero and subnormal numbers out, whose reciprocals are infinite.
/// The loader refuses a smaller one, and the intervals sockbench writes are held
/// above it ([`within_limits`]).
pub const MIN_POSITIVE: f64 = 1e-6;

/// `interval` held within [`MIN_POSITIVE`] and [`MAX_MAGNITUDE`], the range the
/// loader accepts: how every interval is written. From two or three widely spread
/// rounds a 95% t interval reaches far past anything measurable (t is 12.7 with two
/// rounds), and a bound at the limit says what one beyond it says: the figure is
/// not known to within a factor of thousands. Whether it differs from 1 or is
/// settled is the same either way.
pub fn within_limits(interval: Interval) -> Interval {
    let held = |x: f64| x.clamp(MIN_POSITIVE, MAX_MAGNITUDE);
    Interval {
        estimate: held(interval.estimate),
        low: held(interval.low),
        high: held(interval.high),
        n: interval.n,
    }
}
