//! One experiment's table in a comparison: a row of figures per case and transport,
//! then the rows that say how each file's gap to the reference and then its time
//! changed from A.

use super::cells::{change_cell, gap_cell, gap_words};
use super::change::{self, ChangeOutcome};
use super::host;
use super::key::{label, same_case, CaseKey};
use super::tally::Tally;
use super::Run;
use crate::report::block::{Block, Cell, Number, Row};
use crate::report::columns::distinct;
use crate::report::experiment::{Catalog, Description};
use crate::report::format::{figure, versus};
use crate::results::metric::{Better, Metric};
use crate::results::paired::cost;
use crate::results::ResultRecord;

/// How to read a comparison, once per document: the gaps first, as the tables
/// show them.
const LEGEND: [&str; 2] = [
    "change vs A: this file's paired ratio to the reference over A's, from both \
     runs' round-by-round ratios (Welch's t on their logarithms, 95%); above 1 the \
     transport lost ground against the reference (relatively slower), below 1 it \
     gained; both transports of a round ran under the same outside load, so a busy \
     host does not move it",
    "time, vs A: this file's time per operation over A's (rates inverted, so above 1 \
     is slower), geometric means over trials with Welch's t on their logarithms, 95% \
     interval; faster or slower when the interval excludes 1, no clear difference when \
     it lies within ±5%, not settled when it is wider or a side has one trial; \
     \"host busy in B\": trials of that case in B ran again or stayed disturbed because \
     other processes used the CPUs, which lengthens times by itself",
];

/// One experiment's table: a row of figures per case and transport, then how each
/// file's time and gap to the reference changed from A; a column per file that
/// shares a case with another. `None` when no case is in two files.
pub(super) fn experiment_block(
    experiment: &'static Description,
    runs: &[Run],
    catalog: &Catalog,
    tally: &mut Tally,
) -> Option<Block> {
    let of: Vec<Vec<&ResultRecord>> = runs
        .iter()
        .map(|r| catalog.records_of(&r.file.results, experiment))
        .collect();
    let metric = experiment.headline;
    let mut rows: Vec<Row> = Vec::new();
    let mut alone = Vec::new();
    // The files whose trials of a compared time met a busy host.
    let mut busy: Vec<&str> = Vec::new();
    for key in distinct(of.iter().flatten().copied(), |r| CaseKey::of(experiment, r)) {
        let found: Vec<Option<&ResultRecord>> = of
            .iter()
            .map(|records| {
                records
                    .iter()
                    .copied()
                    .find(|r| CaseKey::of(experiment, r) == key)
            })
            .collect();
        let present: Vec<usize> = (0..runs.len()).filter(|&i| found[i].is_some()).collect();
        let first = found[present[0]].expect("present");
        let label = label(experiment, first);
        if let [i] = present[..] {
            alone.push(format!("{label} (in {})", runs[i].letter));
            continue;
        }
        rows.push(headline_row(&label, &metric, &found));
        // The gap first: it survives a busy host, the time does not.
        if let Some(reference) = found
            .iter()
            .flatten()
            .find_map(|r| r.headline.vs_reference.as_ref())
            .map(|v| v.reference.clone())
        {
            rows.extend(gap_rows(experiment, &reference, runs, &of, &found, tally));
        }
        if found[0].is_some() {
            rows.push(time_row(&metric, runs, &found, tally, &mut busy));
        }
    }
    if rows.is_empty() {
        return None;
    }
    // A file with no case in common with another gets no column of dashes.
    let shown: Vec<usize> = (0..runs.len())
        .filter(|&i| rows.iter().any(|r| r.cells[i] != Cell::missing()))
        .collect();
    for row in &mut rows {
        row.cells = shown.iter().map(|&i| row.cells[i].clone()).collect();
    }
    let mut header = vec!["case".to_string()];
    header.extend(shown.iter().map(|&i| runs[i].letter.clone()));
    Some(Block {
        title: format!(
            "{} — {}, geometric mean over trials",
            experiment.id, experiment.title
        ),
        header,
        rows,
        notes: notes(runs, &of, &alone, &busy),
        legend: LEGEND.map(String::from).to_vec(),
        experiment: Some(experiment),
        ..Block::facts("", Vec::new(), Vec::new())
    })
}

/// A case's headline figure in each file that measured it.
fn headline_row(label: &str, metric: &Metric, found: &[Option<&ResultRecord>]) -> Row {
    let cell = |r: &ResultRecord| {
        let value = typical(r);
        let number = Number::Figure {
            value,
            unit: metric.unit,
        };
        Cell::with(figure(metric.unit, value), number)
    };
    let cells = found.iter().map(|r| r.map_or_else(Cell::missing, cell));
    Row::new(label, cells.collect())
}

/// The notes under a comparison's table: the files that did not measure the
/// experiment, the cases only one file has (`alone`), and the files whose trials
/// met a busy host (`busy`).
fn notes(runs: &[Run], of: &[Vec<&ResultRecord>], alone: &[String], busy: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    let missing: Vec<&str> = runs
        .iter()
        .zip(of)
        .filter(|(_, records)| records.is_empty())
        .map(|(r, _)| r.letter.as_str())
        .collect();
    if !missing.is_empty() {
        notes.push(format!("not measured in {}", missing.join(", ")));
    }
    if !alone.is_empty() {
        notes.push(format!("in one file only: {}", alone.join("; ")));
    }
    if !busy.is_empty() {
        let busy: Vec<&str> = runs
            .iter()
            .map(|r| r.letter.as_str())
            .filter(|l| busy.contains(l))
            .collect();
        notes.push(format!(
            "host busy in {}: trials of the rows marked ran again or stayed disturbed \
             because other processes used the CPUs, so their times say more about the host \
             than about the code; the gaps to the reference, measured in the same rounds, \
             still compare the transports",
            busy.join(" and ")
        ));
    }
    notes
}

/// `  time, vs A`: each file's figure against A's, each cell marked with the files
/// (A's or its own) whose trials of it met a busy host, which `busy` collects.
fn time_row<'r>(
    metric: &Metric,
    runs: &'r [Run],
    found: &[Option<&ResultRecord>],
    tally: &mut Tally,
    busy: &mut Vec<&'r str>,
) -> Row {
    let costs = |r: &ResultRecord| -> Vec<f64> {
        r.trials
            .iter()
            .filter_map(|t| cost(metric, &t.metrics))
            .collect()
    };
    let cells = found
        .iter()
        .enumerate()
        .map(|(i, r)| match (i, found[0], r) {
            (0, Some(_), _) => Cell::text(""),
            (_, Some(a), Some(x)) => {
                let as_cost = |r: &ResultRecord| match metric.better {
                    Better::Higher => 1.0 / typical(r),
                    Better::Lower => typical(r),
                };
                match change::of_figure(&costs(a), &costs(x), (as_cost(a), as_cost(x))) {
                    Some(c) => {
                        tally.times.push((runs[i].letter.clone(), c.outcome()));
                        let marked: Vec<&str> = [(0, a), (i, x)]
                            .into_iter()
                            .filter(|(_, r)| host::disturbed(r))
                            .map(|(j, _)| runs[j].letter.as_str())
                            .collect();
                        busy.extend(&marked);
                        change_cell(&c, &runs[i].letter, &marked)
                    }
                    None => Cell::missing(),
                }
            }
            _ => Cell::missing(),
        })
        .collect();
    Row::new("  time, vs A", cells)
}

/// `  vs unix, paired` (each file's own ratio to the reference) and `  vs unix,
/// change vs A`, for a transport that is not the reference.
fn gap_rows(
    experiment: &Description,
    reference: &str,
    runs: &[Run],
    of: &[Vec<&ResultRecord>],
    found: &[Option<&ResultRecord>],
    tally: &mut Tally,
) -> Vec<Row> {
    // A file that measured without the reference paired with another transport:
    // its ratio is not one of these.
    let versus_of = |r: &Option<&ResultRecord>| {
        r.and_then(|r| r.headline.vs_reference.clone())
            .filter(|v| v.reference == reference)
    };
    if found.iter().all(|r| versus_of(r).is_none()) {
        return Vec::new();
    }
    let paired = found
        .iter()
        .map(|r| match versus_of(r) {
            Some(v) => Cell::with(versus(&v.ratio), Number::Ratio(v.ratio)),
            None => Cell::missing(),
        })
        .collect();
    let rounds = |i: usize| -> Option<Vec<f64>> {
        let other = found[i]?;
        let reference = of[i].iter().find(|r| {
            r.transport == reference && same_case(experiment, &r.params, &other.params)
        })?;
        per_round(&experiment.headline, reference, other)
    };
    let a = versus_of(&found[0]);
    let changes = (0..found.len())
        .map(|i| match (i, &a, versus_of(&found[i])) {
            (0, Some(_), _) => Cell::text(""),
            (_, Some(a), Some(x)) => {
                match change::of_gap((rounds(0), rounds(i)), (a.ratio, x.ratio)) {
                    Some(c) => {
                        let transport = &found[i].expect("has a ratio").transport;
                        tally.gaps.push((runs[i].letter.clone(), c.outcome()));
                        if matches!(c.outcome(), ChangeOutcome::Faster | ChangeOutcome::Slower) {
                            tally.changed.push(format!(
                                "{}, {}: against {reference}, {} in A, {} in {} ({}).",
                                experiment.id,
                                label(experiment, found[i].expect("has a ratio")),
                                versus(&a.ratio),
                                versus(&x.ratio),
                                runs[i].letter,
                                gap_words(&c, transport)
                            ));
                        }
                        gap_cell(&c, transport)
                    }
                    None => Cell::missing(),
                }
            }
            _ => Cell::missing(),
        })
        .collect();
    let mut rows = vec![Row::new(&format!("  vs {reference}, paired"), paired)];
    // Without A's ratio there is nothing to change from.
    if a.is_some() {
        rows.push(Row::new(&format!("  vs {reference}, change vs A"), changes));
    }
    rows
}

/// The figure a comparison shows for a record: the geometric mean over its
/// trials (its interval's centre) where it has one, so that the ratios beside it
/// are the ratios of the figures shown; else the median (of one trial).
fn typical(r: &ResultRecord) -> f64 {
    r.headline
        .interval
        .map_or(r.headline.spread.median, |i| i.estimate)
}

/// `other`'s cost over `reference`'s, round by round; `None` when the rounds do not
/// pair (a different count, or a figure missing).
fn per_round(metric: &Metric, reference: &ResultRecord, other: &ResultRecord) -> Option<Vec<f64>> {
    if reference.trials.len() != other.trials.len() {
        return None;
    }
    reference
        .trials
        .iter()
        .zip(&other.trials)
        .map(|(r, o)| Some(cost(metric, &o.metrics)? / cost(metric, &r.metrics)?))
        .collect()
}
