//! Whether an experiment's intervals are settled: every paired ratio against the
//! reference target (or, with one target, the headline itself) narrower than ±5%,
//! case by case, so that rounds past the minimum run only the cases still open.

use super::{Grid, Runner, Schedule};
use crate::results::metric::Metric;
use crate::results::paired::{cost, reference};
use crate::stats::Interval;

/// For each case, whether its intervals are settled; an interval that cannot be
/// computed (too few rounds, a missing figure) is not.
pub fn settled(
    schedule: &Schedule,
    runner: &dyn Runner,
    metric: &Metric,
    grid: &Grid,
) -> Vec<bool> {
    schedule
        .cases
        .iter()
        .zip(grid)
        .map(|(case, per_target)| {
            let labels: Vec<String> = case
                .targets
                .iter()
                .map(|&t| runner.target_label(t))
                .collect();
            let costs: Vec<Option<Vec<f64>>> = per_target
                .iter()
                .map(|trials| trials.iter().map(|t| cost(metric, &t.metrics)).collect())
                .collect();
            let settled = |i: Option<Interval>| i.is_some_and(|i| i.settled());
            if costs.len() < 2 {
                return costs
                    .iter()
                    .all(|c| settled(c.as_deref().and_then(Interval::of)));
            }
            let r = reference(&labels);
            let Some(base) = &costs[r] else {
                return false;
            };
            costs
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != r)
                .all(|(_, c)| settled(c.as_deref().and_then(|c| Interval::of_ratios(base, c))))
        })
        .collect()
}
