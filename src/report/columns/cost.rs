//! The rows of CPU per operation under a table's headline, client and server apart:
//! CPU time with the kernel's share, and from kernel counters instructions,
//! context switches and migrations.

use super::Columns;
use crate::cpu::{Cost, Counts};
use crate::report::block::{Cell, Number, Row};
use crate::report::format::{count, duration_ns};
use crate::results::metric::Unit;
use crate::results::ResultRecord;

impl Columns {
    /// CPU per operation, client and server apart: time with the kernel's share
    /// (over the rounds), then from the counting trial instructions where counted,
    /// context switches and migrations.
    pub fn cost(&mut self, cells: &[Option<&ResultRecord>]) {
        type SideOf = fn(&Cost) -> Option<Counts>;
        let sides: [(&str, SideOf); 2] = [("client", |c| Some(c.client)), ("server", |c| c.server)];
        for (side, get) in sides {
            let of = |cost: fn(&ResultRecord) -> Option<&Cost>| -> Vec<Option<Counts>> {
                cells
                    .iter()
                    .map(|c| c.and_then(cost).and_then(get))
                    .collect()
            };
            let times = of(|r| r.metrics.cpu.as_ref());
            let counted = of(|r| r.counters.as_ref());
            self.counts_row(format!("  CPU/op, {side} (kernel %)"), &times, cpu_cell);
            if side == "server" {
                self.roles(cells);
            }
            self.counts_row(
                format!("  instructions/op, {side} (kernel %)"),
                &counted,
                |c| {
                    let (user, kernel) = (c.instructions_user?, c.instructions_kernel?);
                    let total = user + kernel;
                    let text = format!(
                        "{} ({:.0}%)",
                        count(total),
                        100.0 * kernel / total.max(f64::MIN_POSITIVE)
                    );
                    let value = Number::Figure {
                        value: total,
                        unit: Unit::Count,
                    };
                    Some(Cell::with(text, value))
                },
            );
            self.counts_row(
                format!("  switches/migrations per op, {side}"),
                &counted,
                |c| {
                    let text = format!("{:.2} / {:.3}", c.context_switches?, c.migrations?);
                    Some(Cell::text(text))
                },
            );
        }
    }

    /// The server's CPU per operation role by role, where it has more than one
    /// (a proxy's `proxy` and `app`), each role's row under the server's.
    fn roles(&mut self, cells: &[Option<&ResultRecord>]) {
        let names: std::collections::BTreeSet<&String> = cells
            .iter()
            .flatten()
            .filter_map(|r| r.metrics.cpu.as_ref())
            .flat_map(|c| c.roles.keys())
            .collect();
        for name in names {
            let times: Vec<Option<Counts>> = cells
                .iter()
                .map(|c| (*c)?.metrics.cpu.as_ref()?.roles.get(name).copied())
                .collect();
            self.counts_row(format!("    of which {name}"), &times, cpu_cell);
        }
    }

    /// A row of CPU figures, left out when no column has one.
    fn counts_row(
        &mut self,
        label: String,
        counts: &[Option<Counts>],
        show: impl Fn(&Counts) -> Option<Cell>,
    ) {
        if counts.iter().flatten().all(|c| show(c).is_none()) {
            return;
        }
        let row = counts
            .iter()
            .map(|c| c.as_ref().and_then(&show).unwrap_or_else(Cell::missing));
        self.rows.push(Row::new(&label, row.collect()));
    }
}

/// CPU time per operation with the kernel's share.
fn cpu_cell(c: &Counts) -> Option<Cell> {
    let kernel = c.sys_ns.map_or(String::new(), |s| {
        format!(" ({:.0}%)", 100.0 * s / c.cpu_ns.max(f64::MIN_POSITIVE))
    });
    let text = format!("{}{kernel}", duration_ns(c.cpu_ns));
    let value = Number::Figure {
        value: c.cpu_ns,
        unit: Unit::Time,
    };
    Some(Cell::with(text, value))
}
