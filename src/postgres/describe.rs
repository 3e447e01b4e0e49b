//! The PostgreSQL experiments as they describe themselves: id, title, headline,
//! charts, verdict line, and the table of each, in the layout of a lab notebook: a
//! column per transport, a row per measurement, and on the rows that matter the
//! extra time compared with the fastest transport, e.g. `97.4 µs (+57%)`.

use crate::report::block::Block;
use crate::report::columns::{certainty_notes, distinct, having, legend, Columns, Compare};
use crate::report::experiment::{CaseParam, Chart, Experiment, Pick, VerdictLine, Work, WorkKind};
use crate::report::format::{duration_ns, rate, short_version};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::{Phases, ResultRecord};
use crate::stats::median;
use crate::units::format_count;

/// Reads one figure of a record.
type Figure = fn(&ResultRecord) -> Option<f64>;
/// Reads one latency figure.
type LatencyOf = fn(&crate::stats::Percentiles) -> f64;
/// Reads one phase of a connection.
type PhaseOf = fn(&Phases) -> f64;
/// Records placed in their transport's column.
type Cells<'r> = [Option<&'r ResultRecord>];

/// Time per query, the slope of the query fit.
const PER_QUERY: Metric = Metric::new("per_query_ns", Unit::Time, Better::Lower, |m| {
    m.per_query_ns
});

pub static QUERY: Experiment = Experiment {
    id: "postgres.query",
    title: "N sequential SELECT 1 on one connection, fitted on N",
    headline: PER_QUERY,
    cases: &[],
    table: |records| fitted(&QUERY, "queries", records),
    charts: &[Chart::Fitted { n: "queries" }],
    verdict: Some(VerdictLine {
        rank: 10,
        case: Pick::Only,
        what: |_| "SELECT 1 on a kept connection".into(),
        metric: PER_QUERY,
        work: Work {
            heading: "Short queries",
            op: "query",
            ops: "queries",
            kind: WorkKind::Requests,
            typical: &[100.0, 1_000.0, 10_000.0],
            pool_against: None,
        },
    }),
};

/// Median time of a whole connection.
const CONNECTION: Metric = Metric::new("connect_ns.p50", Unit::Time, Better::Lower, |m| {
    m.connect_ns.map(|p| p.p50)
});

pub static CONNECT: Experiment = Experiment {
    id: "postgres.connect",
    title: "connect, SELECT 1, close; trust authentication",
    headline: CONNECTION,
    cases: &[],
    table: |records| {
        let mut table = Columns::of(records);
        let cells = table.place(&records.iter().collect::<Vec<_>>());
        connect_rows(&mut table, &cells);
        finish(&CONNECT, table, records)
    },
    charts: &[],
    verdict: Some(VerdictLine {
        rank: 20,
        case: Pick::Only,
        what: |_| "connect, SELECT 1, close".into(),
        metric: CONNECTION,
        work: Work {
            heading: "New connections",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[10.0, 100.0, 1_000.0],
            pool_against: Some(&QUERY),
        },
    }),
};

pub static AUTH: Experiment = Experiment {
    id: "postgres.auth",
    title: "connect, SELECT 1, close under each authentication method",
    headline: CONNECTION,
    cases: &[CaseParam::AuthMethod],
    table: |records| {
        let mut table = Columns::of(records);
        let method = |r: &ResultRecord| r.params.auth_method.clone().unwrap_or("?".into());
        for m in distinct(records, method) {
            let cells = table.place(&having(records, method, &m));
            auth_rows(&mut table, &m, &cells);
        }
        finish(&AUTH, table, records)
    },
    charts: &[],
    verdict: Some(VerdictLine {
        rank: 22,
        case: Pick::Cases(CaseParam::AuthMethod),
        what: |_| "each new connection".into(),
        metric: CONNECTION,
        work: Work {
            heading: "Authentication",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[10.0, 100.0, 1_000.0],
            pool_against: None,
        },
    }),
};

/// Time per row, the slope of the rows fit.
const PER_ROW: Metric = Metric::new("per_row_ns", Unit::Time, Better::Lower, |m| m.per_row_ns);

pub static ROWS: Experiment = Experiment {
    id: "postgres.rows",
    title: "SELECT * FROM generate_series(1,N), every value read, fitted on N",
    headline: PER_ROW,
    cases: &[],
    table: |records| fitted(&ROWS, "rows", records),
    charts: &[Chart::Fitted { n: "rows" }],
    verdict: Some(VerdictLine {
        rank: 50,
        case: Pick::Only,
        what: |_| "rows of one large SELECT".into(),
        metric: PER_ROW,
        work: Work {
            heading: "Bulk results",
            op: "row",
            ops: "rows",
            kind: WorkKind::Bulk,
            typical: &[],
            pool_against: None,
        },
    }),
};

/// Transactions per second of all clients.
const TPS: Metric = Metric::new("tps", Unit::Rate, Better::Higher, |m| m.tps);

pub static CONCURRENT: Experiment = Experiment {
    id: "postgres.concurrent",
    title: "clients running the script at once, like pgbench -c -j -T",
    headline: TPS,
    cases: &[CaseParam::Clients, CaseParam::ConnectPerTransaction],
    table: |records| {
        let mut table = Columns::of(records);
        for clients in distinct(records, |r| r.params.clients) {
            let cells = table.place(&having(records, |r| r.params.clients, &clients));
            concurrent_rows(&mut table, clients.unwrap_or(0), &cells);
        }
        finish(&CONCURRENT, table, records)
    },
    charts: &[Chart::Lines {
        title: "throughput against clients",
        x: CaseParam::Clients,
        x_desc: "clients",
        y: TPS,
        log_x: false,
    }],
    verdict: Some(VerdictLine {
        rank: 40,
        case: Pick::Largest(CaseParam::Clients),
        what: |clients| format!("{} clients running SELECT 1", clients.unwrap_or(0)),
        metric: TPS,
        work: Work {
            heading: "Many clients",
            op: "transaction",
            ops: "transactions",
            kind: WorkKind::Clients,
            typical: &[],
            pool_against: None,
        },
    }),
};

/// The block of `experiment` with the rows laid out and the footnotes.
fn finish(experiment: &'static Experiment, table: Columns, records: &[ResultRecord]) -> Block {
    Block {
        header: table.header("measurement"),
        rows: table.rows,
        notes: footnotes(records),
        legend: legend_notes(records),
        ..Block::experiment(experiment, records)
    }
}

/// The table of a fitted experiment, whose N counts `unit`.
fn fitted(experiment: &'static Experiment, unit: &str, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let cells = table.place(&records.iter().collect::<Vec<_>>());
    fitted_rows(&mut table, experiment, unit, &cells);
    finish(experiment, table, records)
}

fn fitted_rows(table: &mut Columns, experiment: &Experiment, unit: &str, columns: &Cells) {
    let per = experiment.headline.read;
    let per_s: Figure = if unit == "queries" {
        |r| r.metrics.qps
    } else {
        |r| r.metrics.rows_per_s
    };
    let counts = columns
        .iter()
        .flatten()
        .find_map(|r| r.params.counts.clone())
        .unwrap_or_default();
    for n in counts {
        table.line(
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
    table.line(
        &format!("{unit}/s (fit)"),
        columns,
        Compare::HigherIsBetter,
        rate,
        per_s,
    );
    let singular = if unit == "queries" { "query" } else { "row" };
    table.line(
        &format!("time per {singular} (slope)"),
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| per(&r.metrics),
    );
    table.line(
        "fixed cost (intercept)",
        columns,
        Compare::Not,
        signed_duration,
        |r| r.metrics.intercept_ns,
    );
    table.line(
        "fit R²",
        columns,
        Compare::Not,
        |v| format!("{v:.4}"),
        |r| r.metrics.r2,
    );
    table.range(&format!("time per {singular}, range"), columns, duration_ns);
}

fn connect_rows(table: &mut Columns, columns: &Cells) {
    table.line(
        "connections/s",
        columns,
        Compare::HigherIsBetter,
        rate,
        |r| r.metrics.conn_per_s,
    );
    table.line(
        "connect + SELECT 1 + close, p50",
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    table.line("  p99", columns, Compare::Not, duration_ns, |r| {
        r.metrics.connect_ns.map(|p| p.p99)
    });
    table.range("  p50 range", columns, duration_ns);
    table.line(
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
        table.line(label, columns, Compare::Not, duration_ns, |r| {
            r.metrics.phases_ns.as_ref().map(get)
        });
    }
}

fn concurrent_rows(table: &mut Columns, clients: u64, columns: &Cells) {
    let plural = if clients == 1 { "" } else { "s" };
    let label = format!("{clients} client{plural}: transactions/s");
    table.line(&label, columns, Compare::HigherIsBetter, rate, |r| {
        r.metrics.tps
    });
    table.range("  range", columns, rate);
    let latencies: [(&str, LatencyOf); 4] = [
        ("  latency mean", |p| p.mean),
        ("  latency p50", |p| p.p50),
        ("  latency p99", |p| p.p99),
        ("  latency p99.9", |p| p.p999),
    ];
    for (label, get) in latencies {
        table.line(label, columns, Compare::Not, duration_ns, |r| {
            r.metrics.latency_ns.as_ref().map(get)
        });
    }
    if columns
        .iter()
        .flatten()
        .any(|r| r.metrics.failed.unwrap_or(0) > 0)
    {
        table.line(
            "  failed transactions",
            columns,
            Compare::Not,
            |v| format!("{v:.0}"),
            |r| r.metrics.failed.map(|f| f as f64),
        );
    }
}

fn auth_rows(table: &mut Columns, method: &str, columns: &Cells) {
    table.line(
        &format!("{method}: connection p50"),
        columns,
        Compare::LowerIsBetter,
        duration_ns,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    table.certainty(columns);
    if method == "trust" {
        return; // the baseline: its cost over itself says nothing
    }
    table.line(
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

/// The notes of this table alone: how passwords were stored, what was not settled.
fn footnotes(records: &[ResultRecord]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for r in records {
        let uses_password = |m: &str| ["password", "md5", "scram-sha-256"].contains(&m);
        if let (Some(m), Some(stored)) = (&r.params.auth_method, &r.password_storage) {
            let note = format!("{m}: password stored as {stored}");
            if uses_password(m) && !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    notes.extend(certainty_notes(records));
    notes
}

/// The notes every table of the run shares: the TLS each transport negotiated,
/// the server, how to read the figures.
fn legend_notes(records: &[ResultRecord]) -> Vec<String> {
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
            let short = short_version(&s.version);
            let whose = if s.throwaway {
                "throwaway cluster"
            } else {
                "your server"
            };
            add(format!("server ({whose}): {short}"));
        }
    }
    for note in legend(records) {
        add(note);
    }
    notes
}
