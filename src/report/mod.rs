//! Saved results turned into a document: the system it ran on, the verdict and one
//! table per experiment. The formats in `export/` only decide how a document looks.

pub mod compare;
mod load;
pub mod system;
pub mod verdict;

use crate::experiment::Workload;
use crate::output::block::Block;
use crate::output::columns::distinct;
use crate::output::{pg_table, table};
use crate::postgres::experiment::PgExperiment;
use crate::results::{ResultFile, ResultRecord};
pub use load::load;

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
    pub blocks: Vec<Block>,
    /// The records behind the blocks, for charts.
    pub records: Vec<ResultRecord>,
}

/// The report of one or more result files.
pub fn document(files: &[(String, ResultFile)]) -> Document {
    let sections = files
        .iter()
        .map(|(name, file)| Section {
            heading: format!("{name} — {}", file.started_at),
            summary: verdict::sentences(&verdict::lines(&file.results)),
            blocks: std::iter::once(system::block(file))
                .chain(blocks(&file.results))
                .collect(),
            records: file.results.clone(),
        })
        .collect();
    Document {
        title: "sockbench results".into(),
        sections,
    }
}

/// One table per experiment, in the order the records name them.
pub fn blocks(records: &[ResultRecord]) -> Vec<Block> {
    distinct(records, |r| r.experiment.clone())
        .into_iter()
        .filter_map(|name| {
            let of: Vec<ResultRecord> = records
                .iter()
                .filter(|r| r.experiment == name)
                .cloned()
                .collect();
            block(&name, &of)
        })
        .collect()
}

/// The table of one experiment; none for a name this sockbench does not know.
pub(crate) fn block(experiment: &str, records: &[ResultRecord]) -> Option<Block> {
    if let Some(w) = Workload::ALL.iter().find(|w| w.experiment() == experiment) {
        return Some(table::block(*w, records));
    }
    let pg = PgExperiment::ALL
        .iter()
        .find(|e| format!("postgres.{e}") == experiment)?;
    Some(pg_table::block(*pg, records))
}
