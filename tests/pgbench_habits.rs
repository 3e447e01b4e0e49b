//! pgbench's habits in `sockbench postgres`: its short options with its meaning, the
//! extended and prepared protocols (`-M`), a fixed rate (`-R`) with latency from the
//! scheduled start, `-L`, `-r`, and scripts with `\set`, `random(a, b)` and `:name`
//! run against `pgbench -i` tables. The server tests need PostgreSQL's programs
//! (CI installs them); without them they say so and return.

mod common;

use clap::FromArgMatches;
use common::*;
use serde_json::Value;
use sockbench::postgres::args::PostgresArgs;
use sockbench::postgres::libpq::Protocol;
use sockbench::postgres::plan::PostgresPlan;
use sockbench::report::experiment::Plan;
use std::path::Path;
use std::time::Duration;

/// The plan `sockbench postgres ARGS` makes, or its usage error.
fn plan(args: &[&str]) -> anyhow::Result<PostgresPlan> {
    let command = (sockbench::postgres::FAMILY.command)();
    let matches =
        command.try_get_matches_from(std::iter::once("postgres").chain(args.iter().copied()))?;
    PostgresPlan::from_args(&PostgresArgs::from_arg_matches(&matches)?)
}

#[test]
fn the_estimate_says_a_trial_of_dash_t_and_how_many() {
    let p = plan(&[
        "--experiments",
        "concurrent",
        "-c",
        "10",
        "-j",
        "2",
        "-T",
        "5",
        "--transports",
        "unix,tcp",
    ])
    .unwrap();
    let estimate = p.estimate();
    assert_eq!(estimate.works.len(), 1);
    assert_eq!(estimate.works[0].trial, Duration::from_secs(5));
    assert_eq!(estimate.works[0].trials_per_round, 2);
    let line = sockbench::export::progress::estimate_line(
        &sockbench::harness::estimate::Estimate::of_command([estimate.clone()]),
    );
    // 5 to 20 rounds of one trial per transport.
    assert!(
        line.contains("5–20 rounds of 2 trials (10–40 trials) of 5 s"),
        "{line}"
    );
    // At least the ten trials of 5 s, and not past 1.5 times the expectation when
    // outside load makes them run again.
    assert!(estimate.expected_s() > 50.0, "{}", estimate.expected_s());
    assert!(estimate.works[0].busy_s() <= 1.5 * estimate.works[0].expected_s() + 1e-9);
}

#[test]
fn pgbench_short_options_keep_pgbench_meaning() {
    let p = plan(&[
        "-T", "2", "-c", "4", "-j", "2", "-C", "-M", "prepared", "-R", "300",
    ])
    .unwrap();
    assert_eq!(p.concurrent.clients, [4]);
    assert_eq!(p.concurrent.threads, 2);
    assert!(p.concurrent.connect_per_transaction);
    assert_eq!(
        p.budget.concurrent_time,
        Duration::from_secs(2),
        "-T takes plain seconds"
    );
    assert_eq!(p.budget.protocol, Protocol::Prepared);
    assert_eq!(p.concurrent.rate, Some(300));
    let p = plan(&["-T", "10s", "-L", "5", "-P", "1", "-r", "-M", "extended"]).unwrap();
    assert_eq!(p.budget.concurrent_time, Duration::from_secs(10));
    assert_eq!(p.concurrent.latency_limit, Some(Duration::from_millis(5)));
    assert_eq!(p.concurrent.progress, Some(Duration::from_secs(1)));
    assert!(p.concurrent.per_command);
    assert_eq!(p.budget.protocol, Protocol::Extended);
    // pgbench's progress lines replace the progress line drawn in place.
    assert!(p.prints_progress());
    assert!(!plan(&["-P", "1", "--experiments", "query"])
        .unwrap()
        .prints_progress());
    // -r's times are in the full tables, printed without --tables.
    assert!(plan(&["-r"]).unwrap().full_tables());
    assert!(!plan(&["-T", "1"]).unwrap().full_tables());
    let p = plan(&[]).unwrap();
    assert_eq!(p.budget.protocol, Protocol::Simple);
    assert_eq!(p.concurrent.rate, None);
    assert!(!p.prints_progress());
}

#[test]
fn help_names_each_pgbench_option() {
    let tmp = tempdir();
    let out = run(tmp.path(), &["postgres", "--help"]);
    let help = text(&out.stdout);
    for (short, long) in [
        ("-c", "--clients"),
        ("-j", "--threads"),
        ("-T", "--duration"),
        ("-C", "--connect-per-transaction"),
        ("-f", "--script"),
        ("-D", "--define"),
        ("-M", "--protocol"),
        ("-R", "--rate"),
        ("-L", "--latency-limit"),
        ("-P", "--progress"),
        ("-r", "--report-per-command"),
    ] {
        assert!(
            help.contains(&format!("{short}, {long}")),
            "{short}, {long} not in --help"
        );
        assert!(
            help.contains(&format!("(pgbench {short})")),
            "{short} not named"
        );
    }
}

#[test]
fn unsupported_meta_commands_and_bad_values_are_refused_in_one_line() {
    let tmp = tempdir();
    for (script, mentions) in [
        ("SELECT 1;\n\\sleep 10 ms\n", "line 2: pgbench's \\sleep"),
        ("\\if :x\nSELECT 1;\n\\endif\n", "\\if"),
        ("SELECT 1 \\gset\n", "\\gset"),
        ("\\shell true\nSELECT 1;\n", "\\shell"),
        ("\\set aid sqrt(2)\nSELECT :aid;\n", "'sqrt'"),
        ("\\set aid :nope + 1\nSELECT :aid;\n", ":nope"),
        // No data is ever sent or read for a COPY: refused before anything starts.
        (
            "COPY pgbench_accounts TO STDOUT;\n",
            "line 1: COPY is not supported",
        ),
        (
            "SELECT 1;\ncopy t\n  FROM STDIN;\n",
            "line 3: COPY is not supported",
        ),
        ("SELECT 1; COPY t FROM STDIN;\n", "COPY is not supported"),
        ("SELECT 1;\n;;;\n", "line 2: a command with no SQL"),
    ] {
        let path = tmp.path().join("s.sql");
        std::fs::write(&path, script).unwrap();
        assert_rejected(&["postgres", "-f", path.to_str().unwrap()], mentions);
    }
    assert_rejected(&["postgres", "-M", "fast"], "simple, extended, prepared");
    assert_rejected(&["postgres", "-R", "0"], "--rate");
    assert_rejected(&["postgres", "-L", "0"], "--latency-limit");
    assert_rejected(&["postgres", "-P", "0"], "--progress");
    assert_rejected(&["postgres", "-D", "scale=ten"], "integer");
}

/// The script's options with experiments that run no script are refused, not
/// ignored.
#[test]
fn script_options_without_the_concurrent_experiment_are_refused() {
    let tmp = tempdir();
    let path = tmp.path().join("s.sql");
    std::fs::write(&path, "SELECT 1;\n").unwrap();
    let script = path.to_str().unwrap();
    for (args, flag) in [
        (&["-f", script][..], "-f/--script"),
        (&["-r"], "-r/--report-per-command"),
        (&["-f", script, "-D", "scale=2"], "-f/--script"),
    ] {
        let args = [&["postgres", "--experiments", "query,rows"], args].concat();
        assert_rejected(
            &args,
            &format!("{flag} is for the concurrent experiment, which --experiments leaves out"),
        );
    }
    assert!(plan(&["--experiments", "query,concurrent", "-f", script, "-r"]).is_ok());
}

/// A throwaway cluster with `pgbench -i -s 1` tables in database foo, reached over
/// TCP with a password.
struct PgbenchServer {
    cluster: sockbench::postgres::cluster::Cluster,
    url: String,
    password: String,
}

fn pgbench_server() -> PgbenchServer {
    use sockbench::postgres::{bindir::Binaries, cluster::Cluster, hba::AuthMethod};
    use sockbench::transport::Transport;
    let binaries = Binaries::find(None).unwrap();
    let mut cluster = Cluster::start(&binaries, &[Transport::Tcp], 8).unwrap();
    cluster.set_auth(AuthMethod::Scram).unwrap();
    let params = cluster.params(Transport::Tcp).unwrap();
    let (port, password) = (params.get("port").unwrap(), params.get("password").unwrap());
    let pgbench = binaries.dir.join("pgbench");
    let out = std::process::Command::new(&pgbench)
        .args([
            "-i",
            "-s",
            "1",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "foo",
            "foo",
        ])
        .env("PGPASSWORD", &password)
        .env("PGSSLMODE", "disable")
        .output()
        .expect("pgbench runs");
    assert!(out.status.success(), "pgbench -i: {}", text(&out.stderr));
    PgbenchServer {
        cluster,
        url: format!("tcp=postgres://foo@127.0.0.1:{port}/foo?sslmode=disable"),
        password,
    }
}

/// `sockbench postgres --url … ARGS --json`, its result file.
fn measure(scratch: &Path, server: &PgbenchServer, args: &[&str]) -> (Value, String) {
    let (file, _, stderr) = measure_printed(scratch, server, args);
    (file, stderr)
}

/// [`measure`], with what it printed on standard output too.
fn measure_printed(
    scratch: &Path,
    server: &PgbenchServer,
    args: &[&str],
) -> (Value, String, String) {
    let json = scratch.join(format!("out-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&json);
    let mut all = vec!["postgres", "--url", &server.url, "--trials", "2", "--quiet"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let out = assert_cmd::Command::from_std(sockbench(scratch))
        .args(&all)
        .env("PGPASSWORD", &server.password)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{all:?}: {stderr}");
    let file: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    (file, text(&out.stdout), stderr)
}

#[test]
fn extended_and_prepared_protocols_reach_the_server_as_such() {
    use sockbench::postgres::libpq::PgConn;
    use sockbench::transport::Transport;
    if !postgres_installed("extended_and_prepared_protocols_reach_the_server_as_such") {
        return;
    }
    let server = pgbench_server();
    let conn = PgConn::connect(&server.cluster.params(Transport::Tcp).unwrap()).unwrap();
    let param = c"41".as_ptr();
    let r = conn.exec_params(c"SELECT $1::int + 1", &[param]).unwrap();
    assert_eq!(r.value(0, 0), Some(&b"42"[..]));
    conn.prepare(c"plus_one", c"SELECT $1::int + 1").unwrap();
    let r = conn.exec_prepared(c"plus_one", &[param]).unwrap();
    assert_eq!(r.value(0, 0), Some(&b"42"[..]));
    let names = conn
        .query_value("SELECT string_agg(name, ',') FROM pg_prepared_statements")
        .unwrap();
    assert_eq!(names, "plus_one", "the statement is prepared on the server");
    assert!(conn.exec_prepared(c"no_such", &[]).is_err());
}

#[test]
fn pgbench_scripts_protocols_and_rates_run_against_pgbench_tables() {
    if !postgres_installed("pgbench_scripts_protocols_and_rates_run_against_pgbench_tables") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let server = pgbench_server();
    let script = scratch.join("select-only.sql");
    std::fs::write(
        &script,
        "\\set aid random(1, 100000 * :scale)\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();

    // The query experiment in the extended protocol records it.
    let (file, _) = measure(
        &scratch,
        &server,
        &[
            "--experiments",
            "query",
            "--queries",
            "500,1000",
            "-M",
            "extended",
        ],
    );
    let query = results(&file, "postgres.query");
    assert_eq!(query[0]["params"]["protocol"], "extended");
    assert!(query[0]["metrics"]["per_query_ns"].as_f64().unwrap() > 0.0);

    // A failure inside a transaction block (division by zero, half the time) does
    // not leave the client's session aborted: the next transactions succeed; and two
    // statements on one line in the simple protocol are both run.
    let failing = scratch.join("half-fail.sql");
    std::fs::write(
        &failing,
        "\\set x random(0, 1)\nBEGIN;\nSELECT 1 / :x; SELECT 2;\nEND;\n",
    )
    .unwrap();
    let (file, _) = measure(
        &scratch,
        &server,
        &[
            "--experiments",
            "concurrent",
            "-T",
            "500ms",
            "-c",
            "2",
            "-f",
            failing.to_str().unwrap(),
        ],
    );
    // Counted trial by trial: a record's `failed` is summed over its trials, its
    // rate is their median.
    let r = &results(&file, "postgres.concurrent")[0];
    let trials = r["trials"].as_array().unwrap();
    let failed: f64 = trials.iter().map(|t| t["failed"].as_f64().unwrap()).sum();
    let done: f64 = trials.iter().map(|t| t["count"].as_f64().unwrap()).sum();
    assert!(
        failed > 0.0,
        "division by zero fails about half the time: {r}"
    );
    assert!(
        done > 0.25 * (done + failed),
        "after a failure the clients go on succeeding: {done} succeeded, {failed} failed"
    );

    // pgbench's select-only script, each protocol: no failed transaction.
    for mode in ["simple", "prepared"] {
        let args = [
            "--experiments",
            "concurrent",
            "-T",
            "500ms",
            "-c",
            "4",
            "-j",
            "2",
            "-M",
            mode,
            "-r",
            "-f",
            script,
        ];
        let (file, printed, _) = measure_printed(&scratch, &server, &args);
        // -r's times are printed without --tables.
        assert!(printed.contains("command 1 mean"), "{mode}: {printed}");
        let r = &results(&file, "postgres.concurrent")[0];
        let expected = if mode == "simple" {
            Value::Null
        } else {
            Value::from(mode)
        };
        assert_eq!(r["params"]["protocol"], expected, "{mode}");
        assert_eq!(
            r["params"]["script"], "select-only.sql",
            "{mode}: the script is named"
        );
        assert_eq!(r["metrics"]["failed"], 0, "{mode}: {r}");
        assert!(r["metrics"]["tps"].as_f64().unwrap() > 50.0, "{mode}: {r}");
        let per_command = r["metrics"]["per_command_ns"].as_array().unwrap();
        assert_eq!(per_command.len(), 1, "{mode}: one command, one mean");
        assert!(per_command[0].as_f64().unwrap() > 0.0);
    }

    // A fixed rate: the rate is met, latency and schedule lag are recorded, the
    // headline is latency, and progress lines come on stderr.
    let args = [
        "--experiments",
        "concurrent",
        "-T",
        "1500ms",
        "-c",
        "4",
        "-j",
        "2",
        "-R",
        "200",
        "-L",
        "50",
        "-P",
        "1",
        "-f",
        script,
    ];
    let (file, stderr) = measure(&scratch, &server, &args);
    let r = &results(&file, "postgres.concurrent-rate")[0];
    assert_eq!(r["params"]["rate_per_s"], 200);
    assert_eq!(r["params"]["latency_limit_us"], 50_000);
    let tps = r["metrics"]["tps"].as_f64().unwrap();
    assert!(
        (150.0..=250.0).contains(&tps),
        "the rate of 200/s was not kept: {tps}"
    );
    assert!(r["metrics"]["latency_ns"]["p99"].as_f64().unwrap() > 0.0);
    assert!(r["metrics"]["lag_ns"]["mean"].as_f64().is_some(), "{r}");
    assert_eq!(r["metrics"]["failed"], 0);
    assert!(r["metrics"]["late"].as_u64().is_some() && r["metrics"]["skipped"].as_u64().is_some());
    assert_eq!(r["headline"]["metric"], "latency_ns.p50", "{r}");
    assert!(
        stderr.contains("progress: tcp"),
        "no progress line: {stderr}"
    );
}
