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
//! with it, and the next run sweeps the directories it left; a daemon a user's
//! `--app` command starts (`setsid -f`) is gone when the run ends. A stopped app
//! server or nginx worker ends the run within the client's wait for a response,
//! in one line, leaving nothing. Another local account, during a run, can change
//! nothing in its private directories, reach no socket there and signal none of
//! its processes, and everything nginx and the app server listen on is on
//! 127.0.0.1 or in those directories. Without nginx installed the tests say so
//! and return (CI installs it); the other account's test also needs root.
//!
//! The runs take turns ([`one_at_a_time`]): each starts its own nginx and app
//! server on a 2-core machine.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
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

/// The parent of process `pid`, while it runs.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every process below `pid` now (children, their children, …).
fn below(pid: u32) -> Vec<u32> {
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
fn until(child: &mut KillOnDrop, what: &str, mut done: impl FnMut() -> bool) {
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
    // The processes are kept as they were when nginx was seen: between two
    // transports nginx is stopped and the next one not yet started.
    let mut seen = Vec::new();
    until(&mut child, "nginx started", || {
        seen = below(pid);
        seen.iter().any(|&p| comm(p) == "nginx")
    });
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

/// The command line of process `pid`, its arguments joined by spaces.
fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .unwrap_or_default()
}

/// The real user ID process `pid` runs as.
fn uid_of(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"));
    line.and_then(|ids| ids.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no Uid in /proc/{pid}/status"))
}

/// Bytes process `pid` has written so far (an app server's or nginx worker's
/// responses among them).
fn written(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// The servers of one run as the host sees them (`nginx.rs` and
/// `app_process.rs` draw the tree): the app servers are sockbench's children
/// running `serve --http`; nginx's keeper is sockbench's child whose child is
/// nginx's master, and the workers are the master's children.
struct Servers {
    keeper: u32,
    master: u32,
    workers: Vec<u32>,
    apps: Vec<u32>,
}

impl Servers {
    /// The servers below the run `run` (sockbench's PID), once nginx's master is up.
    fn of(run: u32) -> Option<Servers> {
        let all = below(run);
        let master = all
            .iter()
            .copied()
            .find(|&p| cmdline(p).starts_with("nginx: master process"))?;
        let keeper = parent_of(master).filter(|&k| parent_of(k) == Some(run))?;
        let workers = all
            .iter()
            .copied()
            .filter(|&p| parent_of(p) == Some(master))
            .filter(|&p| cmdline(p).starts_with("nginx: worker process"))
            .collect();
        let apps = all
            .iter()
            .copied()
            .filter(|&p| parent_of(p) == Some(run) && cmdline(p).contains(" serve --http "))
            .collect();
        Some(Servers {
            keeper,
            master,
            workers,
            apps,
        })
    }
}

/// A run long enough to act on while it goes: `experiments` with 0 B responses
/// over unix and tcp, 30 rounds of 0.5 s request trials (about 40 s before
/// anything else planned); stderr kept for its last line.
fn long_run(scratch: &Path, experiments: &str) -> KillOnDrop {
    let args = ["proxy", "--experiments", experiments, "--sizes", "0"];
    let child = sockbench(scratch)
        .args(args)
        .args(["--trials", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

/// Waits until the run's trials are under way (an app server has written about
/// 100 kB of responses through nginx) and returns its servers.
fn serving(child: &mut KillOnDrop) -> Servers {
    let run = child.0.id();
    until(child, "the trials started", || {
        Servers::of(run)
            .is_some_and(|s| !s.workers.is_empty() && s.apps.iter().any(|&a| written(a) > 100_000))
    });
    Servers::of(run).unwrap()
}

/// A process of the run stopped with SIGSTOP through a descriptor of the process
/// (so no signal can reach a process that took its PID later), continued and
/// killed when dropped: a failing test leaves nothing stopped.
struct Stopped(std::os::fd::OwnedFd);

impl Stopped {
    fn new(pid: u32, what: &str) -> Stopped {
        use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
        let held = Pid::from_raw(pid as i32).and_then(|p| pidfd_open(p, PidfdFlags::empty()).ok());
        let fd = held.unwrap_or_else(|| panic!("{what} ({pid}) is gone"));
        // Checked once held: still the process that was found.
        let now = cmdline(pid);
        assert!(
            now.contains("serve --http") || now.starts_with("nginx: worker"),
            "{now}"
        );
        pidfd_send_signal(&fd, Signal::STOP).unwrap();
        Stopped(fd)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        use rustix::process::{pidfd_send_signal, Signal};
        let _ = pidfd_send_signal(&self.0, Signal::CONT);
        let _ = pidfd_send_signal(&self.0, Signal::KILL);
    }
}

/// How long a run may take to end once a server stops answering mid-trial. The
/// client waits `wait::LIMIT` for a whole response (10 s; `proxy/http.rs` uses it
/// as its `LIMIT`), which ends at most one `wait::SLICE` (0.25 s) late; the trial
/// then gives the servers `suite.rs`'s `DYING` (0.5 s) to be seen gone; then the
/// servers stop: nginx within `nginx.rs`'s `STOP_TIMEOUT` (5 s; its master kills
/// a stopped worker about a second after its SIGTERM), each app server within
/// `app_process.rs`'s (2 s; a stopped one holds SIGTERM pending until it is
/// killed). That is 17.75 s at most; 5 s more for a busy machine. nginx's own
/// wait for the app (`proxy_read_timeout`, not set in `nginx.rs`: nginx's default
/// of 60 s) never comes into it: the client gives up first.
const STALL_ENDS: Duration = Duration::from_millis(22_750);

/// Stops `victim` (one of the run's servers, SIGSTOP) while the run's trials go
/// on: the run ends within [`STALL_ENDS`], exit 1, with one line naming the
/// trial and the wait that ran out, and leaves no process and no directory.
/// Returns how long it took to end.
fn a_stall_ends_the_run(what: &str, victim: fn(&Servers) -> u32) -> Duration {
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let mut child = long_run(&scratch, "request");
    let servers = serving(&mut child);
    let seen = below(child.0.id());
    let pid = victim(&servers);
    // After the run's guard, so dropped first: continued before the run is killed.
    let stopped = Stopped::new(pid, what);
    let (status, took) = exit_within(&mut child, STALL_ENDS);
    let stderr = stderr_of(&mut child);
    eprintln!("{what} stopped: the run ended {took:.2?} later");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    let said = after_estimate(&stderr);
    assert_eq!(said.trim_end().lines().count(), 1, "one line: {stderr}");
    for words in [
        "error: proxy.request",
        "failed in trial",
        "did not answer within 10 s",
    ] {
        assert!(said.contains(words), "{words:?} not in: {stderr}");
    }
    assert!(seen.contains(&pid), "{pid} not in {seen:?}");
    assert_nothing_left(&scratch, &seen);
    drop(stopped);
    took
}

#[test]
fn a_stalled_app_server_ends_the_run_within_the_clients_limit() {
    if !nginx_installed("a_stalled_app_server_ends_the_run") {
        return;
    }
    let _turn = one_at_a_time();
    a_stall_ends_the_run("the app server", |s| {
        assert_eq!(s.apps.len(), 1, "one app server for request");
        s.apps[0]
    });
}

#[test]
fn a_stalled_nginx_worker_ends_the_run_within_the_clients_limit() {
    if !nginx_installed("a_stalled_nginx_worker_ends_the_run") {
        return;
    }
    let _turn = one_at_a_time();
    a_stall_ends_the_run("nginx's worker", |s| {
        // One worker by default: stopped, nothing else answers nginx's ports.
        assert_eq!(s.workers.len(), 1, "{:?}", s.workers);
        s.workers[0]
    });
}

/// What another account tries, one attempt a line (`OP\tPATH[\tPATH]`, or a PID
/// for `kill`), each answered `OP\tPATH\tERRNO` (0: it worked). Perl, which every
/// Debian system has, makes each system call alone and tells its errno, where a
/// shell command's message would not tell a refusal from a typo'd path.
const TRIES: &str = r#"
use strict; use warnings; use Fcntl; use Socket;
$| = 1;
print "id\t$<\t$>\n";
my @held;
while (my $line = <STDIN>) {
    chomp $line;
    my ($op, $x, $y) = split /\t/, $line;
    my $ok;
    if ($op eq 'create') { $ok = sysopen(my $f, $x, O_WRONLY | O_CREAT | O_EXCL, 0600) }
    elsif ($op eq 'write') { $ok = sysopen(my $f, $x, O_WRONLY | O_APPEND | O_NOFOLLOW) }
    elsif ($op eq 'mkdir') { $ok = mkdir $x }
    elsif ($op eq 'rmdir') { $ok = rmdir $x }
    elsif ($op eq 'symlink') { $ok = symlink '/etc/passwd', $x }
    elsif ($op eq 'rename') { $ok = rename $x, $y }
    elsif ($op eq 'unlink') { $ok = unlink $x }
    elsif ($op eq 'listen') {
        socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
        $ok = bind($s, pack_sockaddr_un($x)) && listen($s, 1);
        push @held, $s;
    }
    elsif ($op eq 'connect') {
        socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
        $ok = connect($s, pack_sockaddr_un($x));
    }
    elsif ($op eq 'kill') { $ok = kill 0, ($x eq 'self' ? $$ : $x) }
    else { die "unknown attempt $op" }
    print "$op\t$x\t", ($ok ? 0 : $! + 0), "\n";
}
"#;

/// Attempts of another account, each with the errors it must end with (none:
/// it must work).
#[derive(Default)]
struct Attempts(Vec<(String, &'static [i32])>);

/// The errors of a refused change: EACCES (no write or search permission), or
/// EPERM.
const REFUSED: &[i32] = &[libc::EACCES, libc::EPERM];

impl Attempts {
    /// `op` on `args`, to end with one of `errors`.
    fn add(&mut self, op: &str, args: &[&Path], errors: &'static [i32]) {
        let args: Vec<String> = args.iter().map(|p| p.display().to_string()).collect();
        self.0.push((format!("{op}\t{}", args.join("\t")), errors));
    }

    /// Every change another account could make in `dir`, each to end with one of
    /// `errors`: a file, a directory or a link planted in it; each of its entries
    /// moved away, removed, replaced by `own` (a file of the account's own on the
    /// same file system), written when a file, connected to when a socket; and
    /// the same in each directory below. Returns the entries, found as root sees
    /// them.
    fn every_change(&mut self, dir: &Path, own: &Path, errors: &'static [i32]) -> Vec<PathBuf> {
        self.add("create", &[&dir.join("planted")], errors);
        self.add("mkdir", &[&dir.join("planted.d")], errors);
        self.add("symlink", &[&dir.join("planted.link")], errors);
        let mut entries = Vec::new();
        let mut list: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        list.sort_by_key(|e| e.file_name());
        for entry in list {
            let (path, kind) = (entry.path(), entry.file_type().unwrap());
            self.add("rename", &[&path, &dir.join("moved")], errors);
            if kind.is_dir() {
                self.add("rmdir", &[&path], errors);
                entries.extend(self.every_change(&path, own, errors));
            } else {
                self.add("unlink", &[&path], errors);
                self.add("rename", &[own, &path], errors);
            }
            if kind.is_file() {
                self.add("write", &[&path], errors);
            }
            if std::os::unix::fs::FileTypeExt::is_socket(&kind) {
                self.add("connect", &[&path], errors);
            }
            entries.push(path);
        }
        entries
    }

    /// Runs every attempt as `account` (`runuser`, bounded) and checks each ended
    /// as it must, after checking that they ran as that account (`uid`).
    fn run_as(&self, account: &str, uid: u32) {
        let input: String = self.0.iter().map(|(a, _)| format!("{a}\n")).collect();
        let out = assert_cmd::Command::new("runuser")
            .args(["-u", account, "--", "perl", "-e", TRIES])
            .current_dir("/")
            .write_stdin(input)
            .timeout(Duration::from_secs(30))
            .output()
            .expect("runuser runs");
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{stderr}");
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some(format!("id\t{uid}\t{uid}").as_str()));
        let answers: Vec<&str> = lines.collect();
        assert_eq!(answers.len(), self.0.len(), "{stdout}{stderr}");
        for ((attempt, errors), answer) in self.0.iter().zip(answers) {
            let (done, errno) = answer.rsplit_once('\t').unwrap();
            assert!(attempt.starts_with(done), "{attempt:?} answered {answer:?}");
            let errno: i32 = errno.parse().unwrap();
            let as_said = std::io::Error::from_raw_os_error(errno);
            if errors.is_empty() {
                assert_eq!(errno, 0, "{account} could not {attempt:?}: {as_said}");
            } else {
                assert!(
                    errors.contains(&errno),
                    "{account} tried {attempt:?}: {}",
                    if errno == 0 {
                        "it worked".into()
                    } else {
                        as_said.to_string()
                    }
                );
            }
        }
    }
}

/// An account (name, user ID, group ID) from /etc/passwd.
fn account(name: &str) -> Option<(String, u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let line = passwd.lines().find(|l| l.split(':').next() == Some(name))?;
    let f: Vec<&str> = line.split(':').collect();
    Some((
        name.to_string(),
        f.get(2)?.parse().ok()?,
        f.get(3)?.parse().ok()?,
    ))
}

/// Everything process `pid` listens on or has bound, as its network namespace
/// lists it (`/proc/PID/net`): `tcp 127.0.0.1:PORT`, `unix PATH` (`@NAME` when
/// abstract); any IPv6 or UDP socket as `tcp6 …`, `udp …`, `udp6 …`.
fn listening(pid: u32) -> Vec<String> {
    let sockets: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|l| {
            Some(
                l.to_str()?
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let table = |name: &str| std::fs::read_to_string(format!("/proc/{pid}/net/{name}")).unwrap();
    let mut found = Vec::new();
    for name in ["tcp", "tcp6", "udp", "udp6"] {
        for line in table(name).lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if !sockets.iter().any(|s| s == f[9]) || (name.starts_with("tcp") && f[3] != "0A") {
                continue;
            }
            let shown = match (name, f[1].split_once(':')) {
                ("tcp", Some((addr, port))) => {
                    let addr = u32::from_str_radix(addr, 16).unwrap();
                    let ip = std::net::Ipv4Addr::from(addr.to_ne_bytes());
                    format!("{ip}:{}", u16::from_str_radix(port, 16).unwrap())
                }
                _ => f[1].to_string(),
            };
            found.push(format!("{name} {shown}"));
        }
    }
    for line in table("unix").lines().skip(1) {
        // Num RefCount Protocol Flags Type St Inode [Path]; flag 0x10000: listens.
        let f: Vec<&str> = line.split_whitespace().collect();
        if sockets.iter().any(|s| s == f[6]) && f[3] == "00010000" {
            found.push(format!("unix {}", f.get(7).unwrap_or(&"(unnamed)")));
        }
    }
    found
}

#[test]
fn another_account_changes_nothing_of_a_run_and_it_listens_on_loopback_only() {
    if !nginx_installed("another_account_changes_nothing_of_a_run") {
        return;
    }
    if !root("another_account_changes_nothing_of_a_run: runuser") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    // The overload experiment's app server too: three private directories.
    let mut child = long_run(&scratch, "request,overload");
    let servers = serving(&mut child);
    let run = child.0.id();
    let seen = below(run);
    assert_eq!(servers.apps.len(), 2, "{seen:?}");
    let server_uid = uid_of(servers.master);
    assert_ne!(server_uid, 0, "nginx runs as root");
    for &p in servers.apps.iter().chain(&servers.workers) {
        assert_eq!(uid_of(p), server_uid, "{}", cmdline(p));
    }
    // Another account: not root, not the servers'.
    let (name, uid, gid) = ["nobody", "daemon", "bin"]
        .iter()
        .filter_map(|n| account(n))
        .find(|&(_, uid, _)| uid != 0 && uid != server_uid)
        .expect("an unprivileged account besides the servers'");

    let mut attempts = Attempts::default();
    // First, in a directory of its own beside the run's (on the same file
    // system, so a rename below is refused for its permissions, not as EXDEV):
    // every kind of attempt works there, so a refusal below is the run's doing.
    let own_dir = tmp.path().join("other");
    std::fs::create_dir(&own_dir).unwrap();
    std::os::unix::fs::chown(&own_dir, Some(uid), Some(gid)).unwrap();
    let at = |name: &str| own_dir.join(name);
    let own = at("own");
    attempts.add("create", &[&own], &[]);
    attempts.add("write", &[&own], &[]);
    attempts.add("create", &[&at("planted")], &[]);
    attempts.add("mkdir", &[&at("planted.d")], &[]);
    attempts.add("rmdir", &[&at("planted.d")], &[]);
    attempts.add("symlink", &[&at("planted.link")], &[]);
    attempts.add("create", &[&at("spare")], &[]);
    attempts.add("rename", &[&at("spare"), &at("planted")], &[]);
    attempts.add("rename", &[&at("planted"), &at("moved")], &[]);
    attempts.add("unlink", &[&at("moved")], &[]);
    attempts.add("listen", &[&at("sock")], &[]);
    attempts.add("connect", &[&at("sock")], &[]);
    attempts.add("kill", &[Path::new("self")], &[]);
    // Then each private directory of the run, and everything in it.
    let private: Vec<PathBuf> = leftovers(&scratch)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("sockbench-proxy-")
        })
        .collect();
    assert_eq!(
        private.len(),
        3,
        "nginx's and two app servers': {private:?}"
    );
    let mut entries = Vec::new();
    for dir in &private {
        entries.extend(attempts.every_change(dir, &own, REFUSED));
    }
    let named = |n: &str| {
        entries
            .iter()
            .filter(|p| p.file_name().unwrap() == n)
            .count()
    };
    // What must have been tried (the lock file exists only with accept_mutex on).
    for (file, count) in [
        ("nginx.conf", 1),
        ("nginx.pid", 1),
        ("nginx.log", 1),
        ("srv", 1),
        ("proxy", 1),
        ("sockbench.sock", 2),
        ("sockbench.owner", 3),
    ] {
        assert_eq!(named(file), count, "{file} in {entries:#?}");
    }
    // Signals to every process of the run's.
    let processes: Vec<u32> = [run, servers.keeper, servers.master]
        .into_iter()
        .chain(servers.workers.iter().copied())
        .chain(servers.apps.iter().copied())
        .collect();
    for pid in &processes {
        attempts.add("kill", &[Path::new(&pid.to_string())], &[libc::EPERM]);
    }
    attempts.run_as(&name, uid);
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the run ended meanwhile"
    );

    // What nginx and the app servers listen on: 127.0.0.1, and the app servers'
    // sockets in their private directories.
    let in_private = |path: &str| private.iter().any(|d| Path::new(path).parent() == Some(d));
    let nginx_ports = listening(servers.master);
    assert_eq!(
        nginx_ports.len(),
        9,
        "3 sites over 3 transports (unix, tcp, tls): {nginx_ports:?}"
    );
    for pid in [servers.master, servers.keeper]
        .into_iter()
        .chain(servers.workers.iter().copied())
        .chain(servers.apps.iter().copied())
    {
        let on = listening(pid);
        let loopback = |s: &String| s.starts_with("tcp 127.0.0.1:");
        if pid == servers.keeper {
            assert_eq!(on, Vec::<String>::new(), "the keeper");
        } else if servers.apps.contains(&pid) {
            assert_eq!(on.len(), 3, "two ports (tcp, tls) and a socket: {on:?}");
            assert_eq!(on.iter().filter(|s| loopback(s)).count(), 2, "{on:?}");
            let socket = on.iter().find_map(|s| s.strip_prefix("unix "));
            assert!(socket.is_some_and(in_private), "{on:?} not in {private:?}");
        } else {
            assert!(on.iter().all(loopback), "{}: {on:?}", cmdline(pid));
        }
    }

    signal(&child.0, libc::SIGINT);
    let status = wait_for_exit(&mut child, "sockbench did not stop after Ctrl-C");
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_nothing_left(&scratch, &seen);
}

/// Whether this runs as root; otherwise says that `what` needs it.
fn root(what: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("SKIPPED {what}: needs root");
    }
    root
}

/// Whether gunicorn is installed where sockbench looks; otherwise says why the
/// test is skipped.
fn gunicorn_installed(test: &str) -> bool {
    let found = ["/usr/bin/gunicorn", "/usr/local/bin/gunicorn"]
        .iter()
        .any(|p| Path::new(p).is_file());
    if !found {
        eprintln!("SKIPPED {test}: gunicorn is not installed (apt-get install gunicorn)");
    }
    found
}

/// A process seen below a run: its PID, command line and user ID, read while it
/// ran.
struct Seen {
    pid: u32,
    cmdline: String,
    uid: u32,
}

/// One `sockbench` run of `args` in `dir` (its working directory), to its end:
/// its result file, its stdout, and every process seen below it meanwhile.
fn measured(scratch: &Path, dir: &Path, args: &[&str]) -> (Value, String, Vec<Seen>) {
    let json = dir.join("out.json");
    let child = sockbench(scratch)
        .current_dir(dir)
        .args(args)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let pid = child.0.id();
    let mut out = child.0.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut out, &mut text).unwrap();
        text
    });
    let mut seen: Vec<Seen> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "sockbench did not end");
        for p in below(pid) {
            let status = std::fs::read_to_string(format!("/proc/{p}/status"));
            let uid = status.ok().and_then(|s| {
                let ids = s.lines().find_map(|l| l.strip_prefix("Uid:"))?;
                ids.split_whitespace().next()?.parse().ok()
            });
            match (seen.iter_mut().find(|s| s.pid == p), uid) {
                // A change of account and an exec after the fork: what it ends
                // with is what ran (a process that has exited, not yet reaped,
                // has an empty command line: the last one seen is kept).
                (Some(s), Some(uid)) => {
                    let now = cmdline(p);
                    if !now.is_empty() {
                        s.cmdline = now;
                        s.uid = uid;
                    }
                }
                (Some(_), None) => {}
                (None, _) => seen.extend(uid.map(|uid| Seen {
                    pid: p,
                    cmdline: cmdline(p),
                    uid,
                })),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = stderr_of(&mut child);
    assert!(
        child.0.wait().unwrap().success(),
        "sockbench {args:?} failed: {stderr}"
    );
    (load(&json), stdout.join().unwrap(), seen)
}

/// The PIDs of `seen`.
fn pids(seen: &[Seen]) -> Vec<u32> {
    seen.iter().map(|s| s.pid).collect()
}

/// The names of the columns of experiment `id`, in the file's order.
fn columns(file: &Value, id: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in results(file, id) {
        let name = r["transport"].as_str().unwrap().to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

#[test]
fn gunicorn_behind_nginx_is_measured_and_overrun_and_leaves_nothing() {
    if !nginx_installed("gunicorn_behind_nginx") || !gunicorn_installed("gunicorn_behind_nginx") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let args = [
        "proxy",
        "--quick",
        "--trials",
        "2",
        "--sizes",
        "0",
        "--app-server",
        "gunicorn",
        "--experiments",
        "request,direct,overload",
    ];
    let (file, _, seen) = measured(&scratch, tmp.path(), &args);
    // gunicorn's master and its sync worker ran below sockbench, as the account
    // nginx runs as, never as root.
    let gunicorn: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.cmdline.contains("--worker-class sync"))
        .collect();
    assert!(!gunicorn.is_empty(), "no gunicorn seen");
    for g in gunicorn {
        assert_ne!(g.uid, 0, "gunicorn ran as root: {}", g.cmdline);
    }
    for id in ["proxy.request", "proxy.direct", "proxy.overload"] {
        assert_eq!(columns(&file, id), ["unix", "tcp"], "{id}");
        for r in results(&file, id) {
            let behind = &r["server"]["behind"][0];
            assert_eq!(behind["name"], "gunicorn", "{r}");
            assert!(behind["version"]
                .as_str()
                .unwrap()
                .starts_with(char::is_numeric));
            assert_eq!(r["server"]["app_workers"], 1, "{r}");
            figures_are_plausible(&file, id, r);
        }
    }
    for r in results(&file, "proxy.request") {
        assert!(
            r["metrics"]["cpu"]["roles"]["app"]["cpu_ns"]
                .as_f64()
                .unwrap()
                > 0.0,
            "gunicorn's CPU is counted as the app: {r}"
        );
    }
    assert_nothing_left(&scratch, &pids(&seen));
}

#[test]
fn a_users_running_app_servers_are_columns_of_their_own_asked_for_a_path() {
    if !nginx_installed("a_users_running_app_servers") {
        return;
    }
    if !root("a_users_running_app_servers: its app server runs as www-data") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    // The user's app server: sockbench's own, started here as nginx's account,
    // its socket in a directory that account can reach.
    let sockets = tmp.path().join("app");
    std::fs::create_dir(&sockets).unwrap();
    for dir in [tmp.path(), sockets.as_path()] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let socket = sockets.join("app.sock");
    let mut app = KillOnDrop(
        sockbench(tmp.path())
            .args(["serve", "--http", "--account", "www-data", "--listen"])
            .arg(format!("unix:{}", socket.display()))
            .args(["--listen", "tcp:127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let out = app.0.stdout.take().unwrap();
    let (tx, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let lines = std::io::BufRead::lines(std::io::BufReader::new(out));
        let port = lines
            .map_while(Result::ok)
            .take_while(|l| l != "ready")
            .find_map(|l| {
                l.strip_prefix("listening tcp:127.0.0.1:")
                    .map(str::to_string)
            });
        let _ = tx.send(port);
    });
    let port = said
        .recv_timeout(Duration::from_secs(15))
        .expect("the app server said where it listens within 15 s")
        .expect("the app server reported its port");
    let web = format!("web=unix:{}", socket.display());
    let api = format!("api=127.0.0.1:{port}");
    let args = [
        "proxy",
        "--quick",
        "--trials",
        "2",
        "--upstream",
        &web,
        "--upstream",
        &api,
        "--path",
        "/?size=3",
        "--experiments",
        "request,keepalive,direct",
    ];
    let (file, stdout, _) = measured(&scratch, tmp.path(), &args);
    assert!(
        stdout.contains("GET /?size=3"),
        "the tables name the path asked:\n{stdout}"
    );
    for id in ["proxy.request", "proxy.keepalive", "proxy.direct"] {
        assert_eq!(columns(&file, id), ["web", "api"], "{id}");
        for r in results(&file, id) {
            assert_eq!(r["params"]["path"], "/?size=3", "{r}");
            assert!(r["params"]["size"].is_null(), "{r}");
            assert_eq!(r["server"]["behind"][0]["name"], "yours", "{r}");
            figures_are_plausible(&file, id, r);
        }
    }
    // Its process was found, so its CPU is the app's; it was only read: it still
    // runs, and serves.
    for r in results(&file, "proxy.request") {
        assert!(r["metrics"]["cpu"]["roles"]["app"].is_object(), "{r}");
    }
    assert!(
        app.0.try_wait().unwrap().is_none(),
        "the user's server was stopped"
    );
    assert_clean(&scratch);
    stop_child(&mut app.0, &[(libc::SIGTERM, Duration::from_secs(2))]);
}

#[test]
fn an_app_command_is_started_per_transport_as_nginx_account_and_stopped() {
    if !nginx_installed("an_app_command") || !gunicorn_installed("an_app_command") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    // The user's project: a WSGI app nginx's account can read.
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("hello.py"),
        "def app(environ, start_response):\n    body = b'hello'\n    \
         start_response('200 OK', [('Content-Length', '5')])\n    return [body]\n",
    )
    .unwrap();
    for (path, mode) in [(tmp.path(), 0o755), (project.as_path(), 0o755)] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    let args = [
        "proxy",
        "--quick",
        "--trials",
        "2",
        "--app",
        "gunicorn -b unix:{socket} -b {host}:{port} hello:app",
        "--path",
        "/hi",
        "--experiments",
        "request,direct,connect",
    ];
    let (file, _, seen) = measured(&scratch, &project, &args);
    let started: Vec<&Seen> = seen
        .iter()
        // The command filled in (sockbench's own forks still show its arguments).
        .filter(|s| s.cmdline.contains("hello:app") && !s.cmdline.contains("{socket}"))
        .collect();
    assert!(!started.is_empty(), "the command never ran");
    let (_, nginx_uid, _) = account("www-data").expect("Debian's www-data account");
    for s in &started {
        assert_eq!(s.uid, nginx_uid, "not as nginx's account: {}", s.cmdline);
    }
    // One start per transport: each listening on one of them only.
    let binds: Vec<&str> = started.iter().map(|s| s.cmdline.as_str()).collect();
    assert!(
        binds
            .iter()
            .any(|c| c.contains("unix:") && !c.contains("127.0.0.1")),
        "{binds:?}"
    );
    assert!(
        binds
            .iter()
            .any(|c| c.contains("127.0.0.1") && !c.contains("unix:")),
        "{binds:?}"
    );
    for id in ["proxy.request", "proxy.direct", "proxy.connect"] {
        assert_eq!(columns(&file, id), ["unix", "tcp"], "{id}");
        for r in results(&file, id) {
            assert_eq!(r["params"]["path"], "/hi", "{r}");
            figures_are_plausible(&file, id, r);
        }
    }
    assert_nothing_left(&scratch, &pids(&seen));
}

#[test]
fn an_app_command_that_listens_beyond_loopback_is_refused_and_stopped() {
    if !nginx_installed("an_app_command_beyond_loopback") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // It is told {host}, and listens on every address all the same.
    let app = "env HOST={host} python3 -m http.server --bind 0.0.0.0 {port}";
    let mut child = KillOnDrop(
        sockbench(&scratch)
            .current_dir(tmp.path())
            .args(["proxy", "--quick", "--transports", "tcp", "--app", app])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (status, _) = exit_within(&mut child, Duration::from_secs(60));
    let said = after_estimate(&stderr_of(&mut child));
    assert!(!status.success());
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("beyond this machine's loopback") && said.contains("0.0.0.0"),
        "{said}"
    );
    assert_eq!(
        processes_mentioning("http.server --bind 0.0.0.0"),
        Vec::<u32>::new()
    );
    assert_clean(&scratch);
}

/// A process held by a descriptor, killed when dropped: a failing test leaves
/// nothing running, and nothing that took its PID later is signalled.
struct Held(u32, std::os::fd::OwnedFd);

impl Held {
    fn new(pid: u32) -> Option<Held> {
        use rustix::process::{pidfd_open, Pid, PidfdFlags};
        let fd = pidfd_open(Pid::from_raw(pid as i32)?, PidfdFlags::empty()).ok()?;
        Some(Held(pid, fd))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        use rustix::process::{pidfd_send_signal, Signal};
        let _ = pidfd_send_signal(&self.1, Signal::KILL);
    }
}

#[test]
fn a_daemon_an_app_command_starts_is_gone_when_the_run_ends() {
    if !nginx_installed("a_daemon_an_app_command_starts") {
        return;
    }
    if !Path::new("/usr/bin/python3").is_file() {
        eprintln!("SKIPPED a_daemon_an_app_command_starts: python3 is not installed");
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let project = tmp.path().join("project");
    let out = tmp.path().join("out");
    for dir in [&project, &out] {
        std::fs::create_dir(dir).unwrap();
    }
    for dir in [tmp.path(), project.as_path()] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    // As root the command runs as nginx's account, which writes the daemon's PID.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let (_, uid, gid) = account("www-data").expect("Debian's www-data account");
        std::os::unix::fs::chown(&out, Some(uid), Some(gid)).unwrap();
    }
    // The user's app: it starts a daemon in a session of its own (out of the
    // command's process group), which writes its PID as the host sees it (its
    // shell reads /proc/self itself), then serves.
    std::fs::write(
        project.join("app.sh"),
        "setsid -f sh -c 'read -r pid rest </proc/self/stat; echo \"$pid\" >\"$1\"; \
         exec sleep 300' daemon \"$3\"\n\
         exec python3 -m http.server --bind \"$1\" \"$2\"\n",
    )
    .unwrap();
    let pid_file = out.join("daemon.pid");
    let app = format!("sh app.sh {{host}} {{port}} {}", pid_file.display());
    let mut child = KillOnDrop(
        sockbench(&scratch)
            .current_dir(&project)
            .args(["proxy", "--quick", "--trials", "1", "--transports", "tcp"])
            .args(["--experiments", "direct", "--app", &app])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The daemon, held while the run goes on.
    let mut daemon = None;
    until(&mut child, "the daemon wrote its PID", || {
        let said = std::fs::read_to_string(&pid_file).unwrap_or_default();
        daemon = said.trim().parse().ok().and_then(Held::new);
        daemon.is_some()
    });
    let daemon = daemon.unwrap();
    assert!(
        cmdline(daemon.0).contains("sleep 300"),
        "{}",
        cmdline(daemon.0)
    );
    let (status, _) = exit_within(&mut child, Duration::from_secs(120));
    let stderr = stderr_of(&mut child);
    assert!(status.success(), "{stderr}");
    assert_eq!(
        alive(&[daemon.0]),
        Vec::<u32>::new(),
        "the daemon outlived the run"
    );
    assert_clean(&scratch);
}
