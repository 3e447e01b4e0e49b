//! A document as GitHub-flavoured Markdown: a heading per result file, the verdict
//! as a list, and each table with its first column left-aligned and the figures
//! right-aligned.

use super::Exporter;
use crate::report::block::{legend, Block};
use crate::report::Document;
use crate::units::printable;

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
            let legend = legend(&section.blocks);
            if !legend.is_empty() {
                out.push('\n');
                for note in legend {
                    out.push_str(&format!("{}  \n", escape(&note)));
                }
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
    for r in &block.rows {
        // Sub-rows keep their indent visible.
        let mut cells = r.all_texts();
        if r.sub {
            cells[0] = format!("↳ {}", r.label);
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
/// become a link or an image where the Markdown is rendered (GitHub's dialect).
///
/// - HTML becomes entities (a `<script>` would run where Markdown becomes a page;
///   `<http://…>` would be a link);
/// - a `]` that would close a link, an image or a link definition (before `(`, `[`
///   or `:`) is escaped, so no link can form; one before anything else, as in the
///   intervals `[-21%, +31%]`, is plain text already and stays as it is;
/// - a backslash, a backtick (code), `~` (strikeout), `|` (it would end the cell) and
///   `@` (GitHub links `name@host.tld`) are escaped, as are the `:` of `://` and the
///   `.` of `www.` (bare links);
/// - `*` and `_` are escaped where they could open or close emphasis: not between
///   two spaces (`SELECT * FROM`) and, for `_`, not inside a word (`tcp_tw_reuse`);
/// - control characters are shown as escapes.
fn escape(text: &str) -> String {
    let text = printable(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let both = |test: fn(char) -> bool| before.is_some_and(test) && after.is_some_and(test);
        let spaced =
            before.is_none_or(char::is_whitespace) && after.is_none_or(char::is_whitespace);
        let escaped = match c {
            '&' => {
                out.push_str("&amp;");
                continue;
            }
            '<' => {
                out.push_str("&lt;");
                continue;
            }
            '>' => {
                out.push_str("&gt;");
                continue;
            }
            '\\' | '`' | '~' | '|' | '@' => true,
            ']' => matches!(after, Some('(' | '[' | ':')),
            '*' => !spaced,
            '_' => !spaced && !both(char::is_alphanumeric),
            ':' => chars[i..].starts_with(&[':', '/', '/']),
            '.' => {
                i >= 3
                    && chars[i - 3..i]
                        .iter()
                        .collect::<String>()
                        .eq_ignore_ascii_case("www")
            }
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_from_a_result_file_stays_text() {
        for (hostile, shown) in [
            ("[x](http://evil)", "[x\\](http\\://evil)"),
            ("![i](http://evil/i.png)", "![i\\](http\\://evil/i.png)"),
            ("[a][b]", "[a\\][b]"),
            ("[x]: http://evil", "[x\\]: http\\://evil"),
            ("a|b", "a\\|b"),
            ("`code`", "\\`code\\`"),
            (
                "<img src=x onerror=alert(1)>",
                "&lt;img src=x onerror=alert(1)&gt;",
            ),
            ("**bold** _it_ a*b*c", "\\*\\*bold\\*\\* \\_it\\_ a\\*b\\*c"),
            ("www.evil.com", "www\\.evil.com"),
            ("bob@evil.com", "bob\\@evil.com"),
            ("back\\slash", "back\\\\slash"),
        ] {
            assert_eq!(escape(hostile), shown, "{hostile}");
        }
        for plain in [
            "unix 110 µs; tcp 1.5 ms, +2.0% [-21%, +31%]",
            "SELECT * FROM generate_series(1,N)",
            "net.ipv4.tcp_tw_reuse TLS_AES_256_GCM_SHA384",
        ] {
            assert_eq!(escape(plain), plain);
        }
    }
}
