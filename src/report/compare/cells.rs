//! A change in the words a comparison prints, then its numbers: as a table cell
//! (`B slower: ×1.22 [1.06, 1.42]`) or as a phrase for a summary sentence.

use super::change::{Change, ChangeOutcome};
use crate::report::block::{Cell, Number};

/// `B slower: ×1.22 [1.06, 1.42]`; with the files whose trials of the row met a
/// busy host, `B slower, host busy in B: ×1.22 [1.06, 1.42]`.
pub(super) fn change_cell(c: &Change, letter: &str, busy: &[&str]) -> Cell {
    let mut words = match c.outcome() {
        ChangeOutcome::Faster => format!("{letter} faster"),
        ChangeOutcome::Slower => format!("{letter} slower"),
        ChangeOutcome::Same => "no clear difference".into(),
        ChangeOutcome::Unsettled => "not settled".into(),
    };
    if !busy.is_empty() {
        words = format!("{words}, host busy in {}", busy.join(" and "));
    }
    numbered(c, words)
}

/// `tcp relatively slower: ×1.13 [1.02, 1.25]`.
pub(super) fn gap_cell(c: &Change, transport: &str) -> Cell {
    let words = match c.outcome() {
        ChangeOutcome::Faster | ChangeOutcome::Slower => format!("{transport} {}", relatively(c)),
        ChangeOutcome::Same => "no clear difference".into(),
        ChangeOutcome::Unsettled => "not settled".into(),
    };
    numbered(c, words)
}

fn relatively(c: &Change) -> &'static str {
    if c.outcome() == ChangeOutcome::Faster {
        "relatively faster"
    } else {
        "relatively slower"
    }
}

/// `tcp relatively slower, ×1.13 [1.02, 1.25]`, for a summary sentence.
pub(super) fn gap_words(c: &Change, transport: &str) -> String {
    format!("{transport} {}, {}", relatively(c), c.numbers())
}

/// The words, then the numbers; the cell carries the interval when there is one.
fn numbered(c: &Change, words: String) -> Cell {
    let text = format!("{words}: {}", c.numbers());
    match c.interval {
        Some(i) => Cell::with(text, Number::Ratio(i)),
        None => Cell::text(text),
    }
}
