//! A report as CSV (RFC 4180): one row per record and figure, for a spreadsheet or
//! a script. The figures are each record's headline (the geometric mean over its
//! trials with its 95% interval, so that the value is the centre of `low`–`high`;
//! with one trial, that trial's value and no interval; the tables show medians,
//! which can differ by a few percent), its paired ratio to the reference
//! transport (`vs_reference`, unit `ratio`: 1.28 is 28% more time per operation;
//! for TLS, to tcp when measured), the extra CPU per operation of that comparison
//! (`extra_cpu_ns`, client and server together, with its interval), and its CPU per
//! operation, client and server apart (and the server's role by role where it has
//! several: `cpu.roles.app.cpu_ns`), and by layer (`why.client.layer.tcp`: the
//! mean over the counting trials with its 95% interval; no interval from one
//! trial). Numbers are written in full,
//! never formatted for people; an empty cell is a figure or parameter the record
//! does not have.
//!
//! Columns: `run` (the section of the report: file and start time), `experiment`,
//! one column per case parameter the report's experiments declare (e.g. `size`,
//! `clients`, `auth_method`, `connect_per_transaction`), in the order they declare
//! them, then `placement`, `transport`, `figure` (its path in the
//! result file, e.g. `rtt_ns.p50`, `cpu.client.cpu_ns`), `against` (for
//! `vs_reference` and `extra_cpu_ns`, the transport compared with), `unit` (`ns`, `per_s`,
//! `bytes_per_s`, `count`, `ratio`), `value`, `low`, `high`, `within_5_percent` (the interval lies within ±5% of the
//! estimate: precise enough; it says nothing about whether two transports differ).
//!
//! Text from a result file (a transport given to `--url`, a file name) can start
//! with `=`, `+`, `-` or `@`, which a spreadsheet would run as a formula; such a
//! cell is written with a leading `'`, which spreadsheets show as text (the OWASP
//! advice on CSV injection). Tab and carriage return, which some spreadsheets also
//! read as a formula start, are shown as escapes like every control character.
//! Only text is guarded: numbers are written by sockbench and a negative one stays
//! a number.

use super::Exporter;
use crate::report::experiment::{CaseParam, Description, Form};
use crate::report::Document;
use crate::results::metric::Unit;
use crate::results::params::{Param, PLACEMENT};
use crate::results::Params;
use crate::results::ResultRecord;
use crate::units::printable;

pub struct Csv;

/// The columns before the case parameters.
const FIRST: [&str; 2] = ["run", "experiment"];
/// The columns after them.
const LAST: [&str; 9] = [
    "placement",
    "transport",
    "figure",
    "against",
    "unit",
    "value",
    "low",
    "high",
    "within_5_percent",
];

impl Exporter for Csv {
    fn render(&self, document: &Document) -> String {
        let params = case_params(document);
        let header = FIRST
            .into_iter()
            .chain(params.iter().map(|c| c.name))
            .chain(LAST);
        let mut out = line(header.map(str::to_string));
        for section in &document.sections {
            for block in &section.blocks {
                let Some(experiment) = block.experiment else {
                    continue;
                };
                for r in &block.records {
                    let case: Vec<String> = [text(&section.heading), text(&r.experiment)]
                        .into_iter()
                        .chain(params.iter().map(|c| param(experiment, c, &r.params)))
                        .chain([
                            r.params
                                .get(PLACEMENT)
                                .map_or(String::new(), |p| text(p.name())),
                            text(&r.transport),
                        ])
                        .collect();
                    for f in figures(experiment, r) {
                        let optional = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
                        out.push_str(&line(case.iter().cloned().chain([
                            text(&f.name),
                            f.against.as_deref().map_or(String::new(), text),
                            f.unit.to_string(),
                            f.value.to_string(),
                            optional(f.low),
                            optional(f.high),
                            f.settled.map_or(String::new(), |s| s.to_string()),
                        ])));
                    }
                }
            }
        }
        out
    }
}

/// The case parameters the document's experiments declare, each once, in the order
/// they declare them.
fn case_params(document: &Document) -> Vec<CaseParam> {
    let mut out: Vec<CaseParam> = Vec::new();
    let experiments = document
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| b.experiment);
    for c in experiments.flat_map(|e| e.cases) {
        if !out.iter().any(|o| o.name == c.name) {
            out.push(*c);
        }
    }
    out
}

/// One parameter's cell: a flag the experiment declares is `true` or `false`; one
/// it does not declare, or that its record lacks, is empty.
fn param(experiment: &Description, c: &CaseParam, p: &Params) -> String {
    match p.value(c.name) {
        Some(Param::Number(n)) => n.to_string(),
        Some(Param::Text(t)) => text(t),
        Some(Param::Flag(on)) => on.to_string(),
        Some(Param::Numbers(n)) => n.iter().map(u64::to_string).collect::<Vec<_>>().join(" "),
        None if c.form == Form::Flag && experiment.cases.iter().any(|d| d.name == c.name) => {
            "false".into()
        }
        None => String::new(),
    }
}

/// One figure of one record, as the CSV and JSON formats write it.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// Its path in the result file (`rtt_ns.p50`), or `vs_reference`.
    pub name: String,
    /// For a comparison (`vs_reference`, `extra_cpu_ns`): the transport compared
    /// with, the reference or for TLS tcp.
    pub against: Option<String>,
    pub unit: &'static str,
    pub value: f64,
    /// The 95% interval, where it has one.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Whether the interval that decides is narrower than ±5% (headline and ratio).
    pub settled: Option<bool>,
}

/// A unit as the CSV and JSON formats name it.
pub fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Time => "ns",
        Unit::Rate => "per_s",
        Unit::ByteRate => "bytes_per_s",
        Unit::Count => "count",
    }
}

/// The figures of `r`: headline, ratio to the reference, CPU per operation.
pub fn figures(experiment: &Description, r: &ResultRecord) -> Vec<FigureRow> {
    let h = &r.headline;
    let mut out = vec![FigureRow {
        name: experiment.headline.name.to_string(),
        against: None,
        unit: unit_name(experiment.headline.unit),
        value: h.interval.map_or(h.spread.median, |i| i.estimate),
        low: h.interval.map(|i| i.low),
        high: h.interval.map(|i| i.high),
        settled: Some(h.settled),
    }];
    if let Some(v) = &h.vs_reference {
        out.push(FigureRow {
            name: "vs_reference".into(),
            against: Some(v.reference.clone()),
            unit: "ratio",
            value: v.ratio.estimate,
            low: Some(v.ratio.low),
            high: Some(v.ratio.high),
            settled: Some(h.settled),
        });
        if let Some(d) = v.extra_cpu_ns {
            out.push(FigureRow {
                name: "extra_cpu_ns".into(),
                against: Some(v.reference.clone()),
                unit: "ns",
                value: d.estimate,
                low: Some(d.low),
                high: Some(d.high),
                settled: None,
            });
        }
    }
    let plain = |name: String, unit: &'static str, value: Option<f64>| {
        value.map(|value| FigureRow {
            name,
            against: None,
            unit,
            value,
            low: None,
            high: None,
            settled: None,
        })
    };
    if let Some(cpu) = &r.metrics.cpu {
        for (side, counts) in [("client", Some(cpu.client)), ("server", cpu.server)] {
            let Some(c) = counts else { continue };
            out.extend(plain(format!("cpu.{side}.cpu_ns"), "ns", Some(c.cpu_ns)));
            out.extend(plain(format!("cpu.{side}.sys_ns"), "ns", c.sys_ns));
        }
        for (role, c) in &cpu.roles {
            out.extend(plain(
                format!("cpu.roles.{role}.cpu_ns"),
                "ns",
                Some(c.cpu_ns),
            ));
            out.extend(plain(format!("cpu.roles.{role}.sys_ns"), "ns", c.sys_ns));
        }
    }
    if let Some(counted) = &r.counters {
        for (side, counts) in [("client", Some(counted.client)), ("server", counted.server)] {
            let Some(c) = counts else { continue };
            for (name, value) in [
                ("context_switches", c.context_switches),
                ("migrations", c.migrations),
                ("instructions", c.instructions()),
            ] {
                out.extend(plain(format!("counters.{side}.{name}"), "count", value));
            }
        }
        if let Some(why) = &counted.why {
            for (side, account) in [
                ("client", Some(&why.client)),
                ("server", why.server.as_ref()),
            ] {
                let Some(a) = account else { continue };
                for (event, n) in &a.events {
                    out.extend(plain(format!("why.{side}.{event}"), "count", Some(*n)));
                }
                for (layer, t) in &a.layers {
                    out.push(FigureRow {
                        name: format!("why.{side}.layer.{layer}"),
                        against: None,
                        unit: "ns",
                        value: t.ns,
                        low: t.low,
                        high: t.high,
                        settled: None,
                    });
                }
            }
        }
    }
    out
}

/// A text cell: printable, guarded against formulas.
fn text(value: &str) -> String {
    let shown = printable(value);
    if shown.starts_with(['=', '+', '-', '@']) {
        format!("'{shown}")
    } else {
        shown.into_owned()
    }
}

/// One CSV record, each field quoted when it holds a comma, a quote or a line
/// break (RFC 4180), ended by CRLF.
fn line(fields: impl IntoIterator<Item = String>) -> String {
    let quoted: Vec<String> = fields
        .into_iter()
        .map(|f| {
            if f.contains([',', '"', '\r', '\n']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f
            }
        })
        .collect();
    format!("{}\r\n", quoted.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(
            line(["a".into(), "b,c".into(), "say \"hi\"".into(), "".into()]),
            "a,\"b,c\",\"say \"\"hi\"\"\",\r\n"
        );
        assert_eq!(line(["x\ny".into()]), "\"x\ny\"\r\n");
    }

    #[test]
    fn text_that_a_spreadsheet_would_run_is_kept_text() {
        for (hostile, shown) in [
            (
                "=HYPERLINK(\"http://evil\")",
                "'=HYPERLINK(\"http://evil\")",
            ),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tcmd", "\\u{9}cmd"),
            ("tcp", "tcp"),
        ] {
            assert_eq!(text(hostile), shown, "{hostile}");
        }
    }
}
