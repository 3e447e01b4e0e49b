//! A document as the terminal shows it: headings, the verdict, boxed tables.

use super::Exporter;
use crate::output::printable::printable;
use crate::report::Document;

pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, document: &Document) -> String {
        let mut out = String::new();
        for section in &document.sections {
            out.push_str(&format!("{}\n\n", printable(&section.heading)));
            for sentence in &section.summary {
                out.push_str(&format!("  {}\n", printable(sentence)));
            }
            if !section.summary.is_empty() {
                out.push('\n');
            }
            for block in &section.blocks {
                out.push_str(&block.to_terminal());
                out.push('\n');
            }
        }
        out
    }
}
