//! The first block of a comparison: the system facts of every file side by side,
//! the ones that differ marked.

use super::Run;
use crate::report::block::{Block, Row};
use crate::report::experiment::Catalog;
use crate::report::system::facts;

/// The note under the system facts when some differ.
const DIFFERS_NOTE: &str = "* differs between the files";

/// The system facts, a column per file; a fact whose values are not all equal is
/// highlighted and marked `*`.
pub(super) fn system_block(runs: &[Run], catalog: &Catalog) -> Block {
    let all: Vec<Vec<(&str, String)>> = runs.iter().map(|r| facts(r.file, catalog)).collect();
    let mut header = vec!["fact".to_string()];
    header.extend(runs.iter().map(|r| r.letter.clone()));
    let mut block = Block::facts("system", header, Vec::new());
    for (i, (name, _)) in all[0].iter().enumerate() {
        let values: Vec<&String> = all.iter().map(|f| &f[i].1).collect();
        let differs = values.iter().any(|v| *v != values[0]);
        let label = if differs {
            format!("{name} *")
        } else {
            name.to_string()
        };
        let mut row = Row::texts(&label, values.into_iter().cloned());
        row.highlight = differs;
        block.rows.push(row);
    }
    if block.rows.iter().any(|r| r.highlight) {
        block.notes.push(DIFFERS_NOTE.into());
    }
    block
}
