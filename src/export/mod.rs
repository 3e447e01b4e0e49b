//! Rendering: a finished document (a report or a comparison) in one of the formats,
//! one file each behind the [`Exporter`] trait, plus what the terminal needs while
//! measuring (progress, standard output that may close). Every text from elsewhere is
//! made printable first (`units::printable`).

mod charts;
pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod markdown;
pub mod progress;
pub(crate) mod stdout;
pub(crate) mod terminal;

use crate::report::Document;

/// Renders a whole document as one text. A block of an experiment carries the
/// records behind it, for a format that draws them.
pub trait Exporter {
    fn render(&self, document: &Document) -> String;
}

/// The formats of `report` and `compare` (which has no CSV form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Boxed tables for the terminal.
    Table,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// One self-contained HTML page with SVG charts (no JavaScript, nothing fetched).
    Html,
    /// One row per record and figure, numbers in full (report only).
    Csv,
    /// The whole document with its numbers, units and intervals.
    Json,
}

impl Format {
    /// The renderer of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Table => Box::new(terminal::Terminal(terminal::Screen::of(
                terminal::Stream::Stdout,
            ))),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Html => Box::new(html::Html),
            Format::Csv => Box::new(csv::Csv),
            Format::Json => Box::new(json::Json),
        }
    }
}
