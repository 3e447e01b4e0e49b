//! What a figure in [`Metrics`] is: its path in the result file, what it counts and
//! which way is better. Experiments declare their figures with these, as data, so
//! tables, charts, the verdict, comparisons and the loader's checks never guess a
//! unit from a name.

use super::Metrics;

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

/// One figure of an experiment's [`Metrics`].
#[derive(Clone, Copy)]
pub struct Metric {
    /// Its path in the result file's `metrics`, e.g. `rtt_ns.p50`.
    pub name: &'static str,
    pub unit: Unit,
    pub better: Better,
    /// True for a figure that is a difference or a fit, and so may be below zero
    /// (the loader refuses a negative value of any other).
    pub signed: bool,
}

impl Metric {
    pub const fn new(name: &'static str, unit: Unit, better: Better) -> Metric {
        Metric {
            name,
            unit,
            better,
            signed: false,
        }
    }

    /// A figure that may be below zero (a difference, a fit's intercept).
    pub const fn signed(self) -> Metric {
        Metric {
            signed: true,
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

/// What the loader knows of an experiment: its headline and every figure it
/// declares (their units and signs decide which values are possible).
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub headline: Metric,
    pub figures: &'static [Metric],
}

impl Declared {
    /// The declared figure whose path starts with `name` (`rtt_ns` for `rtt_ns.p50`).
    pub fn figure(&self, name: &str) -> Option<&'static Metric> {
        self.figures
            .iter()
            .find(|m| m.name.split('.').next() == Some(name))
    }
}
