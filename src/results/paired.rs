//! Paired comparisons within one run: every transport against the reference
//! transport, round by round, with 95% intervals; and whether they are settled.

use super::metric::{within_limits, Metric};
use super::{Metrics, ResultRecord, Versus};
use crate::stats::Interval;
use crate::transport::Transport;

/// The transport every other one is compared with: the Unix socket when it was
/// measured (a record's transport names a [`Transport`], or for a user's server
/// what it reached, `unix`), else the first.
pub fn reference<S: AsRef<str>>(labels: &[S]) -> usize {
    labels
        .iter()
        .position(|l| l.as_ref().parse() == Ok(Transport::Unix))
        .unwrap_or(0)
}

/// A figure as a cost, time per operation or its like, so that lower is better: a
/// rate's reciprocal. `None` when the figure is missing or not positive.
pub fn cost(metric: &Metric, metrics: &Metrics) -> Option<f64> {
    let v = metric.read(metrics).filter(|v| v.is_finite() && *v > 0.0)?;
    Some(if metric.higher_is_better() {
        1.0 / v
    } else {
        v
    })
}

/// Sets each record's headline interval, `vs_reference` and `settled`: each
/// round's cost over the reference's in the same round. Every interval is held
/// within what the loader accepts ([`within_limits`]). Trials are in round order,
/// so trial i of every record is round i.
pub fn pair(records: &mut [ResultRecord], headline: &Metric) {
    let costs = |r: &ResultRecord| -> Option<Vec<f64>> {
        r.trials
            .iter()
            .map(|t| cost(headline, &t.metrics))
            .collect()
    };
    for r in records.iter_mut() {
        let values: Vec<f64> = r
            .trials
            .iter()
            .filter_map(|t| headline.read(&t.metrics))
            .collect();
        r.headline.interval = Interval::of(&values).map(within_limits);
    }
    for i in 0..records.len() {
        let group: Vec<usize> = (0..records.len())
            .filter(|&j| {
                records[j].experiment == records[i].experiment
                    && records[j].params == records[i].params
            })
            .collect();
        let labels: Vec<&str> = group
            .iter()
            .map(|&j| records[j].transport.as_str())
            .collect();
        let r = group[reference(&labels)];
        let versus = (r != i)
            .then(|| {
                let ratio = Interval::of_ratios(&costs(&records[r])?, &costs(&records[i])?)
                    .map(within_limits)?;
                Some(Versus {
                    reference: records[r].transport.clone(),
                    ratio,
                })
            })
            .flatten();
        let deciding = match (&versus, group.len()) {
            (Some(v), _) => Some(v.ratio),
            (None, 1) => records[i].headline.interval,
            // The reference is settled when every comparison with it is.
            (None, _) => None,
        };
        records[i].headline.settled = deciding.is_some_and(|d| d.settled());
        records[i].headline.vs_reference = versus;
    }
    for i in 0..records.len() {
        if records[i].headline.vs_reference.is_none() && !records[i].headline.settled {
            let others: Vec<bool> = records
                .iter()
                .filter(|o| {
                    o.experiment == records[i].experiment
                        && o.params == records[i].params
                        && o.headline.vs_reference.is_some()
                })
                .map(|o| o.headline.settled)
                .collect();
            records[i].headline.settled = !others.is_empty() && others.iter().all(|s| *s);
        }
    }
}
