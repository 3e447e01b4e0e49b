//! The verdict: a few lines in plain words on what each transport costs here for
//! the work people ask about (a small query, a new connection, a small round trip,
//! many clients), and whether the difference survives bulk work (rows, bytes).
//!
//! Every line is built from the records present; a run without PostgreSQL simply
//! has fewer lines.

use super::columns::{extra_over_fastest, with_extra};
use super::experiment::{Catalog, Experiment, Pick, VerdictLine};
use super::format::figure;
use crate::results::metric::Metric;
use crate::results::ResultRecord;

/// Below this extra time over the fastest, transports count as the same.
const SAME: f64 = 0.10;

/// One measurement on every transport that has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub what: String,
    /// `unix 125 µs`, `tcp 129 µs (+3.5%)`, …
    pub cells: Vec<String>,
    /// The extra time of the slowest transport over the fastest.
    pub widest: f64,
    /// Bulk work: whether the difference disappears there.
    pub bulk: bool,
}

/// The verdict lines for the records of one run: one per experiment that has a
/// verdict line and was measured on at least two transports.
pub fn lines(records: &[ResultRecord], catalog: &Catalog) -> Vec<Line> {
    let mut described: Vec<(&Experiment, VerdictLine)> = catalog
        .all()
        .iter()
        .filter_map(|e| Some((*e, e.verdict?)))
        .collect();
    described.sort_by_key(|(_, v)| v.rank);
    described
        .into_iter()
        .filter_map(|(experiment, v)| {
            let of = catalog.records_of(records, experiment);
            let (case, rs) = match v.case {
                Pick::Only => (None, of),
                Pick::Smallest(param) | Pick::Largest(param) => {
                    let values = of.iter().filter_map(|r| param.number(&r.params));
                    let case = match v.case {
                        Pick::Smallest(_) => values.min(),
                        _ => values.max(),
                    }?;
                    let rs = of
                        .into_iter()
                        .filter(|r| param.number(&r.params) == Some(case))
                        .collect();
                    (Some(case), rs)
                }
            };
            line((v.what)(case), &rs, &v.metric, v.bulk)
        })
        .collect()
}

fn line(what: String, rs: &[&ResultRecord], metric: &Metric, bulk: bool) -> Option<Line> {
    let values: Vec<(&str, f64)> = rs
        .iter()
        .filter_map(|r| {
            let value = (metric.read)(&r.metrics).filter(|v| *v > 0.0)?;
            Some((r.transport.as_str(), value))
        })
        .collect();
    if values.len() < 2 {
        return None;
    }
    let figures: Vec<Option<f64>> = values.iter().map(|(_, v)| Some(*v)).collect();
    let extras = extra_over_fastest(&figures, metric.higher_is_better());
    let widest = extras.iter().flatten().copied().fold(0.0, f64::max);
    let cells = values
        .iter()
        .zip(extras)
        .map(|((label, v), extra)| {
            with_extra(format!("{label} {}", figure(metric.unit, *v)), extra)
        })
        .collect();
    Some(Line {
        what,
        cells,
        widest,
        bulk,
    })
}

/// The verdict as sentences, one per line.
pub fn sentences(lines: &[Line]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut s = format!("{}: {}", capitalised(&l.what), l.cells.join(", "));
            if l.bulk {
                s.push_str(if l.widest < SAME {
                    " — the difference all but disappears here"
                } else {
                    " — the difference stays, even for bulk work"
                });
            }
            s + "."
        })
        .collect();
    if !out.is_empty() {
        out.push(
            "Percentages are extra time over the fastest transport; differences under 10% \
             are within the run-to-run noise of a shared virtual machine."
                .into(),
        );
    }
    out
}

/// The verdict as the terminal prints it.
pub fn text(lines: &[Line]) -> String {
    let sentences = sentences(lines);
    if sentences.is_empty() {
        return "Verdict: nothing to compare (fewer than two transports measured).".into();
    }
    let mut text = String::from("Verdict, on this machine:\n");
    for s in sentences {
        text.push_str("  ");
        text.push_str(&s);
        text.push('\n');
    }
    text
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
