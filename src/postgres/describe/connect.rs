//! The rows of the connect and auth tables: a whole connection's time, its phases
//! as libpq saw them, TLS's extra cost over tcp, each authentication method's cost
//! over trust; and the words and notes only the connect table carries.

use super::{time_if_resolved, Cells};
use crate::postgres::keys::*;
use crate::report::block::{Block, Cell, Number};
use crate::report::columns::{distinct, Columns};
use crate::report::difference::{resolved, Difference, BELOW_RESOLUTION};
use crate::report::format::duration_interval_ns;
use crate::results::metric::Unit;
use crate::results::ResultRecord;

/// Reads one phase of a connection.
type PhaseOf = fn(&Phases) -> f64;

/// The authentication the connections went through: the method sockbench set on
/// its cluster, or, on a user's server (`--url`), whatever that server asks for,
/// which is not recorded.
pub(super) fn authentication(records: &[ResultRecord]) -> String {
    let methods = distinct(records, |r| r.params.get(AUTH_METHOD).clone());
    match methods.as_slice() {
        [Some(method)] => format!("{method} authentication"),
        [None] | [] => "authentication of your server".into(),
        _ => {
            let named: Vec<String> = methods
                .iter()
                .map(|m| m.clone().unwrap_or_else(|| "your server's".into()))
                .collect();
            format!("{} authentication", named.join(", "))
        }
    }
}

/// The connect table's own notes: what the phases overlap, and how TLS's extra
/// cost is taken.
pub(super) fn connect_notes(block: &Block) -> Vec<String> {
    let mut notes = Vec::new();
    if block.rows.iter().any(|r| r.label.starts_with("phase:")) {
        notes.push(
            "phases: the server starts each connection's backend as it arrives, so with \
             TLS the backend starts during the TLS handshake (that phase holds part of it, \
             and \"startup, auth, backend start\" is shorter): TLS's real extra cost is \
             its own row"
                .into(),
        );
    }
    if block.rows.iter().any(|r| r.label == TLS_COST) {
        notes.push(
            "TLS's extra cost: the tls connection's p50 minus tcp's in the same round, \
             mean over rounds with its 95% interval (Student's t)"
                .into(),
        );
    }
    notes
}

/// The label of TLS's extra cost of a connection.
pub(super) const TLS_COST: &str = "TLS's extra cost (tls − tcp)";

/// The median connection time of each trial, in round order.
fn connection_p50s(r: &ResultRecord) -> Vec<f64> {
    r.trials
        .iter()
        .filter_map(|t| t.metrics.get(CONNECT_NS).map(|p| p.p50))
        .collect()
}

pub(super) fn connect_rows(table: &mut Columns, columns: &Cells) {
    table.line("connections/s", columns, Unit::Rate, |r| {
        r.metrics.get(CONN_PER_S)
    });
    table.line(
        "connect + SELECT 1 + close, p50",
        columns,
        Unit::Time,
        |r| r.metrics.get(CONNECT_NS).map(|p| p.p50),
    );
    table.range("  p50 range", columns, Unit::Time);
    table.line("  p99", columns, Unit::Time, |r| {
        r.metrics.get(CONNECT_NS).map(|p| p.p99)
    });
    tls_cost_row(table, columns);
    table.line(
        "handshake (p50 − time per query)",
        columns,
        Unit::Time,
        |r| r.metrics.get(HANDSHAKE_NS),
    );
    let phases: [(&str, PhaseOf); 6] = [
        ("  phase: socket connect", |p| p.socket),
        ("  phase: TLS handshake", |p| p.tls),
        ("  phase: startup, auth, backend start", |p| p.auth),
        ("  phase: after auth, until ready", |p| p.ready),
        ("  phase: SELECT 1", |p| p.query),
        ("  phase: close", |p| p.close),
    ];
    for (label, get) in phases {
        // A phase libpq never saw apart from the next one (TLS without TLS) is a
        // dash; a row of dashes is left out.
        table.line(label, columns, Unit::Time, |r| {
            r.metrics
                .get(PHASES_NS)
                .as_ref()
                .map(get)
                .filter(|v| *v > 0.0)
        });
    }
}

/// TLS's real extra cost of a connection, in each TLS column: its connection p50
/// minus that of the `tcp` column, round by round. The TLS handshake phase is not
/// it: the backend starts during the handshake.
fn tls_cost_row(table: &mut Columns, columns: &Cells) {
    let Some(tcp) = columns
        .iter()
        .flatten()
        .find(|r| crate::transport::Transport::Tcp.is_named(&r.transport) && r.tls.is_none())
    else {
        return;
    };
    let without = connection_p50s(tcp);
    let tcp_p50 = tcp.metrics.get(CONNECT_NS).map(|p| p.p50);
    table.cells(TLS_COST, columns, |r| {
        r.tls.as_ref()?;
        let with = connection_p50s(r);
        if let Some(d) = Difference::paired(&without, &with) {
            if !d.resolved() {
                return Some(Cell::text(BELOW_RESOLUTION));
            }
            let text = duration_interval_ns(d.estimate, d.low, d.high);
            let value = Number::Figure {
                value: d.estimate,
                unit: Unit::Time,
            };
            return Some(Cell::with(text, value));
        }
        let extra = r.metrics.get(CONNECT_NS)?.p50 - tcp_p50?;
        Some(time_if_resolved(extra > 0.0, extra))
    });
}

/// The rows of one authentication method; `trust` holds the same columns' records
/// under trust, against which its cost is taken round by round.
pub(super) fn auth_rows(table: &mut Columns, method: &str, columns: &Cells, trust: &Cells) {
    table.line(
        &format!("{method}: connection p50"),
        columns,
        Unit::Time,
        |r| r.metrics.get(CONNECT_NS).map(|p| p.p50),
    );
    table.certainty(columns);
    if method.parse() == Ok(crate::postgres::hba::AuthMethod::Trust) {
        return; // the baseline: its cost over itself says nothing
    }
    table.cells(&format!("{method}: cost over trust"), columns, |r| {
        let median = r.metrics.get(AUTH_NS)?;
        let baseline = trust.iter().flatten().find(|t| t.transport == r.transport);
        let trials: Vec<f64> = baseline.map_or_else(Vec::new, |t| {
            connection_p50s(r)
                .iter()
                .zip(connection_p50s(t))
                .map(|(m, t)| m - t)
                .collect()
        });
        Some(time_if_resolved(resolved(&trials, median), median))
    });
}
