//! A result table as plain data: a title, a header, rows of cells and footnotes.
//!
//! Every experiment is laid out once, as a `Block`; the renderers in `export/`
//! (terminal, Markdown, HTML, CSV) only decide how a block looks, so they always
//! show the same figures. A cell carries its text and, where it is a number, the
//! number with its unit or the ratio with its interval, so a renderer never parses
//! text made for the terminal.

use super::experiment::Description;
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use crate::stats::Interval;

/// One table of results.
#[derive(Debug, Clone)]
pub struct Block {
    /// The experiment whose records fill the table; none for tables of other facts.
    pub experiment: Option<&'static Description>,
    /// The records behind the rows, for the formats that draw charts of them or
    /// list them (moved in by [`super::blocks`]).
    pub records: Vec<ResultRecord>,
    pub title: String,
    /// The first cell names the row; the others are one column per transport.
    pub header: Vec<String>,
    pub rows: Vec<Row>,
    /// Notes about this table alone (its TLS version, what was not settled).
    pub notes: Vec<String>,
    /// Notes that explain how to read every table of their kind (what `~` and the
    /// intervals mean, where CPU figures come from): a renderer shows each once per
    /// document, after the tables.
    pub legend: Vec<String>,
}

/// One row: its name and one cell per column after the first.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    /// A detail of the row above it (a range, an interval, a percentile).
    pub sub: bool,
    /// A row to draw the eye to (e.g. a system fact that differs between the
    /// compared files).
    pub highlight: bool,
    pub cells: Vec<Cell>,
}

/// One cell: what it shows, and the number behind it when it is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: Option<Number>,
}

/// The number behind a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A figure in its unit (nanoseconds, per second, bytes per second, a count).
    Figure { value: f64, unit: Unit },
    /// Extra time per operation over the reference, as a ratio with its 95% interval.
    Ratio(Interval),
}

impl Cell {
    /// A cell of text only.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: None,
        }
    }

    /// A cell showing `value`.
    pub fn with(text: impl Into<String>, value: Number) -> Cell {
        Cell {
            text: text.into(),
            value: Some(value),
        }
    }

    /// The cell of a column that has nothing.
    pub fn missing() -> Cell {
        Cell::text("-")
    }
}

impl Row {
    /// A row of text cells. A label indented by spaces makes a sub-row, and the
    /// indent is dropped (renderers indent in their own way).
    pub fn texts(label: &str, cells: impl IntoIterator<Item = String>) -> Row {
        Row::new(label, cells.into_iter().map(Cell::text).collect())
    }

    /// A row of cells; an indented label makes a sub-row.
    pub fn new(label: &str, cells: Vec<Cell>) -> Row {
        let trimmed = label.trim_start();
        Row {
            label: trimmed.to_string(),
            sub: trimmed.len() < label.len(),
            highlight: false,
            cells,
        }
    }

    /// The label and the cells' texts, as a table of text shows them.
    pub fn all_texts(&self) -> Vec<String> {
        std::iter::once(self.label.clone())
            .chain(self.cells.iter().map(|c| c.text.clone()))
            .collect()
    }
}

impl Block {
    /// An empty table of an experiment's records, titled with what was measured
    /// and over how many rounds. The records themselves are [`super::blocks`]'s to
    /// move in once the table is laid out: a copy here would hold a large file's
    /// records a third time.
    pub fn experiment(experiment: &'static Description, records: &[ResultRecord]) -> Block {
        let rounds = records.first().map_or(0, |r| r.trials.len());
        Block {
            experiment: Some(experiment),
            records: Vec::new(),
            title: format!(
                "{} — {}, median of {rounds} rounds",
                experiment.id, experiment.title
            ),
            header: Vec::new(),
            rows: Vec::new(),
            notes: Vec::new(),
            legend: Vec::new(),
        }
    }

    /// A table of facts other than an experiment's records.
    pub fn facts(title: &str, header: Vec<String>, rows: Vec<Vec<String>>) -> Block {
        Block {
            experiment: None,
            records: Vec::new(),
            title: title.into(),
            header,
            rows: rows
                .into_iter()
                .map(|r| {
                    let mut cells = r.into_iter();
                    let label = cells.next().unwrap_or_default();
                    Row::texts(&label, cells)
                })
                .collect(),
            notes: Vec::new(),
            legend: Vec::new(),
        }
    }
}

/// The legend notes of `blocks`, each once, in the order they first appear.
pub fn legend<'b>(blocks: impl IntoIterator<Item = &'b Block>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for note in blocks.into_iter().flat_map(|b| &b.legend) {
        if !out.contains(note) {
            out.push(note.clone());
        }
    }
    out
}
