//! sockbench against a real pgbouncer (Debian package `pgbouncer`) in front of a
//! user server: detected, recorded and measured; `--server` measures it only as
//! given, in one line; its admin console is refused in one line. Without
//! PostgreSQL or pgbouncer installed the tests say so and return.

mod common;

use common::pgbouncer::*;
use common::user_server::*;
use common::*;

fn query_run(args: &[&str]) -> (std::process::Output, Option<serde_json::Value>) {
    let tmp = tempdir();
    let json = tmp.path().join("out.json");
    let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
        .args(["postgres", "--quick", "--experiments", "query,connect"])
        .args([
            "--trials",
            "2",
            "--queries",
            "200,400",
            "--connections",
            "50",
        ])
        .args(["--quiet", "--json", json.to_str().unwrap()])
        .args(args)
        .env("PGPASSWORD", APP_PASSWORD)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs");
    let file = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    if let Some(file) = &file {
        assert_eq!(schema_errors(file), Vec::<String>::new());
    }
    (out, file)
}

fn ready(test: &str) -> Option<std::path::PathBuf> {
    if !postgres_installed(test) {
        return None;
    }
    pgbouncer_installed(test)
}

#[test]
fn a_pgbouncer_pool_is_detected_recorded_and_measured() {
    let Some(program) = ready("a_pgbouncer_pool_is_detected") else {
        return;
    };
    let server = UserServer::start();
    let bouncer = PgBouncer::start(&program, &server, "scram-sha-256", true);
    let (out, file) = query_run(&["--url", &bouncer.uri(APP_DB)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let file = file.unwrap();
    for experiment in ["postgres.query", "postgres.connect"] {
        let records = results(&file, experiment);
        assert_eq!(records.len(), 1, "{experiment}");
        let r = records[0];
        assert_eq!(r["transport"], "tcp");
        let s = &r["server"];
        assert_eq!(s["kind"], "pgbouncer", "{s}");
        assert!(
            s["pooler"].as_str().unwrap().starts_with("PgBouncer 1."),
            "{s}"
        );
        // Queries run on the PostgreSQL behind it.
        assert!(
            s["version"].as_str().unwrap().starts_with("PostgreSQL"),
            "{s}"
        );
        assert_eq!(s["host"], "127.0.0.1");
        assert_eq!(s["port"], bouncer.port.to_string().as_str());
    }
    let query = results(&file, "postgres.query")[0];
    assert!(query["metrics"]["per_query_ns"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_pgbouncer_that_keeps_its_console_closed_is_still_named() {
    let Some(program) = ready("a_pgbouncer_that_keeps_its_console_closed") else {
        return;
    };
    let server = UserServer::start();
    // auth_type plain; app is not let into the admin console.
    let bouncer = PgBouncer::start(&program, &server, "plain", false);
    let (out, file) = query_run(&["--url", &bouncer.uri(APP_DB)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = file.unwrap();
    let s = &results(&file, "postgres.query")[0]["server"];
    assert_eq!(s["kind"], "pgbouncer", "{s}");
    assert!(s.get("pooler").is_none(), "{s}");
}

#[test]
fn server_on_a_pgbouncer_measures_it_as_given_and_says_why() {
    let Some(program) = ready("server_on_a_pgbouncer") else {
        return;
    };
    let server = UserServer::start();
    let bouncer = PgBouncer::start(&program, &server, "scram-sha-256", true);
    let (out, file) = query_run(&["--server", &bouncer.uri(APP_DB)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        after_estimate(&stderr).trim_end().lines().count(),
        2,
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "--server: 127.0.0.1:{} is pgbouncer, whose settings describe the server behind \
             it; measuring it only as given, as tcp",
            bouncer.port
        )),
        "{stderr}"
    );
    // The backend behind the pooler cannot be pinned: the default gives way, said.
    assert!(
        stderr.contains("postgres: placed freely: the backend serving tcp is not a process"),
        "{stderr}"
    );
    let file = file.unwrap();
    for r in results(&file, "postgres.query") {
        assert!(r["params"].get("placement").is_none(), "{r}");
    }
    let labels: Vec<_> = results(&file, "postgres.query")
        .iter()
        .map(|r| r["transport"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(labels, ["tcp"]);
}

#[test]
fn the_admin_console_is_refused_in_one_line() {
    let Some(program) = ready("the_admin_console_is_refused") else {
        return;
    };
    let server = UserServer::start();
    let bouncer = PgBouncer::start(&program, &server, "scram-sha-256", true);
    let (out, file) = query_run(&["--url", &bouncer.uri("pgbouncer")]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("is pgbouncer's admin console (PgBouncer 1."),
        "{stderr}"
    );
    assert!(file.is_none_or(|f| results(&f, "postgres.query").is_empty()));
}
