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
//! matched by experiment, transport and case ([`same_case`]); an experiment only
//! one file has is one line of the summary, a case only one file has is named in a
//! note under its table.

pub mod change;

use super::block::{Block, Cell, Row, Value};
use super::columns::distinct;
use super::experiment::{Catalog, Experiment};
use super::format::{figure, versus};
use super::system::facts;
use super::{Document, Section};
use crate::results::metric::{Better, Metric};
use crate::results::paired::cost;
use crate::results::{Params, ResultFile, ResultRecord};
use change::{Change, Outcome};

/// How to read a comparison, once per document.
const LEGEND: [&str; 2] = [
    "time, vs A: this file's time per operation over A's (rates inverted, so above 1 \
     is slower), geometric means over trials with Welch's t on their logarithms, 95% \
     interval; faster or slower when the interval excludes 1, no clear difference when \
     it lies within ±5%, not settled when it is wider or a side has one trial",
    "change vs A: this file's paired ratio to the reference over A's, from both runs' \
     round-by-round ratios (Welch's t on their logarithms, 95%); above 1 the transport \
     lost ground against the reference (relatively slower), below 1 it gained",
];

/// The note under the system facts when some differ.
const DIFFERS_NOTE: &str = "* differs between the files";

/// One compared file: its letter, the name it was given by, and its results.
struct Run<'f> {
    letter: String,
    name: &'f str,
    file: &'f ResultFile,
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
    let mut blocks = vec![system_block(&runs)];
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

/// The system facts, a column per file; a fact whose values are not all equal is
/// highlighted and marked `*`.
fn system_block(runs: &[Run]) -> Block {
    let all: Vec<Vec<(&str, String)>> = runs.iter().map(|r| facts(r.file)).collect();
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

/// The experiments of every file, in the order the files name them.
fn experiments(runs: &[Run], catalog: &Catalog) -> Vec<&'static Experiment> {
    distinct(runs.iter().flat_map(|r| &r.file.results), |r| catalog.of(r))
        .into_iter()
        .flatten()
        .collect()
}

/// How many changes of each kind the tables show, for the summary; and the gaps
/// that changed, named.
#[derive(Default)]
struct Tally {
    /// Per file after A: outcomes of the time changes.
    times: Vec<(String, Outcome)>,
    /// Per file after A: outcomes of the gap changes.
    gaps: Vec<(String, Outcome)>,
    /// The gaps that changed clearly, as sentences.
    changed: Vec<String>,
}

impl Tally {
    fn sentences(&self, runs: &[Run]) -> Vec<String> {
        let mut out = Vec::new();
        for run in &runs[1..] {
            let count = |of: &[(String, Outcome)], o: Outcome| {
                of.iter()
                    .filter(|(l, x)| *l == run.letter && *x == o)
                    .count()
            };
            let total =
                |of: &[(String, Outcome)]| of.iter().filter(|(l, _)| *l == run.letter).count();
            let t = &self.times;
            let g = &self.gaps;
            if total(t) == 0 {
                continue;
            }
            out.push(format!(
                "{} against A: times faster in {}, slower in {}, no clear difference in {}, \
                 not settled in {} of {}; the gap to the reference changed in {} of {} \
                 (not settled in {}).",
                run.letter,
                count(t, Outcome::Faster),
                count(t, Outcome::Slower),
                count(t, Outcome::Same),
                count(t, Outcome::Unsettled),
                total(t),
                count(g, Outcome::Faster) + count(g, Outcome::Slower),
                total(g),
                count(g, Outcome::Unsettled),
            ));
        }
        out.extend(self.changed.iter().cloned());
        out
    }
}

/// One experiment's table: a row of figures per case and transport, then how each
/// file's time and gap to the reference changed from A; a column per file that
/// shares a case with another. `None` when no case is in two files.
fn experiment_block(
    experiment: &'static Experiment,
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
    for key in distinct(of.iter().flatten().copied(), Key::of) {
        let found: Vec<Option<&ResultRecord>> = of
            .iter()
            .map(|records| records.iter().copied().find(|r| Key::of(r) == key))
            .collect();
        let present: Vec<usize> = (0..runs.len()).filter(|&i| found[i].is_some()).collect();
        let first = found[present[0]].expect("present");
        let label = label(experiment, first);
        if let [i] = present[..] {
            alone.push(format!("{label} (in {})", runs[i].letter));
            continue;
        }
        rows.push(Row::new(
            &label,
            found
                .iter()
                .map(|r| {
                    r.map_or_else(Cell::missing, |r| {
                        let value = typical(r);
                        Cell::with(
                            figure(metric.unit, value),
                            Value::Figure {
                                value,
                                unit: metric.unit,
                            },
                        )
                    })
                })
                .collect(),
        ));
        if found[0].is_some() {
            rows.push(time_row(&metric, runs, &found, tally));
        }
        if let Some(reference) = found
            .iter()
            .flatten()
            .find_map(|r| r.headline.vs_reference.as_ref())
            .map(|v| v.reference.clone())
        {
            rows.extend(gap_rows(experiment, &reference, runs, &of, &found, tally));
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
    let mut notes = Vec::new();
    let missing: Vec<&str> = runs
        .iter()
        .zip(&of)
        .filter(|(_, records)| records.is_empty())
        .map(|(r, _)| r.letter.as_str())
        .collect();
    if !missing.is_empty() {
        notes.push(format!("not measured in {}", missing.join(", ")));
    }
    if !alone.is_empty() {
        notes.push(format!("in one file only: {}", alone.join("; ")));
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
        notes,
        legend: LEGEND.map(String::from).to_vec(),
        experiment: Some(experiment),
        ..Block::facts("", Vec::new(), Vec::new())
    })
}

/// `  time, vs A`: each file's figure against A's.
fn time_row(
    metric: &Metric,
    runs: &[Run],
    found: &[Option<&ResultRecord>],
    tally: &mut Tally,
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
                        change_cell(&c, &runs[i].letter)
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
    experiment: &Experiment,
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
            Some(v) => Cell::with(versus(&v.ratio), Value::Ratio(v.ratio)),
            None => Cell::missing(),
        })
        .collect();
    let rounds = |i: usize| -> Option<Vec<f64>> {
        let other = found[i]?;
        let reference = of[i]
            .iter()
            .find(|r| r.transport == reference && same_case(&r.params, &other.params))?;
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
                        if matches!(c.outcome(), Outcome::Faster | Outcome::Slower) {
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

/// `B slower: ×1.22 [1.06, 1.42]`.
fn change_cell(c: &Change, letter: &str) -> Cell {
    let words = match c.outcome() {
        Outcome::Faster => format!("{letter} faster"),
        Outcome::Slower => format!("{letter} slower"),
        Outcome::Same => "no clear difference".into(),
        Outcome::Unsettled => "not settled".into(),
    };
    numbered(c, words)
}

/// `tcp relatively slower: ×1.13 [1.02, 1.25]`.
fn gap_cell(c: &Change, transport: &str) -> Cell {
    let words = match c.outcome() {
        Outcome::Faster | Outcome::Slower => format!("{transport} {}", relatively(c)),
        Outcome::Same => "no clear difference".into(),
        Outcome::Unsettled => "not settled".into(),
    };
    numbered(c, words)
}

fn relatively(c: &Change) -> &'static str {
    if c.outcome() == Outcome::Faster {
        "relatively faster"
    } else {
        "relatively slower"
    }
}

/// `tcp relatively slower, ×1.13 [1.02, 1.25]`, for a summary sentence.
fn gap_words(c: &Change, transport: &str) -> String {
    format!("{transport} {}, {}", relatively(c), c.numbers())
}

/// The words, then the numbers; the cell carries the interval when there is one.
fn numbered(c: &Change, words: String) -> Cell {
    let text = format!("{words}: {}", c.numbers());
    match c.interval {
        Some(i) => Cell::with(text, Value::Ratio(i)),
        None => Cell::text(text),
    }
}

/// What makes two records of one experiment the same measurement.
#[derive(Debug, PartialEq)]
struct Key {
    transport: String,
    case: Params,
}

impl Key {
    fn of(r: &ResultRecord) -> Key {
        Key {
            transport: r.transport.clone(),
            case: case_of(&r.params),
        }
    }
}

/// The parameters that make a different measurement (not budgets such as durations
/// or batch sizes, which two runs may choose differently).
fn case_of(p: &Params) -> Params {
    Params {
        size: p.size,
        write_size: p.write_size,
        clients: p.clients,
        auth_method: p.auth_method.clone(),
        connect_per_transaction: p.connect_per_transaction,
        placement: p.placement.clone(),
        ..Params::default()
    }
}

fn same_case(a: &Params, b: &Params) -> bool {
    case_of(a) == case_of(b)
}

/// `tcp`, `tcp, 64 B`, `unix, scram-sha-256`, `tls, 10 clients`.
fn label(experiment: &Experiment, r: &ResultRecord) -> String {
    match experiment.case_label(&r.params) {
        case if case.is_empty() => r.transport.clone(),
        case => format!("{}, {case}", r.transport),
    }
}
