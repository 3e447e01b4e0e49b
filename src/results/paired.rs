//! Paired comparisons within one run: every transport against the one it is
//! compared with, round by round, with 95% intervals; and whether they are settled.
//!
//! The rule, written once here ([`against`]): every transport is compared with the
//! reference transport (unix when measured), except TLS, which is compared with the
//! same transport without it, tcp, when tcp was measured. The terminal, the tables,
//! the CSV, the page and the verdict all print these comparisons.

use super::metric::{within_limits, Metric};
use super::{Metrics, Params, ResultRecord, Versus};
use crate::stats::{Difference, Interval};
use crate::transport::Transport;
use std::collections::HashMap;

/// The transport every other one is compared with: the Unix socket when it was
/// measured (a record's transport names a [`Transport`], or for a user's server
/// what it reached, `unix`), else the first.
pub fn reference<S: AsRef<str>>(labels: &[S]) -> usize {
    labels
        .iter()
        .position(|l| Transport::Unix.is_named(l.as_ref()))
        .unwrap_or(0)
}

/// Which of `labels` each one is compared with: TLS with tcp when tcp is among
/// them, everything else with the [`reference`]; `None` for the reference itself.
/// All at once, as looking for tcp and the reference again for each label would
/// take the square of their number.
pub fn against<S: AsRef<str>>(labels: &[S]) -> Vec<Option<usize>> {
    let is = |l: &S, t: Transport| t.is_named(l.as_ref());
    let tcp = labels.iter().position(|l| is(l, Transport::Tcp));
    let reference = reference(labels);
    (0..labels.len())
        .map(|i| {
            let with = match tcp {
                Some(tcp) if is(&labels[i], Transport::Tls) => tcp,
                _ => reference,
            };
            (with != i).then_some(with)
        })
        .collect()
}

/// The extra CPU time per operation of `other` over `base`, client and server
/// together, round by round: the mean of the differences with its interval.
pub fn extra_cpu(base: &ResultRecord, other: &ResultRecord) -> Option<Difference> {
    let per_round = |r: &ResultRecord| -> Vec<Option<f64>> {
        r.trials.iter().map(|t| cpu_ns(&t.metrics)).collect()
    };
    let (a, b): (Vec<f64>, Vec<f64>) = per_round(base)
        .into_iter()
        .zip(per_round(other))
        .filter_map(|(a, b)| Some((a?, b?)))
        .unzip();
    Difference::paired(&a, &b)
}

/// CPU time per operation, client and server together.
pub fn cpu_ns(metrics: &Metrics) -> Option<f64> {
    let cost = metrics.cpu.as_ref()?;
    Some(cost.client.cpu_ns + cost.server.map_or(0.0, |s| s.cpu_ns))
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
    for case in cases(records) {
        let labels: Vec<&str> = (case.iter())
            .map(|&i| records[i].transport.as_str())
            .collect();
        let decided: Vec<(Option<Versus>, bool)> = (case.iter().zip(against(&labels)))
            .map(|(&i, with)| {
                let versus = with.and_then(|w| {
                    let r = case[w];
                    let ratio = Interval::of_ratios(&costs(&records[r])?, &costs(&records[i])?)
                        .map(within_limits)?;
                    Some(Versus {
                        reference: records[r].transport.clone(),
                        ratio,
                        extra_cpu_ns: extra_cpu(&records[r], &records[i]),
                    })
                });
                let deciding = match (&versus, case.len()) {
                    (Some(v), _) => Some(v.ratio),
                    (None, 1) => records[i].headline.interval,
                    // The reference is settled when every comparison with it is.
                    (None, _) => None,
                };
                (versus, deciding.is_some_and(|d| d.settled()))
            })
            .collect();
        for (&i, (versus, settled)) in case.iter().zip(decided) {
            records[i].headline.settled = settled;
            records[i].headline.vs_reference = versus;
        }
        let others: Vec<bool> = (case.iter().map(|&i| &records[i].headline))
            .filter(|h| h.vs_reference.is_some())
            .map(|h| h.settled)
            .collect();
        for &i in &case {
            let h = &mut records[i].headline;
            if h.vs_reference.is_none() && !h.settled {
                h.settled = !others.is_empty() && others.iter().all(|s| *s);
            }
        }
    }
}

/// The indices of `records` by case (experiment and parameters), each case's in
/// order: the transports compared with each other.
fn cases(records: &[ResultRecord]) -> Vec<Vec<usize>> {
    let mut index: HashMap<(&str, &Params), usize> = HashMap::new();
    let mut cases: Vec<Vec<usize>> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let case = *index
            .entry((r.experiment.as_str(), &r.params))
            .or_insert_with(|| {
                cases.push(Vec::new());
                cases.len() - 1
            });
        cases[case].push(i);
    }
    cases
}
