//! Two result files side by side, like a write-up's System A / System B tables:
//! the system facts first, then each headline figure on both with the ratio B / A.
//!
//! Records are matched by experiment, transport and parameters; a figure only one
//! file has is shown with a dash on the other side rather than dropped.

use super::system::facts;
use super::{Document, Section};
use crate::output::block::Block;
use crate::output::columns::distinct;
use crate::output::format::headline;
use crate::results::{Params, ResultFile, ResultRecord};
use crate::units::format_size;

/// The comparison of `a` and `b`, named as given on the command line.
pub fn document(a: (&str, &ResultFile), b: (&str, &ResultFile)) -> Document {
    let mut blocks = vec![system_block(a.1, b.1)];
    blocks.extend(experiment_blocks(&a.1.results, &b.1.results));
    Document {
        title: "sockbench comparison".into(),
        sections: vec![Section {
            heading: format!(
                "A = {} ({}), B = {} ({})",
                a.0, a.1.started_at, b.0, b.1.started_at
            ),
            summary: vec![
                "Each row is a headline figure; B / A above 1 means B measured more (more \
                 time for times, more per second for rates)."
                    .into(),
            ],
            blocks,
            records: Vec::new(),
        }],
    }
}

fn system_block(a: &ResultFile, b: &ResultFile) -> Block {
    let rows = facts(a)
        .into_iter()
        .zip(facts(b))
        .map(|((name, va), (_, vb))| vec![name.to_string(), va, vb])
        .collect();
    Block {
        experiment: String::new(),
        title: "system".into(),
        header: vec!["fact".into(), "System A".into(), "System B".into()],
        rows,
        notes: Vec::new(),
    }
}

/// One block per experiment (in A's order, then any only B has).
fn experiment_blocks(a: &[ResultRecord], b: &[ResultRecord]) -> Vec<Block> {
    distinct(a.iter().chain(b), |r| r.experiment.clone())
        .into_iter()
        .map(|experiment| {
            let mut rows = Vec::new();
            let in_a = a.iter().filter(|r| r.experiment == experiment);
            let only_b = b
                .iter()
                .filter(|r| r.experiment == experiment && find(a, r).is_none());
            for r in in_a.chain(only_b) {
                let (va, vb) = (find(a, r), find(b, r));
                let value = |x: Option<&ResultRecord>| {
                    x.map_or("-".into(), |x| {
                        headline(&x.headline.metric, x.headline.spread.median)
                    })
                };
                let ratio = match (va, vb) {
                    (Some(x), Some(y)) if x.headline.spread.median > 0.0 => {
                        format!("{:.2}", y.headline.spread.median / x.headline.spread.median)
                    }
                    _ => "-".into(),
                };
                rows.push(vec![label(r), value(va), value(vb), ratio]);
            }
            let metric = a
                .iter()
                .chain(b)
                .find(|r| r.experiment == experiment)
                .map_or(String::new(), |r| r.headline.metric.clone());
            Block {
                experiment: experiment.to_string(),
                title: format!("{experiment} — {metric}, median over trials"),
                header: vec!["transport".into(), "A".into(), "B".into(), "B / A".into()],
                rows,
                notes: Vec::new(),
            }
        })
        .collect()
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
}

/// `tcp`, `tcp, 64 B`, `unix, scram-sha-256`, `tls, 10 clients`.
fn label(r: &ResultRecord) -> String {
    let p = &r.params;
    let mut parts = vec![r.transport.clone()];
    if let Some(size) = p.size {
        parts.push(format_size(size));
    }
    if let Some(size) = p.write_size {
        parts.push(format!("{} writes", format_size(size)));
    }
    if let Some(clients) = p.clients {
        parts.push(format!(
            "{clients} client{}",
            if clients == 1 { "" } else { "s" }
        ));
    }
    if let Some(method) = &p.auth_method {
        if r.experiment == "postgres.auth" {
            parts.push(method.clone());
        }
    }
    if p.connect_per_transaction {
        parts.push("connection per transaction".into());
    }
    parts.join(", ")
}
