//! What a figure in [`Metrics`] is: its name in the result file, what it counts and
//! which way is better. Experiments name their figures with these, so tables,
//! charts, the verdict and comparisons never guess a unit from a name.

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
    /// Reads it from one trial's (or a record's median) metrics.
    pub read: fn(&Metrics) -> Option<f64>,
}

impl Metric {
    pub const fn new(
        name: &'static str,
        unit: Unit,
        better: Better,
        read: fn(&Metrics) -> Option<f64>,
    ) -> Metric {
        Metric {
            name,
            unit,
            better,
            read,
        }
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
