//! A document as the terminal shows it: headings, the verdict, boxed tables.

use super::printable::printable;
use super::Exporter;
use crate::report::block::{legend, Block};
use crate::report::Document;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

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
                out.push_str(&block_text(block));
                out.push('\n');
            }
            out.push_str(&legend_text(&legend(&section.blocks)));
        }
        out
    }
}

/// A block as the terminal shows it: title, a boxed table, footnotes; every
/// text made printable (it may come from a result file).
pub fn block_text(block: &Block) -> String {
    let shown = |cells: &[String]| -> Vec<String> {
        cells.iter().map(|c| printable(c).into_owned()).collect()
    };
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(shown(&block.header));
    for row in &block.rows {
        let mut cells = row.all_texts();
        if row.sub {
            cells[0] = format!("  {}", row.label);
        }
        table.add_row(shown(&cells));
    }
    for index in 1..table.column_count() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut text = format!("{}\n{table}\n", printable(&block.title));
    for note in &block.notes {
        text.push_str(&printable(note));
        text.push('\n');
    }
    text
}

/// The notes that explain every table, once, after them.
pub fn legend_text(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut text = String::from("How to read these tables:\n");
    for note in notes {
        text.push_str(&format!("- {}\n", printable(note)));
    }
    text.push('\n');
    text
}
