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
    sockbench_at(args, None)
}

/// The same on a screen `columns` wide (80 in a pipe without).
fn sockbench_at(args: &[&str], columns: Option<&str>) -> assert_cmd::assert::Assert {
    let mut cmd = Command::cargo_bin("sockbench").expect("binary built");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("COLUMNS");
    if let Some(columns) = columns {
        cmd.env("COLUMNS", columns);
    }
    cmd.args(args).assert()
}

fn stdout(args: &[&str]) -> String {
    let out = sockbench(args).success();
    text(&out.get_output().stdout)
}

/// Standard output on a screen wide enough that no row wraps, for tests that read
/// whole rows.
fn wide(args: &[&str]) -> String {
    let out = sockbench_at(args, Some("250")).success();
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
        "Round trip by message size",
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
    assert!(sweep.contains("Transactions per second by number of clients"));
}

#[test]
fn table_report_shows_every_experiment_of_every_file() {
    let out = stdout(&["report", RUN, SOCKETS]);
    assert!(out.contains(&format!("{RUN} — ")) && out.contains(&format!("{SOCKETS} — ")));
    assert_eq!(out.matches("sockets.connect — ").count(), 2);
    assert_eq!(out.matches("postgres.auth — ").count(), 1);
    assert!(
        out.contains("Short queries (SELECT 1 on a kept connection): not settled"),
        "verdict:\n{out}"
    );
    // A format-2 file gets its intervals from its trials when it is loaded.
    assert!(out.contains("time/op vs"), "{out}");
    assert!(!out.contains("differences under 10%"), "{out}");
    insta::assert_snapshot!("report.txt", out);
}

#[test]
fn compare_puts_both_runs_side_by_side() {
    let md = stdout(&["compare", RUN, SOCKETS, "--format", "markdown"]);
    assert!(md.contains("| fact | A | B |"));
    assert!(md.contains("| case | A | B |"));
    assert!(md.contains("| ↳ time, vs A |  | not settled: ×"), "{md}");
    assert!(md.contains("| ↳ vs unix, change vs A |  | "), "{md}");
    // What B lacks is one line each, not a table of dashes.
    assert!(md.contains("- postgres.query: only in A\n"), "{md}");
    assert!(!md.contains("### postgres.query"), "{md}");
    assert!(!md.contains("| - |"), "{md}");
    insta::assert_snapshot!("compare.md", md);

    // A run against itself: every ratio is 1 and nothing is faster or slower.
    // Wide enough for one line per row, whose cells are read below.
    let same = text(
        &sockbench_at(&["compare", RUN, RUN], Some("200"))
            .success()
            .get_output()
            .stdout,
    );
    let ratios: Vec<&str> = same
        .lines()
        .filter(|l| l.contains(": ×"))
        .map(|l| l.split(": ×").nth(1).unwrap())
        .collect();
    assert!(ratios.len() > 40, "{same}");
    assert!(ratios.iter().all(|r| r.starts_with("1.00 [")), "{same}");
    for word in [
        "B faster:",
        "B slower:",
        "relatively faster:",
        "relatively slower:",
    ] {
        assert!(!same.contains(word), "a run against itself: {same}");
    }
    assert!(same.contains("times faster in 0, slower in 0,"), "{same}");
    assert!(
        same.contains("the gap to the reference changed in 0 of "),
        "{same}"
    );

    let html = stdout(&["compare", RUN, SOCKETS, "--format", "html"]);
    assert!(html.contains("<th>A</th><th>B</th>"));
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
    let out = wide(&["report", PLACED]);
    for wanted in [
        "sockets.pingpong — request/response round trips on one connection, median of",
        "rounds, on one CPU",
        "rounds, on two CPUs",
        "time/op vs unix (95% CI)",
        "CPU/op, client (kernel %)",
        "CPU/op, server (kernel %)",
        "switches/migrations per op, server",
        "from getrusage and /proc",
        "Raw round trips (64 B messages, raw socket, on one CPU): use the Unix socket",
        "Raw round trips (64 B messages, raw socket, on two CPUs): use the Unix socket",
        "host at start",
    ] {
        assert!(out.contains(wanted), "no '{wanted}' in:\n{out}");
    }
    assert_eq!(out.matches("sockets.connect — ").count(), 2, "{out}");
    let md = stdout(&["report", PLACED, "--format", "markdown"]);
    assert!(md.contains("| ↳ CPU/op, client (kernel %) | "), "{md}");
    let html = stdout(&["report", PLACED, "--format", "html"]);
    assert!(html.contains("time/op vs unix (95% CI)") && html.contains("on two CPUs"));
    // The same placement compares with itself, and differs from nothing.
    let same = stdout(&["compare", PLACED, PLACED]);
    assert!(
        same.contains("on one CPU") && same.contains("on two CPUs"),
        "{same}"
    );
    assert!(
        !same.contains("B faster") && !same.contains("B slower"),
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

/// The table rows of `experiment` in a terminal report: from its title to the
/// blank line after it.
fn table_of<'o>(out: &'o str, experiment: &str) -> &'o str {
    let start = out
        .find(&format!("\n{experiment} — "))
        .unwrap_or_else(|| panic!("no {experiment} in:\n{out}"));
    let end = out[start + 1..]
        .find("\n\n")
        .map_or(out.len(), |e| start + 1 + e);
    &out[start..end]
}

/// The cells of the row whose label starts with `label`, split at the
/// column separators.
fn cells_of(table: &str, label: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.trim_start_matches(['│', ' ']).starts_with(label))
        .unwrap_or_else(|| panic!("no row {label} in:\n{table}"));
    line.trim_matches(['│', ' '])
        .split('┆')
        .skip(1)
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn every_relative_figure_is_time_per_operation_against_the_reference() {
    let out = wide(&["report", RUN, SOCKETS, SWEEP, PLACED]);
    // No second percentage, against the fastest column, beside a figure.
    for line in out.lines().filter(|l| l.starts_with('│')) {
        for unit in ["s (+", "s (-", "s (−"] {
            assert!(!line.contains(unit), "a figure with a percentage: {line}");
        }
    }
    // tls takes 24 times unix's time per connection: a factor, never +2329%;
    // the rate itself stands alone.
    let connect = table_of(&out, "sockets.connect");
    assert_eq!(cells_of(connect, "connections/s")[2], "615/s");
    assert!(
        cells_of(connect, "time/op vs unix (95% CI)")[2].starts_with("24× ["),
        "{connect}"
    );
    let pingpong = table_of(&out, "sockets.pingpong");
    assert_eq!(
        cells_of(pingpong, "64 KiB: round trip p50"),
        ["67.7 µs", "104 µs", "180 µs"]
    );
    assert!(
        out.contains("24× twenty-four times the time"),
        "the legend says so"
    );
}

#[test]
fn connection_phases_and_differences_show_only_what_was_measured() {
    let out = wide(&["report", RUN]);
    let connect = table_of(&out, "postgres.connect");
    assert!(
        connect.contains("postgres.connect — connect, SELECT 1, close; trust authentication"),
        "{connect}"
    );
    assert_eq!(
        cells_of(connect, "phase: TLS handshake"),
        ["-", "-", "3.50 ms"]
    );
    assert!(!connect.contains("0.00 ns"), "{connect}");
    let tls = cells_of(connect, "TLS's extra cost (tls − tcp)");
    assert_eq!(tls[..2], ["-", "-"]);
    assert!(tls[2].ends_with(" ms") && tls[2].contains(" ["), "{tls:?}");
    assert!(connect.contains("the backend starts during the TLS handshake"));

    // Ranges over rounds that hold zero are not printed as negative times.
    let query = table_of(&out, "postgres.query");
    assert_eq!(
        cells_of(query, "fixed cost (intercept)"),
        ["below resolution"; 3]
    );
    let rows = table_of(&out, "postgres.rows");
    assert_eq!(
        cells_of(rows, "fixed cost (intercept)"),
        ["3.03 ms", "below resolution", "below resolution"]
    );
    let auth = table_of(&out, "postgres.auth");
    assert_eq!(
        cells_of(auth, "md5: cost over trust"),
        ["below resolution"; 3]
    );
    assert_eq!(
        cells_of(auth, "peer: cost over trust")[0],
        "below resolution"
    );
    assert!(!out.contains("−593") && !out.contains("−145 µs"), "{out}");
    for line in out.lines().filter(|l| l.starts_with('│')) {
        for cell in line.trim_matches(['│', ' ']).split('┆').map(str::trim) {
            let time = [" ns", " µs", " ms"].iter().any(|u| cell.ends_with(u));
            assert!(!(cell.starts_with('−') && time), "a negative time: {line}");
        }
    }
    assert!(
        out.contains("below resolution: a difference"),
        "the legend explains it"
    );
}

#[test]
fn a_connect_table_of_your_server_does_not_claim_trust() {
    let tmp = tempdir();
    // A --url server: sockbench sets no method there and records none.
    let url = edited(tmp.path(), "url.json", |f| {
        for r in f["results"].as_array_mut().unwrap() {
            if r["experiment"] == "postgres.connect" {
                r["params"].as_object_mut().unwrap().remove("auth_method");
                r["server"]["throwaway"] = false.into();
            }
        }
    });
    let out = wide(&["report", &url]);
    let connect = table_of(&out, "postgres.connect");
    assert!(
        connect.contains("close; authentication of your server, median of 3 rounds"),
        "{connect}"
    );
    assert!(!connect.contains("trust"), "{connect}");
}
