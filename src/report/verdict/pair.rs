//! One transport against another in a verdict line: the paired ratio over rounds,
//! the geometric means it comes from, and which of three outcomes it is.

use crate::results::metric::Metric;
use crate::results::paired::{cost, cpu_ns, extra_cpu};
use crate::results::ResultRecord;
use crate::stats::{Difference, Interval};

/// How far apart two transports may be and still be called the same: ±5%.
pub const SAME: f64 = 0.05;

/// What a paired interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The interval excludes no change, and reaches beyond ±5%.
    Differs,
    /// The interval lies within ±5%: the same for any practical purpose, even when
    /// it excludes no change.
    Same,
    /// The interval is too wide to tell either, or to print at all
    /// ([`Interval::informative`]), or there were too few rounds.
    Inconclusive,
}

impl Outcome {
    pub fn of(ratio: Option<&Interval>) -> Outcome {
        match ratio {
            Some(i) if !i.informative() => Outcome::Inconclusive,
            Some(i) if i.low >= 1.0 - SAME && i.high <= 1.0 + SAME => Outcome::Same,
            Some(i) if i.low > 1.0 || i.high < 1.0 => Outcome::Differs,
            _ => Outcome::Inconclusive,
        }
    }
}

/// `other` against `base` on one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub base: String,
    pub other: String,
    /// Other's cost over base's (time per operation; a rate's reciprocal), round by
    /// round, with its 95% interval; none with fewer than two paired rounds.
    pub ratio: Option<Interval>,
    /// Each side's cost: the geometric mean over the paired rounds, so that
    /// `other_cost / base_cost` is the ratio's estimate exactly.
    pub base_cost: f64,
    pub other_cost: f64,
    pub outcome: Outcome,
    /// The extra CPU time per operation, client and server together, with its
    /// interval ([`extra_cpu`]), when both sides measured it: the one figure of
    /// extra CPU that the tables, the CSV and the why show too.
    pub extra_cpu_ns: Option<Difference>,
}

impl Pair {
    pub fn of(metric: &Metric, base: &ResultRecord, other: &ResultRecord) -> Option<Pair> {
        let rounds: Vec<(f64, f64)> = base
            .trials
            .iter()
            .zip(&other.trials)
            .filter_map(|(a, b)| Some((cost(metric, &a.metrics)?, cost(metric, &b.metrics)?)))
            .collect();
        let ratios: Vec<f64> = rounds.iter().map(|(a, b)| b / a).collect();
        let ratio = Interval::of_paired(&ratios);
        let (base_cost, other_cost) = if rounds.is_empty() {
            (cost(metric, &base.metrics)?, cost(metric, &other.metrics)?)
        } else {
            let side = |f: fn(&(f64, f64)) -> f64| geometric_mean(rounds.iter().map(f));
            (side(|r| r.0), side(|r| r.1))
        };
        Some(Pair {
            base: base.transport.clone(),
            other: other.transport.clone(),
            outcome: Outcome::of(ratio.as_ref()),
            ratio,
            base_cost,
            other_cost,
            extra_cpu_ns: extra_cpu(base, other),
        })
    }

    /// `other` against `base` where they were not measured in the same rounds (two
    /// experiments of one run, one after the other): the ratio of their geometric
    /// means over all their rounds with Welch's interval on the logarithms
    /// ([`Interval::of_two`], as `compare` sets two runs side by side), and the
    /// extra CPU per operation as the difference of the means
    /// ([`Difference::unpaired`]). Drift of the machine between the two is not in
    /// the interval, as it is not between two runs; the line that prints it says
    /// it is unpaired. `None` unless both sides have a cost in two rounds or more.
    pub fn unpaired(metric: &Metric, base: &ResultRecord, other: &ResultRecord) -> Option<Pair> {
        let costs = |r: &ResultRecord| -> Vec<f64> {
            r.trials
                .iter()
                .filter_map(|t| cost(metric, &t.metrics))
                .collect()
        };
        let (a, b) = (costs(base), costs(other));
        let ratio = Interval::of_two(&a, &b)?;
        let cpu = |r: &ResultRecord| -> Vec<f64> {
            r.trials.iter().filter_map(|t| cpu_ns(&t.metrics)).collect()
        };
        Some(Pair {
            base: base.transport.clone(),
            other: other.transport.clone(),
            outcome: Outcome::of(Some(&ratio)),
            ratio: Some(ratio),
            base_cost: geometric_mean(a.into_iter()),
            other_cost: geometric_mean(b.into_iter()),
            extra_cpu_ns: Difference::unpaired(&cpu(base), &cpu(other)),
        })
    }

    /// The point estimate: other's cost over base's.
    pub fn estimate(&self) -> f64 {
        self.other_cost / self.base_cost
    }

    /// About how many rounds would make the interval settled (within ±5% on either
    /// side), when it is not ([`Interval::rounds_to_settle`]).
    pub fn rounds_to_settle(&self) -> Option<u32> {
        self.ratio?.rounds_to_settle()
    }
}

fn geometric_mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v.ln(), n + 1));
    (sum / n.max(1) as f64).exp()
}
