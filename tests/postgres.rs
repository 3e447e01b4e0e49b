//! The PostgreSQL suite against a real throwaway cluster: every experiment on every
//! transport gives plausible figures that match the schema, Ctrl-C keeps what
//! finished, and no server process or temporary directory is left afterwards. The
//! tests need PostgreSQL's server programs (CI installs them); without them they say
//! so and return.

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;

const TRANSPORTS: [&str; 3] = ["unix", "tcp", "tls"];

fn number(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, key| &v[key])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

#[test]
fn every_experiment_on_every_transport_gives_plausible_results() {
    if !postgres_installed("every_experiment_on_every_transport") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let out = run(
        &scratch,
        &[
            "postgres",
            "--trials",
            "2",
            "--queries",
            "300,1200",
            "--rows",
            "20k,40k",
            "--connections",
            "20",
            "--clients",
            "1,3",
            "--duration",
            "400ms",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "postgres failed: {}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    for title in [
        "postgres.query",
        "postgres.connect",
        "postgres.auth",
        "postgres.rows",
    ] {
        assert!(stdout.contains(title), "no {title} table in:\n{stdout}");
    }
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let errors = schema_errors(&file);
    assert!(
        errors.is_empty(),
        "result file breaks the schema: {errors:#?}"
    );
    assert!(!std::fs::read_to_string(&json)
        .unwrap()
        .contains("password\":"));

    for experiment in ["postgres.query", "postgres.connect", "postgres.rows"] {
        let found: Vec<&str> = results(&file, experiment)
            .iter()
            .map(|r| r["transport"].as_str().unwrap())
            .collect();
        assert_eq!(found, TRANSPORTS, "{experiment}");
    }
    for r in file["results"].as_array().unwrap() {
        assert_eq!(r["server"]["kind"], "postgresql");
        assert_eq!(r["server"]["throwaway"], true);
        let tls = r["transport"] == "tls";
        assert_eq!(r["tls"].is_object(), tls, "TLS recorded only for tls: {r}");
        if tls {
            assert!(r["tls"]["version"].as_str().unwrap().starts_with("TLSv1."));
        }
    }
    for r in results(&file, "postgres.query") {
        let per_query = number(r, "metrics.per_query_ns");
        assert!((1e3..1e8).contains(&per_query), "per query {per_query} ns");
        for t in r["trials"].as_array().unwrap() {
            let product = number(t, "qps") * number(t, "per_query_ns") / 1e9;
            assert!(
                (product - 1.0).abs() < 1e-9,
                "qps is not 1 / time per query"
            );
        }
        assert_eq!(r["trials"][0]["points"].as_array().unwrap().len(), 2);
    }
    for r in results(&file, "postgres.rows") {
        let per_row = number(r, "metrics.per_row_ns");
        assert!((1.0..1e5).contains(&per_row), "per row {per_row} ns");
    }
    for r in results(&file, "postgres.connect") {
        let p50 = number(r, "metrics.connect_ns.p50");
        assert!((1e4..1e9).contains(&p50), "connection {p50} ns");
        assert!(number(r, "metrics.handshake_ns") > 0.0);
        let tls_phase = number(r, "metrics.phases_ns.tls");
        assert_eq!(
            tls_phase > 0.0,
            r["transport"] == "tls",
            "tls phase {tls_phase}: {r}"
        );
        assert!(number(r, "metrics.phases_ns.auth") > 0.0);
    }
    check_auth(&file);
    check_concurrent(&file);
    assert_clean(&scratch);
}

/// A sweep over 1 and 3 clients on every transport: transactions happened, none
/// failed, the percentiles are ordered, and each client kept its one connection.
fn check_concurrent(file: &Value) {
    let runs = results(file, "postgres.concurrent");
    let found: Vec<(u64, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["params"]["clients"].as_u64().unwrap(),
                r["transport"].as_str().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(u64, &str)> = [1, 3]
        .iter()
        .flat_map(|&c| TRANSPORTS.iter().map(move |&t| (c, t)))
        .collect();
    assert_eq!(found, expected);
    for r in runs {
        assert!(number(r, "metrics.tps") > 0.0, "no transactions: {r}");
        assert_eq!(r["metrics"]["failed"], 0);
        let (p50, p99, p999) = (
            number(r, "metrics.latency_ns.p50"),
            number(r, "metrics.latency_ns.p99"),
            number(r, "metrics.latency_ns.p999"),
        );
        assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "{p50} {p99} {p999}");
        for t in r["trials"].as_array().unwrap() {
            assert_eq!(
                t["connections"], r["params"]["clients"],
                "one connection per client"
            );
        }
    }
}

/// Every method on every transport it applies to (trust only through the private
/// socket, peer only on a socket); passwords stored as the method needs; SCRAM
/// (thousands of hash rounds on both sides) costs more than trust.
fn check_auth(file: &Value) {
    let auth = results(file, "postgres.auth");
    let of = |method: &str, transport: &str| {
        auth.iter()
            .find(|r| r["params"]["auth_method"] == method && r["transport"] == transport)
            .copied()
    };
    for method in ["password", "md5", "scram-sha-256"] {
        for transport in TRANSPORTS {
            assert!(
                of(method, transport).is_some(),
                "no auth {method} over {transport}"
            );
        }
    }
    for method in ["trust", "peer"] {
        let over: Vec<&str> = TRANSPORTS
            .into_iter()
            .filter(|t| of(method, t).is_some())
            .collect();
        assert_eq!(over, ["unix"], "{method}");
    }
    assert_eq!(
        of("md5", "tcp").unwrap()["server"]["password_storage"],
        "md5"
    );
    assert_eq!(
        of("scram-sha-256", "tcp").unwrap()["server"]["password_storage"],
        "scram-sha-256"
    );
    assert_eq!(number(of("trust", "unix").unwrap(), "metrics.auth_ns"), 0.0);
    let scram = number(of("scram-sha-256", "unix").unwrap(), "metrics.auth_ns");
    assert!(scram > 0.0, "scram costs nothing over unix?");
    // Without trust there, no cost over it is made up.
    assert!(of("scram-sha-256", "tcp").unwrap()["metrics"]
        .get("auth_ns")
        .is_none_or(Value::is_null));
    // Outside the auth experiment, role foo logs in by md5 on every transport.
    for r in results(file, "postgres.connect") {
        assert_eq!(r["params"]["auth_method"], "md5", "{r}");
        assert_eq!(r["server"]["password_storage"], "md5", "{r}");
    }
}

#[test]
fn ctrl_c_keeps_finished_experiments_and_removes_the_cluster() {
    if !postgres_installed("ctrl_c_keeps_finished_experiments") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(
        &scratch,
        &json,
        "postgres.query",
        &[
            "postgres",
            "--experiments",
            "query,connect",
            // 20 rounds: the query experiment finishes within the wait even beside
            // the other tests on 2 cores, and connect's 20 rounds outlast the signal.
            "--trials",
            "20",
            "--queries",
            "500,2000",
        ],
    );
    signal(&child.0, libc::SIGINT);
    let status = wait_for_exit(&mut child, "sockbench did not stop after Ctrl-C");
    assert_eq!(status.code(), Some(130));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(results(&file, "postgres.query").len(), 3);
    assert!(results(&file, "postgres.connect").is_empty());
    assert_clean(&scratch);
}

#[test]
fn a_server_gone_mid_run_is_an_error_naming_the_experiment_and_results_are_kept() {
    if !postgres_installed("a_server_gone_mid_run") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(
        &scratch,
        &json,
        "postgres.query",
        &[
            "postgres",
            "--experiments",
            "query,concurrent",
            "--trials",
            "1",
            "--transports",
            "unix",
            "--queries",
            "500,2000",
            "--duration",
            "60s",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500)); // into the concurrent run
                                                     // The postmaster sockbench started: its data directory is under `scratch`.
    let marker = format!("{}/sockbench-pg-", scratch.display());
    let postmaster = processes_mentioning(&marker);
    assert_eq!(
        postmaster.len(),
        1,
        "expected one postmaster: {postmaster:?}"
    );
    // SAFETY: kill has no memory preconditions; the PID is the postmaster this test's
    // own sockbench started, found by its private directory.
    unsafe { libc::kill(postmaster[0] as libc::pid_t, libc::SIGQUIT) };
    let status = wait_for_exit(&mut child, "sockbench did not notice the server had gone");
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("postgres.concurrent") && stderr.contains("over unix"),
        "{stderr}"
    );
    assert_eq!(
        after_estimate(&stderr).trim_end().lines().count(),
        1,
        "{stderr}"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(results(&file, "postgres.query").len(), 1);
    assert!(results(&file, "postgres.concurrent").is_empty());
    assert_clean(&scratch);
}
