//! The verdict's rule: a difference is stated only when its interval excludes none.

use super::*;
use crate::harness::aggregate::{rank, record};
use crate::report::block::Block;
use crate::report::experiment::Pick;
use crate::results::metric::{Better, Unit};
use crate::results::{Metrics, Params, Trial};

const TIME: Metric = Metric::new("per_query_ns", Unit::Time, Better::Lower, |m| {
    m.per_query_ns
});

static FAKE: Experiment = Experiment {
    id: "fake.query",
    title: "a fake query",
    headline: TIME,
    cases: &[],
    table: |_| Block::facts("", Vec::new(), Vec::new()),
    charts: &[],
    verdict: Some(VerdictLine {
        rank: 1,
        case: Pick::Only,
        what: |_| "a query".into(),
        metric: TIME,
        bulk: false,
    }),
};

/// Records of `unix` and `tcp` whose trials took these times, round by round.
fn records(placement: Option<&str>, unix: &[f64], tcp: &[f64]) -> Vec<ResultRecord> {
    let params = Params {
        placement: placement.map(String::from),
        ..Params::default()
    };
    let trials = |values: &[f64]| -> Vec<Trial> {
        values
            .iter()
            .map(|&v| Trial {
                metrics: Metrics {
                    per_query_ns: Some(v),
                    ..Metrics::default()
                },
                count: 1,
                ..Trial::default()
            })
            .collect()
    };
    let mut rs = vec![
        record(FAKE.id, &TIME, &params, "unix", trials(unix), None),
        record(FAKE.id, &TIME, &params, "tcp", trials(tcp), None),
    ];
    rank(&mut rs, &TIME);
    rs
}

fn verdict(records: &[ResultRecord]) -> Vec<String> {
    sentences(&lines(records, &Catalog::new([&FAKE])))
}

#[test]
fn a_difference_whose_interval_excludes_zero_is_stated() {
    // The machine swings 2x between rounds, tcp stays 28% slower in every one.
    let v = verdict(&records(
        None,
        &[100.0, 200.0, 100.0],
        &[128.0, 256.0, 128.0],
    ));
    assert!(v[0].contains("tcp 128 ns, +28% [+28%, +28%]"), "{v:?}");
    assert!(!v[0].contains("no clear difference"), "{v:?}");
}

#[test]
fn an_interval_that_holds_zero_is_no_clear_difference() {
    // The medians differ by 10%, but round by round tcp is as often faster.
    let v = verdict(&records(
        None,
        &[100.0, 100.0, 100.0],
        &[94.0, 203.0, 110.0],
    ));
    assert!(v[0].contains("tcp 110 ns, no clear difference ("), "{v:?}");
    assert!(
        v.iter().all(|s| !s.contains("10%")),
        "no fixed threshold: {v:?}"
    );
    assert!(v.last().unwrap().contains("excludes 0%"), "{v:?}");
}

#[test]
fn placement_that_changes_the_answer_is_said() {
    let mut rs = records(Some("same"), &[100.0, 101.0, 99.0], &[100.0, 102.0, 99.0]);
    rs.extend(records(
        Some("split"),
        &[100.0, 101.0, 99.0],
        &[160.0, 162.0, 158.0],
    ));
    let v = verdict(&rs);
    assert!(v[0].starts_with("A query (on one CPU): "), "{v:?}");
    assert!(v[1].starts_with("A query (on two CPUs): "), "{v:?}");
    assert!(
        v[1].contains("Placement changes the answer here: tcp +0.3%"),
        "{v:?}"
    );
    assert!(v[1].contains("on one CPU, +60%"), "{v:?}");
}
