//! The verdict: a few lines in plain words on what each transport costs here for
//! the work people ask about (a small query, a new connection, a small round trip,
//! many clients), and whether the difference survives bulk work (rows, bytes).
//!
//! Every line is built from the records present; a run without PostgreSQL simply
//! has fewer lines.

use crate::output::columns::{extra_over_fastest, with_extra};
use crate::output::format::{bytes_rate, duration_ns, rate};
use crate::results::ResultRecord;
use crate::units::format_size;

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

/// The verdict lines for the records of one run.
pub fn lines(records: &[ResultRecord]) -> Vec<Line> {
    let of = |experiment: &str| -> Vec<&ResultRecord> {
        records
            .iter()
            .filter(|r| r.experiment == experiment)
            .collect()
    };
    let mut out = Vec::new();
    let mut push = |what: String, rs: Vec<&ResultRecord>, get: Getter, bulk| {
        if let Some(line) = line(what, &rs, get, bulk) {
            out.push(line);
        }
    };
    push(
        "a SELECT 1 round trip".into(),
        of("postgres.query"),
        Getter::Ns(|r| r.metrics.per_query_ns),
        false,
    );
    push(
        "a new connection (connect, SELECT 1, close)".into(),
        of("postgres.connect"),
        Getter::Ns(|r| r.metrics.connect_ns.map(|p| p.p50)),
        false,
    );
    let pingpong = of("sockets.pingpong");
    if let Some(size) = pingpong.iter().filter_map(|r| r.params.size).min() {
        push(
            format!("a {} socket round trip", format_size(size)),
            pingpong
                .into_iter()
                .filter(|r| r.params.size == Some(size))
                .collect(),
            Getter::Ns(|r| r.metrics.rtt_ns.map(|p| p.p50)),
            false,
        );
    }
    let concurrent = of("postgres.concurrent");
    if let Some(clients) = concurrent.iter().filter_map(|r| r.params.clients).max() {
        push(
            format!("{clients} clients running SELECT 1"),
            concurrent
                .into_iter()
                .filter(|r| r.params.clients == Some(clients))
                .collect(),
            Getter::Rate(|r| r.metrics.tps),
            false,
        );
    }
    push(
        "a row of a bulk result".into(),
        of("postgres.rows"),
        Getter::Ns(|r| r.metrics.per_row_ns),
        true,
    );
    let stream = of("sockets.stream");
    if let Some(size) = stream.iter().filter_map(|r| r.params.write_size).max() {
        push(
            format!("bulk bytes in {} writes", format_size(size)),
            stream
                .into_iter()
                .filter(|r| r.params.write_size == Some(size))
                .collect(),
            Getter::Bytes(|r| r.metrics.bytes_per_s),
            true,
        );
    }
    out
}

/// Reads a figure and says how to print it; times compare lower-is-better, rates
/// higher-is-better.
#[derive(Clone, Copy)]
enum Getter {
    Ns(Read),
    Rate(Read),
    Bytes(Read),
}

/// Reads one figure of a record.
type Read = fn(&ResultRecord) -> Option<f64>;

fn line(what: String, rs: &[&ResultRecord], get: Getter, bulk: bool) -> Option<Line> {
    let lower = matches!(get, Getter::Ns(_));
    let (read, format): (Read, fn(f64) -> String) = match get {
        Getter::Ns(f) => (f, duration_ns),
        Getter::Rate(f) => (f, rate),
        Getter::Bytes(f) => (f, bytes_rate),
    };
    let values: Vec<(&str, f64)> = rs
        .iter()
        .filter_map(|r| Some((r.transport.as_str(), read(r).filter(|v| *v > 0.0)?)))
        .collect();
    if values.len() < 2 {
        return None;
    }
    let figures: Vec<Option<f64>> = values.iter().map(|(_, v)| Some(*v)).collect();
    let extras = extra_over_fastest(&figures, !lower);
    let widest = extras.iter().flatten().copied().fold(0.0, f64::max);
    let cells = values
        .iter()
        .zip(extras)
        .map(|((label, v), extra)| with_extra(format!("{label} {}", format(*v)), extra))
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
