//! The verdict: one line per kind of work (short queries, new connections, many
//! clients, bulk results; raw round trips and bulk bytes) that names the transport
//! to pick, what it saves in the work's own units, and whether that matters at the
//! rates applications run; then what the run could not see.
//!
//! Each line compares the reference transport (unix) with tcp, and TLS with tcp, as
//! separate statements, and each statement is one of three outcomes: a difference,
//! the same within ±5%, or not settled (with what would settle it). Every line is
//! built from the records present; a run without PostgreSQL has fewer lines.
//!
//! Where that line would say something false or nothing (the requests that failed;
//! what nginx costs over the app server alone), an experiment makes its own line
//! ([`OwnLine`](super::experiment::OwnLine), `own.rs`), from statements made here
//! (`failed.rs`, [`Pair::unpaired`], [`layer_cost`]), and takes its place by rank.

pub mod caveats;
mod container;
mod explain;
pub mod failed;
pub mod own;
mod pair;
mod short;
mod wakeup;
mod words;

pub use pair::{Outcome, Pair};
pub use words::{layer_cost, listed, unsettled};

use super::columns::distinct;
use super::experiment::{
    placement, CaseParam, Catalog, Description, OwnLine, Pick, VerdictLine, Work, WorkKind,
};
use super::format::versus;
use crate::results::paired::{against, reference};
use crate::results::params::PLACEMENT;
use crate::results::ResultRecord;
use crate::stats::{Difference, Interval};
use crate::system::System;

/// One line of the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// What the line is about: `Short queries (SELECT 1 on a kept connection)`.
    pub what: String,
    /// The kind of work.
    pub work: Option<Work>,
    /// The placement the line is about, when `--placement` chose.
    pub placement: Option<&'static str>,
    /// The transport the others are compared with.
    pub reference: String,
    /// Each comparison's paired ratio (cost: above 1 means more time per
    /// operation), named as [`compared`] (`tcp`, `tls vs tcp`), for a chart.
    pub ratios: Vec<(String, Interval)>,
    /// The statements the sentence is made of: the reference against tcp (and any
    /// other plain transport), TLS against tcp.
    pub pairs: Vec<Pair>,
    /// The sentence, finished.
    pub sentence: String,
    /// Not about one kind of work: what the run could not see.
    pub caveat: bool,
    /// The line compares cases (e.g. authentication methods), not transports.
    pub by_case: bool,
    experiment: Option<&'static Description>,
    /// The reference's time per operation, in ns.
    reference_ns: f64,
}

/// The verdict lines for the records of one run: one per experiment that has a
/// verdict line and was measured on at least two transports, and the lines
/// experiments make themselves where their records give them something to say, by
/// rank; then the caveats (with what placement weighs on the machine `system`
/// describes).
pub fn lines(records: &[ResultRecord], system: &System, catalog: &Catalog) -> Vec<Line> {
    // Each experiment's line, then its own, ordered by rank (ties in catalog order).
    let mut described: Vec<(u8, &'static Description, Speaks)> = Vec::new();
    for &e in catalog.all() {
        described.extend(e.verdict.as_ref().map(|v| (v.rank, e, Speaks::Line(v))));
        described.extend(e.own_line.as_ref().map(|o| (o.rank, e, Speaks::Own(o))));
    }
    described.sort_by_key(|(rank, _, _)| *rank);
    let mut lines: Vec<Line> = Vec::new();
    let mut contained: Vec<&str> = Vec::new();
    for (_, experiment, said) in described {
        let v = match said {
            Speaks::Line(v) => v,
            Speaks::Own(o) => {
                lines.extend(own::lines(experiment, o, records, catalog));
                continue;
            }
        };
        let of = catalog.records_of(records, experiment);
        let at: Vec<_> = distinct(of.iter().copied(), |r| r.params.get(PLACEMENT));
        let placed = |placement| {
            of.iter()
                .copied()
                .filter(|r| r.params.get(PLACEMENT) == placement)
                .collect::<Vec<_>>()
        };
        let mut these: Vec<Line> = at
            .iter()
            .filter_map(|&p| picked_line(experiment, placed(p), v))
            .collect();
        // A family's first line over a container's network brings the line
        // comparing the ways into it.
        let family = experiment.id.split('.').next().unwrap_or_default();
        if !contained.contains(&family) {
            let said: Vec<Line> = at
                .iter()
                .filter_map(|&p| container_line(placed(p), v))
                .collect();
            if !said.is_empty() {
                contained.push(family);
            }
            these.extend(said);
        }
        if let Some(note) = placement_note(&these) {
            if let Some(last) = these.last_mut() {
                last.sentence.push(' ');
                last.sentence.push_str(&note);
            }
        }
        lines.extend(these);
    }
    pool_advice(&mut lines);
    if let Some(short) = short::in_short(&lines) {
        lines.insert(0, caveat(short));
    }
    if !lines.is_empty() {
        let pairs: Vec<&Pair> = lines.iter().flat_map(|l| &l.pairs).collect();
        let mut said = caveats::lines(records, catalog, &pairs);
        if let Some(w) = &system.wakeup {
            said.splice(
                0..0,
                wakeup::weighs(&lines, w, &caveats::Origin::of(records, catalog)),
            );
        }
        lines.extend(said.into_iter().map(caveat));
    }
    lines
}

/// What an experiment says in the verdict: the line comparing transports, or its
/// own.
enum Speaks {
    Line(&'static VerdictLine),
    Own(&'static OwnLine),
}

/// The verdict line of one placement's records, for the case the line picks.
fn picked_line(
    experiment: &'static Description,
    of: Vec<&ResultRecord>,
    v: &VerdictLine,
) -> Option<Line> {
    let placement = of.first().and_then(|r| placement(&r.params));
    if let Pick::Cases(param) = v.case {
        return cases_line(experiment, of, v, param);
    }
    let rs = picked_case(of, v)?;
    let labels: Vec<&str> = rs.iter().map(|r| r.transport.as_str()).collect();
    let base = rs[reference(&labels)];
    // Each other transport against the one it is compared with everywhere
    // ([`against`]): the reference, or for TLS tcp.
    let with = against(&labels);
    let pairs: Vec<Pair> = (0..rs.len())
        .filter_map(|i| Pair::of(&v.metric, rs[with[i]?], rs[i]))
        .collect();
    let ratios = pairs
        .iter()
        .filter_map(|p| Some((compared(p, &base.transport), p.ratio?)))
        .collect();
    let placed = placement.map(|p| p.describe());
    let case_words = (v.what)(&base.params);
    let what = match placed {
        Some(p) => format!("{} ({case_words}, {p})", v.work.heading),
        None => format!("{} ({case_words})", v.work.heading),
    };
    let reference_ns = words::per_op_ns(&v.metric, pairs.first().map_or(0.0, |p| p.base_cost));
    let cpu_op = v.cpu_op(&base.params);
    let mut sentence = words::sentence(&what, &v.work, &v.metric, &pairs, &cpu_op);
    if let Some(why) = explain(&rs, &pairs, &cpu_op) {
        sentence.push(' ');
        sentence.push_str(&why);
    }
    Some(Line {
        what,
        work: Some(v.work),
        placement: placed,
        reference: base.transport.clone(),
        ratios,
        pairs,
        sentence,
        caveat: false,
        by_case: false,
        experiment: Some(experiment),
        reference_ns,
    })
}

/// The line of the ways into a container, for the case `v` picks.
fn container_line(of: Vec<&ResultRecord>, v: &VerdictLine) -> Option<Line> {
    let placed = of
        .first()
        .and_then(|r| placement(&r.params))
        .map(|p| p.describe());
    let rs = picked_case(of, v)?;
    let case_words = (v.what)(&rs[0].params);
    let what = match placed {
        Some(p) => format!("In a container ({}: {case_words}, {p})", v.work.heading),
        None => format!("In a container ({}: {case_words})", v.work.heading),
    };
    container::line(&rs, v, what, placed)
}

/// The records of the case a line picks (the smallest size, say), each with the
/// line's figure; none when fewer than two transports have it.
fn picked_case<'r>(of: Vec<&'r ResultRecord>, v: &VerdictLine) -> Option<Vec<&'r ResultRecord>> {
    let rs: Vec<&ResultRecord> = match v.case {
        Pick::Only | Pick::Cases(_) => of,
        // Cases without the parameter at all (a proxy's user app, asked for a
        // path rather than sizes) are one case: every record.
        Pick::Smallest(param) | Pick::Largest(param)
            if of.iter().all(|r| param.number(&r.params).is_none()) =>
        {
            of
        }
        Pick::Smallest(param) | Pick::Largest(param) => {
            let values = of.iter().filter_map(|r| param.number(&r.params));
            let case = match v.case {
                Pick::Smallest(_) => values.min(),
                _ => values.max(),
            }?;
            of.into_iter()
                .filter(|r| param.number(&r.params) == Some(case))
                .collect()
        }
    };
    let rs: Vec<&ResultRecord> = rs
        .into_iter()
        .filter(|r| v.metric.read(&r.metrics).is_some_and(|x| x > 0.0))
        .collect();
    (rs.len() >= 2).then_some(rs)
}

/// A line that compares cases (authentication methods) on the reference
/// transport: each against the first case measured.
fn cases_line(
    experiment: &'static Description,
    of: Vec<&ResultRecord>,
    v: &VerdictLine,
    param: CaseParam,
) -> Option<Line> {
    let labels = distinct(of.iter().copied(), |r| r.transport.clone());
    let reference_label = labels.get(reference(&labels))?.clone();
    let rs: Vec<&ResultRecord> = of
        .into_iter()
        .filter(|r| r.transport == reference_label)
        .filter(|r| crate::results::paired::cost(&v.metric, &r.metrics).is_some())
        .collect();
    // The baseline is the first case measured (the experiment's own order:
    // trust first for authentication), never the one that came out cheapest in
    // this run, which would change from run to run.
    let first = rs.first().copied()?;
    let name = |r: &ResultRecord| param.label(&r.params).unwrap_or_else(|| "?".into());
    let pairs: Vec<Pair> = rs
        .iter()
        .copied()
        .filter(|r| !std::ptr::eq(*r, first))
        .filter_map(|r| {
            let mut p = Pair::of(&v.metric, first, r)?;
            p.base = name(first);
            p.other = name(r);
            Some(p)
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let placed = placement(&first.params).map(|p| p.describe());
    let mut what = format!(
        "{} ({}, over {reference_label}",
        v.work.heading,
        (v.what)(&first.params)
    );
    if let Some(p) = placed {
        what.push_str(&format!(", {p}"));
    }
    what.push(')');
    let sentence = words::cases_sentence(&what, &v.work, &v.metric, &pairs);
    Some(Line {
        what,
        work: Some(v.work),
        placement: placed,
        reference: pairs[0].base.clone(),
        ratios: Vec::new(),
        pairs,
        sentence,
        caveat: false,
        by_case: true,
        experiment: Some(experiment),
        reference_ns: 0.0,
    })
}

/// Why the line's settled differences are there, from the kernel's account of the
/// records (see [`explain::explain`]): the reference against tcp (or the first other
/// plain transport), then TLS against tcp.
fn explain(records: &[&ResultRecord], pairs: &[Pair], op: &str) -> Option<String> {
    let find = |label: &str| records.iter().copied().find(|r| r.transport == label);
    let main = words::main_pair(pairs);
    let tls = pairs.iter().find(|p| words::is_tls(p));
    let said: Vec<String> = [main, tls]
        .into_iter()
        .flatten()
        .filter(|p| p.outcome == Outcome::Differs)
        .filter_map(|p| {
            let (cheap, dear, extra) = if p.estimate() >= 1.0 {
                (&p.base, &p.other, p.extra_cpu_ns)
            } else {
                (&p.other, &p.base, p.extra_cpu_ns.map(Difference::negated))
            };
            explain::explain(op, extra, find(cheap)?, find(dear)?)
        })
        .collect();
    (!said.is_empty()).then(|| format!("Why: {}.", said.join("; ")))
}

/// How a comparison is named beside others of its line: `tcp` against the
/// reference, `tls vs tcp` against another.
pub fn compared(p: &Pair, reference: &str) -> String {
    if p.base == reference {
        p.other.clone()
    } else {
        format!("{} vs {}", p.other, p.base)
    }
}

/// A new connection that costs many requests: the first answer is to keep
/// connections (a pool), whatever the transport.
fn pool_advice(lines: &mut [Line]) {
    for i in 0..lines.len() {
        let Some(work) = lines[i].work else { continue };
        let (WorkKind::Connections, Some(per_request)) = (work.kind, work.pool_against) else {
            continue;
        };
        let request = lines
            .iter()
            .find(|l| l.experiment == Some(per_request) && l.placement == lines[i].placement);
        let Some(request) = request else { continue };
        let times = lines[i].reference_ns / request.reference_ns.max(f64::MIN_POSITIVE);
        if times >= 10.0 {
            let request_op = request.work.map_or("requests", |w| w.ops);
            let advice = format!(
                " A new connection costs as much as {} {request_op}: reuse connections \
                 (a pool) before changing transports.",
                words::whole(times)
            );
            lines[i].sentence.push_str(&advice);
        }
    }
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

fn caveat(sentence: String) -> Line {
    Line {
        what: String::new(),
        work: None,
        placement: None,
        reference: String::new(),
        ratios: Vec::new(),
        pairs: Vec::new(),
        sentence,
        caveat: true,
        by_case: false,
        experiment: None,
        reference_ns: 0.0,
    }
}

/// How to read the verdict's numbers, said once after it.
pub const READING: &str = "How to read it: +N% (or N×) is the extra time per operation \
    over the transport named, paired round by round, with its 95% interval; the figures \
    beside it are geometric means over those rounds (the tables show medians). \"The same\" \
    means the interval lies within ±5%; \"not settled\" means it is too wide to tell.";

/// The verdict as sentences, one per line.
pub fn sentences(lines: &[Line]) -> Vec<String> {
    let mut out: Vec<String> = lines.iter().map(|l| l.sentence.clone()).collect();
    if !out.is_empty() {
        out.push(READING.into());
    }
    out
}

/// The verdict as the terminal prints it; without a line, why the `records` of
/// a run made none.
pub fn text(lines: &[Line], records: &[ResultRecord], catalog: &Catalog) -> String {
    let sentences = sentences(lines);
    if sentences.is_empty() {
        return format!("Verdict: none. {}\n", none(records, catalog));
    }
    let mut text = String::from("Verdict, on this machine:\n");
    for s in sentences {
        text.push_str("  ");
        text.push_str(&s);
        text.push('\n');
    }
    text
}

/// Why `records` make no verdict line: the experiments measured have none (their
/// tables say what they found), or none of those that have one measured what it
/// needs, two transports or more.
fn none(records: &[ResultRecord], catalog: &Catalog) -> String {
    let measured: Vec<&'static Description> = distinct(records, |r| catalog.of(r))
        .into_iter()
        .flatten()
        .collect();
    let silent: Vec<String> = measured
        .iter()
        .filter(|e| e.verdict.is_none() && e.own_line.is_none())
        .map(|e| e.id.to_string())
        .collect();
    let has = |n: usize| if n == 1 { "has" } else { "have" };
    if silent.is_empty() {
        "A verdict compares transports, and no experiment here measured two or more.".into()
    } else if silent.len() == measured.len() {
        let their = if silent.len() == 1 {
            "its table says"
        } else {
            "their tables say"
        };
        format!(
            "{} {} no line in the verdict: {their} what was measured.",
            words::listed(&silent),
            has(silent.len())
        )
    } else {
        format!(
            "A verdict compares transports, and no experiment here with a line in it \
             measured two or more ({} {} none).",
            words::listed(&silent),
            has(silent.len())
        )
    }
}

#[cfg(test)]
mod tests;
