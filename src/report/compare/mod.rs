//! Result files side by side, like a write-up's System A / System B tables, one
//! column per file; the first file (A) is the baseline. The system facts come
//! first, the ones that differ marked; then each experiment's cases and
//! transports on every file, with two questions answered against A:
//!
//! - did the time change? (`time, vs A`: each file's time per operation over A's);
//! - did the gap to the reference transport change? (`vs unix, change vs A`: the
//!   file's paired ratio to the reference over A's), which is the question a
//!   comparison of machines is usually asked: does unix still save what it saved?
//!
//! The figures shown are geometric means over trials, not the medians of a
//! report's tables: the ratios are ratios of geometric means, so the figures beside
//! them reproduce them. How each is computed and what the words mean is in
//! [`change`]. Records are
//! matched by experiment, transport and case ([`same_case`](key::same_case)); an
//! experiment only one file has is one line of the summary, a case only one file
//! has is named in a note under its table.
//!
//! The parts, one job each: `facts` is the system facts block, `table` an
//! experiment's table, `cells` a change in words and numbers, `key` how records
//! are matched and named, `tally` the summary sentences, `host` what they say of a busy host. What is here puts the
//! document together.

pub(crate) mod change;

mod cells;
mod facts;
mod host;
mod key;
mod table;
mod tally;

use super::columns::distinct;
use super::experiment::{Catalog, Description};
use super::{Document, Section};
use crate::results::outside::OutsideLoad;
use crate::results::ResultFile;
use facts::system_block;
use table::experiment_block;
use tally::Tally;

/// One compared file: its letter, the name it was given by, and its results.
struct Run<'f> {
    letter: String,
    name: &'f str,
    file: &'f ResultFile,
    /// How busy the rest of the machine was over its trials.
    host: OutsideLoad,
}

/// The comparison of `files` (two or more), named as given on the command line;
/// the first is the baseline.
pub fn document(files: &[(String, ResultFile)], catalog: &Catalog) -> Document {
    let runs: Vec<Run> = files
        .iter()
        .enumerate()
        .map(|(i, (name, file))| Run {
            letter: letter(i),
            name,
            file,
            host: file.outside_load(),
        })
        .collect();
    let mut summary: Vec<String> = runs
        .iter()
        .map(|r| {
            let baseline = if r.letter == "A" {
                ", the baseline"
            } else {
                ""
            };
            format!(
                "{} = {} ({}){baseline}",
                r.letter, r.name, r.file.started_at
            )
        })
        .collect();
    let mut blocks = vec![system_block(&runs, catalog)];
    let mut tally = Tally::default();
    let mut only = Vec::new();
    for experiment in experiments(&runs, catalog) {
        let having: Vec<&Run> = runs
            .iter()
            .filter(|r| !catalog.records_of(&r.file.results, experiment).is_empty())
            .collect();
        if let [one] = having[..] {
            only.push(format!("{}: only in {}", experiment.id, one.letter));
            continue;
        }
        match experiment_block(experiment, &runs, catalog, &mut tally) {
            Some(block) => blocks.push(block),
            None => only.push(format!(
                "{}: no case measured in more than one file",
                experiment.id
            )),
        }
    }
    summary.extend(tally.sentences(&runs));
    summary.extend(only);
    Document {
        title: "sockbench comparison".into(),
        sections: vec![Section {
            heading: format!(
                "{} files compared with A: {}",
                runs.len(),
                runs.iter()
                    .map(|r| r.letter.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            summary,
            blocks,
            verdict: Vec::new(),
        }],
    }
}

/// `A`…`Z`, then `#27`, `#28`…
fn letter(i: usize) -> String {
    match u8::try_from(i) {
        Ok(i) if i < 26 => char::from(b'A' + i).to_string(),
        _ => format!("#{}", i + 1),
    }
}

/// The experiments of every file, in the order the files name them.
fn experiments(runs: &[Run], catalog: &Catalog) -> Vec<&'static Description> {
    distinct(runs.iter().flat_map(|r| &r.file.results), |r| catalog.of(r))
        .into_iter()
        .flatten()
        .collect()
}
