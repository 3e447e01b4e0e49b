//! A block as an HTML table, in a box of its own that scrolls sideways when the
//! table is wider than the screen.

use crate::report::block::Block;
use crate::units::printable;

pub fn table(block: &Block) -> String {
    // Figures align right for comparing; a table of facts reads better left-aligned.
    let class = if block.experiment.is_none() {
        " class=\"facts\""
    } else {
        ""
    };
    let mut out = format!(
        "<h3>{}</h3>\n<div class=\"table\">\n<table{class}>\n<thead><tr>",
        escape(&block.title)
    );
    for cell in &block.header {
        out.push_str(&format!("<th>{}</th>", escape(cell)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &block.rows {
        let (class, mark) = if row.highlight {
            (
                " class=\"differs\"",
                " <span class=\"differs\">differs</span>",
            )
        } else {
            ("", "")
        };
        let sub = if row.sub { " class=\"sub\"" } else { "" };
        out.push_str(&format!(
            "<tr{class}><td{sub}>{}{mark}</td>",
            escape(&row.label)
        ));
        for cell in &row.cells {
            out.push_str(&format!("<td>{}</td>", escape(&cell.text)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
    for note in &block.notes {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
    }
    out
}

pub fn escape(text: &str) -> String {
    printable(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_highlighted_row_is_marked_and_a_table_scrolls_in_its_own_box() {
        let mut block = Block::facts(
            "system",
            vec!["fact".into(), "System A".into(), "System B".into()],
            vec![
                vec!["CPU".into(), "Xeon".into(), "EPYC".into()],
                vec!["kernel".into(), "6.1".into(), "6.1".into()],
            ],
        );
        block.rows[0].highlight = true;
        let html = table(&block);
        assert!(
            html.contains("<div class=\"table\">\n<table class=\"facts\">"),
            "{html}"
        );
        assert!(
            html.contains(
                "<tr class=\"differs\"><td>CPU <span class=\"differs\">differs</span></td>"
            ),
            "{html}"
        );
        assert!(html.contains("<tr><td>kernel</td>"), "{html}");
    }
}
