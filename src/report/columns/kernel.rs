//! The "why" rows under a table's CPU rows: what the kernel did per operation,
//! client and server together, from the counting trial's tracepoints (packets
//! through a network device, system calls, network softirqs, wakeups, TCP
//! segments), and the layers where most of each transport's CPU time went.

use super::Columns;
use crate::cpu::why::{Event, Layer, Why};
use crate::report::block::{Cell, Number, Row};
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use crate::stats::Mean;

/// The event rows: label and the events summed into them.
const EVENT_ROWS: [(&str, &[Event]); 4] = [
    ("  why: packets/op", &[Event::PacketsSent]),
    ("  why: syscalls/op", &[Event::Syscalls]),
    (
        "  why: net softirqs/op",
        &[Event::NetRxSoftirqs, Event::NetTxSoftirqs],
    ),
    ("  why: wakeups/op", &[Event::Wakeups]),
];

/// How many layers the layer row names per column.
const TOP_LAYERS: usize = 2;

impl Columns {
    /// The kernel's account per operation, client plus server: one row per kind of
    /// event, TCP segments with data and without where TCP ran, then the largest
    /// layers of CPU time with their share. Rows nobody measured are left out.
    pub fn why(&mut self, cells: &[Option<&ResultRecord>]) {
        let whys: Vec<Option<&Why>> = cells
            .iter()
            .map(|c| c.and_then(|r| r.counters.as_ref()?.why.as_ref()))
            .collect();
        for (label, events) in EVENT_ROWS {
            self.why_row(label, &whys, |w| {
                let n = events.iter().map(|&e| w.total(e)).sum::<Option<f64>>()?;
                Some(per_op_cell(n))
            });
        }
        self.why_row("  why: TCP data/ACK per op", &whys, |w| {
            let (data, acks) = (
                w.total(Event::TcpDataSegments)?,
                w.total(Event::TcpPureAcks)?,
            );
            (data + acks > 0.0).then(|| Cell::text(format!("{} / {}", per_op(data), per_op(acks))))
        });
        self.why_row("  why: most CPU in", &whys, |w| {
            let layers = top_layers(w, TOP_LAYERS);
            let text: Vec<String> = layers.iter().map(share_text).collect();
            (!text.is_empty()).then(|| Cell::text(text.join(", ")))
        });
    }

    /// A row of one cell per column, left out when no column has one.
    fn why_row(&mut self, label: &str, whys: &[Option<&Why>], cell: impl Fn(&Why) -> Option<Cell>) {
        let row: Vec<Option<Cell>> = whys.iter().map(|w| w.and_then(&cell)).collect();
        if row.iter().all(Option::is_none) {
            return;
        }
        let row = row.into_iter().map(|c| c.unwrap_or_else(Cell::missing));
        self.rows.push(Row::new(label, row.collect()));
    }
}

/// A count per operation: `0`, `0.04`, `2.00`, `13.0`, `250`.
pub fn per_op(n: f64) -> String {
    match n {
        0.0 => "0".into(),
        n if n < 10.0 => format!("{n:.2}"),
        n if n < 100.0 => format!("{n:.1}"),
        n => format!("{n:.0}"),
    }
}

fn per_op_cell(n: f64) -> Cell {
    Cell::with(
        per_op(n),
        Number::Figure {
            value: n,
            unit: Unit::Count,
        },
    )
}

/// CPU time per operation by layer, client plus server, largest first.
pub fn layer_times(why: &Why) -> Vec<(Layer, f64)> {
    let mut all: Vec<(Layer, f64)> = Layer::ALL
        .iter()
        .filter_map(|&layer| {
            let client = why.client.layer(layer);
            let server = why.server.as_ref().and_then(|s| s.layer(layer));
            let ns = match (client, server) {
                (None, None) => return None,
                (c, s) => c.unwrap_or(0.0) + s.unwrap_or(0.0),
            };
            Some((layer, ns))
        })
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all
}

/// A layer's share of a transport's CPU time: the mean over the counting trials
/// and the 95% interval of that mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub layer: Layer,
    pub share: f64,
    /// None from one counting trial.
    pub interval: Option<Mean>,
}

/// The `n` layers with the most CPU time, with their share of all of it.
pub fn top_layers(why: &Why, n: usize) -> Vec<Share> {
    let all = layer_times(why);
    let total: f64 = all.iter().map(|(_, ns)| ns).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let trials = why.trial_layers();
    all.into_iter()
        .take(n)
        .map(|(layer, ns)| {
            let shares: Vec<f64> = trials
                .iter()
                .map(|t| t.get(&layer).copied().unwrap_or(0.0) / t.values().sum::<f64>())
                .collect();
            Share {
                layer,
                share: ns / total,
                interval: Mean::of(&shares),
            }
        })
        .collect()
}

/// `tcp 45±8%`, or `tcp 45% (one trial)` without an interval.
fn share_text(s: &Share) -> String {
    let pc = 100.0 * s.share;
    match s.interval {
        Some(m) => format!("{} {pc:.0}±{:.0}%", s.layer, 100.0 * m.half_width()),
        None => format!("{} {pc:.0}% (one trial)", s.layer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::why::{KernelAccount, LayerTime};

    fn account(events: &[(Event, f64)], layers: &[(Layer, f64)]) -> KernelAccount {
        KernelAccount {
            events: events.iter().map(|(e, n)| (e.name().into(), *n)).collect(),
            layers: layers
                .iter()
                .map(|(l, n)| (l.name().into(), LayerTime::plain(*n)))
                .collect(),
            ..KernelAccount::default()
        }
    }

    #[test]
    fn layers_add_client_and_server_and_come_largest_first() {
        let why = Why {
            client: account(&[], &[(Layer::Tcp, 300.0), (Layer::User, 100.0)]),
            server: Some(account(&[], &[(Layer::Tcp, 100.0), (Layer::Copy, 500.0)])),
            ..Why::default()
        };
        assert_eq!(
            layer_times(&why),
            vec![
                (Layer::Copy, 500.0),
                (Layer::Tcp, 400.0),
                (Layer::User, 100.0)
            ]
        );
        let top = top_layers(&why, 1);
        assert_eq!((top[0].layer, top[0].share), (Layer::Copy, 0.5));
        assert_eq!(share_text(&top[0]), "copy 50% (one trial)");
    }

    #[test]
    fn shares_carry_their_interval_over_the_trials() {
        let mut why = Why {
            client: KernelAccount {
                layer_samples: [
                    ("tcp".to_string(), vec![40, 50, 60]),
                    ("user".to_string(), vec![60, 50, 40]),
                ]
                .into(),
                ..KernelAccount::default()
            },
            ..Why::default()
        };
        let cost = crate::cpu::Cost::of_client(1000.0);
        why.scale_layers(None, &cost);
        let top = top_layers(&why, 2);
        // Shares 0.4, 0.5, 0.6: mean 0.5, half-width t(2) · 0.1/√3 = 0.2484.
        let m = top[0].interval.unwrap();
        assert!((m.half_width() - 0.248414).abs() < 1e-5, "{m:?}");
        assert_eq!(share_text(&top[0]), format!("{} 50±25%", top[0].layer));
    }

    #[test]
    fn counts_per_operation_keep_two_figures_where_they_matter() {
        assert_eq!(per_op(0.0), "0");
        assert_eq!(per_op(0.043), "0.04");
        assert_eq!(per_op(2.0), "2.00");
        assert_eq!(per_op(13.04), "13.0");
        assert_eq!(per_op(250.4), "250");
    }
}
