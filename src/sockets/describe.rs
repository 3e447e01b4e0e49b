//! The raw socket experiments as they describe themselves: id, title, headline,
//! charts, verdict line, and the table of each, laid out like the PostgreSQL ones: a
//! column per transport, a row per measurement (per message size, write size or
//! client count where those vary), and under each headline its time per operation
//! against the reference transport.

use super::keys::*;
use crate::report::block::Block;
use crate::report::columns::{distinct, having, Columns, TAILS};
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, Pick, VerdictLine, Work, WorkKind,
};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::ResultRecord;
use crate::units::format_size;

/// The case parameters, as labels show them.
const BY_SIZE: CaseParam = CaseParam::new(SIZE.name, Form::Size, "{}");
const BY_WRITE_SIZE: CaseParam =
    CaseParam::new(WRITE_SIZE.name, Form::Size, "{} writes").short(Some("{}"));
const BY_STREAMS: CaseParam =
    CaseParam::new(STREAMS.name, Form::Number, "{} streams").short(Some("×{}"));
const BY_CLIENTS: CaseParam = CaseParam::new(CLIENTS.name, Form::Number, "{} clients")
    .one("1 client")
    .short(Some("{} cl."));

/// Every figure the experiments record.
const FIGURES: &[Metric] = &[CONNECTIONS, RTT, THROUGHPUT, OPS];

pub static CONNECT: Description = Description {
    id: "sockets.connect",
    title: "connect, read the 12-byte greeting, close",
    chart_title: "New connections per second (connect, greeting, close)",
    headline: CONNECTIONS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[],
    table: connect,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 25,
        case: Pick::Only,
        what: |_| "connect, greeting, close".into(),
        metric: CONNECTIONS,
        work: Work {
            heading: "New raw socket connections",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[10.0, 100.0, 1_000.0],
            pool_against: Some(&PINGPONG),
        },
    }),
    own_line: None,
};

/// Connections per second.
const CONNECTIONS: Metric = Metric::new("conn_per_s", Unit::Rate, Better::Higher);

/// Round trip time p50.
const RTT: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);

pub static PINGPONG: Description = Description {
    id: "sockets.pingpong",
    title: "request/response round trips on one connection",
    chart_title: "Round trip time (p50) by message size",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE],
    table: pingpong,
    charts: &[Chart::Lines {
        title: "round trip by message size",
        x: BY_SIZE,
        x_desc: "message size (log scale)",
        y: RTT,
        log_x: true,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 30,
        case: Pick::Smallest(BY_SIZE),
        what: |p| {
            format!(
                "{} messages, raw socket",
                format_size(p.get(SIZE).unwrap_or(0))
            )
        },
        metric: RTT,
        work: Work {
            heading: "Raw round trips",
            op: "round trip",
            ops: "round trips",
            kind: WorkKind::Requests,
            typical: &[1_000.0, 10_000.0, 100_000.0],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// Stream throughput.
const THROUGHPUT: Metric = Metric::new("bytes_per_s", Unit::ByteRate, Better::Higher);

pub static STREAM: Description = Description {
    id: "sockets.stream",
    title: "bulk bytes one way",
    chart_title: "Bulk bytes per second by write size",
    headline: THROUGHPUT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_WRITE_SIZE, BY_STREAMS],
    table: stream,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: Some(|p| format!("{} write", format_size(p.get(WRITE_SIZE).unwrap_or(0)))),
        rank: 60,
        case: Pick::Largest(BY_WRITE_SIZE),
        what: |p| match p.get(STREAMS).filter(|&n| n > 1) {
            Some(n) => format!(
                "{} writes, {n} streams at once, raw socket",
                format_size(p.get(WRITE_SIZE).unwrap_or(0))
            ),
            None => format!(
                "{} writes, raw socket",
                format_size(p.get(WRITE_SIZE).unwrap_or(0))
            ),
        },
        metric: THROUGHPUT,
        work: Work {
            heading: "Bulk bytes",
            op: "byte",
            ops: "bytes",
            kind: WorkKind::Bulk,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// Round trips per second of all clients.
const OPS: Metric = Metric::new("ops_per_s", Unit::Rate, Better::Higher);

pub static CONCURRENT: Description = Description {
    id: "sockets.concurrent",
    title: "clients doing 64-byte round trips at once",
    chart_title: "Round trips per second of all clients together",
    headline: OPS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CLIENTS],
    table: concurrent,
    charts: &[Chart::Lines {
        title: "round trips per second by number of clients",
        x: BY_CLIENTS,
        x_desc: "clients",
        y: OPS,
        log_x: false,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 45,
        case: Pick::Largest(BY_CLIENTS),
        what: |p| {
            format!(
                "{} clients doing round trips at once",
                p.get(CLIENTS).unwrap_or(0)
            )
        },
        metric: OPS,
        work: Work {
            heading: "Many raw socket clients",
            op: "round trip",
            ops: "round trips",
            kind: WorkKind::Clients,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: None,
};

fn connect(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let cells = table.place(&records.iter().collect::<Vec<_>>());
    table.line("connections/s", &cells, Unit::Rate, |r| {
        r.metrics.get(CONN_PER_S)
    });
    table.range("  range", &cells, Unit::Rate);
    for (label, get) in TAILS {
        table.line(label, &cells, Unit::Time, |r| {
            r.metrics.get(LATENCY_NS).as_ref().map(get)
        });
    }
    finish(&CONNECT, table, records)
}

fn pingpong(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for size in distinct(records, |r| r.params.get(SIZE)) {
        let cells = table.place(&having(records, |r| r.params.get(SIZE), &size));
        let label = format!("{}: round trip p50", format_size(size.unwrap_or(0)));
        let rtt = |r: &ResultRecord| r.metrics.get(RTT_NS).map(|p| p.p50);
        table.line(&label, &cells, Unit::Time, rtt);
        table.certainty(&cells);
        for (label, get) in &TAILS[1..] {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
        table.line("  round trips/s", &cells, Unit::Rate, |r| {
            r.metrics.get(OPS_PER_S)
        });
    }
    finish(&PINGPONG, table, records)
}

fn stream(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for case in distinct(records, |r| {
        (r.params.get(WRITE_SIZE), r.params.get(STREAMS))
    }) {
        let (size, streams) = case;
        let cells = table.place(&having(
            records,
            |r| (r.params.get(WRITE_SIZE), r.params.get(STREAMS)),
            &case,
        ));
        let label = match streams {
            Some(n) => format!(
                "{} writes × {n} streams: throughput",
                format_size(size.unwrap_or(0))
            ),
            None => format!("{} writes: throughput", format_size(size.unwrap_or(0))),
        };
        table.line(&label, &cells, Unit::ByteRate, |r| {
            r.metrics.get(BYTES_PER_S)
        });
        table.range("  range", &cells, Unit::ByteRate);
    }
    finish(&STREAM, table, records)
}

fn concurrent(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for clients in distinct(records, |r| r.params.get(CLIENTS)) {
        let cells = table.place(&having(records, |r| r.params.get(CLIENTS), &clients));
        let label = format!("{} clients: round trips/s", clients.unwrap_or(0));
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(OPS_PER_S));
        table.range("  range", &cells, Unit::Rate);
        for (label, get) in TAILS {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
    }
    finish(&CONCURRENT, table, records)
}

/// The block of `experiment` with the rows laid out and the footnotes.
fn finish(experiment: &'static Description, table: Columns, records: &[ResultRecord]) -> Block {
    let mut block = table.into_block(experiment, records);
    block.notes.extend(port_note(records));
    block
}

/// The note of a table whose TCP trials stopped early, if one did.
fn port_note(records: &[ResultRecord]) -> Option<String> {
    records
        .iter()
        .flat_map(|r| &r.trials)
        .any(|t| t.metrics.get(PORT_LIMITED).is_some_and(|n| n > 0))
        .then(|| "some TCP trials stopped early to keep ephemeral ports free".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sockets::FAMILY;

    /// A trial that stopped early to spare ephemeral ports, in a file of format 5
    /// or before (`port_limited: true`), loads as the figure format 6 writes, and
    /// its table still says so.
    #[test]
    fn an_older_files_port_limited_trial_keeps_its_note() {
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sockets.json");
        let mut raw: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        let tcp = raw["results"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["experiment"] == CONNECT.id && r["transport"] == "tcp")
            .unwrap();
        tcp["trials"][0]["port_limited"] = serde_json::json!(true);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limited.json");
        std::fs::write(&path, raw.to_string()).unwrap();
        let known = |id: &str| {
            let mut all = FAMILY.experiments.iter();
            all.find(|e| e.id == id).map(|e| e.declared())
        };
        let file = crate::results::load(&path, known).unwrap();
        let connect: Vec<ResultRecord> = (file.results.into_iter())
            .filter(|r| r.experiment == CONNECT.id)
            .collect();
        let limited = |r: &ResultRecord| r.trials[0].metrics.get(PORT_LIMITED);
        let counts: Vec<_> = connect
            .iter()
            .map(|r| (r.transport.as_str(), limited(r)))
            .collect();
        assert_eq!(counts, [("unix", None), ("tcp", Some(1)), ("tls", None)]);
        let block = (CONNECT.table)(&connect);
        let note = "some TCP trials stopped early to keep ephemeral ports free";
        assert!(block.notes.iter().any(|n| n == note), "{:?}", block.notes);
    }
}
