//! The proxy experiments as they describe themselves: id, title, headline, case
//! parameters, table, charts and verdict line, laid out like the other families'
//! (a column per transport of the hop to the app server, a row per measurement,
//! and under each headline its cost against the reference transport).

use super::keys::*;
use crate::report::block::Block;
use crate::report::columns::{distinct, having, Columns, TAILS};
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, Pick, VerdictLine, Work, WorkKind,
};
use crate::report::format;
use crate::results::metric::{Better, Metric, Unit};
use crate::results::{Params, ResultRecord};
use crate::units::format_size;

/// The case parameters, as labels show them.
const BY_SIZE: CaseParam = CaseParam::new(SIZE.name, Form::Size, "{} responses");
/// What a user's app server is asked for (`--path`), in place of a size.
const BY_PATH: CaseParam = CaseParam::new(PATH.name, Form::Text, "GET {}");
const BY_CONNECTIONS: CaseParam = CaseParam::new(CONNECTIONS.name, Form::Number, "{} connections")
    .one("1 connection")
    .short(Some("{} conn."));
const BY_BACKLOG: CaseParam =
    CaseParam::new(BACKLOG.name, Form::Number, "app backlog {}").short(Some("backlog {}"));
const BY_KEEPALIVE: CaseParam =
    CaseParam::new(UPSTREAM_KEEPALIVE.name, Form::Text, "upstream keepalive {}")
        .short(Some("keepalive {}"));

/// A request's round trip (median).
const RTT: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);
const REQUESTS: Metric = Metric::new("requests_per_s", Unit::Rate, Better::Higher);
const FAILURES: Metric = Metric::new("failed", Unit::Count, Better::Lower);
/// A whole connection's time (median).
const CONNECTION: Metric = Metric::new("connection_ns.p50", Unit::Time, Better::Lower);
/// Requests that succeeded per second: the failed ones are not in it.
const SUCCEEDED: Metric = Metric::new("ok_per_s", Unit::Rate, Better::Higher);

/// Every figure the experiments record.
const FIGURES: &[Metric] = &[RTT, REQUESTS, FAILURES, CONNECTION, SUCCEEDED];

/// What a request through nginx is to the verdict.
const PROXIED: Work = Work {
    heading: "nginx in front of an app server",
    op: "request",
    ops: "requests",
    kind: WorkKind::Requests,
    typical: &[100.0, 1_000.0, 10_000.0],
    pool_against: None,
};

pub static REQUEST: Description = Description {
    id: "proxy.request",
    title: "requests through nginx to its app server, upstream keepalive on, by response size",
    chart_title: "Round trip of a request through nginx (p50) by response size",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE, BY_PATH],
    table: |records| by_size(&REQUEST, records),
    charts: &[Chart::Lines {
        title: "request through nginx by response size",
        x: BY_SIZE,
        x_desc: "response size (log scale)",
        y: RTT,
        log_x: true,
    }],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 14,
        case: Pick::Smallest(BY_SIZE),
        what: |p| {
            format!(
                "nginx to its app server, {}, one request at a time",
                asked(p)
            )
        },
        metric: RTT,
        work: PROXIED,
    }),
};

pub static KEEPALIVE: Description = Description {
    id: "proxy.keepalive",
    title: "requests through nginx with upstream keepalive on and off (a new upstream \
            connection per request)",
    chart_title: "Round trip of a request through nginx (p50), upstream keepalive on and off",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_KEEPALIVE],
    table: keepalive,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 23,
        case: Pick::Cases(BY_KEEPALIVE),
        what: |_| "each request through nginx".into(),
        metric: RTT,
        work: Work {
            heading: "nginx's upstream keepalive",
            ..PROXIED
        },
    }),
};

pub static DIRECT: Description = Description {
    id: "proxy.direct",
    title: "requests straight to the app server, no nginx, by response size",
    chart_title: "Round trip of a request to the app server alone (p50) by response size",
    headline: RTT,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE, BY_PATH],
    table: |records| by_size(&DIRECT, records),
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 15,
        case: Pick::Smallest(BY_SIZE),
        what: |p| format!("a client straight to the app server, {}", asked(p)),
        metric: RTT,
        work: Work {
            heading: "An app server without nginx",
            ..PROXIED
        },
    }),
};

pub static CONNECT: Description = Description {
    id: "proxy.connect",
    title: "a new connection to nginx per request (like ab without -k), upstream keepalive on",
    chart_title: "Requests per second through nginx, a new client connection for each",
    headline: REQUESTS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_SIZE, BY_PATH],
    table: connect,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 24,
        case: Pick::Smallest(BY_SIZE),
        what: |p| {
            format!(
                "a new client connection for each request, {}, upstream kept",
                asked(p)
            )
        },
        metric: REQUESTS,
        work: Work {
            heading: "New connections to nginx",
            op: "connection",
            ops: "connections",
            kind: WorkKind::Connections,
            typical: &[100.0, 1_000.0, 10_000.0],
            pool_against: Some(&REQUEST),
        },
    }),
};

pub static CONCURRENT: Description = Description {
    id: "proxy.concurrent",
    title: "keep-alive connections to nginx at once, each sending its next request as soon \
            as its response is read (like wrk -c), upstream keepalive on",
    chart_title: "Requests per second through nginx of all connections together",
    headline: REQUESTS,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CONNECTIONS, BY_SIZE, BY_PATH],
    table: concurrent,
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 43,
        case: Pick::Largest(BY_CONNECTIONS),
        what: |p| {
            format!(
                "{} connections to nginx at once, {}, upstream kept",
                p.get(CONNECTIONS).unwrap_or(0),
                asked(p)
            )
        },
        metric: REQUESTS,
        work: Work {
            heading: "Many clients through nginx",
            kind: WorkKind::Clients,
            typical: &[],
            ..PROXIED
        },
    }),
};

/// No verdict line: a line compares one figure that every transport has above
/// zero, and what this experiment shows is failed requests, which one transport
/// may not have at all; a line on the 2xx rate alone would call a transport that
/// drops requests as good as one that does not. Its table's note says which
/// transport's requests failed, and how many.
pub static OVERLOAD: Description = Description {
    id: "proxy.overload",
    title: "more connections to nginx at once than the app server's listen backlog, a new \
            upstream connection per request (the php-fpm trap): requests that succeeded, \
            and the ones that failed",
    chart_title: "Requests per second through nginx answered 2xx, the app server overrun",
    headline: SUCCEEDED,
    figures: FIGURES,
    budgets: BUDGETS,
    cases: &[BY_CONNECTIONS, BY_BACKLOG, BY_SIZE],
    table: overload,
    charts: &[],
    verdict: None,
};

/// Per response size, the round trip with its certainty and tails, the requests
/// per second and the failed requests.
fn by_size(experiment: &'static Description, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for asking in distinct(records, |r| case_key(&r.params)) {
        let cells = table.place(&having(records, |r| case_key(&r.params), &asking));
        let label = format!("{}: round trip p50", label(&asking));
        rows(&mut table, &label, &cells);
    }
    table.into_block(experiment, records)
}

fn keepalive(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let kept = |r: &ResultRecord| r.params.get(UPSTREAM_KEEPALIVE).unwrap_or_default();
    for on in distinct(records, kept) {
        let cells = table.place(&having(records, kept, &on));
        rows(
            &mut table,
            &format!("keepalive {on}: round trip p50"),
            &cells,
        );
    }
    table.into_block(&KEEPALIVE, records)
}

/// Requests per second, a connection each, with its certainty; the time of a
/// whole connection (median and tails); the failed requests.
fn connect(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for asking in distinct(records, |r| case_key(&r.params)) {
        let cells = table.place(&having(records, |r| case_key(&r.params), &asking));
        let label = format!("{}: requests/s", label(&asking));
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(REQ_PER_S));
        table.certainty(&cells);
        table.line("  connection p50", &cells, Unit::Time, |r| {
            r.metrics.get(CONNECTION_NS).map(|p| p.p50)
        });
        for (label, get) in &TAILS[1..] {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(CONNECTION_NS).as_ref().map(get)
            });
        }
        table.line("  failed requests", &cells, Unit::Count, |r| {
            r.metrics.get(FAILED).map(|n| n as f64)
        });
    }
    table.into_block(&CONNECT, records)
}

/// Per number of connections: requests per second of all together with its
/// certainty, each request's round trip (median and tails), the failed requests.
fn concurrent(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for connections in distinct(records, |r| r.params.get(CONNECTIONS)) {
        let of = having(records, |r| r.params.get(CONNECTIONS), &connections);
        let cells = table.place(&of);
        let label = format!("{} connections: requests/s", connections.unwrap_or(0));
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(REQ_PER_S));
        table.certainty(&cells);
        table.line("  round trip p50", &cells, Unit::Time, |r| {
            r.metrics.get(RTT_NS).map(|p| p.p50)
        });
        for (label, get) in &TAILS[1..] {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
        table.line("  failed requests", &cells, Unit::Count, |r| {
            r.metrics.get(FAILED).map(|n| n as f64)
        });
    }
    table.into_block(&CONCURRENT, records)
}

/// Per case: the 2xx requests per second with their certainty, the failed
/// requests beside all requests answered, the rate of all, the round trips; and a
/// note that says whose requests failed, and why a full backlog fails them.
fn overload(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let case = |r: &ResultRecord| (r.params.get(CONNECTIONS), r.params.get(BACKLOG));
    for (connections, backlog) in distinct(records, case) {
        let cells = table.place(&having(records, case, &(connections, backlog)));
        let label = format!(
            "{} connections, app backlog {}: 2xx requests/s",
            connections.unwrap_or(0),
            backlog.unwrap_or(0)
        );
        table.line(&label, &cells, Unit::Rate, |r| r.metrics.get(OK_PER_S));
        table.certainty(&cells);
        table.line("  failed requests", &cells, Unit::Count, |r| {
            r.metrics.get(FAILED).map(|n| n as f64)
        });
        table.line("  requests answered", &cells, Unit::Count, |r| {
            Some(answered(r) as f64)
        });
        table.line("  all requests/s, failed too", &cells, Unit::Rate, |r| {
            r.metrics.get(REQ_PER_S)
        });
        table.line("  round trip p50", &cells, Unit::Time, |r| {
            r.metrics.get(RTT_NS).map(|p| p.p50)
        });
        for (label, get) in &TAILS[1..] {
            table.line(label, &cells, Unit::Time, |r| {
                r.metrics.get(RTT_NS).as_ref().map(get)
            });
        }
    }
    let mut block = table.into_block(&OVERLOAD, records);
    block.notes.insert(0, failures_note(records));
    block
}

/// The requests a record's trials answered, failed or not.
fn answered(record: &ResultRecord) -> u64 {
    record.trials.iter().map(|t| t.count).sum()
}

/// Whose requests failed, how many, and why a full backlog fails them; or that
/// none did.
fn failures_note(records: &[ResultRecord]) -> String {
    let failed: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let failed = r.metrics.get(FAILED).filter(|&n| n > 0)?;
            let all = answered(r).max(failed);
            Some(format!(
                "{} {} of {} ({:.0}%)",
                r.transport,
                format::figure(Unit::Count, failed as f64),
                format::figure(Unit::Count, all as f64),
                failed as f64 * 100.0 / all as f64
            ))
        })
        .collect();
    if failed.is_empty() {
        return "no request failed: the app server's backlog held every connection nginx \
                opened at once; more connections (-c) or a smaller --app-backlog overrun it"
            .into();
    }
    let waited = records
        .iter()
        .find_map(|r| r.params.get(CONNECT_TIMEOUT_MS))
        .map_or_else(String::new, |ms| format!(" at {ms} ms"));
    format!(
        "failed requests: {}, none of them in the 2xx rate. A full backlog fails a request \
         at once over a Unix socket (the connect fails with EAGAIN, nginx answers 502); over \
         TCP the kernel drops the SYN and the connect waits for its retransmission a second \
         later, which nginx cuts{waited} with 504",
        failed.join(", "),
    )
}

/// The rows of one case: round trip, certainty, tails, rate, failures.
fn rows(table: &mut Columns, label: &str, cells: &[Option<&ResultRecord>]) {
    table.line(label, cells, Unit::Time, |r| {
        r.metrics.get(RTT_NS).map(|p| p.p50)
    });
    table.certainty(cells);
    for (label, get) in &TAILS[1..] {
        table.line(label, cells, Unit::Time, |r| {
            r.metrics.get(RTT_NS).as_ref().map(get)
        });
    }
    table.line("  requests/s", cells, Unit::Rate, |r| {
        r.metrics.get(REQ_PER_S)
    });
    table.line("  failed requests", cells, Unit::Count, |r| {
        r.metrics.get(FAILED).map(|n| n as f64)
    });
}

/// What the case with `params` asks of the app server: `0 B responses`, or a
/// user's `GET /path`.
fn asked(params: &Params) -> String {
    match params.get(PATH) {
        Some(path) => format!("GET {path}"),
        None => format!("{} responses", format_size(params.get(SIZE).unwrap_or(0))),
    }
}

/// What a record's case asks, as a key to group records by, in order of size.
fn case_key(params: &Params) -> (Option<u64>, Option<String>) {
    (params.get(SIZE), params.get(PATH))
}

/// A section's name: `4 KiB` or `GET /path`.
fn label(asking: &(Option<u64>, Option<String>)) -> String {
    match asking {
        (_, Some(path)) => format!("GET {path}"),
        (size, None) => format_size(size.unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::record;
    use crate::results::{Metrics, Params, Trial};

    /// An overload record over `transport` whose two trials each answered 100
    /// requests, `failed` of them failed.
    fn overrun(transport: &str, failed: u64) -> ResultRecord {
        let params = Params::default()
            .with(CONNECTIONS, 200)
            .with(BACKLOG, 1)
            .with(CONNECT_TIMEOUT_MS, 50);
        let trial = || Trial {
            metrics: Metrics::default()
                .with(OK_PER_S, (100 - failed) as f64 * 10.0)
                .with(REQ_PER_S, 1_000.0)
                .with(FAILED, failed),
            count: 100,
            elapsed_ns: 100_000_000,
            ..Trial::default()
        };
        let trials = vec![trial(), trial()];
        record(OVERLOAD.id, &SUCCEEDED, &params, transport, trials, None)
    }

    #[test]
    fn the_overload_table_counts_whose_requests_failed_and_says_so() {
        let block = (OVERLOAD.table)(&[overrun("unix", 30), overrun("tcp", 0)]);
        let row = |label: &str| {
            let row = block.rows.iter().find(|r| r.label.trim() == label);
            let row = row.unwrap_or_else(|| panic!("no {label:?} row"));
            row.cells.iter().map(|c| c.text.clone()).collect::<Vec<_>>()
        };
        // Counts summed over the trials; the rate of 2xx apart from all.
        assert_eq!(row("failed requests"), ["60", "0"]);
        assert_eq!(row("requests answered"), ["200", "200"]);
        assert_eq!(
            row("200 connections, app backlog 1: 2xx requests/s"),
            ["700/s", "1.00k/s"]
        );
        assert_eq!(row("all requests/s, failed too"), ["1.00k/s", "1.00k/s"]);
        let note = &block.notes[0];
        assert!(
            note.starts_with("failed requests: unix 60 of 200 (30%), none"),
            "{note}"
        );
        assert!(!note.contains("tcp 0"), "{note}");
        assert!(note.contains("nginx cuts at 50 ms with 504"), "{note}");
        let none = (OVERLOAD.table)(&[overrun("unix", 0), overrun("tcp", 0)]);
        assert!(
            none.notes[0].starts_with("no request failed"),
            "{:?}",
            none.notes
        );
    }
}
