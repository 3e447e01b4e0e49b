//! The verdict: a few lines in plain words on what each transport costs here for
//! the work people ask about (a small query, a new connection, a small round trip,
//! many clients), and whether the difference survives bulk work (rows, bytes).
//!
//! Every line is built from the records present; a run without PostgreSQL simply
//! has fewer lines.

use super::columns::distinct;
use super::experiment::{placement, Catalog, Experiment, Pick, VerdictLine};
use super::format::{figure, versus};
use crate::results::metric::Metric;
use crate::results::ResultRecord;
use crate::stats::Interval;

/// One measurement on every transport that has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub what: String,
    /// `unix 125 µs`, `tcp 160 µs, +28% [+19%, +37%]`, …
    pub cells: Vec<String>,
    /// Whether any transport's interval against the reference excludes no change.
    pub differs: bool,
    /// Bulk work: whether the difference disappears there.
    pub bulk: bool,
    /// The placement the line is about, when `--placement` chose.
    pub placement: Option<&'static str>,
    /// Each compared transport's ratio to the reference.
    pub ratios: Vec<(String, Interval)>,
    /// A sentence that follows the line's, e.g. that placement changes the answer.
    pub note: Option<String>,
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
        .flat_map(|(experiment, v)| {
            let of = catalog.records_of(records, experiment);
            let mut lines: Vec<Line> = distinct(of.iter().copied(), |r| r.params.placement.clone())
                .into_iter()
                .filter_map(|placement| {
                    let placed = of
                        .iter()
                        .copied()
                        .filter(|r| r.params.placement == placement)
                        .collect();
                    picked_line(placed, &v)
                })
                .collect();
            if let Some(note) = placement_note(&lines) {
                if let Some(last) = lines.last_mut() {
                    last.note = Some(note);
                }
            }
            lines
        })
        .collect()
}

/// The verdict line of one placement's records, for the case the line picks.
fn picked_line(of: Vec<&ResultRecord>, v: &VerdictLine) -> Option<Line> {
    let placement = of.first().and_then(|r| placement(&r.params));
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
    let what = match placement {
        Some(p) => format!("{} ({})", (v.what)(case), p.describe()),
        None => (v.what)(case),
    };
    line(what, &rs, &v.metric, v.bulk)
}

/// When one measurement under two placements gives a transport intervals that do
/// not overlap, the sentence that says so: placement changes the answer.
fn placement_note(lines: &[Line]) -> Option<String> {
    if lines.len() < 2 {
        return None;
    }
    let mut changed = Vec::new();
    for (transport, _) in &lines[0].ratios {
        let seen: Vec<(&str, Interval)> = lines
            .iter()
            .filter_map(|l| {
                let (_, ratio) = l.ratios.iter().find(|(t, _)| t == transport)?;
                Some((l.placement?, *ratio))
            })
            .collect();
        let apart = seen
            .iter()
            .any(|(_, a)| seen.iter().any(|(_, b)| a.high < b.low || b.high < a.low));
        if apart {
            let each: Vec<String> = seen
                .iter()
                .map(|(p, r)| format!("{} {p}", versus(r)))
                .collect();
            changed.push(format!("{transport} {}", each.join(", ")));
        }
    }
    (!changed.is_empty())
        .then(|| format!("Placement changes the answer here: {}.", changed.join("; ")))
}

fn line(what: String, rs: &[&ResultRecord], metric: &Metric, bulk: bool) -> Option<Line> {
    let values: Vec<(&ResultRecord, f64)> = rs
        .iter()
        .filter_map(|r| Some((*r, (metric.read)(&r.metrics).filter(|v| *v > 0.0)?)))
        .collect();
    if values.len() < 2 {
        return None;
    }
    let mut differs = false;
    let ratios = values
        .iter()
        .filter_map(|(r, _)| Some((r.transport.clone(), r.headline.vs_reference.as_ref()?.ratio)))
        .collect();
    let cells = values
        .iter()
        .map(|(r, v)| {
            let value = format!("{} {}", r.transport, figure(metric.unit, *v));
            match &r.headline.vs_reference {
                Some(vs) if vs.ratio.differs() => {
                    differs = true;
                    format!("{value}, {}", versus(&vs.ratio))
                }
                Some(vs) => format!("{value}, no clear difference ({})", versus(&vs.ratio)),
                None if values.iter().any(|(o, _)| {
                    o.headline
                        .vs_reference
                        .as_ref()
                        .is_some_and(|vs| vs.reference == r.transport)
                }) =>
                {
                    value
                }
                None => format!("{value}, not settled (too few rounds to compare)"),
            }
        })
        .collect();
    Some(Line {
        what,
        cells,
        differs,
        bulk,
        placement: rs
            .first()
            .and_then(|r| placement(&r.params))
            .map(|p| p.describe()),
        ratios,
        note: None,
    })
}

/// The verdict as sentences, one per line.
pub fn sentences(lines: &[Line]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut s = format!("{}: {}", capitalised(&l.what), l.cells.join("; "));
            if l.bulk {
                s.push_str(if l.differs {
                    " — the difference stays, even for bulk work"
                } else {
                    " — no clear difference for bulk work"
                });
            }
            s.push('.');
            if let Some(note) = &l.note {
                s.push(' ');
                s.push_str(note);
            }
            s
        })
        .collect();
    if !out.is_empty() {
        out.push(
            "Percentages are extra time per operation over the reference transport, \
             paired round by round, with 95% intervals; a difference is stated only when \
             its interval excludes 0%."
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

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
