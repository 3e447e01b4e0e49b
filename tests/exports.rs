//! `report --format csv` and `--format json` carry the numbers (values, units,
//! intervals) rather than text for people; `report DIR` reads every result file in
//! a directory.

mod common;

use common::fixtures::{sockbench, stdout, PLACED, RUN, SOCKETS};
use common::{parse_csv, tempdir, text};
use serde_json::Value;
use std::path::Path;

/// The index of the column named `name` in a CSV's header.
fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

#[test]
fn csv_has_a_row_per_record_and_figure() {
    let csv = stdout(&["report", RUN, "--format", "csv"]);
    let rows = parse_csv(&csv);
    let header = &rows[0];
    // The case parameters the report's experiments declare, each in its column,
    // between the fixed columns.
    assert_eq!(header[..2].join(","), "run,experiment");
    assert_eq!(
        header[header.len() - 9..].join(","),
        "placement,transport,figure,against,unit,value,low,high,within_5_percent"
    );
    for param in [
        "size",
        "write_size",
        "clients",
        "auth_method",
        "connect_per_transaction",
    ] {
        col(header, param);
    }
    assert!(
        !header.iter().any(|h| h == "duration_ms" || h == "counts"),
        "budgets are not case parameters: {header:?}"
    );
    assert!(
        rows.iter().all(|r| r.len() == header.len()),
        "every row as long as the header"
    );
    let [experiment, transport, figure, against, unit, value, low, high, settled] = [
        "experiment",
        "transport",
        "figure",
        "against",
        "unit",
        "value",
        "low",
        "high",
        "within_5_percent",
    ]
    .map(|c| col(header, c));
    let [size, write_size, clients, auth, per_tx] = [
        "size",
        "write_size",
        "clients",
        "auth_method",
        "connect_per_transaction",
    ]
    .map(|c| col(header, c));
    let find = |e: &str, t: &str, f: &str, case: &dyn Fn(&[String]) -> bool| {
        rows.iter()
            .find(|r| r[experiment] == e && r[transport] == t && r[figure] == f && case(r))
            .unwrap_or_else(|| panic!("no {e} {t} {f}:\n{csv}"))
    };
    // pingpong, tcp, 64 B: its round trip with its interval, and its ratio to unix.
    let rtt = find("sockets.pingpong", "tcp", "rtt_ns.p50", &|r| {
        r[size] == "64"
    });
    assert_eq!(rtt[unit], "ns");
    let (v, lo, hi): (f64, f64, f64) = (
        rtt[value].parse().unwrap(),
        rtt[low].parse().unwrap(),
        rtt[high].parse().unwrap(),
    );
    assert!(lo < v && v < hi && v > 1e4, "{rtt:?}");
    assert_eq!(rtt[settled], "false");
    let ratio = find("sockets.pingpong", "tcp", "vs_reference", &|r| {
        r[size] == "64"
    });
    assert_eq!(ratio[unit], "ratio");
    assert_eq!(ratio[against], "unix");
    let r: f64 = ratio[value].parse().unwrap();
    assert!((1.0..2.0).contains(&r), "{ratio:?}");
    // TLS is compared with tcp, as everywhere, and the row says so.
    let tls = find("sockets.pingpong", "tls", "vs_reference", &|r| {
        r[size] == "64"
    });
    assert_eq!(tls[against], "tcp");
    assert_eq!(rtt[against], "", "a figure that compares nothing");
    // Case parameters in their own columns; the reference has no ratio.
    let scram = find("postgres.auth", "tcp", "connect_ns.p50", &|r| {
        r[auth] == "scram-sha-256"
    });
    assert_eq!([&scram[write_size], &scram[clients]], ["", ""]);
    assert!(!rows
        .iter()
        .any(|r| r[transport] == "unix" && r[figure] == "vs_reference"));
    let tps = find("postgres.concurrent", "tls", "tps", &|r| r[clients] == "10");
    assert_eq!(
        tps[per_tx], "false",
        "a flag its experiment declares is written when off"
    );
    // The run column names the file each row came from.
    assert!(rows[1..].iter().all(|r| r[0].starts_with(RUN)));
    insta::assert_snapshot!("report.csv", csv);

    // CPU per operation where it was measured, with placements in their column.
    let placed = parse_csv(&stdout(&["report", PLACED, "--format", "csv"]));
    let h = &placed[0];
    let (figure, placement_col, unit) = (col(h, "figure"), col(h, "placement"), col(h, "unit"));
    for f in [
        "cpu.client.cpu_ns",
        "cpu.server.cpu_ns",
        "counters.server.context_switches",
    ] {
        assert!(
            placed
                .iter()
                .any(|r| r[figure] == f && r[placement_col] == "split" && r[unit] != "ratio"),
            "no {f}"
        );
    }
}

#[test]
fn csv_keeps_text_from_a_result_file_from_becoming_a_formula() {
    let tmp = tempdir();
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(SOCKETS).unwrap()).unwrap();
    for record in file["results"].as_array_mut().unwrap() {
        if record["transport"] == "tcp" {
            record["transport"] = Value::from("=HYPERLINK(\"http://evil\",\"x, y\")");
        }
    }
    let path = tmp.path().join("formula.json");
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    let csv = stdout(&["report", path.to_str().unwrap(), "--format", "csv"]);
    assert!(
        csv.contains(",\"'=HYPERLINK(\"\"http://evil\"\",\"\"x, y\"\")\","),
        "{csv}"
    );
    let rows = parse_csv(&csv);
    let transport = col(&rows[0], "transport");
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    assert!(rows.iter().all(|r| !r[transport].starts_with('=')));
    assert!(rows
        .iter()
        .any(|r| r[transport] == "'=HYPERLINK(\"http://evil\",\"x, y\")"));
}

#[test]
fn csv_gives_each_comparison_its_extra_cpu_with_its_interval() {
    // A file whose rounds measured CPU: each comparison's extra CPU per operation
    // stands beside its ratio, against the same transport.
    let csv = stdout(&["report", PLACED, "--format", "csv"]);
    let rows = parse_csv(&csv);
    let at = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let extra: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[at("figure")] == "extra_cpu_ns")
        .collect();
    assert!(!extra.is_empty(), "no extra_cpu_ns rows:\n{csv}");
    for r in extra {
        assert_eq!(
            (r[at("transport")].as_str(), r[at("against")].as_str()),
            ("tcp", "unix")
        );
        assert_eq!(r[at("unit")], "ns");
        let [v, lo, hi]: [f64; 3] = ["value", "low", "high"].map(|c| r[at(c)].parse().unwrap());
        assert!(lo <= v && v <= hi, "{r:?}");
    }
}

#[test]
fn json_is_the_report_with_its_numbers() {
    let out = stdout(&["report", RUN, SOCKETS, "--format", "json"]);
    let json: Value = serde_json::from_str(&out).expect("report --format json is JSON");
    assert_eq!(json["format"], 2);
    let sections = json["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    let run = &sections[0];
    assert!(run["heading"].as_str().unwrap().starts_with(RUN));
    // The verdict's lines with each transport's ratio and interval.
    let verdict = run["verdict"].as_array().unwrap();
    assert!(!verdict.is_empty());
    assert_eq!(verdict[0]["caveat"], true, "In short comes first");
    let line = verdict
        .iter()
        .find(|l| l["caveat"] == false)
        .expect("a line about work");
    assert!(line["sentence"]
        .as_str()
        .unwrap()
        .starts_with("Short queries"));
    assert_eq!(line["pairs"][0]["outcome"], "not settled");
    let ratio = &line["ratios"][0];
    assert!(ratio["transport"].is_string());
    let (low, estimate, high) = (
        ratio["low"].as_f64().unwrap(),
        ratio["estimate"].as_f64().unwrap(),
        ratio["high"].as_f64().unwrap(),
    );
    assert!(low <= estimate && estimate <= high, "{ratio}");
    // Records' figures with units and intervals, as in the CSV.
    let records = run["records"].as_array().unwrap();
    let tcp = records
        .iter()
        .find(|r| {
            r["experiment"] == "sockets.pingpong"
                && r["transport"] == "tcp"
                && r["params"]["size"] == 64
        })
        .unwrap();
    assert_eq!(tcp["figures"][0]["figure"], "rtt_ns.p50");
    assert_eq!(tcp["figures"][0]["unit"], "ns");
    assert!(tcp["figures"][0]["low"].as_f64().unwrap() > 0.0);
    assert_eq!(tcp["figures"][1]["figure"], "vs_reference");
    // Tables with numbers behind their cells: figures with units, ratios.
    let kinds: Vec<&str> = run["tables"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["rows"].as_array().unwrap())
        .flat_map(|r| r["cells"].as_array().unwrap())
        .filter_map(|c| c["value"]["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"ratio"), "{kinds:?}");
    assert!(json["legend"].as_array().unwrap().len() >= 2);
}

#[test]
fn a_directory_reports_every_result_file_in_name_order() {
    let tmp = tempdir();
    let dir = tmp.path();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join(SOCKETS), dir.join("b.json")).unwrap();
    std::fs::copy(root.join(PLACED), dir.join("a.json")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a result").unwrap();
    let out = stdout(&["report", dir.to_str().unwrap(), "--format", "markdown"]);
    let a = out.find("a.json — ").expect("a.json reported");
    let b = out.find("b.json — ").expect("b.json reported");
    assert!(a < b, "name order");
    assert!(!out.contains("notes.txt"));

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = sockbench(&["report", empty.to_str().unwrap()]).code(2);
    let stderr = text(&out.get_output().stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("holds no result files (*.json)"),
        "{stderr}"
    );

    // A file in it that is not a result file is refused, not skipped.
    std::fs::write(dir.join("c.json"), "{\"name\": \"other\"}").unwrap();
    let out = sockbench(&["report", dir.to_str().unwrap()]).code(2);
    let stderr = text(&out.get_output().stderr);
    assert!(
        stderr.contains("c.json") && stderr.contains("not a sockbench result file"),
        "{stderr}"
    );
}
