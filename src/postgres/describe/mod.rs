//! The PostgreSQL experiments as they describe themselves: id, title, headline,
//! charts, verdict line, and the table of each, in the layout of a lab notebook: a
//! column per transport, a row per measurement, and under each headline its time
//! per operation against the reference transport, e.g. `+57% [+41%, +75%]`.
//!
//! Differences of times (a fitted intercept, a method's cost over trust, TLS's
//! extra cost of a connection) are shown only where the rounds tell them from
//! zero; see [`crate::report::difference`].
//!
//! This file declares the experiments; the rows of their tables are laid out in
//! `connect.rs` (connect and auth), `fitted.rs` (query and rows) and
//! `concurrent.rs`, and `notes.rs` adds the footnotes and the legend.

mod concurrent;
mod connect;
mod fitted;
mod notes;
#[cfg(test)]
mod tests;

use crate::postgres::keys::*;
use crate::report::block::Cell;
use crate::report::columns::{distinct, figure_cell, groups, having, Columns};
use crate::report::difference::BELOW_RESOLUTION;
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, Pick, VerdictLine, Work, WorkKind,
};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::ResultRecord;
use concurrent::{concurrent_rows, rate_rows};
use connect::{auth_rows, authentication, connect_notes, connect_rows};
use fitted::{fitted, QUERIES, ROWS as ROW_FIT};
use notes::finish;

/// Records placed in their transport's column.
type Cells<'r> = [Option<&'r ResultRecord>];

/// The case parameters, as labels show them.
const BY_PROTOCOL: CaseParam =
    CaseParam::new(PROTOCOL.name, Form::Text, "{} protocol").short(Some("{}"));
const BY_AUTH_METHOD: CaseParam = CaseParam::new(AUTH_METHOD.name, Form::Text, "{}");
const BY_CLIENTS: CaseParam = CaseParam::new(CLIENTS.name, Form::Number, "{} clients")
    .one("1 client")
    .short(Some("{} cl."));
const BY_CONNECT_PER_TRANSACTION: CaseParam = CaseParam::new(
    CONNECT_PER_TRANSACTION.name,
    Form::Flag,
    "connection per transaction",
)
.short(None);
const BY_RATE: CaseParam =
    CaseParam::new(RATE_PER_S.name, Form::Number, "at {} transactions/s").short(Some("{}/s"));

/// A fit's fixed cost, and how well it fits.
const INTERCEPT: Metric = Metric::new("intercept_ns", Unit::Time, Better::Lower).signed();
const FIT_R2: Metric = Metric::new("r2", Unit::Count, Better::Higher).signed();
/// A connection's cost beyond one query's, and a method's beyond trust's.
const HANDSHAKE: Metric = Metric::new("handshake_ns", Unit::Time, Better::Lower).signed();
const AUTH_COST: Metric = Metric::new("auth_ns", Unit::Time, Better::Lower).signed();
const QUERY_RATE: Metric = Metric::new("qps", Unit::Rate, Better::Higher);
const ROW_RATE: Metric = Metric::new("rows_per_s", Unit::Rate, Better::Higher);
const CONNECTIONS: Metric = Metric::new("conn_per_s", Unit::Rate, Better::Higher);

/// Every figure the experiments record that the report or the loader reads.
const FIGURES: &[Metric] = &[
    PER_QUERY,
    QUERY_RATE,
    PER_ROW,
    ROW_RATE,
    INTERCEPT,
    FIT_R2,
    CONNECTION,
    CONNECTIONS,
    HANDSHAKE,
    AUTH_COST,
    TPS_RATE,
    LATENCY_P50,
];

/// Time per query, the slope of the query fit.
const PER_QUERY: Metric = Metric::new("per_query_ns", Unit::Time, Better::Lower);

pub static QUERY: Description = Description {
    id: "postgres.query",
    title: "N sequential SELECT 1 on one connection, fitted on N",
    chart_title: "Time per query (SELECT 1 on a kept connection)",
    headline: PER_QUERY,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_PROTOCOL],
    table: |records| with_protocol(fitted(&QUERY, &QUERIES, records), records),
    charts: &[Chart::Fitted {
        n: QUERIES.many,
        points: POINTS,
        intercept: INTERCEPT,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 10,
        case: Pick::Only,
        what: |p| format!("SELECT 1 on a kept connection{}", protocol_words(p)),
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
    own_line: None,
};

/// Median time of a whole connection.
const CONNECTION: Metric = Metric::new("connect_ns.p50", Unit::Time, Better::Lower);

pub static CONNECT: Description = Description {
    id: "postgres.connect",
    title: "connect, SELECT 1, close",
    chart_title: "Time of a new connection (connect, SELECT 1, close; p50)",
    headline: CONNECTION,
    figures: FIGURES,
    budgets: BUDGETS,
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
        counted: None,
        rank: 20,
        case: Pick::Only,
        what: |_| "connect, SELECT 1, close".into(),
        metric: CONNECTION,
        work: Work {
            heading: "New PostgreSQL connections",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[10.0, 100.0, 1_000.0],
            pool_against: Some(&QUERY),
        },
    }),
    own_line: None,
};

pub static AUTH: Description = Description {
    id: "postgres.auth",
    title: "connect, SELECT 1, close under each authentication method",
    chart_title: "Time of a new connection by authentication method (p50)",
    headline: CONNECTION,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_AUTH_METHOD],
    table: |records| {
        let mut table = Columns::of(records);
        let method = |r: &ResultRecord| r.params.get(AUTH_METHOD).clone().unwrap_or("?".into());
        let trust = table.place(&having(records, method, &"trust".to_string()));
        for (m, group) in groups(records, method) {
            let cells = table.place(&group);
            auth_rows(&mut table, &m, &cells, &trust);
        }
        finish(&AUTH, table, records)
    },
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 22,
        case: Pick::Cases(BY_AUTH_METHOD),
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
    own_line: None,
};

/// Time per row, the slope of the rows fit.
const PER_ROW: Metric = Metric::new("per_row_ns", Unit::Time, Better::Lower);

pub static ROWS: Description = Description {
    id: "postgres.rows",
    title: "SELECT * FROM generate_series(1,N), every value read, fitted on N",
    chart_title: "Time per row of a bulk result",
    headline: PER_ROW,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[],
    table: |records| fitted(&ROWS, &ROW_FIT, records),
    charts: &[Chart::Fitted {
        n: ROW_FIT.many,
        points: POINTS,
        intercept: INTERCEPT,
    }],
    verdict: Some(VerdictLine {
        counted: None,
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
    own_line: None,
};

/// Transactions per second of all clients.
const TPS_RATE: Metric = Metric::new("tps", Unit::Rate, Better::Higher);

pub static CONCURRENT: Description = Description {
    id: "postgres.concurrent",
    title: "clients running the script at once, like pgbench -c -j -T",
    chart_title: "Transactions per second of all clients together",
    headline: TPS_RATE,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CLIENTS, BY_CONNECT_PER_TRANSACTION, BY_PROTOCOL],
    table: |records| {
        let mut table = Columns::of(records);
        for (clients, group) in groups(records, |r| r.params.get(CLIENTS)) {
            let cells = table.place(&group);
            concurrent_rows(&mut table, clients.unwrap_or(0), &cells);
        }
        with_protocol(finish(&CONCURRENT, table, records), records)
    },
    charts: &[Chart::Lines {
        title: "transactions per second by number of clients",
        x: BY_CLIENTS,
        x_desc: "clients",
        y: TPS_RATE,
        log_x: false,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 40,
        case: Pick::Largest(BY_CLIENTS),
        what: |p| {
            format!(
                "{} clients running {}{}",
                p.get(CLIENTS).unwrap_or(0),
                p.get(SCRIPT).unwrap_or_else(|| "SELECT 1".into()),
                protocol_words(p)
            )
        },
        metric: TPS_RATE,
        work: Work {
            heading: "Many PostgreSQL clients",
            op: "transaction",
            ops: "transactions",
            kind: WorkKind::Clients,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// Median latency of a transaction at a fixed rate.
const LATENCY_P50: Metric = Metric::new("latency_ns.p50", Unit::Time, Better::Lower);

/// The concurrent experiment at a fixed rate (pgbench `-R`): throughput is set by
/// the schedule, so latency is the figure compared.
pub static CONCURRENT_RATE: Description = Description {
    id: "postgres.concurrent-rate",
    title: "clients at a fixed transaction rate, like pgbench -c -j -T -R",
    chart_title: "Latency of a transaction at a fixed rate (p50)",
    headline: LATENCY_P50,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CLIENTS, BY_RATE, BY_CONNECT_PER_TRANSACTION, BY_PROTOCOL],
    table: |records| {
        let mut table = Columns::of(records);
        let key = |r: &ResultRecord| (r.params.get(CLIENTS), r.params.get(RATE_PER_S));
        for ((clients, rate), group) in groups(records, key) {
            let cells = table.place(&group);
            rate_rows(&mut table, clients.unwrap_or(0), rate.unwrap_or(0), &cells);
        }
        with_protocol(finish(&CONCURRENT_RATE, table, records), records)
    },
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 45,
        case: Pick::Largest(BY_CLIENTS),
        what: |p| {
            format!(
                "{} clients running {} at {}/s{}",
                p.get(CLIENTS).unwrap_or(0),
                p.get(SCRIPT).unwrap_or_else(|| "SELECT 1".into()),
                p.get(RATE_PER_S).unwrap_or(0),
                protocol_words(p)
            )
        },
        metric: LATENCY_P50,
        work: Work {
            heading: "Latency at a fixed rate",
            op: "transaction",
            ops: "transactions",
            kind: WorkKind::Clients,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// The protocol in a verdict line's words, when it is not the simple one.
fn protocol_words(p: &crate::results::Params) -> String {
    p.get(PROTOCOL)
        .map_or(String::new(), |m| format!(", {m} protocol"))
}

/// The block's title names the protocol when it is not the simple one.
fn with_protocol(
    mut block: crate::report::block::Block,
    records: &[ResultRecord],
) -> crate::report::block::Block {
    let protocols = distinct(records, |r| r.params.get(PROTOCOL));
    if let [Some(protocol)] = protocols.as_slice() {
        block.title = format!(
            "{}; {protocol} protocol (pgbench -M {protocol})",
            block.title
        );
    }
    block
}

/// A time the rounds tell from zero, or [`BELOW_RESOLUTION`].
fn time_if_resolved(resolved: bool, ns: f64) -> Cell {
    if resolved {
        figure_cell(Unit::Time, ns)
    } else {
        Cell::text(BELOW_RESOLUTION)
    }
}
