//! A document as GitHub-flavoured Markdown: a heading per result file, the verdict
//! as a list, and each table with its first column left-aligned and the figures
//! right-aligned.

use super::Exporter;
use crate::export::printable::printable;
use crate::report::block::Block;
use crate::report::Document;

pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, document: &Document) -> String {
        let mut out = format!("# {}\n", escape(&document.title));
        for section in &document.sections {
            out.push_str(&format!("\n## {}\n", escape(&section.heading)));
            if !section.summary.is_empty() {
                out.push('\n');
                for sentence in &section.summary {
                    out.push_str(&format!("- {}\n", escape(sentence)));
                }
            }
            for block in &section.blocks {
                out.push('\n');
                out.push_str(&table(block));
            }
        }
        out
    }
}

fn table(block: &Block) -> String {
    let mut out = format!("### {}\n\n", escape(&block.title));
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    out.push_str(&row(&block.header));
    let rule: Vec<&str> = (0..block.header.len())
        .map(|i| if i == 0 { ":---" } else { "---:" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for cells in &block.rows {
        // Indented sub-rows keep their indent visible.
        let mut cells = cells.clone();
        if let Some(first) = cells.first_mut() {
            let trimmed = first.trim_start();
            if trimmed.len() < first.len() {
                *first = format!("↳ {trimmed}");
            }
        }
        out.push_str(&row(&cells));
    }
    if !block.notes.is_empty() {
        out.push('\n');
        for note in &block.notes {
            out.push_str(&format!("{}  \n", escape(note)));
        }
    }
    out
}

/// Text from a result file as Markdown shows it, never as markup: HTML (a
/// `<script>` would run where the Markdown is rendered to a page) becomes entities,
/// a `|` would end the cell, a `~` could start strikeout, and control characters
/// are shown as escapes.
fn escape(text: &str) -> String {
    printable(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('~', "\\~")
}
