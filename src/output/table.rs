//! One terminal table per workload: a row per transport (per size where sizes vary),
//! the median figures, their range over trials, and the extra time compared with
//! the fastest transport.

use super::format::{bytes_rate, duration_ns, rate, vs_fastest};
use crate::experiment::Workload;
use crate::results::ResultRecord;
use crate::stats::Percentiles;
use crate::units::format_size;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// Renders the records of one workload, with a title line and a note on noise.
pub fn render(workload: Workload, records: &[ResultRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(header(workload));
    for r in records {
        table.add_row(row(workload, r));
    }
    for index in 1..table.column_count() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let trials = records.first().map_or(0, |r| r.trials.len());
    let mut text = format!(
        "{} — {}, median of {trials} trials\n{table}\n",
        workload,
        what(workload)
    );
    if records.iter().any(|r| r.headline.noisy) {
        text.push_str("~ marks a range over trials wider than 10% of the median: noisy\n");
    }
    if records
        .iter()
        .flat_map(|r| &r.trials)
        .any(|t| t.port_limited)
    {
        text.push_str("some TCP trials stopped early to keep ephemeral ports free\n");
    }
    text
}

fn what(workload: Workload) -> &'static str {
    match workload {
        Workload::Connect => "connect, read the 12-byte greeting, close",
        Workload::PingPong => "request/response round trips on one connection",
        Workload::Stream => "bulk bytes one way on one connection",
        Workload::Concurrent => "clients doing 64-byte round trips at once",
    }
}

fn header(workload: Workload) -> Vec<&'static str> {
    match workload {
        Workload::Connect => vec!["transport", "conn/s", "range", "p50", "p99", "vs fastest"],
        Workload::PingPong => vec![
            "size",
            "transport",
            "p50",
            "p99",
            "p99.9",
            "mean",
            "round trips/s",
            "vs fastest",
        ],
        Workload::Stream => vec![
            "write size",
            "transport",
            "throughput",
            "range",
            "vs fastest",
        ],
        Workload::Concurrent => vec![
            "clients",
            "transport",
            "round trips/s",
            "range",
            "p50",
            "p99",
            "p99.9",
            "vs fastest",
        ],
    }
}

fn row(workload: Workload, r: &ResultRecord) -> Vec<String> {
    let m = &r.metrics;
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or_else(|| "-".into(), f);
    let tail = |p: Option<Percentiles>| {
        p.map_or_else(
            || vec!["-".into(); 3],
            |p| vec![duration_ns(p.p50), duration_ns(p.p99), duration_ns(p.p999)],
        )
    };
    let vs = vs_fastest(r.vs_fastest);
    let transport = r.transport.clone();
    match workload {
        Workload::Connect => {
            let p = m.latency_ns;
            vec![
                transport,
                opt(m.conn_per_s, rate),
                range(r, rate),
                opt(p.map(|p| p.p50), duration_ns),
                opt(p.map(|p| p.p99), duration_ns),
                vs,
            ]
        }
        Workload::PingPong => {
            let mut cells = vec![size(r.params.size), transport];
            cells.extend(tail(m.rtt_ns));
            cells.push(opt(m.rtt_ns.map(|p| p.mean), duration_ns));
            cells.push(opt(m.ops_per_s, rate));
            cells.push(vs);
            cells
        }
        Workload::Stream => vec![
            size(r.params.write_size),
            transport,
            opt(m.bytes_per_s, bytes_rate),
            range(r, bytes_rate),
            vs,
        ],
        Workload::Concurrent => {
            let mut cells = vec![
                r.params.clients.map_or("-".into(), |c| c.to_string()),
                transport,
                opt(m.ops_per_s, rate),
                range(r, rate),
            ];
            cells.extend(tail(m.rtt_ns));
            cells.push(vs);
            cells
        }
    }
}

fn size(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".into(), format_size)
}

/// The headline's min–max over trials, marked when noisy.
fn range(r: &ResultRecord, f: fn(f64) -> String) -> String {
    let s = &r.headline.spread;
    let mark = if r.headline.noisy { " ~" } else { "" };
    format!("{}–{}{mark}", f(s.min), f(s.max))
}
