//! The sockets suite against a real server process, over every transport and
//! workload: results exist, are plausible, agree with the server's own count, match
//! the JSON Schema, and nothing is left running or lying around afterwards.

mod common;

use common::*;
use serde_json::Value;

const TRANSPORTS: [&str; 5] = ["unix", "unix-abstract", "tcp", "tcp6", "tls"];
const WORKLOADS: [(&str, &str); 4] = [
    ("connect", "sockets.connect"),
    ("pingpong", "sockets.pingpong"),
    ("stream", "sockets.stream"),
    ("concurrent", "sockets.concurrent"),
];

#[test]
fn every_transport_and_workload_gives_plausible_results() {
    let tmp = tempdir();
    let json = tmp.path().join("out.json");
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let out = run(
        &scratch,
        &[
            "sockets",
            "--quick",
            "--trials",
            "2",
            "--transports",
            &TRANSPORTS.join(","),
            "--workloads",
            "connect,pingpong,stream,concurrent",
            "--sizes",
            "1,64,64KiB",
            "--clients",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "sockets failed: {}",
        text(&out.stderr)
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();

    let errors = schema_errors(&file);
    assert!(
        errors.is_empty(),
        "result file breaks the schema: {errors:#?}"
    );
    check_every_combination_present(&file);
    check_plausible(&file);
    check_connect_counts(&file);
    check_tls_recorded(&file);
    check_cpu_and_intervals(&file);
    check_tables(&text(&out.stdout));

    assert!(
        leftovers(&scratch).is_empty(),
        "temporary files left behind: {:?}",
        leftovers(&scratch)
    );
    let marker = scratch.to_string_lossy();
    assert!(
        processes_mentioning(&marker).is_empty(),
        "a sockbench server outlived the run"
    );
}

fn results(file: &Value) -> &Vec<Value> {
    file["results"].as_array().expect("results array")
}

fn check_every_combination_present(file: &Value) {
    for (_, experiment) in WORKLOADS {
        for transport in TRANSPORTS {
            let n = results(file)
                .iter()
                .filter(|r| r["experiment"] == experiment && r["transport"] == transport)
                .count();
            let expected = match experiment {
                "sockets.pingpong" => 3,
                "sockets.stream" => 2,
                _ => 1,
            };
            assert_eq!(n, expected, "{experiment} over {transport}");
        }
    }
}

/// Every record has its CPU per operation on both sides (the server is sockbench's
/// own), an interval against unix for the other transports, and, where the kernel
/// lets this process count (root here), the counting trial's switches.
fn check_cpu_and_intervals(file: &Value) {
    let counters = file["system"]["cpu_counters"].as_str().unwrap();
    for r in results(file) {
        let what = format!("{} {} {}", r["experiment"], r["transport"], r["params"]);
        let cpu = &r["metrics"]["cpu"];
        assert_eq!(cpu["source"], "proc", "{what}");
        for side in ["client", "server"] {
            let ns = cpu[side]["cpu_ns"].as_f64().unwrap_or(-1.0);
            assert!(ns > 0.0 && ns < 1e9, "{what}: {side} CPU {ns} ns per op");
        }
        if counters != "proc" {
            let switches = r["counters"]["server"]["context_switches"].as_f64();
            assert!(
                switches.is_some_and(|s| s > 0.0),
                "{what}: {}",
                r["counters"]
            );
        }
        let versus = &r["headline"]["vs_reference"];
        if r["transport"] == "unix" {
            assert!(versus.is_null(), "{what}: the reference has no ratio");
        } else {
            // TLS is compared with tcp, everything else with unix.
            let against = if r["transport"] == "tls" {
                "tcp"
            } else {
                "unix"
            };
            assert_eq!(versus["reference"], against, "{what}");
            let [low, high] = ["low", "high"].map(|k| versus["ratio"][k].as_f64().unwrap());
            assert!(0.0 < low && low <= high, "{what}: {versus}");
        }
    }
}

fn check_plausible(file: &Value) {
    for r in results(file) {
        let what = format!("{} {} {}", r["experiment"], r["transport"], r["params"]);
        assert_eq!(r["trials"].as_array().unwrap().len(), 2, "{what}");
        for name in ["conn_per_s", "ops_per_s", "bytes_per_s"] {
            if let Some(v) = r["metrics"][name].as_f64() {
                assert!(v > 0.0 && v.is_finite(), "{what}: {name} = {v}");
            }
        }
        for name in ["latency_ns", "rtt_ns"] {
            let p = &r["metrics"][name];
            if p.is_null() {
                continue;
            }
            let [p50, p99, p999] = ["p50", "p99", "p999"].map(|k| p[k].as_f64().unwrap());
            assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "{what}: {p}");
        }
        assert!(
            r.get("vs_fastest").is_none(),
            "{what}: format 6 has no vs_fastest"
        );
    }
    // For each parameter set exactly one transport is the reference, the one
    // compared with nothing.
    let references = results(file)
        .iter()
        .filter(|r| r["headline"]["vs_reference"].is_null())
        .count();
    assert_eq!(references, 1 + 3 + 2 + 1);
}

fn check_connect_counts(file: &Value) {
    for r in results(file)
        .iter()
        .filter(|r| r["experiment"] == "sockets.connect")
    {
        for trial in r["trials"].as_array().unwrap() {
            let count = trial["count"].as_u64().unwrap();
            assert!(count > 0, "{}", r["transport"]);
            assert_eq!(
                trial["server_count"].as_u64(),
                Some(count),
                "server and client disagree on {} connections",
                r["transport"]
            );
            let tcp = ["tcp", "tcp6", "tls"].contains(&r["transport"].as_str().unwrap());
            assert_eq!(
                trial["time_wait_before"].is_number(),
                tcp,
                "{}",
                r["transport"]
            );
            assert_eq!(
                trial["time_wait_after"].is_number(),
                tcp,
                "{}",
                r["transport"]
            );
        }
    }
}

fn check_tls_recorded(file: &Value) {
    for r in results(file) {
        let is_tls = r["transport"] == "tls";
        assert_eq!(r["tls"].is_object(), is_tls, "{}", r["transport"]);
        if is_tls {
            assert_eq!(r["tls"]["version"], "TLSv1.3");
            assert!(r["tls"]["cipher"].as_str().unwrap().starts_with("TLS_"));
        }
    }
    assert!(file["system"]["tcp_tw_reuse"].is_u64());
}

fn check_tables(stdout: &str) {
    for (workload, _) in WORKLOADS {
        assert!(
            stdout.contains(&format!("{workload} — ")),
            "no {workload} table in:\n{stdout}"
        );
    }
    // Each headline is compared with unix, e.g. `+3.7% [+1.2%, +6.3%]` or
    // `24× [20×, 30×]`.
    assert!(
        stdout.contains("% [") || stdout.contains("× ["),
        "no relative difference in:\n{stdout}"
    );
    for transport in TRANSPORTS {
        assert!(
            stdout.contains(transport),
            "{transport} missing from tables"
        );
    }
}

#[test]
fn tls_1_2_is_negotiated_when_asked() {
    let tmp = tempdir();
    let json = tmp.path().join("tls12.json");
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--transports",
            "tls",
            "--workloads",
            "pingpong",
            "--sizes",
            "64",
            "--tls-version",
            "1.2",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(file["results"][0]["tls"]["version"], "TLSv1.2");
}

#[test]
fn parallel_streams_for_a_given_time_as_iperf3_runs_them() {
    let tmp = tempdir();
    let json = tmp.path().join("streams.json");
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--trials",
            "1",
            "--transports",
            "unix,tcp",
            "--workloads",
            "stream",
            "--write-sizes",
            "64KiB",
            "-t",
            "0.3",
            "-P",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("64 KiB writes, 3 streams"), "{stdout}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    let records = results(&file);
    assert_eq!(records.len(), 2);
    for r in records {
        assert_eq!(r["params"]["streams"], 3, "{r}");
        assert_eq!(r["params"]["duration_ms"], 300, "{r}");
        assert!(r["metrics"]["bytes_per_s"].as_f64().unwrap() > 1e8, "{r}");
        assert!(
            r["metrics"]["cpu"]["client"]["cpu_ns"].as_f64().unwrap() > 0.0,
            "{r}"
        );
        for trial in r["trials"].as_array().unwrap() {
            // The time alone ends the trial: at least -t, and not much more.
            let ms = trial["elapsed_ns"].as_f64().unwrap() / 1e6;
            assert!((300.0..1_500.0).contains(&ms), "{ms} ms: {trial}");
        }
    }
}

#[test]
fn a_long_tmpdir_is_one_clear_line_without_internal_arguments() {
    let tmp = tempdir();
    let long = tmp.path().join("d".repeat(60)).join("e".repeat(60));
    std::fs::create_dir_all(&long).unwrap();
    let out = run(&long, &SHORT_SOCKETS);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("set TMPDIR to a shorter directory"),
        "{stderr}"
    );
    assert!(!stderr.contains("--listen"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(leftovers(&long).is_empty(), "{:?}", leftovers(&long));
}

/// Two rounds give intervals wide enough to leave any range a measurement has
/// (t is 12.7 with two): a file sockbench just wrote is still reported, never
/// called damaged or edited. Several runs, as only some of them spread so far.
#[test]
fn report_takes_every_file_a_short_run_wrote() {
    let tmp = tempdir();
    let started = std::time::Instant::now();
    for i in 0..4 {
        // Bounded in time as well as count: a loaded machine runs fewer.
        if i > 0 && started.elapsed() > std::time::Duration::from_secs(60) {
            break;
        }
        let json = tmp.path().join(format!("run{i}.json"));
        let args = ["sockets", "--quick", "--trials", "2", "--json"];
        let mut args: Vec<&str> = args.to_vec();
        args.push(json.to_str().unwrap());
        let out = run(tmp.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report = run(tmp.path(), &["report", json.to_str().unwrap()]);
        assert!(report.status.success(), "run {i}: {}", text(&report.stderr));
    }
}
