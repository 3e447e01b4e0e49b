//! A document as the terminal shows it: headings, the verdict, tables that fit the
//! screen.
//!
//! Everything printed for a person while measuring or by `report --format table` is
//! laid out here, for a [`Screen`]: its width (no line is wider, so nothing wraps),
//! whether it may show more than ASCII, and whether it may emphasise. A table wider
//! than the screen first lets its row names wrap, then its cells (at spaces), and
//! when even that cannot fit it is stacked: one line per row and transport. Text
//! wraps at word boundaries with an indent. Every text is made printable (it may come
//! from a result file) and, for an ASCII screen, spelt in ASCII (`µs` as `us`) before
//! it is laid out, so the widths stay right.
//!
//! The parts, one job each: `stream` finds the screen behind a stream, `locale`
//! decides ASCII and spells text in it, `wrap` wraps plain text, `fit` fits a table
//! to the width, and `compact` is the line per case printed while measuring. What
//! is here lays a whole document out from them.

mod compact;
mod fit;
mod locale;
mod stream;
mod wrap;

pub use locale::{ascii, utf8_locale};
pub use stream::Stream;

use super::Exporter;
use crate::report::block::{legend, Block};
use crate::report::Document;
use crate::units::printable;
use fit::{glued, GLUE};
use wrap::wrap;

/// Where text goes and what it may use there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// Columns; no line printed is wider.
    pub width: usize,
    /// Only ASCII characters: the locale is not UTF-8.
    pub ascii: bool,
    /// Bold headings: the stream is a terminal and `NO_COLOR` is not set.
    pub emphasis: bool,
}

impl Screen {
    /// A screen of `width` columns in UTF-8, without emphasis (for tests).
    #[cfg(test)]
    pub fn plain(width: usize) -> Screen {
        Screen {
            width,
            ascii: false,
            emphasis: false,
        }
    }

    /// `text` made printable and, on an ASCII screen, spelt in ASCII.
    pub fn shown(&self, text: &str) -> String {
        let text = printable(text);
        if self.ascii {
            ascii(&text)
        } else {
            text.into_owned()
        }
    }

    /// A heading line, bold where the screen emphasises.
    fn heading(&self, text: &str) -> String {
        let lines = self.wrap(text, "", "  ");
        if self.emphasis {
            lines
                .lines()
                .map(|l| format!("\x1b[1m{l}\x1b[0m\n"))
                .collect()
        } else {
            lines
        }
    }

    /// `text` (one paragraph, shown first) wrapped at spaces to the width, the first
    /// line after `first`, the others after `rest`; a word longer than a line is cut.
    pub fn wrap(&self, text: &str, first: &str, rest: &str) -> String {
        wrap(&self.shown(text), self.width, first, rest)
    }

    /// A command line to copy, indented by two: wrapped between its words as a
    /// shell continues a line (` \` at the end of each but the last), so that
    /// what is pasted runs as one command.
    pub fn command(&self, command: &str) -> String {
        let mut out = String::new();
        let mut line = String::from("  ");
        let mut empty = true;
        for word in self.shown(command).split(' ').filter(|w| !w.is_empty()) {
            // Room for the word and, should another line follow, ` \`.
            if !empty && line.chars().count() + 1 + word.chars().count() + 2 > self.width {
                out.push_str(&line);
                out.push_str(" \\\n");
                line = String::from("    ");
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(&line);
        out.push('\n');
        out
    }

    /// A multi-line text such as the verdict's: each line wrapped on its own, its
    /// continuation two columns deeper than its own indent; a line that starts at the
    /// margin is a heading.
    pub fn paragraphs(&self, text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let body = line.trim_start();
            if body.is_empty() {
                out.push('\n');
                continue;
            }
            let indent = &line[..line.len() - body.len()];
            if indent.is_empty() {
                out.push_str(&self.heading(body));
            } else {
                let indent = " ".repeat(indent.chars().count());
                out.push_str(&self.wrap(body, &indent, &format!("{indent}  ")));
            }
        }
        out
    }

    /// A block: its title, its table fitted to the width, its notes.
    pub fn block(&self, block: &Block) -> String {
        let header: Vec<String> = block.header.iter().map(|h| self.shown(h)).collect();
        let rows: Vec<Vec<String>> = block
            .rows
            .iter()
            .map(|row| {
                let mut cells: Vec<String> = row
                    .all_texts()
                    .iter()
                    .map(|c| glued(&self.shown(c)))
                    .collect();
                if row.sub {
                    cells[0] = format!("{GLUE}{GLUE}{}", cells[0]);
                }
                cells
            })
            .collect();
        let mut text = self.wrap(&block.title, "", "  ");
        text.push_str(&self.table(&header, &rows));
        for note in &block.notes {
            text.push_str(&self.wrap(note, "", "  "));
        }
        text
    }

    /// The notes that explain every table, once, after them.
    pub fn legend(&self, notes: &[String], heading: &str) -> String {
        if notes.is_empty() {
            return String::new();
        }
        let mut text = self.wrap(heading, "", "");
        for note in notes {
            text.push_str(&self.wrap(note, "- ", "  "));
        }
        text.push('\n');
        text
    }
}

pub struct Terminal(pub Screen);

impl Exporter for Terminal {
    fn render(&self, document: &Document) -> String {
        let screen = &self.0;
        let mut out = String::new();
        for section in &document.sections {
            out.push_str(&screen.heading(&section.heading));
            out.push('\n');
            for sentence in &section.summary {
                out.push_str(&screen.wrap(sentence, "  ", "    "));
            }
            if !section.summary.is_empty() {
                out.push('\n');
            }
            for block in &section.blocks {
                out.push_str(&screen.block(block));
                out.push('\n');
            }
            out.push_str(&screen.legend(&legend(&section.blocks), LEGEND));
        }
        out
    }
}

/// The heading of the notes that explain every table.
pub const LEGEND: &str = "How to read these tables:";

#[cfg(test)]
mod tests {
    use super::Screen;

    #[test]
    fn a_command_too_long_for_a_line_is_continued_as_a_shell_continues_it() {
        let command = "sockbench report /tmp/a-rather-long-directory/of-results/out.json \
                       --format html --output report.html";
        let shown = Screen::plain(40).command(command);
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines.len() > 1, "{shown}");
        // Only a word longer than a line is wider.
        let words = |l: &str| l.trim().trim_end_matches('\\').trim().split(' ').count();
        assert!(lines
            .iter()
            .all(|l| l.chars().count() <= 40 || words(l) == 1));
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" \\")));
        let joined: Vec<&str> = lines
            .iter()
            .map(|l| l.trim().trim_end_matches('\\').trim())
            .collect();
        assert_eq!(joined.join(" "), command);
        assert_eq!(
            Screen::plain(80).command("sockbench report a.json"),
            "  sockbench report a.json\n"
        );
    }
}
