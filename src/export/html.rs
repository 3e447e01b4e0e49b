//! A document as one self-contained HTML page: inline CSS, inline SVG charts, no
//! JavaScript and nothing fetched, so it opens the same from a mail attachment as
//! from a web server.

use super::charts;
use super::Exporter;
use crate::export::printable::printable;
use crate::report::block::{legend, Block};
use crate::report::{Document, Section};

pub struct Html;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;color:#222;line-height:1.4}h1{font-size:1.6rem}h2{font-size:1.3rem;\
border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.5rem}h3{font-size:1.05rem;\
margin:1.8rem 0 .5rem}table{border-collapse:collapse;font-size:.9rem;margin:.3rem 0}\
th,td{border:1px solid #ddd;padding:.25rem .6rem}th{background:#f3f3f3}\
td:not(:first-child),th:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}\
table.facts td,table.facts th{text-align:left}td.sub{padding-left:1.6rem;color:#555}p.note{font-size:.85rem;color:#555;margin:.2rem 0}\
ul.verdict{background:#f6f8fa;border-left:4px solid #1f77b4;padding:.6rem 1rem .6rem 2rem}\
figure{margin:.8rem 0}svg{max-width:100%;height:auto}";

impl Exporter for Html {
    fn render(&self, document: &Document) -> String {
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            escape(&document.title),
            escape(&document.title)
        );
        for section in &document.sections {
            out.push_str(&self::section(section));
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

fn section(section: &Section) -> String {
    let mut out = format!("<section>\n<h2>{}</h2>\n", escape(&section.heading));
    if !section.summary.is_empty() {
        out.push_str("<ul class=\"verdict\">\n");
        for sentence in &section.summary {
            out.push_str(&format!("<li>{}</li>\n", escape(sentence)));
        }
        out.push_str("</ul>\n");
    }
    for block in &section.blocks {
        out.push_str(&table(block));
        let Some(experiment) = block.experiment else {
            continue;
        };
        if block.records.is_empty() {
            continue;
        }
        for chart in charts::for_experiment(experiment, &block.records) {
            match chart {
                Ok(svg) => out.push_str(&format!(
                    "<figure>\n{}\n</figure>\n",
                    strip_declaration(&svg)
                )),
                Err(e) => out.push_str(&format!(
                    "<p class=\"note\">chart not drawn: {}</p>\n",
                    escape(&e)
                )),
            }
        }
    }
    for note in legend(&section.blocks) {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&note)));
    }
    out.push_str("</section>\n");
    out
}

fn table(block: &Block) -> String {
    // Figures align right for comparing; a table of facts reads better left-aligned.
    let class = if block.experiment.is_none() {
        " class=\"facts\""
    } else {
        ""
    };
    let mut out = format!(
        "<h3>{}</h3>\n<table{class}>\n<thead><tr>",
        escape(&block.title)
    );
    for cell in &block.header {
        out.push_str(&format!("<th>{}</th>", escape(cell)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &block.rows {
        let class = if row.sub { " class=\"sub\"" } else { "" };
        out.push_str(&format!("<tr><td{class}>{}</td>", escape(&row.label)));
        for cell in &row.cells {
            out.push_str(&format!("<td>{}</td>", escape(&cell.text)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    for note in &block.notes {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
    }
    out
}

/// An SVG document's own `<?xml …?>` line cannot sit inside HTML.
fn strip_declaration(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(svg, |(_, body)| body.trim_start()),
        None => svg,
    }
}

fn escape(text: &str) -> String {
    printable(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
