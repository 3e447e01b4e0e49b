//! `sockbench compare` decides: any number of files a column each, whether the times
//! changed and whether the gap between the transports changed, in words that say
//! which way; what only one file has is one line; facts that differ are marked.

mod common;

use common::fixtures::{edited, sockbench, sockbench_at, stdout, PLACED, RUN, SOCKETS};
use common::{load_every_cpu, run, tempdir, text};
use serde_json::Value;
use std::path::Path;

fn one_line_error(args: &[&str]) -> String {
    let out = sockbench(args).code(2);
    let stderr = text(&out.get_output().stderr);
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.get_output().stdout.is_empty());
    stderr
}

/// The run fixture with sockets.connect over tcp twice as slow in every trial (half
/// the connections per second), saved as format 2 so its intervals are computed
/// again from the trials when it is read.
fn tcp_connect_halved(dir: &Path) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN);
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    file["schema_version"] = 2.into();
    for r in file["results"].as_array_mut().unwrap() {
        if r["experiment"] != "sockets.connect" || r["transport"] != "tcp" {
            continue;
        }
        let half = |v: &mut Value| *v = (v.as_f64().unwrap() / 2.0).into();
        half(&mut r["metrics"]["conn_per_s"]);
        for k in ["min", "median", "max"] {
            half(&mut r["headline"]["spread"][k]);
        }
        for t in r["trials"].as_array_mut().unwrap() {
            half(&mut t["conn_per_s"]);
        }
    }
    let out = dir.join("slower-tcp.json");
    std::fs::write(&out, serde_json::to_string(&file).unwrap()).unwrap();
    out.to_str().unwrap().to_string()
}

#[test]
fn a_gap_that_changed_is_said_with_its_direction_and_numbers() {
    let tmp = tempdir();
    let b = tcp_connect_halved(tmp.path());
    let out = stdout(&["compare", RUN, &b, "--format", "markdown"]);
    let table = out
        .split("### sockets.connect")
        .nth(1)
        .unwrap()
        .split("###")
        .next()
        .unwrap();
    // tcp's time doubled, and so did its ratio to unix; unix and tls did not
    // move, so tls against tcp (as TLS is always compared) halved.
    assert!(
        table.contains("| ↳ time, vs A |  | B slower: ×2.00 ["),
        "{table}"
    );
    assert!(
        table.contains("| ↳ vs unix, change vs A |  | tcp relatively slower: ×2.00 ["),
        "{table}"
    );
    assert_eq!(table.matches("slower").count(), 2, "{table}");
    assert!(
        table.contains("| ↳ vs tcp, change vs A |  | tls relatively faster: ×0.50 ["),
        "{table}"
    );
    assert_eq!(table.matches("faster").count(), 1, "{table}");
    // The figures shown reproduce the ratios: +2.0% in A, +104% in B.
    assert!(
        table.contains("| ↳ vs unix, paired | +2.0% [−21%, +32%] | 2.0× ["),
        "{table}"
    );
    assert!(
        out.contains("- sockets.connect, tcp: against unix, +2.0% [−21%, +32%] in A, 2.0× ["),
        "the summary names the gap that changed:\n{out}"
    );
    assert!(
        out.contains(
            "the gap to the reference (for TLS, to tcp), measured in the same rounds, \
             changed in 2 of "
        ),
        "{out}"
    );

    // The same numbers in JSON, as a ratio with its interval.
    let json: Value = serde_json::from_str(&stdout(&["compare", RUN, &b, "--format", "json"]))
        .expect("compare --format json is JSON");
    let tables = json["sections"][0]["tables"].as_array().unwrap();
    let connect = tables
        .iter()
        .find(|t| t["experiment"] == "sockets.connect")
        .unwrap();
    let change = connect["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["label"] == "vs unix, change vs A"
                && r["cells"][1]["text"].as_str().unwrap().starts_with("tcp")
        })
        .unwrap();
    let value = &change["cells"][1]["value"];
    assert_eq!(value["kind"], "ratio");
    assert!(
        (value["estimate"].as_f64().unwrap() - 2.0).abs() < 1e-9,
        "{value}"
    );
    assert!(value["low"].as_f64().unwrap() > 1.0, "{value}");
    assert_eq!(connect["rows"][0]["cells"][0]["value"]["kind"], "figure");
    assert_eq!(connect["rows"][0]["cells"][0]["value"]["unit"], "per_s");
}

#[test]
fn any_number_of_files_get_a_column_each() {
    let out = stdout(&["compare", RUN, SOCKETS, RUN, "--format", "markdown"]);
    assert!(out.contains("| fact | A | B | C |"), "{out}");
    assert!(out.contains("| case | A | B | C |"), "{out}");
    for line in [
        "- A = tests/fixtures/run.json (",
        "- B = tests/fixtures/sockets.json (",
        "- C = tests/fixtures/run.json (",
        "- B against A: ",
        "- C against A: ",
    ] {
        assert!(out.contains(line), "no {line} in:\n{out}");
    }
    // Experiments only A and C have get a table of those two columns.
    let query = out.split("### postgres.query").nth(1).unwrap();
    assert!(query.contains("| case | A | C |"), "{query}");
    assert!(query.contains("not measured in B"), "{query}");
}

#[test]
fn what_one_file_has_alone_is_one_line() {
    let out = stdout(&["compare", RUN, SOCKETS]);
    for experiment in [
        "postgres.query",
        "postgres.connect",
        "postgres.auth",
        "postgres.rows",
        "postgres.concurrent",
    ] {
        assert_eq!(out.matches(experiment).count(), 1, "{experiment}:\n{out}");
        assert!(out.contains(&format!("{experiment}: only in A\n")), "{out}");
    }
    // Cases only one file has (placed runs) are named in a note, not rows of dashes,
    // and a file with no case in common with another gets no column.
    let placed = stdout(&["compare", RUN, PLACED, SOCKETS, "--format", "markdown"]);
    let pingpong = placed.split("### sockets.pingpong").nth(1).unwrap();
    assert!(pingpong.contains("| case | A | C |"), "{pingpong}");
    assert!(
        pingpong.contains("in one file only: unix, 64 B, on one CPU (in B); "),
        "{pingpong}"
    );
    let apart = stdout(&["compare", SOCKETS, PLACED]);
    assert!(
        apart.contains("sockets.pingpong: no case measured in more than one file\n"),
        "{apart}"
    );
}

#[test]
fn system_facts_that_differ_are_marked() {
    let md = stdout(&["compare", RUN, PLACED, "--format", "markdown"]);
    assert!(
        md.contains("| CPU * | Intel(R) Xeon(R) Processor | AMD EPYC |"),
        "{md}"
    );
    assert!(md.contains("| logical cores | 2 | 2 |"), "{md}");
    assert!(md.contains("* differs between the files"), "{md}");
    let json: Value =
        serde_json::from_str(&stdout(&["compare", RUN, PLACED, "--format", "json"])).unwrap();
    let system = &json["sections"][0]["tables"][0];
    assert_eq!(system["title"], "system");
    let highlighted: Vec<&str> = system["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["highlight"] == true)
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert!(highlighted.contains(&"CPU *") && highlighted.contains(&"kernel *"));
    assert!(!highlighted.contains(&"logical cores"), "{highlighted:?}");
    // Nothing differs between a file and itself.
    let same = stdout(&["compare", RUN, RUN, "--format", "markdown"]);
    assert!(
        !same.contains(" * |") && !same.contains("differs"),
        "{same}"
    );
}

#[test]
fn fewer_than_two_files_or_csv_are_refused_in_one_line() {
    let e = one_line_error(&["compare", RUN]);
    assert!(e.contains("B.json"), "{e}");
    let e = one_line_error(&["compare", RUN, SOCKETS, "--format", "csv"]);
    assert!(e.contains("report --format csv"), "{e}");
}

#[test]
fn a_ratio_to_another_reference_is_not_compared_with_one_to_unix() {
    // B measured sockets.connect without tcp: its tls is paired with unix, A's
    // with tcp.
    let tmp = tempdir();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN);
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    file["schema_version"] = 2.into();
    file["results"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["experiment"] != "sockets.connect" || r["transport"] != "tcp");
    let b = tmp.path().join("no-tcp.json");
    std::fs::write(&b, serde_json::to_string(&file).unwrap()).unwrap();
    let out = stdout(&["compare", RUN, b.to_str().unwrap(), "--format", "markdown"]);
    let connect = out.split("### sockets.connect").nth(1).unwrap();
    let connect = connect.split("###").next().unwrap();
    let tls = connect.split("| tls |").nth(1).unwrap();
    assert!(tls.contains("| ↳ vs tcp, paired | 24× ["), "{tls}");
    assert!(
        tls.contains("×] | - |\n"),
        "B's tls against unix shown as against tcp:\n{tls}"
    );
    assert!(tls.contains("| ↳ vs tcp, change vs A |  | - |"), "{tls}");
    assert!(
        connect.contains("in one file only: tcp (in A)"),
        "{connect}"
    );
}

/// The run fixture with the outside load a run records: every trial's load, and
/// the load before the run, quiet; then `edit` on its sockets.pingpong records.
fn with_loads(dir: &Path, name: &str, edit: impl Fn(&mut Value)) -> String {
    let quiet = serde_json::json!({"outside_cpus": 0.01, "steal_cpus": 0.0});
    edited(dir, name, |file| {
        file["system"]["load_at_start"] = quiet.clone();
        for r in file["results"].as_array_mut().unwrap() {
            for t in r["trials"].as_array_mut().unwrap() {
                t["load"] = quiet.clone();
            }
            if r["experiment"] == "sockets.pingpong" {
                edit(r);
            }
        }
    })
}

/// Every pingpong round trip twice as long, on every transport alike, as a
/// neighbour that takes the CPUs makes it: the gaps between transports stay.
fn doubled(r: &mut Value) {
    let double = |v: &mut Value| *v = (v.as_f64().unwrap() * 2.0).into();
    for k in ["min", "median", "max"] {
        double(&mut r["headline"]["spread"][k]);
    }
    let rtt = |figures: &mut Value| {
        for v in figures.as_object_mut().unwrap().values_mut() {
            double(v);
        }
    };
    rtt(&mut r["metrics"]["rtt_ns"]);
    for t in r["trials"].as_array_mut().unwrap() {
        rtt(&mut t["rtt_ns"]);
    }
}

/// Every trial ran again once for outside load, then passed: quiet at the start,
/// busy during.
fn rerun(r: &mut Value) {
    for t in r["trials"].as_array_mut().unwrap() {
        t["reruns"] = 1.into();
        t["load"] = serde_json::json!({"outside_cpus": 0.12, "steal_cpus": 0.0});
    }
}

/// `slower in N` with N above zero: a count of slower times given as a verdict.
fn counts_slower(text: &str) -> bool {
    text.match_indices("slower in ")
        .any(|(i, m)| !text[i + m.len()..].starts_with('0'))
}

#[test]
fn a_slowdown_on_a_busy_host_is_the_hosts_not_the_codes() {
    let tmp = tempdir();
    let a = with_loads(tmp.path(), "a.json", |_| {});
    let busy = with_loads(tmp.path(), "busy.json", |r| {
        doubled(r);
        rerun(r);
    });
    let out = stdout(&["compare", &a, &busy, "--format", "markdown"]);
    let summary = out.split("### system").next().unwrap();
    // 9 pingpong records of 3 trials ran again, of 129 trials.
    assert!(
        summary.contains(
            "the host was busy while B ran (B: 27 of 129 trials ran again, other processes \
             0.03 CPUs on average; A: 0 of 129 trials ran again, other processes 0.01 CPUs \
             on average), and B's times are longer in 9 of "
        ),
        "{summary}"
    );
    assert!(
        summary.contains("is the host's, not the code's"),
        "{summary}"
    );
    assert!(
        !counts_slower(&out),
        "a busy host's slowdown counted as slower:\n{out}"
    );
    // The gaps first: they did not move.
    let gap = summary
        .find("the gap to the reference (for TLS, to tcp), measured in the same rounds, changed in 0 of ")
        .expect("the gaps are counted");
    assert!(
        gap < summary.find("the host was busy").unwrap(),
        "{summary}"
    );
    // Both runs' load side by side, and the start no longer quiet alone.
    for row in [
        "| host at start * | quiet (other processes 0.01 CPUs, steal 0.00) | quiet (other \
         processes 0.01 CPUs, steal 0.00); busy during 27 of 129 trials |",
        "| host while measuring * | quiet: no trial of 129 ran again; other processes 0.01 \
         CPUs on average, steal 0.00 | busy: 27 of 129 trials ran again, 0 still disturbed \
         after 3 tries; other processes 0.03 CPUs on average, steal 0.00 |",
    ] {
        assert!(out.contains(row), "no {row} in:\n{out}");
    }
    // The time rows whose trials met the busy host are marked; the gap rows come
    // before the time row of their transport.
    let pingpong = out.split("### sockets.pingpong").nth(1).unwrap();
    let pingpong = pingpong.split("###").next().unwrap();
    assert_eq!(
        pingpong.matches("host busy in B: ×").count(),
        9,
        "{pingpong}"
    );
    assert!(
        pingpong.contains("host busy in B: trials of the rows marked"),
        "{pingpong}"
    );
    let tcp = pingpong.split("| tcp, 64 B |").nth(1).unwrap();
    let (change, time) = (
        tcp.find("| ↳ vs unix, change vs A |").unwrap(),
        tcp.find("| ↳ time, vs A |").unwrap(),
    );
    assert!(change < time, "{tcp}");
    let connect = out.split("### sockets.connect").nth(1).unwrap();
    let connect = connect.split("###").next().unwrap();
    assert!(!connect.contains("host busy"), "{connect}");

    // Taken the other way, the busy baseline makes B look faster: the host's too.
    let swapped = stdout(&["compare", &busy, &a, "--format", "markdown"]);
    assert!(
        swapped.contains("the host was busy while A ran (")
            && swapped.contains("and B's times are shorter in 9 of ")
            && swapped.contains("that speed-up coincides with A's busy host"),
        "{swapped}"
    );
    assert!(!swapped.contains("faster in 9"), "{swapped}");

    // The same phrase in a report of the busy run, on a terminal and in HTML.
    let phrase = "quiet (other processes 0.01 CPUs, steal 0.00); busy during 27 of 129 trials";
    let terminal = text(
        &sockbench_at(&["report", &busy], Some("400"))
            .success()
            .get_output()
            .stdout,
    );
    assert!(terminal.contains(phrase), "{terminal}");
    let html = stdout(&["report", &busy, "--format", "html"]);
    assert!(html.contains(phrase), "no {phrase} in the HTML report");
}

#[test]
fn the_same_slowdown_on_quiet_hosts_is_slower() {
    let tmp = tempdir();
    let a = with_loads(tmp.path(), "a.json", |_| {});
    let slower = with_loads(tmp.path(), "slower.json", doubled);
    let out = stdout(&["compare", &a, &slower, "--format", "markdown"]);
    assert!(
        out.contains("changed in 0 of 28 (not settled in ")
            && out.contains("; times faster in 0, slower in 9, "),
        "{out}"
    );
    for busy in ["the host was busy", "host busy in B: ", "busy during"] {
        assert!(!out.contains(busy), "{busy} in:\n{out}");
    }
    assert!(
        out.contains("| host at start | quiet (other processes 0.01 CPUs, steal 0.00) |"),
        "{out}"
    );
}

#[test]
fn a_run_on_a_host_this_test_loads_is_said_busy_not_slower() {
    let tmp = tempdir();
    // Pingpong trials of 0.5 s, long enough for their load to be measured; five
    // rounds, enough for a slowdown to be told.
    let measure = |json: &Path| {
        let json = json.to_str().unwrap();
        let args = [
            "sockets",
            "--workloads",
            "pingpong",
            "--transports",
            "unix,tcp",
            "--sizes",
            "64",
            "--trials",
            "5",
            "--quiet",
            "--json",
            json,
        ];
        let out = run(tmp.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    measure(&a);
    let loops = load_every_cpu();
    measure(&b);
    drop(loops);
    let out = run(
        tmp.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "markdown",
        ],
    );
    let out = text(&out.stdout);
    // B's trials ran again for the loops; A may have met other load of its own.
    let b_row = out
        .lines()
        .find(|l| l.starts_with("| host while measuring"))
        .unwrap_or_else(|| panic!("{out}"));
    // Steal is the host's: whatever it was, it is said.
    let steal = b_row
        .trim_end()
        .strip_suffix(" |")
        .and_then(|row| row.rsplit_once("CPUs on average, steal "))
        .map(|(_, steal)| steal);
    assert!(steal.is_some_and(|s| s.parse::<f64>().is_ok()), "{b_row}");
    assert!(b_row.contains("| busy: "), "{b_row}");
    assert!(
        out.contains("the host was busy while B ran (")
            || out.contains("the host was busy while both A and B ran ("),
        "{out}"
    );
    assert!(
        !counts_slower(&out),
        "a busy host's slowdown counted as slower:\n{out}"
    );
    // Where a time row finds B slower, the summary gives it to the host.
    if out.contains("| B slower, host busy in ") {
        assert!(
            out.contains("the host's, not the code's")
                || out.contains("say more about the host than about the code"),
            "{out}"
        );
    }
}
