//! `sockbench redis` against a real `redis-server`: the quick suite on a throwaway
//! server gives every experiment on unix, tcp and tls in a file that matches the
//! schema and holds no password; Ctrl-C and a server killed half-way keep what
//! finished and leave no server or directory behind; a sockbench killed outright
//! takes its server with it, and the next run sweeps the directory it left; `--url`
//! measures a server the user runs, with its password from REDISCLI_AUTH or the URL
//! and never shown; bad input is one line. Without `redis-server` installed the
//! tests say so and return (CI installs it). That another account can run no
//! command on the throwaway server is tested beside the server
//! (`src/redis/server_tests.rs`), not here.
//!
//! The runs are heavy (a server, fifty clients) and some are timed against the
//! JSON file filling up, so the tests of this file take turns ([`one_at_a_time`]).

mod common;

use common::redis::*;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const TRANSPORTS: [&str; 3] = ["unix", "tcp", "tls"];
const EXPERIMENTS: [&str; 5] = [
    "redis.ping",
    "redis.get",
    "redis.pipeline",
    "redis.connect",
    "redis.concurrent",
];
/// How long a whole quick run may take on a busy 2-core machine.
const QUICK_RUN: Duration = Duration::from_secs(300);

/// Lets one test of this file run sockbench at a time (a failed test's turn is
/// still given on).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The result file, checked against the schema.
fn load(json: &Path) -> Value {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let errors = schema_errors(&file);
    assert!(
        errors.is_empty(),
        "result file breaks the schema: {errors:#?}"
    );
    file
}

/// True once the file at `json` holds records of `experiment`.
fn holds(json: &Path, experiment: &str) -> bool {
    std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|f| !results(&f, experiment).is_empty())
}

fn number(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, key| &v[key])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// Runs of 32 or more hexadecimal digits in `text`: what a throwaway password (32
/// hex digits) or its SHA-256 (64) would look like.
fn hex_runs(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|run| run.len() >= 32)
        .collect()
}

/// No password of the throwaway server in the result file nor in what sockbench
/// said: no long hex run in `command` and `server` (as the brief of the family
/// asks), nor anywhere in the file but the commit it was built from; and not the
/// hash `redis.conf` held while it ran.
fn assert_no_secret(file: &Value, said: &[&str], config: &str) {
    assert!(hex_runs(&file["command"].to_string()).is_empty());
    for r in file["results"].as_array().unwrap() {
        let server = r["server"].to_string();
        assert!(hex_runs(&server).is_empty(), "{server}");
    }
    let mut rest = file.clone();
    rest.as_object_mut().unwrap().remove("sockbench_commit");
    let rest = rest.to_string();
    assert_eq!(hex_runs(&rest), Vec::<&str>::new(), "in the result file");
    for text in said {
        assert_eq!(hex_runs(text), Vec::<&str>::new(), "in {text}");
    }
    // The ACL rule: `user sockbench reset on #SHA256 …`, and no plain password.
    assert!(config.contains("user default off"), "{config}");
    assert!(!config.contains("requirepass"), "{config}");
    let hash = config
        .split_whitespace()
        .find_map(|w| w.strip_prefix('#'))
        .unwrap_or_else(|| panic!("no password hash in {config}"));
    assert_eq!(hash.len(), 64, "{hash}");
    assert!(!rest.contains(hash) && said.iter().all(|s| !s.contains(hash)));
}

/// The `(case, transport)` pairs of `experiment`'s records, sorted; the case is the
/// value of `param` (or 0 without one).
fn grid(file: &Value, experiment: &str, param: &str) -> Vec<(u64, String)> {
    let mut found: Vec<(u64, String)> = results(file, experiment)
        .iter()
        .map(|r| {
            (
                r["params"][param].as_u64().unwrap_or(0),
                r["transport"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

fn expected(cases: &[u64], transports: &[&str]) -> Vec<(u64, String)> {
    let mut all: Vec<(u64, String)> = cases
        .iter()
        .flat_map(|&c| transports.iter().map(move |t| (c, t.to_string())))
        .collect();
    all.sort();
    all
}

/// How many records each experiment of a default quick run has on the three
/// transports.
fn records_of(experiment: &str) -> usize {
    let cases = if experiment == "redis.get" { 3 } else { 1 };
    cases * TRANSPORTS.len()
}

/// The experiments in the file are the first ones of the run, each complete; the
/// run ended before the last.
fn assert_kept_a_complete_prefix(file: &Value) -> Vec<String> {
    let kept = experiments(file);
    assert!(
        !kept.is_empty() && kept.len() < EXPERIMENTS.len(),
        "{kept:?}"
    );
    assert_eq!(kept, EXPERIMENTS[..kept.len()], "kept in order");
    for e in &kept {
        assert_eq!(results(file, e).len(), records_of(e), "{e} is incomplete");
    }
    kept
}

#[test]
fn the_quick_suite_runs_every_experiment_on_every_transport_and_leaves_nothing() {
    let test = "the_quick_suite_runs_every_experiment";
    let Some(program) = redis_installed(test) else {
        return;
    };
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let run = Watched::start(
        &scratch,
        &["redis", "--quick", "--json", json.to_str().unwrap()],
        &[],
    );
    let done = run.finish(QUICK_RUN);
    assert!(done.status.success(), "redis failed: {}", done.stderr);
    assert!(
        done.stdout.contains("Commands to Redis"),
        "no verdict line for Redis in:\n{}",
        done.stdout
    );
    for id in EXPERIMENTS {
        assert!(done.stdout.contains(id), "no {id} in:\n{}", done.stdout);
    }

    let file = load(&json);
    assert_eq!(experiments(&file), EXPERIMENTS);
    for e in ["redis.ping", "redis.pipeline", "redis.connect"] {
        assert_eq!(grid(&file, e, "none"), expected(&[0], &TRANSPORTS), "{e}");
    }
    assert_eq!(
        grid(&file, "redis.get", "size"),
        expected(&[64, 4096, 65536], &TRANSPORTS)
    );
    assert_eq!(
        grid(&file, "redis.pipeline", "depth"),
        expected(&[16], &TRANSPORTS)
    );
    assert_eq!(
        grid(&file, "redis.concurrent", "clients"),
        expected(&[50], &TRANSPORTS)
    );
    let version = version_of(&program);
    for r in file["results"].as_array().unwrap() {
        let s = &r["server"];
        assert_eq!(s["kind"], "redis", "{r}");
        assert_eq!(s["throwaway"], true, "{r}");
        assert_eq!(s["version"], version.as_str(), "{r}");
        let tls = r["transport"] == "tls";
        assert_eq!(r["tls"].is_object(), tls, "TLS recorded only for tls: {r}");
        if tls {
            assert_eq!(r["tls"]["version"], "TLSv1.3", "{r}");
        }
    }
    check_plausible(&file);

    assert_eq!(
        done.servers.len(),
        1,
        "one throwaway server: {:?}",
        done.servers
    );
    assert_eq!(done.dirs.len(), 1, "one private directory: {:?}", done.dirs);
    let config = done
        .config
        .as_deref()
        .expect("redis.conf seen while it ran");
    assert_no_secret(&file, &[&done.stdout, &done.stderr], config);
    done.assert_nothing_left(&scratch);
    assert_eq!(leftovers(&scratch), Vec::<std::path::PathBuf>::new());
}

/// Figures of the right kind and order of magnitude, on a busy machine too.
fn check_plausible(file: &Value) {
    for e in ["redis.ping", "redis.get"] {
        for r in results(file, e) {
            let p50 = number(r, "metrics.rtt_ns.p50");
            assert!((1e3..1e8).contains(&p50), "{e} round trip {p50} ns");
            assert!(p50 <= number(r, "metrics.rtt_ns.p99"));
            assert!(number(r, "metrics.ops_per_s") > 0.0);
        }
    }
    for r in results(file, "redis.pipeline") {
        let per_get = number(r, "metrics.per_command_ns");
        let round_trip = number(r, "metrics.rtt_ns.p50");
        assert!(
            0.0 < per_get && per_get < round_trip,
            "a pipelined GET {per_get} ns, its pipeline {round_trip} ns"
        );
    }
    for r in results(file, "redis.connect") {
        assert!(number(r, "metrics.conn_per_s") > 0.0, "{r}");
        let p50 = number(r, "metrics.latency_ns.p50");
        assert!((1e4..1e9).contains(&p50), "a connection {p50} ns");
    }
    for r in results(file, "redis.concurrent") {
        assert!(number(r, "metrics.ops_per_s") > 0.0, "{r}");
        let (p50, p99, p999) = (
            number(r, "metrics.rtt_ns.p50"),
            number(r, "metrics.rtt_ns.p99"),
            number(r, "metrics.rtt_ns.p999"),
        );
        assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "{p50} {p99} {p999}");
    }
}

#[test]
fn ctrl_c_keeps_the_finished_experiments_and_stops_the_server() {
    let Some(_) = redis_installed("ctrl_c_keeps_the_finished_experiments") else {
        return;
    };
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut run = Watched::start(
        &scratch,
        &["redis", "--quick", "--json", json.to_str().unwrap()],
        &[],
    );
    assert!(
        run.until(QUICK_RUN, |_| holds(&json, "redis.ping")),
        "sockbench ended before redis.ping was saved"
    );
    assert_eq!(run.servers.len(), 1, "{:?}", run.servers);
    run.signal(libc::SIGINT);
    let done = run.finish(Duration::from_secs(60));
    assert_eq!(done.status.code(), Some(130), "{}", done.stderr);
    assert!(done.stderr.contains("interrupted"), "{}", done.stderr);
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    let file = load(&json);
    let kept = assert_kept_a_complete_prefix(&file);
    assert_eq!(kept[0], "redis.ping");
    done.assert_nothing_left(&scratch);
    assert_eq!(leftovers(&scratch), Vec::<std::path::PathBuf>::new());
}

#[test]
fn a_server_killed_mid_run_is_one_line_and_the_finished_experiments_are_kept() {
    let Some(_) = redis_installed("a_server_killed_mid_run") else {
        return;
    };
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut run = Watched::start(
        &scratch,
        &["redis", "--quick", "--json", json.to_str().unwrap()],
        &[],
    );
    assert!(
        run.until(QUICK_RUN, |_| holds(&json, "redis.ping")),
        "sockbench ended before redis.ping was saved"
    );
    // The throwaway server: sockbench's child named redis-server.
    let server = throwaway_servers(run.pid());
    assert_eq!(server.len(), 1, "one redis-server child: {server:?}");
    assert!(server[0].running());
    // SAFETY: kill has no memory preconditions; the PID is the redis-server this
    // test's own sockbench started, checked running (same start time) just before.
    unsafe { libc::kill(server[0].pid as libc::pid_t, libc::SIGKILL) };
    let done = run.finish(Duration::from_secs(60));
    let stderr = &done.stderr;
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert_eq!(
        after_estimate(stderr).trim_end().lines().count(),
        1,
        "one line: {stderr}"
    );
    assert!(
        after_estimate(stderr).starts_with("error: redis.") && stderr.contains(" over "),
        "names the experiment and transport: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.to_lowercase().contains("backtrace"),
        "{stderr}"
    );
    let file = load(&json);
    let kept = assert_kept_a_complete_prefix(&file);
    assert_eq!(kept, ["redis.ping"], "only what finished before the kill");
    done.assert_nothing_left(&scratch);
    assert_eq!(leftovers(&scratch), Vec::<std::path::PathBuf>::new());
}

#[test]
fn after_sigkill_the_server_dies_and_the_next_run_removes_its_directory() {
    let Some(_) = redis_installed("after_sigkill_the_server_dies") else {
        return;
    };
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let mut run = Watched::start(&scratch, &["redis", "--quick"], &[]);
    assert!(
        run.until(QUICK_RUN, |w| !w.servers.is_empty() && !w.dirs.is_empty()),
        "sockbench ended before its server started"
    );
    run.signal(libc::SIGKILL);
    let killed = run.finish(Duration::from_secs(10));
    // The server is tied to sockbench's life: it gets SIGKILL too.
    let deadline = Instant::now() + Duration::from_secs(5);
    while killed.servers.iter().any(Process::running) {
        assert!(Instant::now() < deadline, "{:?}", killed.servers);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(killed.dirs.len(), 1, "{:?}", killed.dirs);
    assert!(
        killed.dirs[0].exists(),
        "a killed run cannot remove its directory"
    );
    // A server killed but not yet reaped (a zombie) no longer counts as alive.
    let next = Watched::start(
        &scratch,
        &[
            "redis",
            "--quick",
            "--experiments",
            "ping",
            "--transports",
            "unix",
        ],
        &[],
    )
    .finish(QUICK_RUN);
    assert!(next.status.success(), "{}", next.stderr);
    assert!(!killed.dirs[0].exists(), "the next run did not sweep it");
    next.assert_nothing_left(&scratch);
    assert_eq!(leftovers(&scratch), Vec::<std::path::PathBuf>::new());
}

/// `sockbench redis --url tcp=… --url unix=…` on a user's server, ping and get of
/// 64 B, quick, with `env`; what it did and its file (when it wrote one).
fn url_run(
    scratch: &Path,
    json: &Path,
    urls: [&str; 2],
    env: &[(&str, &str)],
) -> (Finished, Option<Value>) {
    let _ = std::fs::remove_file(json);
    let mut args = vec!["redis"];
    for url in &urls {
        args.extend(["--url", url]);
    }
    args.extend(["--experiments", "ping,get", "-d", "64", "--quick"]);
    args.extend(["--json", json.to_str().unwrap()]);
    let done = Watched::start(scratch, &args, env).finish(Duration::from_secs(120));
    assert!(done.servers.is_empty(), "a throwaway server for --url");
    assert!(done.dirs.is_empty(), "a private directory for --url");
    let file = json.exists().then(|| load(json));
    (done, file)
}

/// Neither password appears in anything sockbench said or wrote.
fn assert_not_shown(done: &Finished, file: Option<&Value>, passwords: &[&str]) {
    let written = file.map(Value::to_string).unwrap_or_default();
    for pw in passwords {
        for (what, text) in [
            ("stdout", &done.stdout),
            ("stderr", &done.stderr),
            ("the file", &written),
        ] {
            assert!(!text.contains(pw), "{pw} shown in {what}: {text}");
        }
    }
}

#[test]
fn url_measures_the_users_server_and_never_shows_its_password() {
    let Some(program) = redis_installed("url_measures_the_users_server") else {
        return;
    };
    let _turn = one_at_a_time();
    let mut server = UserRedis::start(&program);
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let tcp = format!("tcp=redis://127.0.0.1:{}", server.port);
    let unix = format!("unix=unix://{}", server.socket.display());
    let wrong = "not-the-pw-0815";

    // The password in REDISCLI_AUTH, as redis-cli takes it.
    let (done, file) = url_run(
        &scratch,
        &json,
        [&tcp, &unix],
        &[("REDISCLI_AUTH", USER_PASSWORD)],
    );
    assert!(done.status.success(), "{}", done.stderr);
    let file = file.expect("a result file");
    check_users_server(&file, &version_of(&program));
    assert_not_shown(&done, Some(&file), &[USER_PASSWORD]);

    // The password in the URLs: the file's command shows *** instead.
    let tcp_pw = format!("tcp=redis://:{USER_PASSWORD}@127.0.0.1:{}", server.port);
    let unix_pw = format!("unix=unix://:{USER_PASSWORD}@{}", server.socket.display());
    let (done, file) = url_run(&scratch, &json, [&tcp_pw, &unix_pw], &[]);
    assert!(done.status.success(), "{}", done.stderr);
    let file = file.expect("a result file");
    check_users_server(&file, &version_of(&program));
    assert_not_shown(&done, Some(&file), &[USER_PASSWORD]);
    let command: Vec<&str> = file["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // Each keeps its shape, only the password hidden.
    let urls: Vec<&str> = command
        .windows(2)
        .filter(|w| w[0] == "--url")
        .map(|w| w[1])
        .collect();
    assert_eq!(urls.len(), 2, "{command:?}");
    for url in urls {
        assert!(
            url.contains("://:***@"),
            "{url} is not shown as ://:***@ in {command:?}"
        );
    }

    // A wrong password, from the variable and in a URL: one line, nothing kept,
    // neither password shown.
    let tcp_wrong = format!("tcp=redis://:{wrong}@127.0.0.1:{}", server.port);
    let unix_wrong = format!("unix=unix://:{wrong}@{}", server.socket.display());
    for (urls, env) in [
        (
            [tcp.as_str(), unix.as_str()],
            &[("REDISCLI_AUTH", wrong)][..],
        ),
        ([tcp_wrong.as_str(), unix_wrong.as_str()], &[][..]),
    ] {
        let (done, file) = url_run(&scratch, &json, urls, env);
        let stderr = &done.stderr;
        assert_eq!(done.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains("the login was refused"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(file.is_none(), "a result file with no results");
        assert_not_shown(&done, None, &[USER_PASSWORD, wrong]);
    }

    assert!(server.running(), "the user's server was stopped");
    assert_eq!(leftovers(&scratch), Vec::<std::path::PathBuf>::new());
}

/// Ping and GET of 64 B over the two URLs, named `tcp` and `unix`, on a server
/// sockbench did not start.
fn check_users_server(file: &Value, version: &str) {
    assert_eq!(experiments(file), ["redis.ping", "redis.get"]);
    assert_eq!(
        grid(file, "redis.ping", "none"),
        expected(&[0], &["tcp", "unix"])
    );
    assert_eq!(
        grid(file, "redis.get", "size"),
        expected(&[64], &["tcp", "unix"])
    );
    for r in file["results"].as_array().unwrap() {
        let s = &r["server"];
        assert_eq!(s["kind"], "redis", "{r}");
        assert_eq!(s["throwaway"], false, "{r}");
        assert_eq!(s["version"], version, "the version INFO reports: {r}");
        assert!(r["tls"].is_null(), "{r}");
        assert!(number(r, "metrics.rtt_ns.p50") > 0.0);
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, mentions) in [
        (
            &["redis", "--url", "redis://10.1.2.3"][..],
            "not on this machine",
        ),
        (&["redis", "-P", "0"], "-P/--pipeline must be between 1 and"),
        (&["redis", "--transports", "unix-abstract"], "unix-abstract"),
        (&["redis", "-c", "0"], "-c/--clients"),
        (
            &[
                "redis",
                "--url",
                "a=redis://127.0.0.1",
                "--url",
                "a=unix:///x.sock",
            ],
            "two --url are named a",
        ),
    ] {
        assert_rejected(args, mentions);
    }
    // A NAME holds what the PostgreSQL family's do: no control character, no
    // runaway length.
    let long = format!("{}=redis://127.0.0.1", "n".repeat(5_000));
    for (url, mentions) in [
        (
            "a\x07\x1b[2Jb=redis://127.0.0.1",
            "letters, digits, '-', '_' or '.'",
        ),
        (long.as_str(), "5000 characters long; use at most 64"),
    ] {
        assert_rejected(&["redis", "--url", url], mentions);
    }
    // A refused URL is shown without its password.
    let tmp = tempdir();
    let out = run(tmp.path(), &["redis", "--url", "redis://:hunter2@10.1.2.3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(stderr.contains("redis://***@10.1.2.3"), "{stderr}");
}
