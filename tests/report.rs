//! `sockbench report` and `sockbench compare` on committed result files: the output
//! of each format is pinned by snapshots, the HTML page stands alone, and the
//! tables show what was measured. Files that cannot be reported, or that carry
//! markup and escapes, are in `report_hostile.rs`.

mod common;

use common::fixtures::{edited, sockbench, sockbench_at, stdout, PLACED, RUN, SOCKETS, SWEEP};
use common::{tempdir, text};

/// Standard output on a screen wide enough that no row wraps, for tests that read
/// whole rows.
fn wide(args: &[&str]) -> String {
    let out = sockbench_at(args, Some("250")).success();
    text(&out.get_output().stdout)
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
    assert_eq!(
        html.matches("<figure>").count(),
        1 + experiments + 3,
        "charts"
    );
    for title in [
        "Extra time per operation over unix (TLS over tcp), 95% intervals",
        "Round trip by message size",
        "New connections per second (connect, greeting, close)",
        "Time per query (SELECT 1 on a kept connection)",
        "Total time of each timed batch against the number of queries",
        "Total time of each timed batch against the number of rows",
    ] {
        assert!(html.contains(title), "no chart {title}");
    }
    assert!(!html.to_lowercase().contains("throughput against clients"));
    insta::assert_snapshot!("report.html", html);

    let sweep = stdout(&["report", SWEEP, "--format", "html"]);
    assert_eq!(
        sweep.matches("<figure>").count(),
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
    // A format-2 file gets its intervals from its trials when it is loaded, TLS
    // against tcp as everywhere.
    assert!(out.contains("vs unix (tls:"), "{out}");
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
    // ×1.00 everywhere, with its interval where the rounds bound one.
    assert!(
        ratios
            .iter()
            .all(|r| r.starts_with("1.00 [") || r.starts_with("1.00 (6 rounds in all: too few")),
        "{same}"
    );
    assert!(ratios.iter().any(|r| r.starts_with("1.00 [")), "{same}");
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
        same.contains(
            "the gap to the reference (for TLS, to tcp), measured in the same rounds, \
             changed in 0 of "
        ),
        "{same}"
    );

    let html = stdout(&["compare", RUN, SOCKETS, "--format", "html"]);
    assert!(html.contains("<th>A</th><th>B</th>"));
}

#[test]
fn a_placed_run_shows_intervals_cpu_rows_and_a_verdict_per_placement() {
    let out = wide(&["report", PLACED]);
    for wanted in [
        "sockets.pingpong — request/response round trips on one connection, median of",
        "rounds, on one CPU",
        "rounds, on two CPUs",
        "vs unix, 95% CI",
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
    assert!(html.contains("vs unix, 95% CI") && html.contains("on two CPUs"));
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
    // tls takes 24 times tcp's time per connection (TLS is compared with tcp):
    // a factor, never +2329%; the rate itself stands alone.
    let connect = table_of(&out, "sockets.connect");
    assert_eq!(cells_of(connect, "connections/s")[2], "615/s");
    assert!(
        cells_of(connect, "vs unix (tls: tcp), 95% CI")[2].starts_with("24× ["),
        "{connect}"
    );
    let pingpong = table_of(&out, "sockets.pingpong");
    assert_eq!(
        cells_of(pingpong, "64 KiB: round trip p50"),
        ["67.7 µs", "104 µs", "180 µs"]
    );
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("24× twenty-four times the time"),
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

/// A comparison not settled for want of rounds says so once in every format: the
/// datagram line's `not settled (…)` is never wrapped around the table cell's own
/// `not settled (3 rounds)`.
#[test]
fn not_settled_is_said_once_in_every_format() {
    let tmp = tempdir();
    // The sockets fixture's TLS round trips as UDP's, each round far from the last,
    // so UDP against TCP is too wide to print: the datagram line compares them.
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SOCKETS).unwrap()).unwrap();
    for r in file["results"].as_array_mut().unwrap() {
        if r["experiment"] == "sockets.pingpong" && r["transport"] == "tls" {
            r["transport"] = "udp".into();
            let trials = r["trials"].as_array_mut().unwrap();
            for (trial, by) in trials.iter_mut().zip([1.0, 30.0, 0.05]) {
                let rtt = &mut trial["rtt_ns"];
                for part in ["mean", "p50", "p99", "p999"] {
                    rtt[part] = (rtt[part].as_f64().unwrap() * by).into();
                }
            }
        }
    }
    let path = tmp.path().join("udp.json");
    std::fs::write(&path, file.to_string()).unwrap();
    let path = path.to_str().unwrap();
    for format in ["table", "markdown", "html", "csv", "json"] {
        let out = wide(&["report", path, "--format", format]);
        let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            !words.contains("not settled (not settled"),
            "{format}: {words}"
        );
        if format != "csv" {
            assert!(
                words.contains("udp against tcp: not settled (3 rounds"),
                "{format}: the datagram line is there: {words}"
            );
        }
    }
}
