//! Writing results out of the process: the JSON result file as it fills in, and a
//! finished document (a report or a comparison) in one of three formats, one file
//! each behind the `Exporter` trait.

mod charts;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

use crate::cli::Format;
use crate::report::Document;

/// Renders a whole document as one text.
pub trait Exporter {
    fn render(&self, document: &Document) -> String;
}

/// The exporter for a format named on the command line.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(terminal::Terminal),
        Format::Markdown => Box::new(markdown::Markdown),
        Format::Html => Box::new(html::Html),
    }
}
