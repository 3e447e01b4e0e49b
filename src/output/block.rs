//! A result table as plain data: a title, a header, rows of cells and footnotes.
//!
//! Every experiment is laid out once, as a `Block`; the terminal, Markdown and HTML
//! renderers only decide how a block looks, so the three always show the same
//! figures.

use super::printable::printable;
use crate::results::ResultRecord;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// One table of results.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The experiment whose records fill the table, e.g. `postgres.query`; empty for
    /// tables of other facts.
    pub experiment: String,
    pub title: String,
    /// The first cell names the row; the others are one column per transport.
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Block {
    /// An empty table of an experiment's records, titled with what was measured
    /// and over how many trials.
    pub fn experiment(experiment: &str, what: &str, records: &[ResultRecord]) -> Block {
        let trials = records.first().map_or(0, |r| r.trials.len());
        Block {
            experiment: experiment.to_string(),
            title: format!("{experiment} — {what}, median of {trials} trials"),
            header: Vec::new(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The block as the terminal shows it: title, a boxed table, footnotes; every
    /// text made printable (it may come from a result file).
    pub fn to_terminal(&self) -> String {
        let shown = |cells: &[String]| -> Vec<String> {
            cells.iter().map(|c| printable(c).into_owned()).collect()
        };
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED);
        table.set_header(shown(&self.header));
        for row in &self.rows {
            table.add_row(shown(row));
        }
        for index in 1..table.column_count() {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        let mut text = format!("{}\n{table}\n", printable(&self.title));
        for note in &self.notes {
            text.push_str(&printable(note));
            text.push('\n');
        }
        text
    }
}
