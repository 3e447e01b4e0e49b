//! The raw socket experiments as they describe themselves: id, title, headline,
//! charts, verdict line, and the table of each, laid out like the PostgreSQL ones: a
//! column per transport, a row per measurement (per message size, write size or
//! client count where those vary), and under each headline its time per operation
//! against the reference transport.

use super::keys::*;
use crate::report::block::Block;
use crate::report::block::Cell;
use crate::report::columns::{groups, Columns, TAILS};
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, OwnLine, Pick, VerdictLine, Work, WorkKind,
};
use crate::report::format::{duration_ns, versus};
use crate::report::verdict::failed::{percent, Failures};
use crate::report::verdict::own::{Placed, Said};
use crate::report::verdict::{listed, unsettled, Outcome, Pair};
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

/// Every figure the experiments record that the report reads or the loader checks.
const FIGURES: &[Metric] = &[
    CONNECTIONS,
    RTT,
    THROUGHPUT,
    OPS,
    RECEIVED_RATE,
    WAITED,
    LOST_MESSAGES,
];

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
    own_line: Some(OwnLine {
        rank: 31,
        heading: "Datagrams against streams",
        says: datagrams_against_streams,
    }),
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

/// Messages received per second, one way.
const RECEIVED_RATE: Metric = Metric::new("msgs_per_s", Unit::Rate, Better::Higher);
/// The share of sends that waited for room.
const WAITED: Metric = Metric::new(WAITED_SHARE.name, Unit::Count, Better::Lower).share();
/// The messages sent that never arrived: all those sent but those received.
const LOST_MESSAGES: Metric =
    Metric::new(LOST.name, Unit::Count, Better::Lower).remainder(SENT.name, RECEIVED.name);

pub static MESSAGES: Description = Description {
    id: "sockets.messages",
    title: "messages one way, as fast as the sender can",
    chart_title: "Messages received per second by message size",
    headline: RECEIVED_RATE,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE, BY_RECEIVE_BUFFER],
    table: messages,
    charts: &[],
    verdict: Some(VerdictLine {
        // Lost messages cost work too: it is all carried by those received.
        counted: Some(|_| "message received".into()),
        rank: 55,
        case: Pick::Smallest(BY_SIZE),
        what: |p| format!("{} messages one way", format_size(p.get(SIZE).unwrap_or(0))),
        metric: RECEIVED_RATE,
        work: Work {
            heading: "Messages one way",
            op: "message",
            ops: "messages",
            kind: WorkKind::Bulk,
            typical: &[],
            pool_against: None,
        },
    }),
    own_line: Some(OwnLine {
        rank: 56,
        heading: "Messages lost one way",
        says: messages_lost,
    }),
};

const BY_RECEIVE_BUFFER: CaseParam =
    CaseParam::new(RECEIVE_BUFFER.name, Form::Size, "receive buffer {}").short(Some("rcv {}"));

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
    for (size, group) in groups(records, |r| r.params.get(SIZE)) {
        let cells = table.place(&group);
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
    let case = |r: &ResultRecord| (r.params.get(WRITE_SIZE), r.params.get(STREAMS));
    for ((size, streams), group) in groups(records, case) {
        let cells = table.place(&group);
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
    for (clients, group) in groups(records, |r| r.params.get(CLIENTS)) {
        let cells = table.place(&group);
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

fn messages(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let case = |r: &ResultRecord| (r.params.get(SIZE), r.params.get(RECEIVE_BUFFER));
    for ((size, buffer), group) in groups(records, case) {
        let cells = table.place(&group);
        let buffer = buffer.map_or(String::new(), |b| {
            format!(", receive buffer {}", format_size(b))
        });
        let label = format!("{}{buffer}: received/s", format_size(size.unwrap_or(0)));
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(MSGS_PER_S));
        table.range("  range", &cells, Unit::Rate);
        table.cells("  lost (of all sent)", &cells, |r| {
            let (lost, sent) = lost_of(r)?;
            Some(Cell::text(share(lost as f64 / sent as f64)))
        });
        table.cells("  sends that waited", &cells, |r| {
            Some(Cell::text(share(r.metrics.get(WAITED_SHARE)?)))
        });
    }
    let mut block = finish(&MESSAGES, table, records);
    block.notes.push(
        "one way, as fast as the sender can, until the receiver has counted what came; \
         lost: sent but never received (UDP drops a message that finds the receiver's \
         buffer full; a Unix datagram's or a stream's sender waits for room instead, and \
         \"sends that waited\" is the percentage of sends that did)"
            .into(),
    );
    if records
        .iter()
        .any(|r| lost_of(r).is_some_and(|(lost, _)| lost > 0))
    {
        block.notes.push(
            "CPU and the kernel's count are per message received: where messages were \
             lost, each one received also carries the work spent on those lost (with half \
             lost, twice a message's work)"
                .into(),
        );
    }
    block
}

/// A record's messages lost and sent, over all its rounds.
fn lost_of(r: &ResultRecord) -> Option<(u64, u64)> {
    let lost: u64 = r.trials.iter().filter_map(|t| t.metrics.get(LOST)).sum();
    let sent: u64 = r.trials.iter().filter_map(|t| t.metrics.get(SENT)).sum();
    (sent > 0).then_some((lost, sent))
}

/// A share as every share is printed ([`percent`]), but none as "none", and one
/// too small to show as less than the least shown.
fn share(part: f64) -> String {
    match part {
        p if p <= 0.0 => "none".into(),
        p if p < 0.00005 => "< 0.01%".into(),
        p => percent(p),
    }
}

/// What was lost over each transport at the largest size measured: the share of
/// all the rounds' messages, its range over the rounds, and for a transport that
/// lost none, that its sender waited instead.
fn messages_lost(run: &Placed) -> Option<Said> {
    let of = run.of(&MESSAGES);
    let largest = of
        .iter()
        .map(|r| (r.params.get(SIZE), r.params.get(RECEIVE_BUFFER)))
        .max()?;
    let cases: Vec<&ResultRecord> = of
        .into_iter()
        .filter(|r| (r.params.get(SIZE), r.params.get(RECEIVE_BUFFER)) == largest)
        .collect();
    if cases.len() < 2 {
        return None;
    }
    let each: Vec<Failures> = cases.iter().filter_map(|r| Failures::of(r, LOST)).collect();
    let mut lost = Vec::new();
    let mut none = Vec::new();
    for f in &each {
        if f.failed == 0 {
            none.push(f.transport.clone());
        } else {
            let range = match f.rounds {
                1 => "in its one round".to_string(),
                n => format!("{}–{} over {n} rounds", percent(f.low), percent(f.high)),
            };
            lost.push(format!(
                "{} lost {} of the messages sent ({range})",
                f.transport,
                share(f.share()),
            ));
        }
    }
    if !none.is_empty() {
        let waits = match (lost.is_empty(), none.len()) {
            (true, _) => "",
            (false, 1) => ": its sender waits for room instead",
            (false, _) => ": their sender waits for room instead",
        };
        lost.push(format!("{} lost none{waits}", listed(&none)));
    }
    let (size, buffer) = largest;
    Some(Said {
        case: format!(
            "{} messages{}",
            format_size(size.unwrap_or(0)),
            buffer.map_or(String::new(), |b| format!(
                ", receive buffer {}",
                format_size(b)
            ))
        ),
        says: lost.join("; "),
    })
}

/// The comparisons of the smallest round trip that a choice of datagram socket
/// turns on, each paired round by round, where both were measured: a Unix datagram
/// against UDP, a Unix datagram against a Unix stream, UDP against TCP, and an
/// unconnected UDP socket against a connected one.
fn datagrams_against_streams(run: &Placed) -> Option<Said> {
    const PAIRS: [(&str, &str, &str); 4] = [
        ("unix-dgram", "udp", "over UDP"),
        ("unix-dgram", "unix", "over a Unix stream socket"),
        ("udp", "tcp", "over TCP"),
        ("udp", "udp-unconnected", "over an unconnected UDP socket"),
    ];
    let of = run.of(&PINGPONG);
    let smallest = of.iter().filter_map(|r| r.params.get(SIZE)).min()?;
    let at = |t: &str| {
        of.iter()
            .copied()
            .find(|r| r.transport == t && r.params.get(SIZE) == Some(smallest))
    };
    let said: Vec<String> = PAIRS
        .iter()
        .filter_map(|&(a, b, over)| {
            let p = Pair::of(&RTT, at(a)?, at(b)?)?;
            let interval = p.ratio.as_ref().map_or("too few rounds".into(), versus);
            Some(match p.outcome {
                Outcome::Differs => {
                    let delta = p.other_cost - p.base_cost;
                    let verb = if delta > 0.0 { "saves" } else { "costs" };
                    format!(
                        "{a} {verb} {} per round trip {over} ({b} {interval})",
                        duration_ns(delta.abs())
                    )
                }
                Outcome::Same => {
                    format!("{a} and {b} are the same within ±5% ({b} {interval})")
                }
                Outcome::Inconclusive => {
                    format!("{a} against {b}: not settled ({})", unsettled(&p))
                }
            })
        })
        .collect();
    (!said.is_empty()).then(|| Said {
        case: format!("{} messages", format_size(smallest)),
        says: said.join("; "),
    })
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
