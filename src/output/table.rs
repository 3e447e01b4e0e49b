//! The table of one raw socket workload, laid out like the PostgreSQL ones: a column
//! per transport, a row per measurement (per message size, write size or client
//! count where those vary), and the extra time over the fastest transport.

use super::block::Block;
use super::columns::{distinct, having, Columns, Compare, NOISY_NOTE};
use super::format::{bytes_rate, duration_ns, rate};
use crate::experiment::Workload;
use crate::results::ResultRecord;
use crate::stats::Percentiles;
use crate::units::format_size;

/// Reads one latency figure.
type LatencyOf = fn(&Percentiles) -> f64;

const TAILS: [(&str, LatencyOf); 3] = [
    ("  p50", |p| p.p50),
    ("  p99", |p| p.p99),
    ("  p99.9", |p| p.p999),
];

/// Lays out the records of one workload with its footnotes.
pub fn block(workload: Workload, records: &[ResultRecord]) -> Block {
    let mut table = Columns::of(records);
    match workload {
        Workload::Connect => {
            let cells = table.place(&records.iter().collect::<Vec<_>>());
            let t = &mut table;
            t.line(
                "connections/s",
                &cells,
                Compare::HigherIsBetter,
                rate,
                |r| r.metrics.conn_per_s,
            );
            t.range("  range", &cells, rate);
            for (label, get) in TAILS {
                t.line(label, &cells, Compare::Not, duration_ns, |r| {
                    r.metrics.latency_ns.as_ref().map(get)
                });
            }
        }
        Workload::PingPong => {
            for size in distinct(records, |r| r.params.size) {
                let cells = table.place(&having(records, |r| r.params.size, &size));
                let label = format!("{}: round trip p50", format_size(size.unwrap_or(0)));
                let rtt = |r: &ResultRecord| r.metrics.rtt_ns.map(|p| p.p50);
                table.line(&label, &cells, Compare::LowerIsBetter, duration_ns, rtt);
                for (label, get) in &TAILS[1..] {
                    table.line(label, &cells, Compare::Not, duration_ns, |r| {
                        r.metrics.rtt_ns.as_ref().map(get)
                    });
                }
                table.line("  round trips/s", &cells, Compare::Not, rate, |r| {
                    r.metrics.ops_per_s
                });
            }
        }
        Workload::Stream => {
            for size in distinct(records, |r| r.params.write_size) {
                let cells = table.place(&having(records, |r| r.params.write_size, &size));
                let label = format!("{} writes: throughput", format_size(size.unwrap_or(0)));
                table.line(&label, &cells, Compare::HigherIsBetter, bytes_rate, |r| {
                    r.metrics.bytes_per_s
                });
                table.range("  range", &cells, bytes_rate);
            }
        }
        Workload::Concurrent => {
            for clients in distinct(records, |r| r.params.clients) {
                let cells = table.place(&having(records, |r| r.params.clients, &clients));
                let label = format!("{} clients: round trips/s", clients.unwrap_or(0));
                table.line(&label, &cells, Compare::HigherIsBetter, rate, |r| {
                    r.metrics.ops_per_s
                });
                table.range("  range", &cells, rate);
                for (label, get) in TAILS {
                    table.line(label, &cells, Compare::Not, duration_ns, |r| {
                        r.metrics.rtt_ns.as_ref().map(get)
                    });
                }
            }
        }
    }
    Block {
        header: table.header("measurement"),
        rows: table.rows,
        notes: notes(records),
        ..Block::experiment(workload.experiment(), what(workload), records)
    }
}

fn what(workload: Workload) -> &'static str {
    match workload {
        Workload::Connect => "connect, read the 12-byte greeting, close",
        Workload::PingPong => "request/response round trips on one connection",
        Workload::Stream => "bulk bytes one way on one connection",
        Workload::Concurrent => "clients doing 64-byte round trips at once",
    }
}

fn notes(records: &[ResultRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(tls) = records.iter().find_map(|r| r.tls.as_ref()) {
        notes.push(format!(
            "tls: {} {}, {} certificate",
            tls.version, tls.cipher, tls.certificate
        ));
    }
    if records.iter().any(|r| r.headline.noisy) {
        notes.push(NOISY_NOTE.into());
    }
    if records
        .iter()
        .flat_map(|r| &r.trials)
        .any(|t| t.port_limited)
    {
        notes.push("some TCP trials stopped early to keep ephemeral ports free".into());
    }
    notes
}
