//! A document as one self-contained HTML page: inline CSS, inline SVG charts, no
//! JavaScript and nothing fetched, so it opens the same from a mail attachment as
//! from a web server.
//!
//! A section reads from the answer to the evidence: the verdict and one chart of
//! every cost ratio, then each experiment's table and charts, the notes that
//! explain every table, and the system facts last. The page fits a phone: tables
//! scroll inside their own box, which shows a shadow at its right edge while more
//! columns are beyond it (a white end of the content scrolls over the shadow), and
//! keep their first column in view; the summary chart lays itself out at any
//! width, other charts scale; long words wrap.

mod figures;
mod table;

use super::charts::{self, DrawnChart};
use super::Exporter;
use crate::report::block::Block;
use crate::report::{Document, Section};
use table::{escape, table};

pub struct Html;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;color:#222;line-height:1.4;overflow-wrap:anywhere}h1{font-size:1.6rem}\
h2{font-size:1.3rem;border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.5rem}\
h3{font-size:1.05rem;margin:1.8rem 0 .5rem}\
div.table{overflow-x:auto;max-width:100%;\
background:linear-gradient(to left,#fff 40%,#fff0) right center/2rem 100% no-repeat local,\
radial-gradient(farthest-side at 100% 50%,#0004,#0000) right center/1rem 100% no-repeat scroll}\
table{border-collapse:separate;border-spacing:0;border-top:1px solid #ddd;font-size:.9rem;\
margin:.3rem 0}\
th,td{border:solid #ddd;border-width:0 1px 1px 0;padding:.25rem .6rem;overflow-wrap:normal}\
th{background:#0000000b}\
td:not(:first-child),th:not(:first-child){text-align:right;font-variant-numeric:tabular-nums;\
white-space:nowrap}\
td:first-child,th:first-child{position:sticky;left:0;background:#fff;border-left-width:1px}\
th:first-child{background:#f3f3f3}\
table.facts td,table.facts th{text-align:left;white-space:normal}\
td.sub{padding-left:1.6rem;color:#555}\
tr.differs td{background:#ffc8003b}tr.differs td:first-child{background:#fff3c4}span.differs{font-size:.75rem;font-weight:600;\
color:#7a5200;border:1px solid #d9b44a;border-radius:.6rem;padding:0 .35rem;margin-left:.4rem}\
p.note,figcaption span{font-size:.85rem;color:#555;margin:.2rem 0}\
div.legend{margin-top:1.5rem}\
ul.verdict{background:#f6f8fa;border-left:4px solid #1f77b4;padding:.6rem 1rem .6rem 2rem}\
p.answer{font-size:1.1rem;font-weight:600;border-left:4px solid #1f77b4;padding:.2rem .8rem}\
figure{margin:1rem 0}figcaption{margin-bottom:.3rem}svg{display:block;max-width:100%;height:auto}";

impl Exporter for Html {
    fn render(&self, document: &Document) -> String {
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            escape(&document.title),
            charts::RATIOS_STYLE,
            escape(&document.title)
        );
        // The legend is shown once per page: a later section adds only new notes.
        let mut shown = Vec::new();
        for section in &document.sections {
            out.push_str(&self::section(section, &mut shown));
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// The verdict: its first sentence (in short) stands out, a line per kind of work
/// follows, and what the run could not see and how to read it come after, smaller.
/// A comparison, which has no verdict lines, shows its sentences as a list.
fn verdict(section: &Section) -> String {
    let mut out = String::new();
    if section.verdict.is_empty() {
        if !section.summary.is_empty() {
            out.push_str("<ul class=\"verdict\">\n");
            for sentence in &section.summary {
                out.push_str(&format!("<li>{}</li>\n", escape(sentence)));
            }
            out.push_str("</ul>\n");
        }
        return out;
    }
    let lines = &section.verdict;
    let first_is_short = lines.first().is_some_and(|l| l.caveat);
    if first_is_short {
        out.push_str(&format!(
            "<p class=\"answer\">{}</p>\n",
            escape(&lines[0].sentence)
        ));
    }
    let rest = &lines[usize::from(first_is_short)..];
    out.push_str("<ul class=\"verdict\">\n");
    for line in rest.iter().filter(|l| !l.caveat) {
        out.push_str(&format!("<li>{}</li>\n", escape(&line.sentence)));
    }
    out.push_str("</ul>\n");
    for line in rest.iter().filter(|l| l.caveat) {
        out.push_str(&format!(
            "<p class=\"note\">{}</p>\n",
            escape(&line.sentence)
        ));
    }
    out.push_str(&format!(
        "<p class=\"note\">{}</p>\n",
        escape(crate::report::verdict::READING)
    ));
    out
}

fn section(section: &Section, shown: &mut Vec<String>) -> String {
    let mut out = format!("<section>\n<h2>{}</h2>\n", escape(&section.heading));
    out.push_str(&verdict(section));
    let colours = charts::colours(section.blocks.iter().flat_map(|b| &b.records));
    if let Some(summary) = figures::summary(section, &colours) {
        out.push_str(&figure(&summary));
    }
    let (details, facts): (Vec<&Block>, Vec<&Block>) =
        section.blocks.iter().partition(|b| b.experiment.is_some());
    let differing = figures::differing(&facts);
    if !differing.is_empty() {
        out.push_str(&format!(
            "<p class=\"note\">The systems differ in: {} (marked in the system facts \
             at the end).</p>\n",
            escape(&differing.join(", "))
        ));
    }
    for block in &details {
        out.push_str(&table(block));
        for chart in figures::of_block(block, &colours) {
            out.push_str(&figure(&chart));
        }
    }
    let legend: Vec<String> = crate::report::block::legend(section.blocks.iter())
        .into_iter()
        .filter(|note| !shown.contains(note))
        .collect();
    if !legend.is_empty() {
        out.push_str("<div class=\"legend\">\n");
        for note in &legend {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
        }
        out.push_str("</div>\n");
    }
    shown.extend(legend);
    for block in &facts {
        out.push_str(&table(block));
    }
    out.push_str("</section>\n");
    out
}

/// A chart with its title and how to read it above it, or why it is missing.
fn figure(figure: &DrawnChart) -> String {
    let caption = format!(
        "<figcaption><strong>{}</strong><br><span>{}</span></figcaption>",
        escape(&figure.title),
        escape(&figure.note)
    );
    match &figure.svg {
        Ok(svg) => format!(
            "<figure>\n{caption}\n{}\n</figure>\n",
            strip_declaration(svg)
        ),
        Err(e) => format!(
            "<p class=\"note\">chart not drawn ({}): {}</p>\n",
            escape(&figure.title),
            escape(e)
        ),
    }
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
