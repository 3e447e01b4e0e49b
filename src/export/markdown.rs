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

/// Text from a result file as Markdown shows it, never as markup: a result file
/// can come from anyone, and a transport name such as `[x](http://evil)` must not
/// become a link or an image where the Markdown is rendered.
///
/// - HTML becomes entities (a `<script>` would run where Markdown becomes a page;
///   `<http://…>` would be a link);
/// - a backslash and every character that opens inline markup is backslash-escaped:
///   `[` `]` (links, images, reference definitions), `` ` `` (code), `*` `_`
///   (emphasis), `~` (strikeout), `|` (it would end the cell);
/// - GitHub also links bare `http://…`, `www.…` and `name@host.tld`: the `:` before
///   `//`, the `.` after `www` and every `@` are escaped, which keeps them apart;
/// - control characters are shown as escapes.
fn escape(text: &str) -> String {
    let text = printable(text);
    let mut out = String::with_capacity(text.len() + 8);
    for (i, c) in text.char_indices() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '[' | ']' | '`' | '*' | '_' | '~' | '|' | '@' => {
                out.push('\\');
                out.push(c);
            }
            ':' if text[i..].starts_with("://") => out.push_str("\\:"),
            '.' if text
                .get(i.saturating_sub(3)..i)
                .is_some_and(|w| w.eq_ignore_ascii_case("www")) =>
            {
                out.push_str("\\.")
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_from_a_result_file_stays_text() {
        for (hostile, shown) in [
            ("[x](http://evil)", "\\[x\\](http\\://evil)"),
            ("![i](http://evil/i.png)", "!\\[i\\](http\\://evil/i.png)"),
            ("a|b", "a\\|b"),
            ("`code`", "\\`code\\`"),
            (
                "<img src=x onerror=alert(1)>",
                "&lt;img src=x onerror=alert(1)&gt;",
            ),
            ("**bold** _it_", "\\*\\*bold\\*\\* \\_it\\_"),
            ("www.evil.com", "www\\.evil.com"),
            ("bob@evil.com", "bob\\@evil.com"),
            ("back\\slash", "back\\\\slash"),
            ("[x]: http://evil", "\\[x\\]: http\\://evil"),
        ] {
            assert_eq!(escape(hostile), shown, "{hostile}");
        }
        assert_eq!(escape("unix 110 µs; tcp 1.5 ms"), "unix 110 µs; tcp 1.5 ms");
    }
}
