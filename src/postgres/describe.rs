//! The PostgreSQL experiments as they describe themselves: id, title, headline,
//! charts, verdict line, and the table of each, in the layout of a lab notebook: a
//! column per transport, a row per measurement, and under each headline its time
//! per operation against the reference transport, e.g. `+57% [+41%, +75%]`.
//!
//! Differences of times (a fitted intercept, a method's cost over trust, TLS's
//! extra cost of a connection) are shown only where the rounds tell them from
//! zero; see [`crate::report::difference`].

use crate::report::block::{Block, Cell, Value};
use crate::report::columns::{certainty_notes, distinct, figure_cell, having, legend, Columns};
use crate::report::difference::{resolved, Difference, BELOW_RESOLUTION, BELOW_RESOLUTION_NOTE};
use crate::report::experiment::{CaseParam, Chart, Experiment, Pick, VerdictLine, Work, WorkKind};
use crate::report::format::{duration_interval_ns, short_version};
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
    title: "connect, SELECT 1, close",
    headline: CONNECTION,
    cases: &[],
    table: |records| {
        let mut table = Columns::of(records);
        let cells = table.place(&records.iter().collect::<Vec<_>>());
        connect_rows(&mut table, &cells);
        let mut block = finish(&CONNECT, table, records);
        let titled = format!("{}; {}", CONNECT.title, authentication(records));
        block.title = block.title.replacen(CONNECT.title, &titled, 1);
        block.notes.splice(0..0, connect_notes(&block));
        block
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
        let trust = table.place(&having(records, method, &"trust".to_string()));
        for m in distinct(records, method) {
            let cells = table.place(&having(records, method, &m));
            auth_rows(&mut table, &m, &cells, &trust);
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
        title: "transactions per second by number of clients",
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
    let mut legend = legend_notes(records);
    let unresolved = table
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.text == BELOW_RESOLUTION);
    if unresolved {
        legend.push(BELOW_RESOLUTION_NOTE.into());
    }
    Block {
        header: table.header("measurement"),
        rows: table.rows,
        notes: footnotes(records),
        legend,
        ..Block::experiment(experiment, records)
    }
}

/// The authentication the connections went through: the method sockbench set on
/// its cluster, or, on a user's server (`--url`), whatever that server asks for,
/// which is not recorded.
fn authentication(records: &[ResultRecord]) -> String {
    let methods = distinct(records, |r| r.params.auth_method.clone());
    match methods.as_slice() {
        [Some(method)] => format!("{method} authentication"),
        [None] | [] => "authentication of your server".into(),
        _ => {
            let named: Vec<String> = methods
                .iter()
                .map(|m| m.clone().unwrap_or_else(|| "your server's".into()))
                .collect();
            format!("{} authentication", named.join(", "))
        }
    }
}

/// The connect table's own notes: what the phases overlap, and how TLS's extra
/// cost is taken.
fn connect_notes(block: &Block) -> Vec<String> {
    let mut notes = Vec::new();
    if block.rows.iter().any(|r| r.label.starts_with("phase:")) {
        notes.push(
            "phases: the server starts each connection's backend as it arrives, so with \
             TLS the backend starts during the TLS handshake (that phase holds part of it, \
             and \"startup, auth, backend start\" is shorter): TLS's real extra cost is \
             its own row"
                .into(),
        );
    }
    if block.rows.iter().any(|r| r.label == TLS_COST) {
        notes.push(
            "TLS's extra cost: the tls connection's p50 minus tcp's in the same round, \
             mean over rounds with its 95% interval (Student's t)"
                .into(),
        );
    }
    notes
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
        let label = format!("total time at {} {unit}", format_count(n));
        table.line(&label, columns, Unit::Time, |r| {
            let totals: Vec<f64> = r
                .trials
                .iter()
                .flat_map(|t| &t.points)
                .filter(|p| p.n == n)
                .map(|p| p.total_ns as f64)
                .collect();
            (!totals.is_empty()).then(|| median(&totals))
        });
    }
    table.line(&format!("{unit}/s (fit)"), columns, Unit::Rate, per_s);
    let singular = if unit == "queries" { "query" } else { "row" };
    table.line(
        &format!("time per {singular} (slope)"),
        columns,
        Unit::Time,
        |r| per(&r.metrics),
    );
    table.range("  range", columns, Unit::Time);
    table.cells("fixed cost (intercept)", columns, |r| {
        let median = r.metrics.intercept_ns?;
        let trials: Vec<f64> = r
            .trials
            .iter()
            .filter_map(|t| t.metrics.intercept_ns)
            .collect();
        Some(time_if_resolved(resolved(&trials, median), median))
    });
    table.plain("fit R²", columns, |v| format!("{v:.4}"), |r| r.metrics.r2);
}

/// A time the rounds tell from zero, or [`BELOW_RESOLUTION`].
fn time_if_resolved(resolved: bool, ns: f64) -> Cell {
    if resolved {
        figure_cell(Unit::Time, ns)
    } else {
        Cell::text(BELOW_RESOLUTION)
    }
}

/// The label of TLS's extra cost of a connection.
const TLS_COST: &str = "TLS's extra cost (tls − tcp)";

/// The median connection time of each trial, in round order.
fn connection_p50s(r: &ResultRecord) -> Vec<f64> {
    r.trials
        .iter()
        .filter_map(|t| t.metrics.connect_ns.map(|p| p.p50))
        .collect()
}

fn connect_rows(table: &mut Columns, columns: &Cells) {
    table.line("connections/s", columns, Unit::Rate, |r| {
        r.metrics.conn_per_s
    });
    table.line(
        "connect + SELECT 1 + close, p50",
        columns,
        Unit::Time,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    table.range("  p50 range", columns, Unit::Time);
    table.line("  p99", columns, Unit::Time, |r| {
        r.metrics.connect_ns.map(|p| p.p99)
    });
    tls_cost_row(table, columns);
    table.line(
        "handshake (p50 − time per query)",
        columns,
        Unit::Time,
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
        // A phase libpq never saw apart from the next one (TLS without TLS) is a
        // dash; a row of dashes is left out.
        table.line(label, columns, Unit::Time, |r| {
            r.metrics.phases_ns.as_ref().map(get).filter(|v| *v > 0.0)
        });
    }
}

/// TLS's real extra cost of a connection, in each TLS column: its connection p50
/// minus that of the `tcp` column, round by round. The TLS handshake phase is not
/// it: the backend starts during the handshake.
fn tls_cost_row(table: &mut Columns, columns: &Cells) {
    let Some(tcp) = columns
        .iter()
        .flatten()
        .find(|r| r.transport == "tcp" && r.tls.is_none())
    else {
        return;
    };
    let without = connection_p50s(tcp);
    let tcp_p50 = tcp.metrics.connect_ns.map(|p| p.p50);
    table.cells(TLS_COST, columns, |r| {
        r.tls.as_ref()?;
        let with = connection_p50s(r);
        if let Some(d) = Difference::paired(&without, &with) {
            if !d.resolved() {
                return Some(Cell::text(BELOW_RESOLUTION));
            }
            let text = duration_interval_ns(d.estimate, d.low, d.high);
            let value = Value::Figure {
                value: d.estimate,
                unit: Unit::Time,
            };
            return Some(Cell::with(text, value));
        }
        let extra = r.metrics.connect_ns?.p50 - tcp_p50?;
        Some(time_if_resolved(extra > 0.0, extra))
    });
}

fn concurrent_rows(table: &mut Columns, clients: u64, columns: &Cells) {
    let plural = if clients == 1 { "" } else { "s" };
    let label = format!("{clients} client{plural}: transactions/s");
    table.line(&label, columns, Unit::Rate, |r| r.metrics.tps);
    table.range("  range", columns, Unit::Rate);
    let latencies: [(&str, LatencyOf); 4] = [
        ("  latency mean", |p| p.mean),
        ("  latency p50", |p| p.p50),
        ("  latency p99", |p| p.p99),
        ("  latency p99.9", |p| p.p999),
    ];
    for (label, get) in latencies {
        table.line(label, columns, Unit::Time, |r| {
            r.metrics.latency_ns.as_ref().map(get)
        });
    }
    if columns
        .iter()
        .flatten()
        .any(|r| r.metrics.failed.unwrap_or(0) > 0)
    {
        table.line("  failed transactions", columns, Unit::Count, |r| {
            r.metrics.failed.map(|f| f as f64)
        });
    }
}

/// The rows of one authentication method; `trust` holds the same columns' records
/// under trust, against which its cost is taken round by round.
fn auth_rows(table: &mut Columns, method: &str, columns: &Cells, trust: &Cells) {
    table.line(
        &format!("{method}: connection p50"),
        columns,
        Unit::Time,
        |r| r.metrics.connect_ns.map(|p| p.p50),
    );
    table.certainty(columns);
    if method == "trust" {
        return; // the baseline: its cost over itself says nothing
    }
    table.cells(&format!("{method}: cost over trust"), columns, |r| {
        let median = r.metrics.auth_ns?;
        let baseline = trust.iter().flatten().find(|t| t.transport == r.transport);
        let trials: Vec<f64> = baseline.map_or_else(Vec::new, |t| {
            connection_p50s(r)
                .iter()
                .zip(connection_p50s(t))
                .map(|(m, t)| m - t)
                .collect()
        });
        Some(time_if_resolved(resolved(&trials, median), median))
    });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::{rank, record};
    use crate::report::block::Row;
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
        Metrics {
            connect_ns: Some(p),
            phases_ns: Some(Phases {
                socket: 50e3,
                tls: if tls { 3.5e6 } else { 0.0 },
                auth: 1.5e6,
                ready: 0.0,
                query: 150e3,
                close: 15e3,
            }),
            ..Metrics::default()
        }
    }

    /// Connect records of unix, tcp and tls, round by round, under `auth`.
    fn connects(auth: Option<&str>, tcp: &[f64], tls: &[f64]) -> Vec<ResultRecord> {
        let params = Params {
            auth_method: auth.map(String::from),
            ..Params::default()
        };
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
        rank(&mut rs, &CONNECTION);
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
            matches!(cost.cells[2].value, Some(Value::Figure { value, unit: Unit::Time })
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
            block.title.contains("; authentication of your server")
                && !block.title.contains("trust"),
            "{}",
            block.title
        );
    }

    #[test]
    fn a_cost_over_trust_or_an_intercept_whose_range_holds_zero_is_below_resolution() {
        let params = |m: &str| Params {
            auth_method: Some(m.into()),
            ..Params::default()
        };
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
            let p50 = r.metrics.connect_ns.unwrap().p50;
            r.metrics.auth_ns = Some(p50 - 2.0e6);
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
                    trial(Metrics {
                        per_query_ns: Some(100e3),
                        intercept_ns: Some(*i),
                        ..Metrics::default()
                    })
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
}
