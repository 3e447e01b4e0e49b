//! The rows of the fitted tables (query and rows): the total time at each N, the
//! fit's rate and slope with its range, the fixed cost where the rounds tell it
//! from zero, and R².

use super::notes::finish;
use super::{time_if_resolved, Cells};
use crate::postgres::keys::*;
use crate::report::block::Block;
use crate::report::columns::Columns;
use crate::report::difference::resolved;
use crate::report::experiment::Description;
use crate::results::metric::Unit;
use crate::results::Key;
use crate::results::ResultRecord;
use crate::stats::median;
use crate::units::format_count;

/// What the N of a fitted experiment counts, and its rate from the fit.
pub(super) struct Counted {
    /// One of them, and several: `query`, `queries`.
    pub one: &'static str,
    pub many: &'static str,
    /// The rate the fit gives (1 / slope).
    pub rate: Key<f64>,
}

pub(super) const QUERIES: Counted = Counted {
    one: "query",
    many: "queries",
    rate: QPS,
};
pub(super) const ROWS: Counted = Counted {
    one: "row",
    many: "rows",
    rate: ROWS_PER_S,
};

/// The table of a fitted experiment, whose N counts what `fit` says.
pub(super) fn fitted(
    experiment: &'static Description,
    fit: &Counted,
    records: &[ResultRecord],
) -> Block {
    let mut table = Columns::of(records);
    let cells = table.place(&records.iter().collect::<Vec<_>>());
    fitted_rows(&mut table, experiment, fit, &cells);
    finish(experiment, table, records)
}

fn fitted_rows(table: &mut Columns, experiment: &Description, fit: &Counted, columns: &Cells) {
    let per = |r: &ResultRecord| experiment.headline.read(&r.metrics);
    let unit = fit.many;
    let counts = columns
        .iter()
        .flatten()
        .find_map(|r| r.params.get(COUNTS))
        .unwrap_or_default();
    for n in counts {
        let label = format!("total time at {} {unit}", format_count(n));
        table.line(&label, columns, Unit::Time, |r| {
            let totals: Vec<f64> = r
                .trials
                .iter()
                .flat_map(|t| t.metrics.get(POINTS).unwrap_or_default())
                .filter(|p| p.n == n)
                .map(|p| p.total_ns as f64)
                .collect();
            (!totals.is_empty()).then(|| median(&totals))
        });
    }
    table.line(&format!("{unit}/s (fit)"), columns, Unit::Rate, |r| {
        r.metrics.get(fit.rate)
    });
    table.line(
        &format!("time per {} (slope)", fit.one),
        columns,
        Unit::Time,
        per,
    );
    table.range("  range", columns, Unit::Time);
    table.cells("fixed cost (intercept)", columns, |r| {
        let median = r.metrics.get(INTERCEPT_NS)?;
        let trials: Vec<f64> = r
            .trials
            .iter()
            .filter_map(|t| t.metrics.get(INTERCEPT_NS))
            .collect();
        Some(time_if_resolved(resolved(&trials, median), median))
    });
    table.plain(
        "fit R²",
        columns,
        |v| format!("{v:.4}"),
        |r| r.metrics.get(R2),
    );
}
