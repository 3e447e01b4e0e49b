//! One terminal table per PostgreSQL experiment, in the layout of a lab notebook: a
//! column per transport, a row per measurement, and on the rows that matter the extra
//! time compared with the fastest transport, e.g. `97.4 µs (+57%)`.

use super::format::{duration_ns, rate, vs_fastest};
use crate::postgres::experiment::PgExperiment;
use crate::results::{Phases, ResultRecord};
use crate::stats::median;
use crate::units::format_count;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// Reads one figure of a record.
type Figure = fn(&ResultRecord) -> Option<f64>;
/// Reads one latency figure.
type LatencyOf = fn(&crate::stats::Percentiles) -> f64;
/// Reads one phase of a connection.
type PhaseOf = fn(&Phases) -> f64;

/// How a row compares its cells.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    Not,
    LowerIsBetter,
    HigherIsBetter,
}

/// Renders the records of one experiment with a title and footnotes.
pub fn render(experiment: PgExperiment, records: &[ResultRecord]) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for r in records {
        if !labels.contains(&r.transport.as_str()) {
            labels.push(&r.transport);
        }
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["measurement".to_string()];
    header.extend(labels.iter().map(|l| l.to_string()));
    table.set_header(header);
    let columns = |rs: &[&ResultRecord]| -> Vec<Option<ResultRecord>> {
        labels
            .iter()
            .map(|l| rs.iter().find(|r| r.transport == *l).map(|r| (*r).clone()))
            .collect()
    };
    let all: Vec<&ResultRecord> = records.iter().collect();
    match experiment {
        PgExperiment::Query | PgExperiment::Rows => {
            fitted_rows(&mut table, experiment, &columns(&all))
        }
        PgExperiment::Connect => connect_rows(&mut table, &columns(&all)),
        PgExperiment::Concurrent => {
            let mut counts: Vec<u64> = records.iter().filter_map(|r| r.params.clients).collect();
            counts.dedup();
            for clients in counts {
                let of: Vec<&ResultRecord> = records
                    .iter()
                    .filter(|r| r.params.clients == Some(clients))
                    .collect();
                concurrent_rows(&mut table, clients, &columns(&of));
            }
        }
        PgExperiment::Auth => {
            let mut methods: Vec<&str> = Vec::new();
            for r in records {
                let m = r.params.auth_method.as_deref().unwrap_or("?");
                if !methods.contains(&m) {
                    methods.push(m);
                }
            }
            for m in methods {
                let of: Vec<&ResultRecord> = records
                    .iter()
                    .filter(|r| r.params.auth_method.as_deref().unwrap_or("?") == m)
                    .collect();
                auth_rows(&mut table, m, &columns(&of));
            }
        }
    }
    for index in 1..table.column_count() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let trials = records.first().map_or(0, |r| r.trials.len());
    let mut text = format!(
        "postgres.{experiment} — {}, median of {trials} trials\n{table}\n",
        experiment.what()
    );
    text.push_str(&footnotes(records));
    text
}

fn fitted_rows(table: &mut Table, experiment: PgExperiment, columns: &[Option<ResultRecord>]) {
    let (unit, per, per_s): (&str, Figure, Figure) = match experiment {
        PgExperiment::Query => ("queries", |r| r.metrics.per_query_ns, |r| r.metrics.qps),
        _ => ("rows", |r| r.metrics.per_row_ns, |r| r.metrics.rows_per_s),
    };
    let counts = columns
        .iter()
        .flatten()
        .find_map(|r| r.params.counts.clone())
        .unwrap_or_default();
    for n in counts {
        line(
            table,
            &format!("total time at {} {unit}", format_count(n)),
            columns,
            Compare::Not,
            duration_ns,
            |r| {
                let totals: Vec<f64> = r
                    .trials
                    .iter()
                    .flat_map(|t| &t.points)
                    .filter(|p| p.n == n)
                    .map(|p| p.total_ns as f64)
                    .collect();
                (!totals.is_empty()).then(|| median(&totals))
            },
        );
    }
    line(
        table,
        &format!("{unit}/s (fit)"),
        columns,
        Compare::HigherIsBetter,
        rate,
        per_s,
    );
    let singular = if unit == "queries" { "query" } else { "row" };
    line(
        table,
        &format!("time per {singular} (slope)"),
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        per,
    );
    line(
        table,
        "fixed cost (intercept)",
        columns,
        Compare::Not,
        signed_duration,
        |r| r.metrics.intercept_ns,
    );
    line(
        table,
        "fit R²",
        columns,
        Compare::Not,
        |v| format!("{v:.4}"),
        |r| r.metrics.r2,
    );
    range_line(
        table,
        &format!("time per {singular}, range"),
        columns,
        duration_ns,
    );
}

fn connect_rows(table: &mut Table, columns: &[Option<ResultRecord>]) {
    line(
        table,
        "connections/s",
        columns,
        Compare::HigherIsBetter,
        rate,
        |r| r.metrics.conn_per_s,
    );
    line(
        table,
        "connect + SELECT 1 + close, p50",
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    line(table, "  p99", columns, Compare::Not, duration_ns, |r| {
        r.metrics.connect_ns.map(|p| p.p99)
    });
    range_line(table, "  p50 range", columns, duration_ns);
    line(
        table,
        "handshake (p50 − time per query)",
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| r.metrics.handshake_ns,
    );
    let phases: [(&str, PhaseOf); 6] = [
        ("  phase: socket connect", |p| p.socket),
        ("  phase: TLS handshake", |p| p.tls),
        ("  phase: startup, auth, backend start", |p| p.auth),
        ("  phase: after auth, until ready", |p| p.ready),
        ("  phase: SELECT 1", |p| p.query),
        ("  phase: close", |p| p.close),
    ];
    for (label, get) in phases {
        let zero = columns
            .iter()
            .flatten()
            .all(|r| r.metrics.phases_ns.is_none_or(|p| get(&p) == 0.0));
        if zero {
            continue; // a phase libpq never saw apart from the next one
        }
        line(table, label, columns, Compare::Not, duration_ns, |r| {
            r.metrics.phases_ns.as_ref().map(get)
        });
    }
}

fn concurrent_rows(table: &mut Table, clients: u64, columns: &[Option<ResultRecord>]) {
    let plural = if clients == 1 { "" } else { "s" };
    let label = format!("{clients} client{plural}: transactions/s");
    line(table, &label, columns, Compare::HigherIsBetter, rate, |r| {
        r.metrics.tps
    });
    range_line(table, "  range", columns, rate);
    let latencies: [(&str, LatencyOf); 4] = [
        ("  latency mean", |p| p.mean),
        ("  latency p50", |p| p.p50),
        ("  latency p99", |p| p.p99),
        ("  latency p99.9", |p| p.p999),
    ];
    for (label, get) in latencies {
        line(table, label, columns, Compare::Not, duration_ns, |r| {
            r.metrics.latency_ns.as_ref().map(get)
        });
    }
    if columns
        .iter()
        .flatten()
        .any(|r| r.metrics.failed.unwrap_or(0) > 0)
    {
        line(
            table,
            "  failed transactions",
            columns,
            Compare::Not,
            |v| format!("{v:.0}"),
            |r| r.metrics.failed.map(|f| f as f64),
        );
    }
}

fn auth_rows(table: &mut Table, method: &str, columns: &[Option<ResultRecord>]) {
    line(
        table,
        &format!("{method}: connection p50"),
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    if method == "trust" {
        return; // the baseline: its cost over itself says nothing
    }
    line(
        table,
        &format!("{method}: cost over trust"),
        columns,
        Compare::Not,
        signed_duration,
        |r| r.metrics.auth_ns,
    );
}

fn signed_duration(ns: f64) -> String {
    if ns < 0.0 {
        format!("−{}", duration_ns(-ns))
    } else {
        duration_ns(ns)
    }
}

/// A row of one figure per column; compared rows get the relative difference.
fn line(
    table: &mut Table,
    label: &str,
    columns: &[Option<ResultRecord>],
    compare: Compare,
    format: fn(f64) -> String,
    get: impl Fn(&ResultRecord) -> Option<f64>,
) {
    let values: Vec<Option<f64>> = columns.iter().map(|c| c.as_ref().and_then(&get)).collect();
    if values.iter().all(Option::is_none) {
        return;
    }
    let costs: Vec<Option<f64>> = values
        .iter()
        .map(|v| match compare {
            Compare::HigherIsBetter => v.filter(|x| *x > 0.0).map(|x| 1.0 / x),
            _ => v.filter(|x| *x > 0.0),
        })
        .collect();
    let best = costs
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let mut cells = vec![label.to_string()];
    for (value, cost) in values.iter().zip(&costs) {
        cells.push(match (value, cost) {
            (None, _) => "-".into(),
            (Some(v), Some(c)) if compare != Compare::Not && costs.iter().flatten().count() > 1 => {
                let relative = c / best - 1.0;
                if relative < 0.0005 {
                    format(*v)
                } else {
                    format!("{} ({})", format(*v), vs_fastest(relative))
                }
            }
            (Some(v), _) => format(*v),
        });
    }
    table.add_row(cells);
}

/// The headline's min–max over trials, marked `~` when noisy.
fn range_line(
    table: &mut Table,
    label: &str,
    columns: &[Option<ResultRecord>],
    format: fn(f64) -> String,
) {
    let mut cells = vec![label.to_string()];
    for c in columns {
        cells.push(c.as_ref().map_or("-".into(), |r| {
            let s = &r.headline.spread;
            let mark = if r.headline.noisy { " ~" } else { "" };
            format!("{}–{}{mark}", format(s.min), format(s.max))
        }));
    }
    table.add_row(cells);
}

fn footnotes(records: &[ResultRecord]) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut add = |note: String| {
        if !notes.contains(&note) {
            notes.push(note);
        }
    };
    for r in records {
        if let Some(tls) = &r.tls {
            add(format!(
                "{}: {} {}, {} certificate",
                r.transport, tls.version, tls.cipher, tls.certificate
            ));
        }
    }
    for r in records {
        if let Some(s) = &r.server {
            let short: String = s
                .version
                .split(" on ")
                .next()
                .unwrap_or(&s.version)
                .to_string();
            let whose = if s.throwaway {
                "throwaway cluster"
            } else {
                "your server"
            };
            add(format!("server ({whose}): {short}"));
        }
    }
    for r in records {
        let uses_password = |m: &str| ["password", "md5", "scram-sha-256"].contains(&m);
        if let (Some(m), Some(stored)) = (&r.params.auth_method, &r.password_storage) {
            if uses_password(m) {
                add(format!("{m}: password stored as {stored}"));
            }
        }
    }
    if records.iter().any(|r| r.headline.noisy) {
        add("~ marks a range over trials wider than 10% of the median: noisy".into());
    }
    notes.iter().map(|n| format!("{n}\n")).collect()
}
