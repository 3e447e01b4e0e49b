//! The rows of the fitted tables (query and rows): the total time at each N, the
//! fit's rate and slope with its range, the fixed cost where the rounds tell it
//! from zero, and R².

use super::notes::finish;
use super::{time_if_resolved, Cells};
use crate::report::block::Block;
use crate::report::columns::Columns;
use crate::report::difference::resolved;
use crate::report::experiment::Experiment;
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use crate::stats::median;
use crate::units::format_count;

/// Reads one figure of a record.
type Figure = fn(&ResultRecord) -> Option<f64>;

/// The table of a fitted experiment, whose N counts `unit`.
pub(super) fn fitted(
    experiment: &'static Experiment,
    unit: &str,
    records: &[ResultRecord],
) -> Block {
    let mut table = Columns::of(records);
    let cells = table.place(&records.iter().collect::<Vec<_>>());
    fitted_rows(&mut table, experiment, unit, &cells);
    finish(experiment, table, records)
}

fn fitted_rows(table: &mut Columns, experiment: &Experiment, unit: &str, columns: &Cells) {
    let per = experiment.headline.read;
    let per_s: Figure = if unit == "queries" {
        |r| r.metrics.qps
    } else {
        |r| r.metrics.rows_per_s
    };
    let counts = columns
        .iter()
        .flatten()
        .find_map(|r| r.params.counts.clone())
        .unwrap_or_default();
    for n in counts {
        let label = format!("total time at {} {unit}", format_count(n));
        table.line(&label, columns, Unit::Time, |r| {
            let totals: Vec<f64> = r
                .trials
                .iter()
                .flat_map(|t| &t.points)
                .filter(|p| p.n == n)
                .map(|p| p.total_ns as f64)
                .collect();
            (!totals.is_empty()).then(|| median(&totals))
        });
    }
    table.line(&format!("{unit}/s (fit)"), columns, Unit::Rate, per_s);
    let singular = if unit == "queries" { "query" } else { "row" };
    table.line(
        &format!("time per {singular} (slope)"),
        columns,
        Unit::Time,
        |r| per(&r.metrics),
    );
    table.range("  range", columns, Unit::Time);
    table.cells("fixed cost (intercept)", columns, |r| {
        let median = r.metrics.intercept_ns?;
        let trials: Vec<f64> = r
            .trials
            .iter()
            .filter_map(|t| t.metrics.intercept_ns)
            .collect();
        Some(time_if_resolved(resolved(&trials, median), median))
    });
    table.plain("fit R²", columns, |v| format!("{v:.4}"), |r| r.metrics.r2);
}
