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
use crate::results::metric::{Better, Metric, Unit};
use crate::results::ResultRecord;
use crate::units::format_size;

/// The case parameters, as labels show them.
const BY_SIZE: CaseParam = CaseParam::new(SIZE.name, Form::Size, "{} responses");
const BY_KEEPALIVE: CaseParam =
    CaseParam::new(UPSTREAM_KEEPALIVE.name, Form::Text, "upstream keepalive {}")
        .short(Some("keepalive {}"));

/// A request's round trip (median).
const RTT: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);
const REQUESTS: Metric = Metric::new("requests_per_s", Unit::Rate, Better::Higher);
const FAILURES: Metric = Metric::new("failed", Unit::Count, Better::Lower);

/// Every figure the experiments record.
const FIGURES: &[Metric] = &[RTT, REQUESTS, FAILURES];

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
    cases: &[BY_SIZE],
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
                "nginx to its app server, {} responses, one request at a time",
                format_size(p.get(SIZE).unwrap_or(0))
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
    cases: &[BY_SIZE],
    table: |records| by_size(&DIRECT, records),
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 15,
        case: Pick::Smallest(BY_SIZE),
        what: |p| {
            format!(
                "a client straight to the app server, {} responses",
                format_size(p.get(SIZE).unwrap_or(0))
            )
        },
        metric: RTT,
        work: Work {
            heading: "An app server without nginx",
            ..PROXIED
        },
    }),
};

/// Per response size, the round trip with its certainty and tails, the requests
/// per second and the failed requests.
fn by_size(experiment: &'static Description, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    for size in distinct(records, |r| r.params.get(SIZE)) {
        let cells = table.place(&having(records, |r| r.params.get(SIZE), &size));
        let label = format!("{}: round trip p50", format_size(size.unwrap_or(0)));
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
