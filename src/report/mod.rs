//! Saved results turned into a document: the system it ran on, the verdict and one
//! table per experiment. The formats in `export/` only decide how a document looks.

pub mod compare;
pub mod system;
pub mod verdict;

use crate::error::usage;
use crate::experiment::Workload;
use crate::output::block::Block;
use crate::output::columns::distinct;
use crate::output::{pg_table, table};
use crate::postgres::experiment::PgExperiment;
use crate::results::{ResultFile, ResultRecord, SCHEMA_VERSION};
use anyhow::Result;
use std::path::Path;

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

/// Reads a result file, or says in one line why it cannot be reported.
pub fn load(path: &Path) -> Result<ResultFile> {
    let shown = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read {shown}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{shown} is not JSON ({e}); give a result file written by sockbench --json"
        ))
    })?;
    match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            let written_by = value
                .get("sockbench_version")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("another version");
            return Err(usage(format!(
                "{shown} has result format {v} (written by sockbench {written_by}); this \
                 sockbench reads format {SCHEMA_VERSION}: re-run the measurement, or report it \
                 with the sockbench that wrote it"
            )));
        }
        None => {
            return Err(usage(format!(
                "{shown} is not a sockbench result file (no schema_version); give a file \
                 written by sockbench --json"
            )))
        }
    }
    let file: ResultFile = serde_json::from_value(value)
        .map_err(|e| usage(format!("{shown} is not a valid sockbench result file: {e}")))?;
    if let Some(r) = file
        .results
        .iter()
        .find(|r| block(&r.experiment, &[]).is_none())
    {
        return Err(usage(format!(
            "{shown} holds an experiment this sockbench does not know ({}); report it with \
             the sockbench that wrote it ({})",
            r.experiment, file.sockbench_version
        )));
    }
    Ok(file)
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
fn block(experiment: &str, records: &[ResultRecord]) -> Option<Block> {
    if let Some(w) = Workload::ALL.iter().find(|w| w.experiment() == experiment) {
        return Some(table::block(*w, records));
    }
    let pg = PgExperiment::ALL
        .iter()
        .find(|e| format!("postgres.{e}") == experiment)?;
    Some(pg_table::block(*pg, records))
}
