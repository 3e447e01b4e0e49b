//! The Redis experiments as they describe themselves: id, title, headline, case
//! parameters, table, charts and verdict line, laid out like the other families'
//! (a column per transport, a row per measurement, and under each headline its
//! cost against the reference transport).

use super::keys::*;
use crate::report::block::Block;
use crate::report::columns::{groups, Columns, TAILS};
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, Pick, VerdictLine, Work, WorkKind,
};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::ResultRecord;
use crate::units::format_size;

/// The case parameters, as labels show them.
const BY_SIZE: CaseParam = CaseParam::new(SIZE.name, Form::Size, "{} values");
const BY_DEPTH: CaseParam =
    CaseParam::new(DEPTH.name, Form::Number, "{} pipelined").short(Some("×{}"));
const BY_CLIENTS: CaseParam = CaseParam::new(CLIENTS.name, Form::Number, "{} clients")
    .one("1 client")
    .short(Some("{} cl."));

/// A command's round trip (median).
const RTT: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);
/// A pipelined command's share of its pipeline's round trip.
const PER_COMMAND: Metric = Metric::new("per_command_ns", Unit::Time, Better::Lower);
const OPS: Metric = Metric::new("ops_per_s", Unit::Rate, Better::Higher);
const CONNECTIONS: Metric = Metric::new("conn_per_s", Unit::Rate, Better::Higher);
const CONNECTION_TIME: Metric = Metric::new("latency_ns.p50", Unit::Time, Better::Lower);

/// Every figure the experiments record.
const FIGURES: &[Metric] = &[RTT, PER_COMMAND, OPS, CONNECTIONS, CONNECTION_TIME];

pub static PING: Description = Description {
    id: "redis.ping",
    title: "PING round trips on one connection",
    chart_title: "Round trip of a PING (p50)",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[],
    table: |records| round_trips(&PING, records),
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 11,
        case: Pick::Only,
        what: |_| "PING on a kept connection".into(),
        metric: RTT,
        work: Work {
            heading: "Round trips to Redis",
            op: "PING",
            ops: "PINGs",
            kind: WorkKind::Requests,
            typical: &[1_000.0, 10_000.0, 100_000.0],
            pool_against: None,
        },
    }),
    own_line: None,
};

pub static GET: Description = Description {
    id: "redis.get",
    title: "GET round trips on one connection, by value size",
    chart_title: "Round trip of a GET (p50) by value size",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE],
    table: |records| round_trips(&GET, records),
    charts: &[Chart::Lines {
        title: "GET round trip by value size",
        x: BY_SIZE,
        x_desc: "value size (log scale)",
        y: RTT,
        log_x: true,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 12,
        case: Pick::Smallest(BY_SIZE),
        what: |p| {
            format!(
                "GET of {} values, one at a time",
                format_size(p.get(SIZE).unwrap_or(0))
            )
        },
        metric: RTT,
        work: Work {
            heading: "Commands to Redis",
            op: "GET",
            ops: "GETs",
            kind: WorkKind::Requests,
            typical: &[1_000.0, 10_000.0, 100_000.0],
            pool_against: None,
        },
    }),
    own_line: None,
};

pub static PIPELINE: Description = Description {
    id: "redis.pipeline",
    title: "pipelined GETs of 64 B on one connection, their replies read together",
    chart_title: "Time per pipelined GET",
    headline: PER_COMMAND,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_DEPTH],
    table: pipeline,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 13,
        case: Pick::Largest(BY_DEPTH),
        what: |p| format!("GETs {} at a time in a pipeline", p.get(DEPTH).unwrap_or(0)),
        metric: PER_COMMAND,
        work: Work {
            heading: "Pipelined commands to Redis",
            op: "GET",
            ops: "GETs",
            kind: WorkKind::Requests,
            typical: &[10_000.0, 100_000.0, 1_000_000.0],
            pool_against: None,
        },
    }),
    own_line: None,
};

pub static CONNECT: Description = Description {
    id: "redis.connect",
    title: "connect, AUTH, PING, close",
    chart_title: "New Redis connections per second (connect, AUTH, PING, close)",
    headline: CONNECTIONS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[],
    table: connect,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 22,
        case: Pick::Only,
        what: |_| "connect, AUTH, PING, close".into(),
        metric: CONNECTIONS,
        work: Work {
            heading: "New Redis connections",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[10.0, 100.0, 1_000.0],
            pool_against: Some(&GET),
        },
    }),
    own_line: None,
};

pub static CONCURRENT: Description = Description {
    id: "redis.concurrent",
    title: "clients doing GETs of 64 B at once, like redis-benchmark -c",
    chart_title: "GETs per second of all clients together",
    headline: OPS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CLIENTS],
    table: concurrent,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 42,
        case: Pick::Largest(BY_CLIENTS),
        what: |p| {
            format!(
                "{} clients doing GETs of 64 B at once",
                p.get(CLIENTS).unwrap_or(0)
            )
        },
        metric: OPS,
        work: Work {
            heading: "Many Redis clients",
            op: "GET",
            ops: "GETs",
            kind: WorkKind::Clients,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// PING and GET: per case, the round trip with its certainty and tails, and the
/// commands per second.
fn round_trips(experiment: &'static Description, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for (size, group) in groups(records, |r| r.params.get(SIZE)) {
        let cells = table.place(&group);
        let label = match size {
            Some(size) => format!("{}: round trip p50", format_size(size)),
            None => "round trip p50".to_string(),
        };
        table.line(&label, &cells, Unit::Time, |r| {
            r.metrics.get(RTT_NS).map(|p| p.p50)
        });
        table.certainty(&cells);
        for (label, get) in &TAILS[1..] {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
        table.line("  commands/s", &cells, Unit::Rate, |r| {
            r.metrics.get(OPS_PER_S)
        });
    }
    table.into_block(experiment, records)
}

fn pipeline(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for (depth, group) in groups(records, |r| r.params.get(DEPTH)) {
        let cells = table.place(&group);
        let label = format!("{} at a time: time per GET", depth.unwrap_or(0));
        table.line(&label, &cells, Unit::Time, |r| {
            r.metrics.get(PER_COMMAND_NS)
        });
        table.certainty(&cells);
        table.line("  pipeline round trip p50", &cells, Unit::Time, |r| {
            r.metrics.get(RTT_NS).map(|p| p.p50)
        });
        table.line("  GETs/s", &cells, Unit::Rate, |r| r.metrics.get(OPS_PER_S));
    }
    table.into_block(&PIPELINE, records)
}

fn connect(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let cells = table.place(&records.iter().collect::<Vec<_>>());
    table.line("connections/s", &cells, Unit::Rate, |r| {
        r.metrics.get(CONN_PER_S)
    });
    table.certainty(&cells);
    for (label, get) in TAILS {
        table.line(label, &cells, Unit::Time, |r| {
            r.metrics.get(LATENCY_NS).as_ref().map(get)
        });
    }
    table.into_block(&CONNECT, records)
}

fn concurrent(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for (clients, group) in groups(records, |r| r.params.get(CLIENTS)) {
        let cells = table.place(&group);
        let label = format!("{} clients: GETs/s", clients.unwrap_or(0));
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(OPS_PER_S));
        table.certainty(&cells);
        for (label, get) in TAILS {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
    }
    table.into_block(&CONCURRENT, records)
}
