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

use super::printable::printable;
use super::Exporter;
use crate::families;
use crate::report::block::{legend, Block};
use crate::report::format::{figure, versus};
use crate::report::Document;
use crate::results::ResultRecord;
use comfy_table::presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use std::io::IsTerminal;
use std::os::fd::AsRawFd;

/// The width of a screen nobody measured: output into a pipe or a file. Eighty
/// columns read everywhere (a pager, a mail, an issue, a CI log) and keep the
/// output the same whoever runs the command; `COLUMNS` overrides it.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrower than this, a `COLUMNS` or a terminal is taken as this.
const MIN_WIDTH: usize = 30;
/// A row-name column is not squeezed below this before cells wrap instead.
const MIN_LABEL: usize = 14;

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

/// The stream a [`Screen`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Screen {
    /// The screen behind `stream`: width from `COLUMNS`, else the terminal's, else
    /// [`DEFAULT_WIDTH`]; ASCII unless the locale is UTF-8; emphasis only on a
    /// terminal without `NO_COLOR`.
    pub fn of(stream: Stream) -> Screen {
        let terminal = match stream {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        };
        let fd = match stream {
            Stream::Stdout => std::io::stdout().as_raw_fd(),
            Stream::Stderr => std::io::stderr().as_raw_fd(),
        };
        let width = columns_variable()
            .or_else(|| terminal.then(|| terminal_width(fd)).flatten())
            .unwrap_or(DEFAULT_WIDTH);
        Screen {
            width: width.max(MIN_WIDTH),
            ascii: !utf8_locale(|name| std::env::var(name).ok()),
            emphasis: terminal
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb"),
        }
    }

    /// A screen of `width` columns in UTF-8, without emphasis (for tests).
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

    /// One finished experiment in a few lines: its id and what it does, then one
    /// line per case with the reference transport's headline figure and every other
    /// transport's extra time per operation over it, with its 95% interval:
    /// `  64 B   unix 72.6 µs · tcp +19% [-15%, +66%] · tls +39% [-1.0%, +96%]`.
    pub fn summary(&self, records: &[ResultRecord]) -> String {
        let catalog = families::catalog();
        let Some(experiment) = records.first().and_then(|r| catalog.of(r)) else {
            return String::new();
        };
        let rounds = records.first().map_or(0, |r| r.trials.len());
        let mut text = self.wrap(
            &format!("{} — {}, {rounds} rounds", experiment.id, experiment.title),
            "",
            "  ",
        );
        let mut cases: Vec<(String, Vec<&ResultRecord>)> = Vec::new();
        for record in records {
            let case = experiment.case_label(&record.params);
            match cases.iter_mut().find(|(c, _)| *c == case) {
                Some((_, of)) => of.push(record),
                None => cases.push((case, vec![record])),
            }
        }
        let labels: Vec<String> = cases.iter().map(|(c, _)| self.shown(c)).collect();
        let label_width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let dot = if self.ascii { " | " } else { " · " };
        for ((_, of), label) in cases.iter().zip(&labels) {
            let reference = of
                .iter()
                .find_map(|r| r.headline.vs_reference.as_ref())
                .map(|v| v.reference.clone());
            let parts: Vec<String> = of
                .iter()
                .map(|r| {
                    let shown = match &r.headline.vs_reference {
                        Some(v) if reference.as_deref() != Some(r.transport.as_str()) => {
                            versus(&v.ratio)
                        }
                        _ => (experiment.headline.read)(&r.metrics).map_or_else(
                            || "-".to_string(),
                            |value| figure(experiment.headline.unit, value),
                        ),
                    };
                    // A part breaks from the next, never inside itself.
                    self.shown(&format!("{} {shown}", r.transport))
                        .replace(' ', &GLUE.to_string())
                })
                .collect();
            let first = if label_width == 0 {
                "  ".to_string()
            } else {
                format!("  {label:<label_width$}  ")
            };
            let rest = " ".repeat(first.chars().count() + 2);
            text.push_str(&wrap(&parts.join(dot), self.width, &first, &rest).replace(GLUE, " "));
        }
        text
    }

    /// A table no wider than the screen; see the module's comment for how. A cell
    /// breaks only at its plain spaces: [`GLUE`] holds a figure to its unit and a
    /// sub-row's indent, and is shown as a space.
    pub fn table(&self, header: &[String], rows: &[Vec<String>]) -> String {
        let natural = self.boxed(header, rows, Fit::Natural);
        let fitted = if widest(&natural) <= self.width {
            natural
        } else {
            // Last, a figure may break from its unit rather than a table be stacked.
            let loose: Vec<Vec<String>> = rows
                .iter()
                .map(|r| r.iter().map(|c| unglued(c)).collect())
                .collect();
            let tries: [(Fit, &[Vec<String>]); 3] = [
                (Fit::LabelWraps, rows),
                (Fit::CellsWrap, rows),
                (Fit::CellsWrap, &loose),
            ];
            let mut fitted = None;
            for (fit, rows) in tries {
                let table = self.boxed(header, rows, fit);
                if !table.is_empty() && widest(&table) <= self.width {
                    fitted = Some(table);
                    break;
                }
            }
            fitted.unwrap_or_else(|| self.stacked(header, rows))
        };
        fitted.replace(GLUE, " ")
    }

    /// A boxed table laid out as `fit` says; empty when that layout cannot apply.
    fn boxed(&self, header: &[String], rows: &[Vec<String>], fit: Fit) -> String {
        let mut table = Table::new();
        table.load_preset(if self.ascii {
            ASCII_FULL_CONDENSED
        } else {
            UTF8_FULL_CONDENSED
        });
        table.set_header(header.to_vec());
        for row in rows {
            table.add_row(row.clone());
        }
        let columns = table.column_count();
        // Every column has a border before it and one space each side.
        let frame = 3 * columns + 1;
        let content = |c: usize| -> usize {
            header
                .get(c)
                .into_iter()
                .chain(rows.iter().filter_map(|r| r.get(c)))
                .map(|t| t.chars().count())
                .max()
                .unwrap_or(0)
        };
        match fit {
            Fit::Natural => {}
            Fit::LabelWraps => {
                // The row names are wrapped here, a sub-row's continuation under its
                // own first word, so the figures keep their natural widths.
                let others: usize = (1..columns).map(content).sum();
                let left = self.width.saturating_sub(frame + others);
                let longest_word = rows
                    .iter()
                    .filter_map(|r| r.first())
                    .chain(header.first())
                    .flat_map(|t| t.split([' ', GLUE]))
                    .map(|w| w.chars().count())
                    .max()
                    .unwrap_or(0);
                if left < MIN_LABEL.max(longest_word + 4) {
                    return String::new();
                }
                let mut wrapped = rows.to_vec();
                for row in &mut wrapped {
                    if let Some(label) = row.first_mut() {
                        let body = label.trim_start_matches(GLUE);
                        let indent: String = label[..label.len() - body.len()].into();
                        let rest = format!("{indent}{GLUE}{GLUE}");
                        *label = wrap(body, left, &indent, &rest).trim_end().to_string();
                    }
                }
                return self.boxed(header, &wrapped, Fit::Natural);
            }
            Fit::CellsWrap => {
                // No column narrower than its longest word, which would be cut.
                let word = |c: usize| -> usize {
                    header
                        .get(c)
                        .into_iter()
                        .chain(rows.iter().filter_map(|r| r.get(c)))
                        .flat_map(|t| t.split(' '))
                        .map(|w| w.chars().count())
                        .max()
                        .unwrap_or(0)
                };
                let words: Vec<usize> = (0..columns).map(word).collect();
                if words.iter().sum::<usize>() + frame > self.width {
                    return String::new();
                }
                table.set_content_arrangement(ContentArrangement::Dynamic);
                table.set_width(u16::try_from(self.width).unwrap_or(u16::MAX));
                for (index, w) in words.into_iter().enumerate() {
                    if let Some(column) = table.column_mut(index) {
                        column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                            u16::try_from(w + 2).unwrap_or(u16::MAX),
                        )));
                    }
                }
            }
        }
        for index in 1..columns {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        format!("{table}\n")
    }

    /// A table too wide for the screen even with its cells wrapped: each row's name,
    /// then one line per column, `  tcp: 89.1 µs (+23%)`.
    fn stacked(&self, header: &[String], rows: &[Vec<String>]) -> String {
        let mut text = String::new();
        for row in rows {
            let Some((label, cells)) = row.split_first() else {
                continue;
            };
            let depth = label.len() - label.trim_start().len();
            text.push_str(&wrap(
                label.trim_start(),
                self.width,
                &" ".repeat(depth),
                &" ".repeat(depth + 2),
            ));
            for (name, cell) in header.iter().skip(1).zip(cells) {
                let indent = " ".repeat(depth + 2);
                text.push_str(&wrap(
                    &format!("{name}: {cell}"),
                    self.width,
                    &indent,
                    &format!("{indent}  "),
                ));
            }
        }
        text
    }
}

/// How a table is fitted to the width, tried in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Every cell on one line.
    Natural,
    /// The row names wrap; the figures stay whole.
    LabelWraps,
    /// Any cell wraps at its spaces.
    CellsWrap,
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

/// A space a table does not break at (a no-break space, shown as a plain one).
const GLUE: char = '\u{a0}';

/// `text` with a figure held to its unit (`2.18 GB/s`) and a trailing mark to what
/// it marks (`… ~`), so a cell that wraps breaks between figures, not inside one.
fn glued(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let unit = before.is_some_and(|b| b.is_ascii_digit())
            && after.is_some_and(|a| a.is_alphabetic() || a == 'µ');
        let mark = after == Some('~') && chars.get(i + 2).is_none();
        out.push(if c == ' ' && (unit || mark) { GLUE } else { c });
    }
    out
}

/// `text` free to break at every space but those of its indent.
fn unglued(text: &str) -> String {
    let body = text.trim_start_matches(GLUE);
    let indent = &text[..text.len() - body.len()];
    format!("{indent}{}", body.replace(GLUE, " "))
}

/// `text` wrapped at spaces to `width` columns (characters), the first line after
/// `first` and the others after `rest`; a word longer than a line is cut.
fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut indent = first.chars().count();
    let mut used = indent;
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        let needed = word.len() + usize::from(!empty);
        if !empty && used + needed > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = rest.to_string();
            indent = rest.chars().count();
            used = indent;
            empty = true;
        }
        // A word longer than a whole line is cut where the line ends.
        while used + word.len() > width && width > indent {
            let room = width - used;
            line.extend(word.drain(..room));
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            indent = rest.chars().count();
            used = indent;
        }
        if !empty {
            line.push(' ');
            used += 1;
        }
        used += word.len();
        line.extend(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// The widest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// `COLUMNS`, when set to a number.
fn columns_variable() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

/// The width of the terminal on `fd`.
fn terminal_width(fd: std::os::fd::RawFd) -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes only into the winsize struct it is given.
    let got = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (got == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// Whether the locale's characters are UTF-8, as the C library decides: the first
/// of `LC_ALL`, `LC_CTYPE` and `LANG` that is set and not empty names the locale,
/// and none means `C`, which is ASCII.
pub fn utf8_locale(var: impl Fn(&str) -> Option<String>) -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .into_iter()
        .find_map(|name| var(name).filter(|v| !v.is_empty()))
        .is_some_and(|locale| {
            let locale = locale.to_ascii_lowercase();
            locale.contains("utf-8") || locale.contains("utf8")
        })
}

/// `text` in ASCII: the signs sockbench prints spelt out (`µs` as `us`, `×` as
/// `x`, `±` as `+/-`), any other character beyond ASCII as `?`.
pub fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            'µ' | 'μ' => out.push('u'),
            '–' | '—' | '−' | '‐' | '‑' => out.push('-'),
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '×' => out.push('x'),
            '±' => out.push_str("+/-"),
            '≈' | '∼' => out.push('~'),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '…' => out.push_str("..."),
            '·' | '•' => out.push('-'),
            '²' => out.push('2'),
            '³' => out.push('3'),
            '°' => out.push_str(" deg"),
            '‘' | '’' => out.push('\''),
            '“' | '”' => out.push('"'),
            '\u{a0}' | '\u{2009}' | '\u{202f}' => out.push(' '),
            _ => out.push('?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_with_an_indent() {
        let text = wrap("aaa bbb ccc ddd", 9, "  ", "    ");
        assert_eq!(text, "  aaa bbb\n    ccc\n    ddd\n");
        assert_eq!(wrap("abcdefghij", 6, "", " "), "abcdef\n ghij\n");
        assert_eq!(wrap("", 10, "- ", "  "), "-\n");
    }

    #[test]
    fn the_locale_decides_ascii_as_the_c_library_does() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(utf8_locale(env(&[("LANG", "en_US.UTF-8")])));
        assert!(utf8_locale(env(&[("LANG", "de_DE.utf8")])));
        assert!(!utf8_locale(env(&[])));
        assert!(!utf8_locale(env(&[("LANG", "C")])));
        // LC_ALL wins over LANG; an empty one is skipped.
        assert!(!utf8_locale(env(&[("LC_ALL", "C"), ("LANG", "C.UTF-8")])));
        assert!(utf8_locale(env(&[("LC_ALL", ""), ("LANG", "C.UTF-8")])));
        assert!(!utf8_locale(env(&[
            ("LC_CTYPE", "POSIX"),
            ("LANG", "C.UTF-8")
        ])));
    }

    #[test]
    fn signs_are_spelt_in_ascii() {
        assert_eq!(
            ascii("72.6 µs – 2.1× ± 5% → ok"),
            "72.6 us - 2.1x +/- 5% -> ok"
        );
        assert_eq!(ascii("R² ≈ 1 … 日"), "R2 ~ 1 ... ?");
    }

    #[test]
    fn a_finished_experiment_is_a_line_per_case_within_80_columns() {
        let catalog = families::catalog();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
        let file = crate::results::load(std::path::Path::new(path), |id| {
            catalog.find(id).map(|e| e.headline)
        })
        .unwrap();
        let mut text = String::new();
        for experiment in catalog.all() {
            let records: Vec<ResultRecord> = file
                .results
                .iter()
                .filter(|r| r.experiment == experiment.id)
                .cloned()
                .collect();
            text.push_str(&Screen::plain(80).summary(&records));
        }
        println!("{text}");
        assert!(widest(&text) <= 80, "{text}");
        let pingpong: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("sockets.pingpong"))
            .take(4)
            .collect();
        assert_eq!(pingpong.len(), 4, "{text}");
        assert!(
            pingpong[1].starts_with("  64 B    unix 72.6 µs · tcp +19% ["),
            "{text}"
        );
        assert!(pingpong[3].starts_with("  64 KiB  unix "), "{text}");
    }

    #[test]
    fn a_wide_table_fits_by_wrapping_then_by_stacking() {
        let header: Vec<String> = ["measurement", "unix", "tcp", "tls"]
            .map(String::from)
            .into();
        let rows = vec![
            [
                "connect + SELECT 1 + close, p50",
                "2.40 ms",
                "2.43 ms (+1.4%)",
                "4.54 ms (+89%)",
            ]
            .map(String::from)
            .to_vec(),
            [
                "  vs unix, 95% interval",
                "reference",
                "+6.4% [-51%, +132%]",
                "+102% [+34%, +203%]",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for width in [80, 60, 40, 30] {
            let text = Screen::plain(width).table(&header, &rows);
            assert!(widest(&text) <= width, "{width}:\n{text}");
            assert!(text.contains("+203%"), "{width}:\n{text}");
        }
        // Wide enough, nothing changes; at 30 columns the rows are stacked.
        let wide = Screen::plain(200).table(&header, &rows);
        assert_eq!(wide.lines().count(), 6, "{wide}");
        let narrow = Screen::plain(30).table(&header, &rows);
        assert!(narrow.contains("  tls: 4.54 ms (+89%)"), "{narrow}");
    }
}
