//! `sockbench report` and `sockbench compare` on result files that are broken or
//! hostile: a file that cannot be reported gets one clear line and nothing
//! rendered, and what a file brings (escapes, HTML, Markdown links) is shown as
//! text, never obeyed.

mod common;

use common::fixtures::{edited, run_path, sockbench, stdout, RUN, SOCKETS};
use common::{tempdir, text};
use serde_json::Value;

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
        e.contains("result format 1") && e.contains("reads formats 2 to 6"),
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

/// A real run of the messages workload over unix and udp, one round of 64-byte
/// messages, to edit; and the index of each transport's record.
fn messages_run(dir: &std::path::Path) -> (Value, usize, usize) {
    let json = dir.join("messages.json");
    let out = common::run(
        dir,
        &[
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--transports",
            "unix,udp",
            "--workloads",
            "messages",
            "--message-sizes",
            "64",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let at = |t: &str| {
        let records = file["results"].as_array().unwrap();
        records.iter().position(|r| r["transport"] == t).unwrap()
    };
    let (unix, udp) = (at("unix"), at("udp"));
    (file, unix, udp)
}

/// `file` changed by `edit`, written into `dir` as `name`.
fn written(
    dir: &std::path::Path,
    name: &str,
    file: &Value,
    edit: impl FnOnce(&mut Value),
) -> String {
    let mut file = file.clone();
    edit(&mut file);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn messages_figures_no_run_can_give_are_refused() {
    let tmp = tempdir();
    let dir = tmp.path();
    let (file, unix, udp) = messages_run(dir);
    let count = |r: usize, key: &str| file["results"][r]["trials"][0][key].as_u64().unwrap();
    let sent = count(udp, "sent");

    let lost = written(dir, "lost.json", &file, |f| {
        f["results"][udp]["trials"][0]["lost"] = (sent + 1).into();
    });
    let e = one_line_error(&["report", &lost]);
    assert!(e.contains("lost.json"), "{e}");
    assert!(
        e.contains(&format!(
            "results[{udp}].trials[0].lost is {}, more than",
            sent + 1
        )),
        "{e}"
    );

    let received = written(dir, "received.json", &file, |f| {
        f["results"][udp]["trials"][0]["received"] = (sent + 1).into();
    });
    let e = one_line_error(&["compare", &lost, &received]);
    assert!(
        e.contains("lost.json"),
        "the first file is refused first: {e}"
    );
    let e = one_line_error(&["report", &received]);
    assert!(
        e.contains("received.json")
            && e.contains(&format!("results[{udp}].trials[0].received is"))
            && e.contains("more than"),
        "{e}"
    );

    // Lost and received that do not add up to what was sent.
    let unix_sent = count(unix, "sent");
    assert!(unix_sent > 0);
    let sum = written(dir, "sum.json", &file, |f| {
        let trial = &mut f["results"][unix]["trials"][0];
        trial["lost"] = (count(unix, "lost") + 1).into();
    });
    let e = one_line_error(&["report", &sum, "--format", "csv"]);
    assert!(
        e.contains("sum.json")
            && e.contains(&format!("results[{unix}].trials[0].lost is"))
            && e.contains("not sent less received"),
        "{e}"
    );

    let waited = written(dir, "waited.json", &file, |f| {
        f["results"][unix]["metrics"]["waited_share"] = 5.0.into();
    });
    let e = one_line_error(&["report", &waited]);
    assert!(
        e.contains("waited.json")
            && e.contains(&format!("results[{unix}].metrics.waited_share is 5"))
            && e.contains("a share"),
        "{e}"
    );

    let listed = written(dir, "listed.json", &file, |f| {
        f["results"][udp]["trials"][0]["sent"] = serde_json::json!([sent, 1]);
    });
    let e = one_line_error(&["report", &listed]);
    assert!(
        e.contains(&format!(
            "results[{udp}].trials[0].sent is a list, not a count"
        )),
        "{e}"
    );

    // The run as written is reported.
    let as_written = written(dir, "as_written.json", &file, |_| {});
    stdout(&["report", &as_written]);
}

#[test]
fn a_list_where_a_map_belongs_is_refused() {
    let tmp = tempdir();
    let dir = tmp.path();
    // serde reads a struct from a list of its fields: this was a spread of 1 to 3.
    let spread = edited(dir, "spread.json", |f| {
        f["results"][0]["headline"]["spread"] = serde_json::json!([2.0, 1.0, 3.0]);
    });
    let e = one_line_error(&["report", &spread]);
    assert!(
        e.contains("spread.json holds a list where a map belongs: results[0].headline.spread"),
        "{e}"
    );

    // Percentiles given as a list of four numbers.
    let percentiles = edited(dir, "percentiles.json", |f| {
        let record = f["results"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["metrics"].get("rtt_ns").is_some())
            .unwrap();
        record["metrics"]["rtt_ns"] = serde_json::json!([1.0, 2.0, 3.0, 4.0]);
    });
    let e = one_line_error(&["report", &percentiles]);
    assert!(
        e.contains("percentiles.json")
            && e.contains(".metrics.rtt_ns is a list, where a map belongs"),
        "{e}"
    );
}

#[test]
fn two_records_of_one_case_are_refused() {
    let tmp = tempdir();
    let twice = edited(tmp.path(), "twice.json", |f| {
        let results = f["results"].as_array_mut().unwrap();
        let mut again = results[0].clone();
        // The same case and transport, measured for longer and faster.
        let metric = again["headline"]["metric"].as_str().unwrap().to_string();
        let value = again["metrics"][&metric].as_f64().unwrap();
        again["metrics"][&metric] = (value * 2.0).into();
        results.push(again);
    });
    let last = serde_json::from_str::<Value>(&std::fs::read_to_string(&twice).unwrap()).unwrap()
        ["results"]
        .as_array()
        .unwrap()
        .len()
        - 1;
    for command in ["report", "compare"] {
        let args = match command {
            "report" => vec!["report", &twice],
            _ => vec!["compare", RUN, &twice],
        };
        let e = one_line_error(&args);
        assert!(
            e.contains(&format!(
                "twice.json holds two records of one case: results[0] and results[{last}]"
            )),
            "{e}"
        );
    }
}
