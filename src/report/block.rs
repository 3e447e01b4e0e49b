//! A result table as plain data: a title, a header, rows of cells and footnotes.
//!
//! Every experiment is laid out once, as a `Block`; the renderers in `export/`
//! (terminal, Markdown, HTML) only decide how a block looks, so they always show the
//! same figures.

use super::experiment::Experiment;
use crate::results::ResultRecord;

/// One table of results.
#[derive(Debug, Clone)]
pub struct Block {
    /// The experiment whose records fill the table; none for tables of other facts.
    pub experiment: Option<&'static Experiment>,
    /// The records behind the rows, for the formats that draw charts of them.
    pub records: Vec<ResultRecord>,
    pub title: String,
    /// The first cell names the row; the others are one column per transport.
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Block {
    /// An empty table of an experiment's records, titled with what was measured
    /// and over how many rounds.
    pub fn experiment(experiment: &'static Experiment, records: &[ResultRecord]) -> Block {
        let rounds = records.first().map_or(0, |r| r.trials.len());
        Block {
            experiment: Some(experiment),
            records: records.to_vec(),
            title: format!(
                "{} — {}, median of {rounds} rounds",
                experiment.id, experiment.title
            ),
            header: Vec::new(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A table of facts other than an experiment's records.
    pub fn facts(title: &str, header: Vec<String>, rows: Vec<Vec<String>>) -> Block {
        Block {
            experiment: None,
            records: Vec::new(),
            title: title.into(),
            header,
            rows,
            notes: Vec::new(),
        }
    }
}
