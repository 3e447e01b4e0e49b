//! The rows of the concurrent table: for each number of clients, transactions per
//! second with their range, the latencies, and failed transactions when any failed.

use super::Cells;
use crate::report::columns::Columns;
use crate::results::metric::Unit;

/// Reads one latency figure.
type LatencyOf = fn(&crate::stats::Percentiles) -> f64;

pub(super) fn concurrent_rows(table: &mut Columns, clients: u64, columns: &Cells) {
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
