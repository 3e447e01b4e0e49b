//! A document (a report or a comparison) as JSON, with its numbers as numbers, for
//! a script. The shape, stable within a `format` number:
//!
//! ```text
//! { "format": 2, "title": "sockbench results",
//!   "sections": [ {                      // one per result file (one for compare)
//!     "heading": "run.json — 2026-…",
//!     "summary": ["…"],                  // the verdict's (or comparison's) sentences
//!     "verdict": [ { "sentence": "Short queries (…): use the Unix socket — …",
//!                    "caveat": false,      // true: "In short" and what the run could not see
//!                    "what": "Short queries (SELECT 1 on a kept connection)",
//!                    "ratios": [ { "transport": "tcp" | "tls vs tcp", "estimate": 1.09,
//!                                  "low": 1.02, "high": 1.17, "n": 5 } ],
//!                    "pairs": [ { "base": "tcp", "other": "tls",
//!                                 "outcome": "differs" | "same" | "not settled",
//!                                 "base_cost": …, "other_cost": …,  // geometric means
//!                                 "ratio": { "estimate": …, … } | null,
//!                                 "extra_cpu_ns": { "estimate": …, "low": …,
//!                                                   "high": … } | null } ] } ],
//!     "records": [ { "experiment": "sockets.pingpong", "transport": "tcp",
//!                    "params": { "size": 64, … },   // what makes its case (not budgets)
//!                    "figures": [ { "figure": "rtt_ns.p50", "against": null | "unix",
//!                                   "unit": "ns",
//!                                   "value": 89100.0, "low": …, "high": …,
//!                                   "settled": true } ] } ],
//!     "tables": [ { "title": "…", "experiment": "sockets.pingpong" | null,
//!                   "header": ["measurement", "unit", …],
//!                   "rows": [ { "label": "…", "sub": false, "highlight": false,
//!                               "cells": [ { "text": "89.1 µs",
//!                                            "value": null
//!                                              | { "kind": "figure", "value": 89100.0, "unit": "ns" }
//!                                              | { "kind": "ratio", "estimate": 1.09,
//!                                                  "low": 1.02, "high": 1.17, "n": 5 } } ] } ],
//!                   "notes": ["…"] } ] } ],
//!   "legend": ["…"] }                    // how to read the tables, once
//! ```
//!
//! `records` and `figures` are those of the CSV format (`export/csv.rs`): every
//! headline, the ratio to the transport compared with (`vs_reference`, unit
//! `ratio`; `against` names it), its extra CPU (`extra_cpu_ns`) and the CPU per
//! operation. A missing number is `null` or left out, never a string. Strings
//! are the result file's as they are (JSON escapes control characters; what shows
//! them must make them safe).

use super::csv::{figures, unit_name};
use super::Exporter;
use crate::report::block::{legend, Block, Number, Row};
use crate::report::verdict::{Line, Outcome};
use crate::report::{Document, Section};
use crate::results::ResultRecord;
use crate::stats::Interval;
use serde::{Serialize, Serializer};
use serde_json::{json, Value};

pub struct Json;

/// The version of the shape above.
const FORMAT: u32 = 2;

impl Exporter for Json {
    fn render(&self, document: &Document) -> String {
        let sections = Each(|| document.sections.iter().map(section));
        let all = document.sections.iter().flat_map(|s| &s.blocks);
        // The fields in the order of their names, as a map of JSON values keeps them.
        #[derive(Serialize)]
        struct Whole<'d, S> {
            format: u32,
            legend: Vec<String>,
            sections: S,
            title: &'d str,
        }
        let mut text = serde_json::to_string_pretty(&Whole {
            format: FORMAT,
            legend: legend(all),
            sections,
            title: &document.title,
        })
        .expect("JSON values and names serialize");
        text.push('\n');
        text
    }
}

/// A list written item by item as it is serialized, each item made only then: the
/// document is never one tree of values, which for a large file's records and
/// tables took several times the file's size.
struct Each<F>(F);

impl<F, I> Serialize for Each<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

fn section(s: &Section) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct Shape<'s, R, T> {
        heading: &'s str,
        records: R,
        summary: &'s [String],
        tables: T,
        verdict: Value,
    }
    Shape {
        heading: &s.heading,
        records: Each(|| {
            (s.blocks.iter())
                .filter_map(|b| Some((b.experiment?, b)))
                .flat_map(|(e, b)| b.records.iter().map(move |r| record(e, r)))
        }),
        summary: &s.summary,
        tables: Each(|| s.blocks.iter().map(table)),
        verdict: verdict(&s.verdict),
    }
}

fn verdict(lines: &[Line]) -> Value {
    json!(lines
        .iter()
        .map(|l| json!({
            "sentence": l.sentence,
            "caveat": l.caveat,
            "what": l.what,
            "pairs": l.pairs.iter().map(|p| json!({
                "base": p.base,
                "other": p.other,
                "outcome": match p.outcome {
                    Outcome::Differs => "differs",
                    Outcome::Same => "same",
                    Outcome::Inconclusive => "not settled",
                },
                "base_cost": p.base_cost,
                "other_cost": p.other_cost,
                "ratio": p.ratio.as_ref().map(interval),
                "extra_cpu_ns": p.extra_cpu_ns.map(|d| json!({
                    "estimate": number(d.estimate),
                    "low": number(d.low),
                    "high": number(d.high),
                })),
            })).collect::<Vec<_>>(),
            "ratios": l.ratios.iter().map(|(t, i)| {
                let mut r = interval(i);
                r["transport"] = json!(t);
                r
            }).collect::<Vec<_>>(),
        }))
        .collect::<Vec<_>>())
}

/// A number JSON can hold (not infinite, not NaN), else `null`.
fn number(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn interval(i: &Interval) -> Value {
    json!({
        "estimate": number(i.estimate),
        "low": number(i.low),
        "high": number(i.high),
        "n": i.n,
    })
}

fn record(experiment: &crate::report::experiment::Description, r: &ResultRecord) -> Value {
    let params = json!(experiment.case_of(&r.params));
    json!({
        "experiment": r.experiment,
        "transport": r.transport,
        "params": params,
        "figures": figures(experiment, r).into_iter().map(|f| json!({
            "figure": f.name,
            "against": f.against,
            "unit": f.unit,
            "value": number(f.value),
            "low": f.low.map(number),
            "high": f.high.map(number),
            "settled": f.settled,
        })).collect::<Vec<_>>(),
    })
}

fn table(b: &Block) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct Shape<'b, R> {
        experiment: Option<&'static str>,
        header: &'b [String],
        notes: &'b [String],
        rows: R,
        title: &'b str,
    }
    Shape {
        experiment: b.experiment.map(|e| e.id),
        header: &b.header,
        notes: &b.notes,
        rows: Each(|| b.rows.iter().map(row)),
        title: &b.title,
    }
}

fn row(r: &Row) -> Value {
    json!({
        "label": r.label,
        "sub": r.sub,
        "highlight": r.highlight,
        "cells": r.cells.iter().map(|c| json!({
            "text": c.text,
            "value": match c.value {
                None => Value::Null,
                Some(Number::Figure { value, unit }) => json!({
                    "kind": "figure",
                    "value": number(value),
                    "unit": unit_name(unit),
                }),
                Some(Number::Ratio(i)) => {
                    let mut v = interval(&i);
                    v["kind"] = json!("ratio");
                    v
                }
            },
        })).collect::<Vec<_>>(),
    })
}
