//! `sockbench run`, the default command: every family's quick suite into one result file under
//! sockbench-results/, a verdict at the end, and an interrupted run keeps what
//! finished. Without PostgreSQL installed the PostgreSQL half cannot be checked, and
//! the test says so.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn run_measures_both_suites_into_a_result_file_and_gives_a_verdict() {
    if !postgres_installed("run_measures_both_suites") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let workdir = tmp.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let out = assert_cmd::Command::from_std(sockbench(&scratch))
        .current_dir(&workdir)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("sockbench runs");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let dir = workdir.join("sockbench-results");
    let files = leftovers(&dir);
    assert_eq!(files.len(), 1, "one result file in {files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.len() == "2026-11-22T18-40-05Z.json".len() && name.ends_with("Z.json"),
        "{name}"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    let mut expected = vec![
        "sockets.connect",
        "sockets.pingpong",
        "sockets.stream",
        "postgres.query",
        "postgres.connect",
        "postgres.auth",
        "postgres.rows",
        "postgres.concurrent",
    ];
    // The Redis family joins where redis-server is installed (CI installs it).
    let redis = common::redis::redis_installed("run's Redis part").is_some();
    if redis {
        expected.extend([
            "redis.ping",
            "redis.get",
            "redis.pipeline",
            "redis.connect",
            "redis.concurrent",
        ]);
    }
    // The proxy family joins where nginx is installed (CI installs it).
    let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    if nginx {
        expected.extend([
            "proxy.request",
            "proxy.keepalive",
            "proxy.direct",
            "proxy.concurrent",
        ]);
    } else {
        eprintln!("run's proxy part: nginx is not installed, so run leaves it out");
    }
    assert_eq!(experiments(&file), expected);
    // The server's version is a fact of the PostgreSQL records, not of the machine.
    assert!(file["system"].get("postgres_version").is_none());
    assert!(file["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["experiment"].as_str().unwrap().starts_with("postgres."))
        .all(|r| r["server"]["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("PostgreSQL "))));
    assert!(file["sockbench_commit"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));

    // `run` pins client and server to one CPU (a different one each round), and
    // every line says so.
    for line in [
        "Verdict, on this machine:",
        "  In short: ",
        "  Short queries (SELECT 1 on a kept connection, on one CPU): ",
        "  New PostgreSQL connections (connect, SELECT 1, close, on one CPU): ",
        "  Raw round trips (64 B messages, raw socket, on one CPU): ",
        "  Bulk results (rows of one large SELECT, on one CPU): ",
    ] {
        assert!(stdout.contains(line), "no '{line}' in:\n{stdout}");
    }
    if redis {
        assert!(
            stdout
                .contains("  Commands to Redis (GET of 64 B values, one at a time, on one CPU): "),
            "no Redis line in:\n{stdout}"
        );
    }
    assert!(stdout.contains(&format!("Results saved to sockbench-results/{name}")));
    assert_clean(&scratch);

    // The file it wrote is one `report` and `compare` read.
    let mut reported = Vec::new();
    for format in ["markdown", "html", "csv", "json"] {
        let out = run(
            &scratch,
            &["report", files[0].to_str().unwrap(), "--format", format],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        reported.push(text(&out.stdout));
    }

    // Every comparison reads the same wherever it is printed.
    let seen = common::consistency::Seen {
        terminal: &stdout,
        html: &reported[1],
        csv: &reported[2],
        json: &reported[3],
    };
    let checked = common::consistency::one_figure_per_comparison(
        &common::consistency::load(&files[0]),
        &seen,
    );
    assert!(checked >= 20, "only {checked} comparisons checked");
}

#[test]
fn an_interrupted_run_keeps_the_experiments_that_finished() {
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("run.json");
    let mut child = start_then_wait_for(&scratch, &json, "sockets.connect", &["run", "--quiet"]);
    signal(&child.0, libc::SIGINT);
    let status = wait_for_exit(&mut child, "sockbench run did not stop after Ctrl-C");
    assert_eq!(status.code(), Some(130));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(experiments(&file), ["sockets.connect"]);
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    assert_clean(&scratch);
}
