//! The rows of the concurrent table: for each number of clients, transactions per
//! second with their range, the latencies, and failed transactions when any failed;
//! at a fixed rate (pgbench `-R`), the latency comes first with its range, then the
//! rate reached, the schedule lag and the late or skipped transactions. With `-r`,
//! the mean time of each command of the script.

use super::Cells;
use crate::postgres::keys::*;
use crate::report::columns::{Columns, LatencyOf, TAILS};
use crate::results::metric::Unit;
use crate::results::ResultRecord;

/// Reads one count of transactions.
type CountOf = fn(&ResultRecord) -> Option<u64>;

/// The latency rows: the mean (pgbench's figure), then the tails every table shows.
fn latencies() -> impl Iterator<Item = (&'static str, LatencyOf)> {
    let mean: LatencyOf = |p| p.mean;
    std::iter::once(("mean", mean)).chain(TAILS.iter().map(|&(label, get)| (label.trim(), get)))
}

pub(super) fn concurrent_rows(table: &mut Columns, clients: u64, columns: &Cells) {
    let plural = if clients == 1 { "" } else { "s" };
    let label = format!("{clients} client{plural}: transactions/s");
    table.line(&label, columns, Unit::Rate, |r| r.metrics.get(TPS));
    table.range("  range", columns, Unit::Rate);
    for (label, get) in latencies() {
        table.line(&format!("  latency {label}"), columns, Unit::Time, |r| {
            r.metrics.get(LATENCY_NS).as_ref().map(get)
        });
    }
    counted_rows(table, columns);
}

/// At a fixed rate: the latency (the headline, p50) first.
pub(super) fn rate_rows(table: &mut Columns, clients: u64, rate: u64, columns: &Cells) {
    let plural = if clients == 1 { "" } else { "s" };
    let label = format!("{clients} client{plural} at {rate}/s: latency p50");
    table.line(&label, columns, Unit::Time, |r| {
        r.metrics.get(LATENCY_NS).map(|p| p.p50)
    });
    table.range("  range", columns, Unit::Time);
    for (label, get) in latencies().filter(|(label, _)| *label != "p50") {
        table.line(&format!("  latency {label}"), columns, Unit::Time, |r| {
            r.metrics.get(LATENCY_NS).as_ref().map(get)
        });
    }
    table.line("  transactions/s reached", columns, Unit::Rate, |r| {
        r.metrics.get(TPS)
    });
    table.line("  schedule lag mean", columns, Unit::Time, |r| {
        r.metrics.get(LAG_NS).map(|p| p.mean)
    });
    table.line("  schedule lag p99", columns, Unit::Time, |r| {
        r.metrics.get(LAG_NS).map(|p| p.p99)
    });
    counted_rows(table, columns);
}

/// Failed transactions when any failed; late and skipped ones when counted (with
/// `-L`); each command's time (with `-r`).
fn counted_rows(table: &mut Columns, columns: &Cells) {
    if columns
        .iter()
        .flatten()
        .any(|r| r.metrics.get(FAILED).unwrap_or(0) > 0)
    {
        table.line("  failed transactions", columns, Unit::Count, |r| {
            r.metrics.get(FAILED).map(|f| f as f64)
        });
    }
    let counts: [(&str, CountOf); 2] = [
        ("  late transactions (over -L)", |r| r.metrics.get(LATE)),
        ("  skipped transactions (late when due)", |r| {
            r.metrics.get(SKIPPED)
        }),
    ];
    for (label, get) in counts {
        table.line(label, columns, Unit::Count, |r| get(r).map(|f| f as f64));
    }
    let commands = columns
        .iter()
        .flatten()
        .filter_map(|r| r.metrics.get(PER_COMMAND_NS).as_ref().map(Vec::len))
        .max()
        .unwrap_or(0);
    for i in 0..commands {
        table.line(
            &format!("  command {} mean", i + 1),
            columns,
            Unit::Time,
            |r| r.metrics.get(PER_COMMAND_NS).as_ref()?.get(i).copied(),
        );
    }
}
