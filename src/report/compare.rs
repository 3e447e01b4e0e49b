//! Two result files side by side, like a write-up's System A / System B tables:
//! the system facts first, then each headline figure on both with the ratio B / A.
//!
//! Records are matched by experiment, transport and parameters; a figure only one
//! file has is shown with a dash on the other side rather than dropped.

use super::block::{Block, Row};
use super::columns::distinct;
use super::experiment::{Catalog, Experiment};
use super::format::figure;
use super::system::facts;
use super::{Document, Section};
use crate::results::{Params, ResultFile, ResultRecord};
use crate::stats::Interval;

/// The comparison of `a` and `b`, named as given on the command line.
pub fn document(a: (&str, &ResultFile), b: (&str, &ResultFile), catalog: &Catalog) -> Document {
    let mut blocks = vec![system_block(a.1, b.1)];
    blocks.extend(experiment_blocks(&a.1.results, &b.1.results, catalog));
    Document {
        title: "sockbench comparison".into(),
        sections: vec![Section {
            heading: format!(
                "A = {} ({}), B = {} ({})",
                a.0, a.1.started_at, b.0, b.1.started_at
            ),
            summary: vec![
                "Each row is a headline figure; B / A above 1 means B measured more (more \
                 time for times, more per second for rates). The interval is Welch's t on \
                 the logarithms of both runs' trials, 95%; the runs differ only when it \
                 excludes 1."
                    .into(),
            ],
            blocks,
            verdict: Vec::new(),
        }],
    }
}

fn system_block(a: &ResultFile, b: &ResultFile) -> Block {
    let rows = facts(a)
        .into_iter()
        .zip(facts(b))
        .map(|((name, va), (_, vb))| vec![name.to_string(), va, vb])
        .collect();
    Block::facts(
        "system",
        vec!["fact".into(), "System A".into(), "System B".into()],
        rows,
    )
}

/// One block per experiment (in A's order, then any only B has).
fn experiment_blocks(a: &[ResultRecord], b: &[ResultRecord], catalog: &Catalog) -> Vec<Block> {
    distinct(a.iter().chain(b), |r| catalog.of(r))
        .into_iter()
        .flatten()
        .map(|experiment| {
            let ours = |r: &&ResultRecord| catalog.of(r) == Some(experiment);
            let mut rows = Vec::new();
            let in_a = a.iter().filter(ours);
            let only_b = b.iter().filter(ours).filter(|r| find(a, r).is_none());
            for r in in_a.chain(only_b) {
                let (va, vb) = (find(a, r), find(b, r));
                let unit = experiment.headline.unit;
                let value = |x: Option<&ResultRecord>| {
                    x.map_or("-".into(), |x| figure(unit, x.headline.spread.median))
                };
                let (ratio, verdict) = match (va, vb) {
                    (Some(x), Some(y)) => between(experiment, x, y),
                    _ => ("-".into(), "-".into()),
                };
                rows.push(Row::texts(
                    &label(experiment, r),
                    [value(va), value(vb), ratio, verdict],
                ));
            }
            Block {
                title: format!(
                    "{} — {}, median over trials",
                    experiment.id, experiment.headline.name
                ),
                header: ["transport", "A", "B", "B / A, 95% interval", "runs differ?"]
                    .map(String::from)
                    .to_vec(),
                rows,
                experiment: Some(experiment),
                ..Block::facts("", Vec::new(), Vec::new())
            }
        })
        .collect()
}

/// B / A with its interval over both runs' trials, and whether they differ: `1.22
/// [1.06, 1.42]`, `B higher`. With fewer than two trials on a side, the ratio of
/// the medians alone, "not settled".
fn between(experiment: &Experiment, a: &ResultRecord, b: &ResultRecord) -> (String, String) {
    let values = |r: &ResultRecord| -> Vec<f64> {
        r.trials
            .iter()
            .filter_map(|t| (experiment.headline.read)(&t.metrics))
            .collect()
    };
    match Interval::of_two(&values(a), &values(b)) {
        Some(i) => {
            let verdict = if !i.differs() {
                "no clear difference"
            } else if i.low > 1.0 {
                "B higher"
            } else {
                "B lower"
            };
            (
                format!("{:.2} [{:.2}, {:.2}]", i.estimate, i.low, i.high),
                verdict.into(),
            )
        }
        None if a.headline.spread.median > 0.0 => (
            format!("{:.2}", b.headline.spread.median / a.headline.spread.median),
            "not settled".into(),
        ),
        None => ("-".into(), "-".into()),
    }
}

/// The record of `of`'s kind in `records`: same experiment, transport, parameters.
fn find<'r>(records: &'r [ResultRecord], of: &ResultRecord) -> Option<&'r ResultRecord> {
    records.iter().find(|r| {
        r.experiment == of.experiment
            && r.transport == of.transport
            && same_case(&r.params, &of.params)
    })
}

/// Parameters that make a different measurement (not budgets such as durations or
/// batch sizes, which two runs may choose differently).
fn same_case(a: &Params, b: &Params) -> bool {
    a.size == b.size
        && a.write_size == b.write_size
        && a.clients == b.clients
        && a.auth_method == b.auth_method
        && a.connect_per_transaction == b.connect_per_transaction
        && a.placement == b.placement
}

/// `tcp`, `tcp, 64 B`, `unix, scram-sha-256`, `tls, 10 clients`.
fn label(experiment: &Experiment, r: &ResultRecord) -> String {
    match experiment.case_label(&r.params) {
        case if case.is_empty() => r.transport.clone(),
        case => format!("{}, {case}", r.transport),
    }
}
