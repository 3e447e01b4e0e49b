//! Tests of the PostgreSQL tables: phases a transport lacks, TLS's extra cost,
//! the authentication in the title, and differences below resolution.

use super::connect::TLS_COST;
use super::*;
use crate::harness::aggregate::record;
use crate::postgres::keys::*;
use crate::report::block::{Block, Number, Row};
use crate::report::difference::BELOW_RESOLUTION_NOTE;
use crate::results::paired::pair;
use crate::results::{Metrics, Params, Trial};
use crate::stats::Percentiles;
use crate::transport::TlsInfo;

fn trial(metrics: Metrics) -> Trial {
    Trial {
        metrics,
        count: 1,
        ..Trial::default()
    }
}

/// A connection whose p50 took `ns`, with libpq's phases (no TLS phase
/// without TLS).
fn connection(ns: f64, tls: bool) -> Metrics {
    let p = Percentiles {
        mean: ns,
        p50: ns,
        p99: ns,
        p999: ns,
    };
    Metrics::default().with(CONNECT_NS, Some(p)).with(
        PHASES_NS,
        Some(Phases {
            socket: 50e3,
            tls: if tls { 3.5e6 } else { 0.0 },
            auth: 1.5e6,
            ready: 0.0,
            query: 150e3,
            close: 15e3,
        }),
    )
}

/// Connect records of unix, tcp and tls, round by round, under `auth`.
fn connects(auth: Option<&str>, tcp: &[f64], tls: &[f64]) -> Vec<ResultRecord> {
    let params = Params::default().with(AUTH_METHOD, auth.map(String::from));
    let trials = |values: &[f64], tls: bool| -> Vec<Trial> {
        values.iter().map(|v| trial(connection(*v, tls))).collect()
    };
    let certificate = TlsInfo {
        version: "TLSv1.3".into(),
        cipher: "TLS_AES_256_GCM_SHA384".into(),
        certificate: "ECDSA P-256 (self-signed)".into(),
    };
    let mut rs = vec![
        record(
            CONNECT.id,
            &CONNECTION,
            &params,
            "unix",
            trials(tcp, false),
            None,
        ),
        record(
            CONNECT.id,
            &CONNECTION,
            &params,
            "tcp",
            trials(tcp, false),
            None,
        ),
        record(
            CONNECT.id,
            &CONNECTION,
            &params,
            "tls",
            trials(tls, true),
            Some(certificate),
        ),
    ];
    pair(&mut rs, &CONNECTION);
    rs
}

fn row<'b>(block: &'b Block, label: &str) -> &'b Row {
    block
        .rows
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no row {label} in {:#?}", block.rows))
}

fn texts(row: &Row) -> Vec<&str> {
    row.cells.iter().map(|c| c.text.as_str()).collect()
}

#[test]
fn a_phase_a_transport_lacks_is_a_dash_and_tls_has_its_own_cost_row() {
    let block = (CONNECT.table)(&connects(
        Some("trust"),
        &[2.0e6, 2.4e6, 2.2e6],
        &[4.1e6, 4.5e6, 4.2e6],
    ));
    assert_eq!(
        texts(row(&block, "phase: TLS handshake")),
        ["-", "-", "3.50 ms"]
    );
    // tls − tcp, round by round: 2.1, 2.1, 2.0 ms.
    let cost = row(&block, TLS_COST);
    assert_eq!(cost.cells[..2], [Cell::missing(), Cell::missing()]);
    assert!(cost.cells[2].text.starts_with("2.07 ["), "{cost:?}");
    assert!(cost.cells[2].text.ends_with("] ms"), "{cost:?}");
    assert!(
        matches!(cost.cells[2].value, Some(Number::Figure { value, unit: Unit::Time })
            if (value - 2.0667e6).abs() < 1e3)
    );
    assert!(
        block
            .notes
            .iter()
            .any(|n| n.contains("backend starts during the TLS handshake")),
        "{:?}",
        block.notes
    );
    assert!(
        block.title.contains("; trust authentication, median of 3"),
        "{}",
        block.title
    );
    assert!(
        !block.rows.iter().any(|r| r.label.contains("after auth")),
        "never seen"
    );
}

#[test]
fn tls_cost_that_the_rounds_cannot_tell_from_zero_is_below_resolution() {
    let block = (CONNECT.table)(&connects(
        Some("trust"),
        &[2.0e6, 2.4e6, 2.2e6],
        &[2.5e6, 2.1e6, 2.3e6],
    ));
    assert_eq!(texts(row(&block, TLS_COST))[2], BELOW_RESOLUTION);
    assert!(block.legend.contains(&BELOW_RESOLUTION_NOTE.to_string()));
}

#[test]
fn the_title_names_the_authentication_used() {
    let mut block = (CONNECT.table)(&connects(Some("scram-sha-256"), &[2e6, 2e6], &[4e6, 4e6]));
    assert!(
        block.title.contains("; scram-sha-256 authentication"),
        "{}",
        block.title
    );
    // A --url server: sockbench did not choose, and did not record, its method.
    block = (CONNECT.table)(&connects(None, &[2e6, 2e6], &[4e6, 4e6]));
    assert!(
        block.title.contains("; authentication of your server") && !block.title.contains("trust"),
        "{}",
        block.title
    );
}

#[test]
fn a_cost_over_trust_or_an_intercept_whose_range_holds_zero_is_below_resolution() {
    let params = |m: &str| Params::default().with(AUTH_METHOD, Some(m.into()));
    let trials = |values: &[f64]| -> Vec<Trial> {
        values
            .iter()
            .map(|v| trial(connection(*v, false)))
            .collect()
    };
    let mut rs = vec![
        record(
            AUTH.id,
            &CONNECTION,
            &params("trust"),
            "unix",
            trials(&[2.0e6, 2.1e6, 2.0e6]),
            None,
        ),
        // Over trust, round by round: +0.2, −0.1, +0.3 ms.
        record(
            AUTH.id,
            &CONNECTION,
            &params("md5"),
            "unix",
            trials(&[2.2e6, 2.0e6, 2.3e6]),
            None,
        ),
        // +4.5, +4.4, +4.6 ms.
        record(
            AUTH.id,
            &CONNECTION,
            &params("scram-sha-256"),
            "unix",
            trials(&[6.5e6, 6.5e6, 6.6e6]),
            None,
        ),
    ];
    for r in &mut rs {
        let p50 = r.metrics.get(CONNECT_NS).unwrap().p50;
        r.metrics.set(AUTH_NS, Some(p50 - 2.0e6));
    }
    let block = (AUTH.table)(&rs);
    assert_eq!(
        texts(row(&block, "md5: cost over trust")),
        [BELOW_RESOLUTION]
    );
    assert_eq!(
        texts(row(&block, "scram-sha-256: cost over trust")),
        ["4.50 ms"]
    );

    let fitted = |intercepts: &[f64]| {
        let trials = intercepts
            .iter()
            .map(|i| {
                trial(
                    Metrics::default()
                        .with(PER_QUERY_NS, Some(100e3))
                        .with(INTERCEPT_NS, Some(*i)),
                )
            })
            .collect();
        record(
            QUERY.id,
            &PER_QUERY,
            &Params::default(),
            "unix",
            trials,
            None,
        )
    };
    let block = (QUERY.table)(&[fitted(&[-1.0e8, 2.5e6, 1.5e7])]);
    assert_eq!(
        texts(row(&block, "fixed cost (intercept)")),
        [BELOW_RESOLUTION]
    );
    let block = (QUERY.table)(&[fitted(&[2.0e6, 2.5e6, 3.0e6])]);
    assert_eq!(texts(row(&block, "fixed cost (intercept)")), ["2.50 ms"]);
}

#[test]
fn at_a_fixed_rate_latency_leads_and_the_protocol_is_in_the_title() {
    let params = Params::default()
        .with(CLIENTS, Some(10))
        .with(RATE_PER_S, Some(500))
        .with(LATENCY_LIMIT_US, Some(5_000))
        .with(PROTOCOL, Some("prepared".into()));
    let ms = |v: f64| Percentiles {
        mean: v * 1e6,
        p50: v * 1e6,
        p99: 2.0 * v * 1e6,
        p999: 3.0 * v * 1e6,
    };
    let metrics = |p50_ms: f64| {
        Metrics::default()
            .with(TPS, Some(500.0))
            .with(LATENCY_NS, Some(ms(p50_ms)))
            .with(LAG_NS, Some(ms(0.05)))
            .with(FAILED, Some(0))
            .with(LATE, Some(3))
            .with(SKIPPED, Some(1))
            .with(PER_COMMAND_NS, Some(vec![0.2e6, 0.3e6]))
    };
    let mut records: Vec<ResultRecord> = [("unix", 0.2), ("tcp", 0.25)]
        .iter()
        .map(|(t, v)| {
            let trials = vec![trial(metrics(*v)), trial(metrics(*v))];
            record(CONCURRENT_RATE.id, &LATENCY_P50, &params, t, trials, None)
        })
        .collect();
    pair(&mut records, &LATENCY_P50);
    assert!(!LATENCY_P50.higher_is_better());
    assert_eq!(
        CONCURRENT_RATE.case_label(&params),
        "10 clients, at 500 transactions/s, prepared protocol"
    );
    let block = (CONCURRENT_RATE.table)(&records);
    assert!(
        block
            .title
            .contains("prepared protocol (pgbench -M prepared)"),
        "{}",
        block.title
    );
    assert_eq!(block.rows[0].label, "10 clients at 500/s: latency p50");
    assert_eq!(
        texts(row(&block, "late transactions (over -L)")),
        ["6", "6"]
    );
    assert_eq!(
        texts(row(&block, "skipped transactions (late when due)")),
        ["2", "2"]
    );
    assert_eq!(texts(row(&block, "command 2 mean")), ["300 µs", "300 µs"]);
    row(&block, "schedule lag mean");
}

#[test]
fn verdict_lines_name_the_script_the_protocol_and_the_rate_measured() {
    let what = |e: &Description, p: &Params| (e.verdict.as_ref().unwrap().what)(p);
    let mut p = Params::default().with(CLIENTS, Some(4));
    assert_eq!(what(&CONCURRENT, &p), "4 clients running SELECT 1");
    p.set(SCRIPT, Some("select-only.sql".into()));
    p.set(PROTOCOL, Some("prepared".into()));
    assert_eq!(
        what(&CONCURRENT, &p),
        "4 clients running select-only.sql, prepared protocol"
    );
    p.set(RATE_PER_S, Some(300));
    assert_eq!(
        what(&CONCURRENT_RATE, &p),
        "4 clients running select-only.sql at 300/s, prepared protocol"
    );
    assert_eq!(
        what(&QUERY, &p),
        "SELECT 1 on a kept connection, prepared protocol"
    );
}
