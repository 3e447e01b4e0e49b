//! A stalled server (a PostgreSQL backend or sockbench's socket server stopped with
//! SIGSTOP mid-run) must end the run within its 10 s timeout with one clear line, and
//! a Ctrl-C during the stall must end it at once; either way the experiments that
//! finished stay in the result file and no process or directory is left. Every wait
//! here is bounded and the run is killed on failure, so a regression fails instead
//! of hanging.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn experiments_in(json: &Path) -> Vec<String> {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    experiments(&file)
}

/// A process stopped with SIGSTOP by the test, resumed (by PID) when the guard drops,
/// so a failing test leaves nothing stopped.
struct Stopped(u32);

impl Stopped {
    fn new(pid: u32) -> Stopped {
        // SAFETY: a plain syscall on a PID the test found a moment ago as a child of
        // the run it started.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) };
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above; resuming a process that has exited meanwhile does nothing.
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGCONT) };
    }
}

/// The children of `pid` whose command line contains `marker`.
fn children_mentioning(pid: u32, marker: &str) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// A PostgreSQL run whose query experiment has finished, with the backend serving
/// the rows experiment stopped.
fn stall_postgres(scratch: &Path, json: &Path) -> (KillOnDrop, Stopped) {
    let args = [
        "postgres",
        "--experiments",
        "query,rows",
        "--transports",
        "unix",
        "--trials",
        "3",
    ];
    let mut child = start_then_wait_for(scratch, json, "postgres.query", &args);
    let postmaster = || {
        cluster_dirs(scratch).iter().find_map(|d| {
            let pid = std::fs::read_to_string(d.join("data/postmaster.pid")).ok()?;
            pid.lines().next()?.trim().parse::<u32>().ok()
        })
    };
    let backend = || postmaster().and_then(|pm| children_mentioning(pm, "foo foo").pop());
    wait_until(&mut child, "no backend of the rows experiment", || {
        backend().is_some()
    });
    let stopped = Stopped::new(backend().unwrap());
    (child, stopped)
}

#[test]
fn a_stalled_postgres_backend_ends_the_run_within_its_timeout() {
    if !postgres_installed("a_stalled_postgres_backend_ends_the_run_within_its_timeout") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let (mut child, _stopped) = stall_postgres(&scratch, &json);
    // 10 s without an answer, then the cluster's shutdown.
    let (status, took) = exit_within(&mut child, Duration::from_secs(25));
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(took >= Duration::from_secs(9), "gave up after {took:?}");
    assert_eq!(after_estimate(&stderr).lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("did not answer within 10 s") && stderr.contains("are kept"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&scratch.to_string_lossy().into_owned()),
        "names no server: {stderr}"
    );
    assert_eq!(experiments_in(&json), ["postgres.query"]);
    assert_clean(&scratch);
}

#[test]
fn sigint_during_a_postgres_stall_ends_the_run_at_once() {
    if !postgres_installed("sigint_during_a_postgres_stall_ends_the_run_at_once") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let (mut child, _stopped) = stall_postgres(&scratch, &json);
    std::thread::sleep(Duration::from_secs(1));
    signal(&child.0, libc::SIGINT);
    let (status, took) = exit_within(&mut child, Duration::from_secs(10));
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    // As in a_signal_mid_trial_stops_within_a_second: a fraction of a second to
    // notice, plus the cluster's shutdown (seconds when the machine is busy).
    assert!(took < Duration::from_secs(6), "took {took:?} after Ctrl-C");
    assert!(stderr.contains("saved in"), "{stderr}");
    assert_eq!(experiments_in(&json), ["postgres.query"]);
    assert_clean(&scratch);
}

/// A sockets run over `transports` whose first of `workloads` has finished, with
/// its server stopped.
fn stall_sockets(
    scratch: &Path,
    json: &Path,
    transports: &str,
    workloads: &str,
) -> (KillOnDrop, Stopped) {
    let args = [
        "sockets",
        "--quick",
        "--trials",
        "3",
        "--transports",
        transports,
        "--workloads",
        workloads,
    ];
    let first = format!("sockets.{}", workloads.split(',').next().unwrap());
    let child = start_then_wait_for(scratch, json, &first, &args);
    let server = children_mentioning(child.0.id(), "serve").pop();
    let server = server.expect("no server child");
    (child, Stopped::new(server))
}

/// A stalled server of a sockets run over `transports` ends the run within the
/// watchdog's timeout, with one line, keeping the first of `workloads`.
fn a_stall_ends_the_run(transports: &str, workloads: &str) {
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let (mut child, _stopped) = stall_sockets(&scratch, &json, transports, workloads);
    let (status, took) = exit_within(&mut child, Duration::from_secs(20));
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(took >= Duration::from_secs(7), "gave up after {took:?}");
    assert_eq!(after_estimate(&stderr).lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("sockbench server") && stderr.contains("did no work for 8 s"),
        "{stderr}"
    );
    assert!(stderr.contains("are kept"), "{stderr}");
    let first = format!("sockets.{}", workloads.split(',').next().unwrap());
    assert_eq!(experiments_in(&json), [first]);
    assert_clean(&scratch);
}

/// Ctrl-C during such a stall ends the run at once.
fn sigint_ends_a_stall(transports: &str, workloads: &str) {
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let (mut child, _stopped) = stall_sockets(&scratch, &json, transports, workloads);
    std::thread::sleep(Duration::from_secs(1));
    signal(&child.0, libc::SIGINT);
    let (status, took) = exit_within(&mut child, Duration::from_secs(5));
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(2), "took {took:?} after Ctrl-C");
    let first = format!("sockets.{}", workloads.split(',').next().unwrap());
    assert_eq!(experiments_in(&json), [first]);
    assert_clean(&scratch);
}

#[test]
fn a_stalled_sockets_server_ends_the_run_within_its_timeout() {
    a_stall_ends_the_run("unix,tcp", "connect,pingpong,stream");
}

#[test]
fn sigint_during_a_sockets_stall_ends_the_run_at_once() {
    sigint_ends_a_stall("unix,tcp", "connect,pingpong,stream");
}

/// Nothing tells a datagram socket its server is gone: the watchdog that stops a
/// stalled server wakes the client's blocked receive (or send) itself.
#[test]
fn a_stalled_datagram_server_ends_the_run_within_its_timeout() {
    a_stall_ends_the_run("unix-dgram,udp", "pingpong,messages,concurrent");
}

#[test]
fn sigint_during_a_datagram_stall_ends_the_run_at_once() {
    sigint_ends_a_stall("udp,unix-dgram", "pingpong,messages,concurrent");
}
