//! `sockbench report` and `sockbench compare` on committed result files: the output
//! of each format is pinned by snapshots, files that cannot be reported get one clear
//! line, and the HTML page stands alone.

mod common;

use assert_cmd::Command;
use common::{tempdir, text};
use serde_json::Value;
use std::path::Path;

const RUN: &str = "tests/fixtures/run.json";
const SOCKETS: &str = "tests/fixtures/sockets.json";
/// PostgreSQL concurrent clients at 1, 2 and 4.
const SWEEP: &str = "tests/fixtures/sweep.json";
/// A format-3 run: `sockets --quick --placement same,split --transports unix,tcp
/// --workloads connect,pingpong --sizes 64`, with CPU counts and placements.
const PLACED: &str = "tests/fixtures/placed.json";

/// sockbench run from the crate root, so file names in headings are stable.
fn sockbench(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("sockbench")
        .expect("binary built")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .assert()
}

fn stdout(args: &[&str]) -> String {
    let out = sockbench(args).success();
    text(&out.get_output().stdout)
}

/// Runs a command that must fail; returns its stderr after checking it is one line.
fn one_line_error(args: &[&str]) -> String {
    let out = sockbench(args).code(2);
    let output = out.get_output();
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"));
    assert!(output.stdout.is_empty(), "nothing rendered from a bad file");
    stderr
}

#[test]
fn markdown_report_matches_snapshot() {
    let md = stdout(&["report", RUN, "--format", "markdown"]);
    for experiment in ["sockets.pingpong", "postgres.query", "postgres.concurrent"] {
        assert!(md.contains(&format!("### {experiment} — ")), "{experiment}");
    }
    assert!(md.contains("| measurement | unix | tcp | tls |"));
    assert!(md.contains("| PostgreSQL | PostgreSQL 15"));
    insta::assert_snapshot!("report.md", md);
}

#[test]
fn html_report_matches_snapshot_and_stands_alone() {
    let tmp = tempdir();
    let path = tmp.path().join("report.html");
    let out = sockbench(&[
        "report",
        RUN,
        "--format",
        "html",
        "--output",
        path.to_str().unwrap(),
    ])
    .success();
    assert!(
        out.get_output().stdout.is_empty(),
        "--output leaves stdout empty"
    );
    let html = std::fs::read_to_string(&path).expect("report written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "no JavaScript");
    for reference in ["src=", "href=", "url(", "@import"] {
        assert!(!html.contains(reference), "fetches something: {reference}");
    }
    // The summary, a bar chart per experiment, and the charts of another kind
    // (one client count only: no line against clients).
    let experiments = 3 + 5;
    assert_eq!(html.matches("<svg").count(), 1 + experiments + 3, "charts");
    for title in [
        "Extra time per operation over unix, 95% intervals",
        "Round trip p50 against message size",
        "Total time of each timed batch against the number of queries",
        "Total time of each timed batch against the number of rows",
    ] {
        assert!(html.contains(title), "no chart {title}");
    }
    assert!(!html.to_lowercase().contains("throughput against clients"));
    insta::assert_snapshot!("report.html", html);

    let sweep = stdout(&["report", SWEEP, "--format", "html"]);
    assert_eq!(
        sweep.matches("<svg").count(),
        3,
        "summary, bars and the line"
    );
    assert!(sweep.contains("Throughput against clients"));
}

#[test]
fn table_report_shows_every_experiment_of_every_file() {
    let out = stdout(&["report", RUN, SOCKETS]);
    assert!(out.contains(&format!("{RUN} — ")) && out.contains(&format!("{SOCKETS} — ")));
    assert_eq!(out.matches("sockets.connect — ").count(), 2);
    assert_eq!(out.matches("postgres.auth — ").count(), 1);
    assert!(
        out.contains("A SELECT 1 round trip: unix "),
        "verdict:\n{out}"
    );
    // A format-2 file gets its intervals from its trials when it is loaded.
    assert!(out.contains("vs unix, 95% interval"), "{out}");
    assert!(!out.contains("differences under 10%"), "{out}");
    insta::assert_snapshot!("report.txt", out);
}

#[test]
fn compare_puts_both_runs_side_by_side() {
    let md = stdout(&["compare", RUN, SOCKETS, "--format", "markdown"]);
    assert!(md.contains("| fact | System A | System B |"));
    assert!(md.contains("| transport | A | B | B / A, 95% interval | runs differ? |"));
    // Figures B lacks show a dash and no ratio.
    assert!(md.contains("| unix | 110 µs | - | - | - |"), "{md}");
    insta::assert_snapshot!("compare.md", md);

    let same = stdout(&["compare", RUN, RUN]);
    let ratios: Vec<&str> = same
        .lines()
        .map(|l| {
            l.trim()
                .trim_end_matches('│')
                .split('┆')
                .collect::<Vec<_>>()
        })
        .filter(|cells| cells.len() == 5) // transport, A, B, B / A, differ?
        .filter(|cells| cells[3].trim().starts_with(|c: char| c.is_ascii_digit()))
        .map(|cells| cells[4].trim())
        .collect();
    assert!(ratios.len() > 20, "{same}");
    assert!(
        ratios.iter().all(|r| *r == "no clear difference"),
        "a run against itself: {same}"
    );
    assert!(same.contains("1.00 ["), "{same}");

    let html = stdout(&["compare", RUN, SOCKETS, "--format", "html"]);
    assert!(html.contains("<th>System A</th><th>System B</th>"));
}

/// A copy of the run fixture changed by `edit`, written into `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(run_path()).unwrap()).unwrap();
    edit(&mut file);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn run_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN)
}

#[test]
fn files_that_cannot_be_reported_get_one_clear_line() {
    let tmp = tempdir();
    let dir = tmp.path();

    // The format before system facts and the commit were added.
    let older = edited(dir, "older.json", |f| {
        f["schema_version"] = 1.into();
        f.as_object_mut().unwrap().remove("sockbench_commit");
    });
    let e = one_line_error(&["report", &older]);
    assert!(
        e.contains("result format 1") && e.contains("reads formats 2 to 3"),
        "{e}"
    );

    let truncated = dir.join("truncated.json");
    let full = std::fs::read_to_string(run_path()).unwrap();
    std::fs::write(&truncated, &full[..full.len() / 2]).unwrap();
    let e = one_line_error(&["report", truncated.to_str().unwrap()]);
    assert!(e.contains("is not JSON"), "{e}");

    let not_ours = dir.join("other.json");
    std::fs::write(&not_ours, r#"{"name": "something else"}"#).unwrap();
    let e = one_line_error(&["report", not_ours.to_str().unwrap(), "--format", "html"]);
    assert!(e.contains("not a sockbench result file"), "{e}");

    let missing_field = edited(dir, "missing.json", |f| {
        f["results"][0].as_object_mut().unwrap().remove("metrics");
    });
    let e = one_line_error(&["compare", RUN, &missing_field]);
    assert!(
        e.contains("not a valid sockbench result file") && e.contains("metrics"),
        "{e}"
    );

    let unknown = edited(dir, "unknown.json", |f| {
        f["results"][0]["experiment"] = "sockets.teleport".into();
    });
    let e = one_line_error(&["report", &unknown]);
    assert!(e.contains("sockets.teleport"), "{e}");

    let e = one_line_error(&["report", "no/such/file.json"]);
    assert!(e.contains("cannot read no/such/file.json"), "{e}");

    let e = one_line_error(&["report", RUN, "--output", "/proc/not-writable.md"]);
    assert!(e.contains("--output"), "{e}");
}

#[test]
fn what_a_result_file_brings_is_shown_not_obeyed() {
    let tmp = tempdir();
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(SOCKETS).unwrap()).unwrap();
    let hostile = "tcp\u{1b}]0;owned\u{7}\u{1b}[2J<script>alert(1)</script>";
    for record in file["results"].as_array_mut().unwrap() {
        if record["transport"] == "tcp" {
            record["transport"] = Value::from(hostile);
        }
    }
    file["system"]["kernel"] = Value::from("6.1\u{1b}[31m<img src=x onerror=alert(1)>");
    let path = tmp.path().join("hostile.json");
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    let path = path.to_str().unwrap();
    for format in ["table", "markdown", "html"] {
        let shown = stdout(&["report", path, "--format", format]);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{format}: raw escape"
        );
        if format != "table" {
            assert!(
                !shown.contains("<script>") && !shown.contains("<img"),
                "{format}: raw HTML"
            );
        }
        assert!(shown.contains("owned"), "{format}: the name is still shown");
    }
}

#[test]
fn a_placed_run_shows_intervals_cpu_rows_and_a_verdict_per_placement() {
    let out = stdout(&["report", PLACED]);
    for wanted in [
        "sockets.pingpong — request/response round trips on one connection, median of",
        "rounds, on one CPU",
        "rounds, on two CPUs",
        "vs unix, 95% interval",
        "CPU per op, client (kernel share)",
        "CPU per op, server (kernel share)",
        "switches / migrations per op, server",
        "from getrusage and /proc",
        "A 64 B socket round trip (on one CPU): unix ",
        "A 64 B socket round trip (on two CPUs): unix ",
        "host at start",
    ] {
        assert!(out.contains(wanted), "no '{wanted}' in:\n{out}");
    }
    assert_eq!(out.matches("sockets.connect — ").count(), 2, "{out}");
    let md = stdout(&["report", PLACED, "--format", "markdown"]);
    assert!(
        md.contains("| ↳ CPU per op, client (kernel share) | "),
        "{md}"
    );
    let html = stdout(&["report", PLACED, "--format", "html"]);
    assert!(html.contains("vs unix, 95% interval") && html.contains("on two CPUs"));
    // The same placement compares with itself, and differs from nothing.
    let same = stdout(&["compare", PLACED, PLACED]);
    assert!(
        same.contains("on one CPU") && same.contains("on two CPUs"),
        "{same}"
    );
    assert!(
        !same.contains("B higher") && !same.contains("B lower"),
        "{same}"
    );
}

/// Pipes of a Markdown table line that end a cell (not escaped as `\|`).
fn cell_bars(line: &str) -> usize {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .count()
}

#[test]
fn markdown_and_html_from_a_hostile_file_hold_no_links_images_code_or_tags() {
    let tmp = tempdir();
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(SOCKETS).unwrap()).unwrap();
    let transport = "[x](http://evil) ![i](http://evil/i.png) `code` a|b <b>bold</b>";
    for record in file["results"].as_array_mut().unwrap() {
        if record["transport"] == "tcp" {
            record["transport"] = Value::from(transport);
        }
    }
    file["system"]["cpu_model"] = Value::from("![i](http://evil/i.png) <img src=x> www.evil.com");
    file["system"]["kernel"] = Value::from("[k]: http://evil/ref");
    let path = tmp.path().join("links.json");
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    let path = path.to_str().unwrap();

    let md = stdout(&["report", path, "--format", "markdown"]);
    for markup in [
        "[x](",
        "![i](",
        "`code`",
        "<b>",
        "<img",
        "http://evil",
        "www.evil",
        "[k]:",
    ] {
        assert!(!md.contains(markup), "markdown holds {markup}:\n{md}");
    }
    assert!(
        md.contains("[x\\](http\\://evil)"),
        "the name is still shown"
    );
    for table in md.split("\n\n").filter(|b| b.starts_with("| ")) {
        let bars: Vec<usize> = table.lines().map(cell_bars).collect();
        assert!(
            bars.iter().all(|&n| n == bars[0]),
            "a '|' made a cell:\n{table}"
        );
    }

    let html = stdout(&["report", path, "--format", "html"]);
    for markup in ["<b>", "<img", "href="] {
        assert!(!html.contains(markup), "html holds {markup}");
    }
    assert!(
        html.contains("&lt;b&gt;bold&lt;/b&gt;"),
        "the name is still shown"
    );
}

#[test]
fn zero_rates_crossed_ranges_and_repeated_keys_are_refused() {
    let tmp = tempdir();
    let dir = tmp.path();
    let zero = edited(dir, "zero.json", |f| {
        let record = &mut f["results"][0];
        let metric = record["headline"]["metric"].as_str().unwrap().to_string();
        record["metrics"][&metric] = 0.0.into();
    });
    let e = one_line_error(&["report", &zero]);
    assert!(
        e.contains("zero.json") && e.contains("results[0].metrics."),
        "{e}"
    );
    assert!(e.contains("not a positive figure"), "{e}");

    let subnormal = edited(dir, "subnormal.json", |f| {
        f["results"][0]["headline"]["spread"]["min"] = 5e-324.into();
    });
    let e = one_line_error(&["report", &subnormal]);
    assert!(e.contains("results[0].headline.spread.min"), "{e}");

    let crossed = edited(dir, "crossed.json", |f| {
        let spread = &mut f["results"][0]["headline"]["spread"];
        let (min, max) = (spread["min"].clone(), spread["max"].clone());
        spread["min"] = max;
        spread["max"] = min;
    });
    let e = one_line_error(&["compare", RUN, &crossed]);
    assert!(e.contains("crossed.json"), "{e}");
    assert!(
        e.contains("results[0].headline.spread.min is") && e.contains("above"),
        "{e}"
    );

    let twice = dir.join("twice.json");
    let full = std::fs::read_to_string(run_path()).unwrap();
    let at = full.rfind("\"results\"").unwrap();
    std::fs::write(
        &twice,
        format!("{}\"results\": [],\n  {}", &full[..at], &full[at..]),
    )
    .unwrap();
    let e = one_line_error(&["report", twice.to_str().unwrap()]);
    assert!(
        e.contains("twice.json holds the field \"results\" twice"),
        "{e}"
    );
}
