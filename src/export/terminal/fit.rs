//! Tables fitted to the screen's width: whole when they fit, else with their row
//! names wrapped, then their cells wrapped at spaces, and stacked (one line per row
//! and column) when even that is too wide. A figure is held to its unit by a
//! no-break space ([`GLUE`]) so a wrapped cell breaks between figures.

use super::wrap::{widest, wrap};
use super::Screen;
use comfy_table::presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};

/// A row-name column is not squeezed below this before cells wrap instead.
const MIN_LABEL: usize = 14;

/// A space a table does not break at (a no-break space, shown as a plain one).
pub(super) const GLUE: char = '\u{a0}';

impl Screen {
    /// A table no wider than the screen; see the module's comment for how. A cell
    /// breaks only at its plain spaces: [`GLUE`] holds a figure to its unit and a
    /// sub-row's indent, and is shown as a space.
    pub fn table(&self, header: &[String], rows: &[Vec<String>]) -> String {
        let natural = self.boxed(header, rows, Squeeze::Natural);
        let fitted = if widest(&natural) <= self.width {
            natural
        } else {
            // Last, a figure may break from its unit rather than a table be stacked.
            let loose: Vec<Vec<String>> = rows
                .iter()
                .map(|r| r.iter().map(|c| unglued(c)).collect())
                .collect();
            let tries: [(Squeeze, &[Vec<String>]); 3] = [
                (Squeeze::LabelWraps, rows),
                (Squeeze::CellsWrap, rows),
                (Squeeze::CellsWrap, &loose),
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
    fn boxed(&self, header: &[String], rows: &[Vec<String>], fit: Squeeze) -> String {
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
            Squeeze::Natural => {}
            Squeeze::LabelWraps => {
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
                return self.boxed(header, &wrapped, Squeeze::Natural);
            }
            Squeeze::CellsWrap => {
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
enum Squeeze {
    /// Every cell on one line.
    Natural,
    /// The row names wrap; the figures stay whole.
    LabelWraps,
    /// Any cell wraps at its spaces.
    CellsWrap,
}

/// `text` with a figure held to its unit (`2.18 GB/s`) and a trailing mark to what
/// it marks (`… ~`), so a cell that wraps breaks between figures, not inside one.
pub(super) fn glued(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
