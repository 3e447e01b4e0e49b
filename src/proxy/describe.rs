//! The proxy experiments as they describe themselves: id, title, headline, case
//! parameters, table, charts and verdict line, laid out like the other families'
//! (a column per transport of the hop to the app server, a row per measurement,
//! and under each headline its cost against the reference transport).

use super::keys::*;
use crate::report::block::Block;
use crate::report::columns::{distinct, groups, Columns, TAILS};
use crate::report::experiment::{
    CaseParam, Chart, Description, Form, OwnLine, Pick, Placed, Said, VerdictLine, Work, WorkKind,
};
use crate::report::format;
use crate::report::verdict::failed::{self, Failures};
use crate::report::verdict::{layer_cost, Pair};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::paired::against;
use crate::results::{Params, ResultRecord};
use crate::transport::{SocketKind, Transport};
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
    own_line: Some(OwnLine {
        rank: 16,
        heading: "What nginx costs",
        says: nginx_cost,
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
    own_line: None,
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
    own_line: None,
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
    own_line: None,
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
    own_line: None,
};

/// No line comparing transports: that line compares one figure every transport
/// has above zero, and what this experiment shows is failed requests, which one
/// transport may not have at all; a line on the 2xx rate alone would call a
/// transport that drops requests as good as one that does not. Its own line says
/// which transport's requests failed, and what that means ([`overload_failures`]),
/// as its table's note does.
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
    own_line: Some(OwnLine {
        rank: 44,
        heading: "nginx past its app server's backlog",
        says: overload_failures,
    }),
};

/// What nginx costs over the app server alone, per transport of the hop to it: a
/// request through nginx (`request`, its smallest size) against the client
/// straight to the app server over that transport (`direct`, the same size). Two
/// experiments, one after the other, so not paired round by round
/// ([`Pair::unpaired`]). The client reaches nginx over tcp in every case, so over
/// unix the difference also holds the client's TCP hop in place of a Unix one;
/// the case words say so.
fn nginx_cost(run: &Placed) -> Option<Said> {
    let (through, direct) = (run.of(&REQUEST), run.of(&DIRECT));
    // The smallest size both measured, or the user's path.
    let asked = through
        .iter()
        .map(|r| case_key(&r.params))
        .filter(|k| direct.iter().any(|d| case_key(&d.params) == *k))
        .min()?;
    fn at<'r>(
        records: &[&'r ResultRecord],
        asked: &(Option<u64>, Option<String>),
        t: &str,
    ) -> Option<&'r ResultRecord> {
        let mut all = records.iter().copied();
        all.find(|r| case_key(&r.params) == *asked && r.transport == t)
    }
    // Not over tls: a client straight to the app speaks TLS itself, while
    // through nginx its hop is plain TCP, so the two would not differ by nginx
    // alone.
    let said: Vec<String> = distinct(through.iter().copied(), |r| r.transport.clone())
        .iter()
        .filter(|t| {
            t.parse::<Transport>()
                .map_or(true, |t| t.kind() != SocketKind::Tls)
        })
        .filter_map(|t| {
            let alone = at(&direct, &asked, t)?;
            // A user's upstream named otherwise, reached over TLS.
            if alone.tls.is_some() {
                return None;
            }
            let mut p = Pair::unpaired(&RTT, alone, at(&through, &asked, t)?)?;
            p.base = "direct".into();
            p.other = "through nginx".into();
            Some(format!(
                "over {t}, {}",
                layer_cost("nginx", &PROXIED, &RTT, &p, PROXIED.op)
            ))
        })
        .enumerate()
        .map(|(i, s)| if i == 0 { s } else { format::capitalised(&s) })
        .collect();
    (!said.is_empty()).then(|| Said {
        case: format!("{}, the client to nginx over tcp", label_of(&asked)),
        says: format!(
            "{}. Unpaired: request and direct ran one after the other, so the intervals \
             (Welch's, over each one's rounds) do not hold the machine's drift between them",
            said.join(". ")
        ),
    })
}

/// Under overload, the share of requests that failed over each transport with
/// its range over rounds (`verdict::failed`), and what a full backlog does on
/// each kind of socket, as the table's note says it.
fn overload_failures(run: &Placed) -> Option<Said> {
    let of = run.of(&OVERLOAD);
    // The case with the most connections: the only one of a run.
    let most = of.iter().max_by_key(|r| r.params.get(CONNECTIONS))?;
    let case = OVERLOAD.case_of(&most.params);
    let cases: Vec<&ResultRecord> = of
        .iter()
        .copied()
        .filter(|r| OVERLOAD.case_of(&r.params) == case)
        .collect();
    let each: Vec<Failures> = cases
        .iter()
        .filter_map(|r| Failures::of(r, FAILED))
        .collect();
    let statement = failed::statement(&each, "request", "requests")?;
    let succeeded = succeeded(&cases).map_or_else(String::new, |s| format!(". {s}"));
    let transports: Vec<Transport> = each
        .iter()
        .filter_map(|f| f.transport.parse().ok())
        .collect();
    let mut means = Vec::new();
    if transports.iter().any(|t| !t.uses_tcp()) {
        means.push(
            "over a Unix socket a full backlog fails the connect at once (EAGAIN) and nginx \
             answers 502"
                .to_string(),
        );
    }
    if transports.iter().any(|t| t.uses_tcp()) {
        let waited = most
            .params
            .get(CONNECT_TIMEOUT_MS)
            .map_or_else(String::new, |ms| format!(" at {ms} ms"));
        means.push(format!(
            "over TCP the kernel drops the SYN and the connect waits for its retransmission a \
             second later, which nginx cuts{waited} with 504 (with nginx's default \
             proxy_connect_timeout of 60 s such a request waits instead)"
        ));
    }
    Some(Said {
        case: format!(
            "{} connections at once, app backlog {}, a new upstream connection per request",
            most.params.get(CONNECTIONS).unwrap_or(0),
            most.params.get(BACKLOG).unwrap_or(0)
        ),
        says: format!(
            "{statement}{succeeded}. What it means: {}",
            means.join("; ")
        ),
    })
}

/// The requests answered 2xx per second over each transport, and each against
/// the one it is compared with, paired round by round (the table's headline and
/// its interval): what the share that failed leaves out, how much got through.
fn succeeded(records: &[&ResultRecord]) -> Option<String> {
    let labels: Vec<&str> = records.iter().map(|r| r.transport.as_str()).collect();
    let with = against(&labels);
    let pairs: Vec<Pair> = (0..records.len())
        .filter_map(|i| Pair::of(&SUCCEEDED, records[with[i]?], records[i]))
        .collect();
    let first = pairs.first()?;
    let mut rates = vec![format!(
        "{} {}",
        first.base,
        format::rate(1.0 / first.base_cost)
    )];
    rates.extend(pairs.iter().map(|p| {
        let ratio = p
            .ratio
            .as_ref()
            .map_or("too few rounds".into(), format::versus);
        let other = &p.other;
        format!(
            "{other} {} ({other} {ratio})",
            format::rate(1.0 / p.other_cost)
        )
    }));
    Some(format!("2xx requests/s: {}", rates.join(", ")))
}

/// Per response size, the round trip with its certainty and tails, the requests
/// per second and the failed requests.
fn by_size(experiment: &'static Description, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for (asking, group) in groups(records, |r| case_key(&r.params)) {
        let cells = table.place(&group);
        let label = format!("{}: round trip p50", label(&asking));
        rows(&mut table, &label, &cells);
    }
    table.into_block(experiment, records)
}

fn keepalive(records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    let kept = |r: &ResultRecord| r.params.get(UPSTREAM_KEEPALIVE).unwrap_or_default();
    for (on, group) in groups(records, kept) {
        let cells = table.place(&group);
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
    for (asking, group) in groups(records, |r| case_key(&r.params)) {
        let cells = table.place(&group);
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
    for (connections, of) in groups(records, |r| r.params.get(CONNECTIONS)) {
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
    for ((connections, backlog), group) in groups(records, case) {
        let cells = table.place(&group);
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
    // The share as the verdict's line prints it (`verdict::failed`).
    let failed: Vec<String> = records
        .iter()
        .filter_map(|r| Failures::of(r, FAILED))
        .filter(|f| f.failed > 0)
        .map(|f| {
            format!(
                "{} {} of {} ({})",
                f.transport,
                format::figure(Unit::Count, f.failed as f64),
                format::figure(Unit::Count, f.all as f64),
                failed::percent(f.share())
            )
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
    label_of(&case_key(params))
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

/// What a case asks, in a sentence: `0 B responses` or `GET /path`.
fn label_of(asking: &(Option<u64>, Option<String>)) -> String {
    match asking {
        (_, Some(path)) => format!("GET {path}"),
        (size, None) => format!("{} responses", format_size(size.unwrap_or(0))),
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

    /// The proxy family's verdict on `records`, without its caveats: the lines.
    fn verdict_lines(records: &[ResultRecord]) -> Vec<String> {
        let catalog = crate::report::experiment::Catalog::new(
            super::super::FAMILY.experiments.iter().copied(),
        );
        crate::report::verdict::lines(records, &crate::system::System::default(), &catalog)
            .into_iter()
            .filter(|l| !l.caveat)
            .map(|l| l.sentence)
            .collect()
    }

    /// An overload record over `transport` whose rounds answered these requests,
    /// (answered, failed) each, at `ok_per_s` 2xx requests per second.
    fn overload_rounds(transport: &str, each: &[(u64, u64)], ok_per_s: f64) -> ResultRecord {
        let params = Params::default()
            .with(CONNECTIONS, 200)
            .with(BACKLOG, 1)
            .with(CONNECT_TIMEOUT_MS, 50)
            .with(SIZE, 0);
        let trials = each
            .iter()
            .map(|&(count, failed)| Trial {
                metrics: Metrics::default()
                    .with(OK_PER_S, ok_per_s)
                    .with(REQ_PER_S, ok_per_s * count as f64 / (count - failed) as f64)
                    .with(FAILED, failed),
                count,
                elapsed_ns: 100_000_000,
                ..Trial::default()
            })
            .collect();
        record(OVERLOAD.id, &SUCCEEDED, &params, transport, trials, None)
    }

    #[test]
    fn overload_has_a_verdict_line_of_failed_shares_that_the_table_note_agrees_with() {
        // unix: 30, 20 and 25 of 100 failed, 75 of 300 = 25%; tcp: 5, 4 and 6 of
        // 50, 15 of 150 = 10%. Every unix round failed more than any tcp round.
        let records = [
            overload_rounds("unix", &[(100, 30), (100, 20), (100, 25)], 800.0),
            overload_rounds("tcp", &[(50, 5), (50, 4), (50, 6)], 400.0),
        ];
        let lines = verdict_lines(&records);
        assert_eq!(lines.len(), 1, "{lines:?}");
        // The 2xx rate halves in every round: 2.0×, its interval only the 1% between
        // runs times t(2) = 4.30 (stats::interval::BETWEEN_RUNS).
        assert_eq!(
            lines[0],
            "nginx past its app server's backlog (200 connections at once, app backlog 1, a \
             new upstream connection per request): the Unix socket failed 25% of requests \
             (20%–30% over 3 rounds), tcp 10% (8.0%–12%); more failed over unix than over \
             tcp in every round. 2xx requests/s: unix 800/s, tcp 400/s (tcp 2.0× [1.9×, \
             2.1×]). What it means: over a Unix socket a full backlog fails the connect at \
             once (EAGAIN) and nginx answers 502; over TCP the kernel drops the SYN and the \
             connect waits for its retransmission a second later, which nginx cuts at 50 ms \
             with 504 (with nginx's default proxy_connect_timeout of 60 s such a request \
             waits instead)."
        );
        // The table's note prints the same shares.
        let note = &(OVERLOAD.table)(&records).notes[0];
        assert!(
            note.starts_with("failed requests: unix 75 of 300 (25%), tcp 15 of 150 (10%),"),
            "{note}"
        );
        // Rounds that overlap do not say which fails more.
        let close = [
            overload_rounds("unix", &[(100, 30), (100, 10)], 800.0),
            overload_rounds("tcp", &[(100, 20), (100, 24)], 400.0),
        ];
        let lines = verdict_lines(&close);
        assert!(
            lines[0].contains(
                "tcp 22% (20%–24%); whether more fail over unix or tcp is not settled: \
                 their rounds overlap."
            ),
            "{lines:?}"
        );
        // One transport: nothing to compare.
        assert!(verdict_lines(&records[..1]).is_empty());
    }

    /// A record of `experiment` over `transport` whose rounds took these round
    /// trips (p50) and CPU per request, client and server together, in ns.
    fn timed(experiment: &Description, transport: &str, rtt: &[f64], cpu: &[f64]) -> ResultRecord {
        let trials = rtt
            .iter()
            .zip(cpu)
            .map(|(&p50, &cpu)| {
                let mut metrics = Metrics::default().with(
                    RTT_NS,
                    crate::stats::Percentiles {
                        mean: p50,
                        p50,
                        p99: p50 * 2.0,
                        p999: p50 * 3.0,
                    },
                );
                metrics.cpu = Some(crate::cpu::Cost::of_client(cpu));
                Trial {
                    metrics,
                    count: 1_000,
                    ..Trial::default()
                }
            })
            .collect();
        let params = Params::default().with(SIZE, 0);
        record(experiment.id, &RTT, &params, transport, trials, None)
    }

    #[test]
    fn what_nginx_costs_is_through_nginx_against_direct_per_transport_unpaired() {
        let records = [
            timed(&REQUEST, "unix", &[30e3, 33e3, 27e3], &[30e3, 31e3, 32e3]),
            timed(&REQUEST, "tcp", &[30e3, 34e3, 29e3], &[29e3, 30e3, 31e3]),
            timed(&DIRECT, "unix", &[10e3, 11e3, 9e3], &[10e3, 11e3, 12e3]),
            timed(&DIRECT, "tcp", &[15e3, 16e3, 14e3], &[14e3, 15e3, 16e3]),
        ];
        let lines = verdict_lines(&records);
        let line = lines
            .iter()
            .find(|l| l.starts_with("What nginx costs"))
            .unwrap_or_else(|| panic!("no line on what nginx costs: {lines:?}"));
        // Welch's t on the logarithms, with Python's statistics module and t(4) =
        // 2.776445: over unix the ratio is 3 in every round, so each side's spread
        // alone widens it, 3.0 [2.389, 3.767]; the geometric means 9.967 and 29.90
        // µs. The extra CPU, Welch's t on the values: 20.0 [17.73, 22.27] µs.
        assert!(
            line.starts_with(
                "What nginx costs (0 B responses, the client to nginx over tcp): over unix, \
                 nginx adds 19.9 µs per request (direct 9.97 µs, through nginx 29.9 µs; \
                 3.0× [2.4×, 3.8×], unpaired); at 1,000 requests/s its extra CPU (20.0 \
                 [17.7, 22.3] µs per request, client and server) is 2.0% of a core; at \
                 100/s (0.2%) it does not matter. "
            ),
            "{line}"
        );
        // Over tcp: df 3.81, so t(3) = 3.182446: 2.065 [1.696, 2.514]; 14.98 and
        // 30.93 µs; the extra CPU 15.0 [12.73, 17.27] µs (df 4).
        assert!(
            line.contains(
                "Over tcp, nginx adds 15.9 µs per request (direct 15.0 µs, through nginx \
                 30.9 µs; 2.1× [1.7×, 2.5×], unpaired); at 1,000 requests/s its extra CPU \
                 (15.0 [12.7, 17.3] µs per request, client and server) is 1.5% of a core"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("do not hold the machine's drift between them."),
            "{line}"
        );
        // It comes right after the line on the app server without nginx.
        let at = |start: &str| lines.iter().position(|l| l.starts_with(start));
        assert_eq!(
            at("What nginx costs"),
            at("An app server without nginx").map(|i| i + 1),
            "{lines:?}"
        );
        // Without the direct hop there is nothing to set it against.
        let through_only = verdict_lines(&records[..2]);
        assert!(
            !through_only
                .iter()
                .any(|l| l.starts_with("What nginx costs")),
            "{through_only:?}"
        );
    }
}
