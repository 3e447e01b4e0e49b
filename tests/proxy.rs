//! `sockbench proxy` against a real nginx: the quick suite gives every experiment
//! on unix, tcp and tls, with figures that hold together (a connection costs more than
//! a request on a kept one, many connections keep as many requests out, every
//! rate is its trial's responses over its time), the server side's CPU role by
//! role (nginx as `proxy`, the app server as `app`) in the file and the CSV, the
//! TLS the client negotiated on direct's tls column only, and leaves no process or
//! directory; an app server overrun through a Unix socket
//! makes failed requests, counted and kept out of the 2xx rate;
//! Ctrl-C keeps what finished; a killed nginx ends the run in one line; a
//! sockbench killed outright takes nginx (workers included) and the app server
//! with it, and the next run sweeps the directories it left. Without nginx
//! installed the tests say so and return (CI installs it).
//!
//! The runs take turns ([`one_at_a_time`]): each starts its own nginx and app
//! server on a 2-core machine.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const EXPERIMENTS: [&str; 6] = [
    "proxy.request",
    "proxy.keepalive",
    "proxy.direct",
    "proxy.connect",
    "proxy.concurrent",
    "proxy.overload",
];
/// The shortest run that has every experiment: two rounds, one size.
const SHORT: [&str; 6] = ["proxy", "--quick", "--trials", "2", "--sizes", "0"];

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether nginx is installed where sockbench looks; otherwise says why the test
/// is skipped.
fn nginx_installed(test: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .any(|d| d.join("nginx").is_file());
    if !found {
        eprintln!("SKIPPED {test}: nginx is not installed (apt-get install nginx)");
    }
    found
}

/// Every process below `pid` now (children, their children, …).
fn below(pid: u32) -> Vec<u32> {
    let parent_of = |p: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        rest.split_whitespace().nth(1)?.parse().ok()
    };
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(all.iter().filter(|&&c| parent_of(c) == Some(p)));
        i += 1;
    }
    found.remove(0);
    found
}

/// The processes of `pids` still alive (zombies are dead).
fn alive(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .is_ok_and(|s| s.rfind(')').is_some_and(|i| !s[i..].starts_with(") Z")))
        })
        .collect()
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn load(json: &Path) -> Value {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let errors = schema_errors(&file);
    assert!(
        errors.is_empty(),
        "result file breaks the schema: {errors:#?}"
    );
    file
}

/// Waits (bounded) until `done`, failing if the run ends first.
fn until(child: &mut KillOnDrop, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "{what} never happened");
        if child.0.try_wait().unwrap().is_some() {
            panic!("sockbench ended before {what}: {}", stderr_of(child));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Nothing of the run is left: none of `seen` runs (nginx's workers do not name
/// the scratch directory in their command line, so they are followed by PID) and
/// the scratch directory is empty.
fn assert_nothing_left(scratch: &Path, seen: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !alive(seen).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(alive(seen), Vec::<u32>::new(), "left running");
    assert_clean(scratch);
}

#[test]
fn the_quick_suite_measures_each_hop_with_cpu_by_role_and_leaves_nothing() {
    if !nginx_installed("the_quick_suite_measures_each_hop") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let child = sockbench(&scratch)
        .args(SHORT)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    // nginx (master and workers) and the app server, seen while the run goes on.
    let pid = child.0.id();
    until(&mut child, "nginx started", || {
        below(pid).iter().any(|&p| comm(p) == "nginx")
    });
    let seen = below(pid);
    assert!(seen.iter().any(|&p| comm(p) == "nginx"), "{seen:?}");
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let mut err = child.0.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        std::io::Read::read_to_string(&mut err, &mut stderr).unwrap();
        stderr
    });
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let status = wait_for_exit(&mut child, "sockbench did not end");
    let stderr = errors.join().unwrap();
    assert!(status.success(), "proxy failed: {stderr}");
    assert!(
        stdout.contains("nginx in front of an app server"),
        "no verdict line for the proxy in:\n{stdout}"
    );
    let file = load(&json);
    assert_eq!(experiments(&file), EXPERIMENTS);
    for id in EXPERIMENTS {
        let records = results(&file, id);
        let transports: Vec<&str> = records
            .iter()
            .map(|r| r["transport"].as_str().unwrap())
            .collect();
        let cases = if id == "proxy.keepalive" { 2 } else { 1 };
        assert_eq!(transports.len(), 3 * cases, "{id}: {transports:?}");
        for r in records {
            assert_eq!(r["server"]["kind"], "nginx", "{r}");
            // The client's own TLS, which only direct has: nginx's to the app
            // is not read.
            let tls = id == "proxy.direct" && r["transport"] == "tls";
            assert_eq!(r["tls"].is_object(), tls, "{id}: {r}");
            if tls {
                assert_eq!(r["tls"]["version"], "TLSv1.3", "{r}");
            }
            assert_eq!(r["server"]["throwaway"], true, "{r}");
            figures_are_plausible(&file, id, r);
            let roles = &r["metrics"]["cpu"]["roles"];
            if id == "proxy.direct" {
                // The app server alone: no nginx in the path, no roles apart.
                assert!(roles.is_null(), "{id}: {r}");
                assert!(r["metrics"]["cpu"]["server"].is_object(), "{r}");
            } else {
                for role in ["proxy", "app"] {
                    assert!(roles[role]["cpu_ns"].is_number(), "{id} {role}: {r}");
                }
            }
        }
    }
    let keepalive: Vec<&str> = results(&file, "proxy.keepalive")
        .iter()
        .map(|r| r["params"]["upstream_keepalive"].as_str().unwrap())
        .collect();
    assert!(
        keepalive.contains(&"on") && keepalive.contains(&"off"),
        "{keepalive:?}"
    );
    // The CSV carries the CPU of each role.
    let csv = run(
        tmp.path(),
        &["report", json.to_str().unwrap(), "--format", "csv"],
    );
    let csv = text(&csv.stdout);
    for role in ["proxy", "app"] {
        let figure = format!("cpu.roles.{role}.cpu_ns");
        assert!(csv.contains(&figure), "no {figure} in the CSV:\n{csv}");
    }
    assert_nothing_left(&scratch, &seen);
}

/// A figure of a record, which must be there.
fn figure(r: &Value, path: &[&str]) -> f64 {
    let mut v = &r["metrics"];
    for p in path {
        v = &v[p];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("no {} in {r}", path.join(".")))
}

/// Each trial of a record of many connections says its requests and their rates
/// alike: `requests_per_s` is every response over the trial's time, `ok_per_s`
/// (where there is one) the 2xx ones, so the failed ones are in neither silently.
fn rates_match_counts(r: &Value) {
    for t in r["trials"].as_array().unwrap() {
        let seconds = t["elapsed_ns"].as_f64().unwrap() / 1e9;
        let count = t["count"].as_f64().unwrap();
        let failed = t["failed"].as_f64().unwrap();
        assert!(count > 0.0 && failed <= count, "{t}");
        let all = t["requests_per_s"].as_f64().unwrap() * seconds;
        assert!((all - count).abs() < 1.0, "{all} for {count}: {t}");
        if let Some(ok) = t["ok_per_s"].as_f64() {
            let ok = ok * seconds;
            assert!((ok - (count - failed)).abs() < 1.0, "{ok} 2xx: {t}");
        }
    }
}

/// What every experiment's record must hold, and how its figures must relate.
fn figures_are_plausible(file: &Value, id: &str, r: &Value) {
    let transport = r["transport"].as_str().unwrap();
    let over = |id: &str, path: &[&str]| -> f64 {
        let same = results(file, id)
            .into_iter()
            .find(|o| o["transport"] == transport)
            .unwrap_or_else(|| panic!("no {id} over {transport}"));
        figure(same, path)
    };
    match id {
        "proxy.connect" => {
            assert_eq!(r["metrics"]["failed"], 0, "{r}");
            let connection = figure(r, &["connection_ns", "p50"]);
            let rate = figure(r, &["requests_per_s"]);
            // One connection at a time: its rate is about one over its time…
            let busy = rate * connection / 1e9;
            assert!((0.3..=3.0).contains(&busy), "{busy}: {r}");
            // …which is more than a request on a kept connection.
            let request = over("proxy.request", &["rtt_ns", "p50"]);
            assert!(connection > request, "{connection} ≤ {request}: {r}");
            rates_match_counts(r);
        }
        "proxy.concurrent" => {
            assert_eq!(r["metrics"]["failed"], 0, "{r}");
            let connections = r["params"]["connections"].as_f64().unwrap();
            assert_eq!(connections, 50.0, "{r}");
            // Little's law: as many requests out on average as connections.
            let rate = figure(r, &["requests_per_s"]);
            let out = rate * figure(r, &["rtt_ns", "p50"]) / 1e9;
            assert!(
                (connections / 4.0..=connections * 4.0).contains(&out),
                "{out} requests out for {connections} connections: {r}"
            );
            rates_match_counts(r);
        }
        "proxy.overload" => {
            // Whether 50 connections overrun a backlog of 8 here is the machine's;
            // the test of its own below forces it.
            assert!(figure(r, &["failed"]) >= 0.0, "{r}");
            assert!(
                figure(r, &["ok_per_s"]) <= figure(r, &["requests_per_s"]),
                "{r}"
            );
            assert!(figure(r, &["rtt_ns", "p50"]) > 0.0, "{r}");
            assert_eq!(r["params"]["backlog"], 8, "{r}");
            rates_match_counts(r);
        }
        _ => {
            assert_eq!(r["metrics"]["failed"], 0, "{r}");
            assert!(figure(r, &["rtt_ns", "p50"]) > 0.0, "{r}");
        }
    }
}

#[test]
fn overload_counts_failed_requests_and_keeps_them_out_of_the_rate() {
    if !nginx_installed("overload_counts_failed_requests") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    // Two hundred connections at once through nginx to an app server that lets
    // two wait: over a Unix socket nginx's connections past them fail at once.
    let out = run(
        &scratch,
        &[
            "proxy",
            "--quick",
            "--trials",
            "2",
            "--experiments",
            "overload",
            "--sizes",
            "0",
            "-c",
            "200",
            "--app-backlog",
            "1",
            "--tables",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let file = load(&json);
    let records = results(&file, "proxy.overload");
    assert_eq!(records.len(), 3, "{records:?}");
    for r in &records {
        assert_eq!(r["params"]["connections"], 200, "{r}");
        assert_eq!(r["params"]["backlog"], 1, "{r}");
        rates_match_counts(r);
        // What TCP does is the machine's: said, not asserted.
        eprintln!(
            "{}: {} failed of {} answered, {:.0} 2xx/s of {:.0}/s, p99 {:.0} µs",
            r["transport"],
            r["metrics"]["failed"],
            r["trials"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["count"].as_u64().unwrap())
                .sum::<u64>(),
            figure(r, &["ok_per_s"]),
            figure(r, &["requests_per_s"]),
            figure(r, &["rtt_ns", "p99"]) / 1e3,
        );
    }
    let unix = records.iter().find(|r| r["transport"] == "unix").unwrap();
    assert!(figure(unix, &["failed"]) > 0.0, "no failed request: {unix}");
    assert!(
        figure(unix, &["ok_per_s"]) < figure(unix, &["requests_per_s"]),
        "the failed requests are in the 2xx rate: {unix}"
    );
    // The table shows them, and its note says whose failed (in Markdown, whose
    // lines are not wrapped to a terminal's width).
    assert!(stdout.contains("failed requests"), "{stdout}");
    let markdown = run(
        tmp.path(),
        &["report", json.to_str().unwrap(), "--format", "markdown"],
    );
    let markdown = text(&markdown.stdout);
    for said in ["failed requests: unix", "none of them in the 2xx rate"] {
        assert!(markdown.contains(said), "{said:?} not in:\n{markdown}");
    }
    assert_clean(&scratch);
}

#[test]
fn ctrl_c_keeps_the_finished_experiments_and_stops_nginx_and_the_app() {
    if !nginx_installed("ctrl_c_keeps_the_finished_experiments") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(&scratch, &json, "proxy.request", &SHORT);
    let seen = below(child.0.id());
    assert!(seen.iter().any(|&p| comm(p) == "nginx"), "{seen:?}");
    signal(&child.0, libc::SIGINT);
    let status = wait_for_exit(&mut child, "sockbench did not stop after Ctrl-C");
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let file = load(&json);
    assert_eq!(experiments(&file)[0], "proxy.request");
    assert_nothing_left(&scratch, &seen);
}

#[test]
fn a_killed_nginx_ends_the_run_in_one_line() {
    if !nginx_installed("a_killed_nginx_ends_the_run") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(&scratch, &json, "proxy.request", &SHORT);
    let seen = below(child.0.id());
    // The master: the nginx process whose parent is not nginx.
    let master = seen
        .iter()
        .copied()
        .find(|&p| comm(p) == "nginx" && below(p).iter().any(|&w| comm(w) == "nginx"))
        .expect("an nginx master with workers");
    // SAFETY: a plain signal to the nginx master this test's sockbench started.
    unsafe { libc::kill(master as libc::pid_t, libc::SIGKILL) };
    let status = wait_for_exit(&mut child, "sockbench did not end after nginx died");
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(1), "{stderr}");
    let said = after_estimate(&stderr);
    assert_eq!(said.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(said.contains("nginx"), "names nginx: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_nothing_left(&scratch, &seen);
}

#[test]
fn after_sigkill_nginx_and_the_app_die_and_the_next_run_sweeps() {
    if !nginx_installed("after_sigkill_nginx_and_the_app_die") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(&scratch, &json, "proxy.request", &SHORT);
    let seen = below(child.0.id());
    assert!(
        seen.iter().filter(|&&p| comm(p) == "nginx").count() >= 2,
        "{seen:?}"
    );
    signal(&child.0, libc::SIGKILL);
    let _ = child.0.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !alive(&seen).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running: {:?}",
            alive(&seen)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !leftovers(&scratch).is_empty(),
        "a killed run leaves its directories"
    );
    let next = run(
        &scratch,
        &[
            "proxy",
            "--quick",
            "--trials",
            "1",
            "--sizes",
            "0",
            "--experiments",
            "direct",
        ],
    );
    assert!(next.status.success(), "{}", text(&next.stderr));
    assert_clean(&scratch);
}
