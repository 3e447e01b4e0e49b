//! Builds the rows of a table laid out like a lab notebook: a column per transport,
//! a row per measurement, and on the rows that compare, the extra time over the
//! fastest transport, e.g. `97.4 µs (+57%)`.

use super::format::vs_fastest;
use crate::results::ResultRecord;

/// How a row compares its cells.
#[derive(Clone, Copy, PartialEq)]
pub enum Compare {
    Not,
    LowerIsBetter,
    HigherIsBetter,
}

/// Rows being built over a fixed set of transport columns.
pub struct Columns {
    labels: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Columns {
    /// One column per transport, in the order the records first name them.
    pub fn of(records: &[ResultRecord]) -> Columns {
        let mut labels: Vec<String> = Vec::new();
        for r in records {
            if !labels.contains(&r.transport) {
                labels.push(r.transport.clone());
            }
        }
        Columns {
            labels,
            rows: Vec::new(),
        }
    }

    /// The header: the row-name column, then the transports.
    pub fn header(&self, first: &str) -> Vec<String> {
        std::iter::once(first.to_string())
            .chain(self.labels.iter().cloned())
            .collect()
    }

    /// The records of `group`, placed in their transport's column.
    pub fn place<'r>(&self, group: &[&'r ResultRecord]) -> Vec<Option<&'r ResultRecord>> {
        self.labels
            .iter()
            .map(|l| group.iter().find(|r| &r.transport == l).copied())
            .collect()
    }

    /// A row of one figure per column; compared rows get the relative difference.
    /// A row with no figure at all is left out.
    pub fn line(
        &mut self,
        label: &str,
        cells: &[Option<&ResultRecord>],
        compare: Compare,
        format: fn(f64) -> String,
        get: impl Fn(&ResultRecord) -> Option<f64>,
    ) {
        let values: Vec<Option<f64>> = cells.iter().map(|c| c.and_then(&get)).collect();
        if values.iter().all(Option::is_none) {
            return;
        }
        let costs: Vec<Option<f64>> = values
            .iter()
            .map(|v| match compare {
                Compare::HigherIsBetter => v.filter(|x| *x > 0.0).map(|x| 1.0 / x),
                _ => v.filter(|x| *x > 0.0),
            })
            .collect();
        let compared = compare != Compare::Not && costs.iter().flatten().count() > 1;
        let best = costs
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let mut row = vec![label.to_string()];
        for (value, cost) in values.iter().zip(&costs) {
            row.push(match (value, cost) {
                (None, _) => "-".into(),
                (Some(v), Some(c)) if compared && c / best - 1.0 >= 0.0005 => {
                    format!("{} ({})", format(*v), vs_fastest(c / best - 1.0))
                }
                (Some(v), _) => format(*v),
            });
        }
        self.rows.push(row);
    }

    /// The headline's min–max over trials, marked `~` when noisy.
    pub fn range(
        &mut self,
        label: &str,
        cells: &[Option<&ResultRecord>],
        format: fn(f64) -> String,
    ) {
        let mut row = vec![label.to_string()];
        for c in cells {
            row.push(c.map_or("-".into(), |r| {
                let s = &r.headline.spread;
                let mark = if r.headline.noisy { " ~" } else { "" };
                format!("{}–{}{mark}", format(s.min), format(s.max))
            }));
        }
        self.rows.push(row);
    }
}

/// The distinct values of one parameter, in the order the records first show them.
pub fn distinct<T: PartialEq>(
    records: &[ResultRecord],
    get: impl Fn(&ResultRecord) -> T,
) -> Vec<T> {
    let mut values = Vec::new();
    for r in records {
        let v = get(r);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    values
}

/// The records whose parameter equals `value`.
pub fn having<'r, T: PartialEq>(
    records: &'r [ResultRecord],
    get: impl Fn(&ResultRecord) -> T,
    value: &T,
) -> Vec<&'r ResultRecord> {
    records.iter().filter(|r| &get(r) == value).collect()
}

/// The note every table carries when a range was wide.
pub const NOISY_NOTE: &str = "~ marks a range over trials wider than 10% of the median: noisy";
