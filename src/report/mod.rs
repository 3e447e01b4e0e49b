//! Saved results turned into a document: the system it ran on, the verdict and one
//! table per experiment. The formats in `export/` only decide how a document looks.

pub(crate) mod block;
pub(crate) mod columns;
pub(crate) mod compare;
pub(crate) mod difference;
pub mod experiment;
pub(crate) mod family;
pub mod format;
pub(crate) mod system;
pub mod verdict;

use crate::results::params::PLACEMENT;
use crate::results::{ResultFile, ResultRecord};
use block::Block;
use columns::distinct;
use experiment::{placement as placement_of, Catalog};

/// What a report or a comparison shows, format-free.
#[derive(Debug, Clone)]
pub struct Document {
    pub title: String,
    pub sections: Vec<Section>,
}

/// One result file's part of a report (or a comparison's only part).
#[derive(Debug, Clone)]
pub struct Section {
    pub heading: String,
    /// Sentences shown before the tables: the verdict.
    pub summary: Vec<String>,
    /// The verdict's lines as numbers, for a format that draws them.
    pub verdict: Vec<verdict::Line>,
    pub blocks: Vec<Block>,
}

/// The report of one or more result files.
pub fn document(files: &[(String, ResultFile)], catalog: &Catalog) -> Document {
    let sections = files
        .iter()
        .map(|(name, file)| {
            let lines = verdict::lines(&file.results, &file.system, catalog);
            Section {
                heading: format!("{name} — {}", file.started_at),
                summary: verdict::sentences(&lines),
                verdict: lines,
                blocks: std::iter::once(system::block(file, catalog))
                    .chain(blocks(&file.results, catalog))
                    .collect(),
            }
        })
        .collect();
    Document {
        title: "sockbench results".into(),
        sections,
    }
}

/// One table per experiment, in the order the records name them, and per
/// placement when `--placement` chose several; an experiment this sockbench does
/// not know has none.
pub fn blocks(records: &[ResultRecord], catalog: &Catalog) -> Vec<Block> {
    distinct(records, |r| catalog.of(r))
        .into_iter()
        .flatten()
        .flat_map(|experiment| {
            let of = catalog.records_of(records, experiment);
            distinct(of.iter().copied(), |r| r.params.get(PLACEMENT))
                .into_iter()
                .map(|placement| {
                    let placed: Vec<ResultRecord> = of
                        .iter()
                        .filter(|r| r.params.get(PLACEMENT) == placement)
                        .map(|r| (*r).clone())
                        .collect();
                    let mut block = (experiment.table)(&placed);
                    if let Some(p) = placed.first().and_then(|r| placement_of(&r.params)) {
                        block.title = format!("{}, {}", block.title, p.describe());
                    }
                    block.records = placed;
                    block
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
