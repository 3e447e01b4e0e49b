//! `sockbench serve` on its own, `sockets --server` against it, and runs that end
//! early: interrupted by Ctrl-C, or losing their server half-way.

mod common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn serve_greets_and_cleans_up_its_socket_on_sigterm() {
    let tmp = tempdir();
    let sock = tmp.path().join("sb.sock");
    let (mut server, addrs) = start_serve(
        tmp.path(),
        &[format!("unix:{}", sock.display()), "tcp:127.0.0.1:0".into()],
    );
    assert_eq!(addrs[0], format!("unix:{}", sock.display()));
    assert!(addrs[1].starts_with("tcp:127.0.0.1:") && !addrs[1].ends_with(":0"));

    let mut greeting = [0u8; 12];
    UnixStream::connect(&sock)
        .unwrap()
        .read_exact(&mut greeting)
        .unwrap();
    assert_eq!(&greeting, b"Hello there!");

    signal(&server.0, libc::SIGTERM);
    let status = wait_with_timeout(&mut server.0, Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    assert!(!sock.exists(), "socket file left behind");
}

#[test]
fn sockets_measures_a_running_server() {
    let tmp = tempdir();
    let (_server, addrs) = start_serve(
        tmp.path(),
        &[
            format!("unix:{}", tmp.path().join("sb.sock").display()),
            "tcp:127.0.0.1:0".into(),
        ],
    );
    let json = tmp.path().join("out.json");
    let mut args = vec![
        "sockets",
        "--quick",
        "--trials",
        "1",
        "--workloads",
        "connect,pingpong",
    ];
    for addr in &addrs {
        args.extend(["--server", addr.as_str()]);
    }
    args.extend(["--sizes", "64", "--json", json.to_str().unwrap()]);
    let out = run(tmp.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let transports: Vec<&str> = file["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transport"].as_str().unwrap())
        .collect();
    assert_eq!(transports, ["unix", "tcp", "unix", "tcp"]);
}

#[test]
fn ctrl_c_keeps_finished_results_and_leaves_nothing_behind() {
    let tmp = tempdir();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let json = tmp.path().join("out.json");
    let mut run = spawn_sockets(&scratch, &json, &["--workloads", "connect,pingpong,stream"]);
    wait_for_results(&json, "sockets.connect");
    signal(&run.0, libc::SIGINT);
    let (status, stderr) = finish(&mut run);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");

    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(schema_errors(&file).is_empty());
    assert!(file["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["experiment"] == "sockets.connect"));
    assert!(leftovers(&scratch).is_empty(), "{:?}", leftovers(&scratch));
    assert!(processes_mentioning(&scratch.to_string_lossy()).is_empty());
}

#[test]
fn a_dead_server_is_reported_and_finished_results_kept() {
    let tmp = tempdir();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let json = tmp.path().join("out.json");
    let mut run = spawn_sockets(
        &scratch,
        &json,
        &["--trials", "10", "--workloads", "connect,pingpong"],
    );
    wait_for_results(&json, "sockets.connect");
    let servers = processes_mentioning(&scratch.to_string_lossy());
    assert_eq!(servers.len(), 1, "expected one server child: {servers:?}");
    // SAFETY: the PID is the server child of the run this test started.
    unsafe { libc::kill(servers[0] as libc::pid_t, libc::SIGKILL) };

    let (status, stderr) = finish(&mut run);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(
        stderr.contains("sockets.pingpong (64 B, on one CPU) over"),
        "{stderr}"
    );
    assert_eq!(
        after_estimate(&stderr).trim_end().lines().count(),
        1,
        "{stderr}"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(!file["results"].as_array().unwrap().is_empty());
    assert!(leftovers(&scratch).is_empty(), "{:?}", leftovers(&scratch));
}

/// Starts `sockbench sockets --quick --json JSON ARGS…` in the background.
fn spawn_sockets(scratch: &Path, json: &Path, args: &[&str]) -> KillOnDrop {
    KillOnDrop(
        sockbench(scratch)
            .args(["sockets", "--quick", "--json"])
            .arg(json)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Waits for a background run to end; its exit status and what it said on stderr.
fn finish(run: &mut KillOnDrop) -> (Option<std::process::ExitStatus>, String) {
    let status = wait_with_timeout(&mut run.0, Duration::from_secs(30));
    let mut stderr = String::new();
    run.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

fn wait_for_results(json: &Path, experiment: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let done = std::fs::read_to_string(json)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|f| {
                f["results"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["experiment"] == experiment))
            });
        if done {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no {experiment} results appeared in {}", json.display());
}

fn wait_with_timeout(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// `sockets --server` at a `sockbench serve` on this machine, `--placement split`.
fn split_against(tmp: &Path, addrs: &[String], json: &Path) -> std::process::Output {
    let mut args = vec![
        "sockets",
        "--quick",
        "--trials",
        "1",
        "--workloads",
        "pingpong",
        "--sizes",
        "64",
        "--placement",
        "split",
        "--json",
        json.to_str().unwrap(),
    ];
    for addr in addrs {
        args.extend(["--server", addr.as_str()]);
    }
    run(tmp, &args)
}

#[test]
fn a_running_server_on_this_machine_is_counted_and_placed_as_the_server() {
    let tmp = tempdir();
    let (_server, addrs) = start_serve(
        tmp.path(),
        &[
            format!("unix:{}", tmp.path().join("sb.sock").display()),
            "tcp:127.0.0.1:0".into(),
        ],
    );
    let json = tmp.path().join("out.json");
    let out = split_against(tmp.path(), &addrs, &json);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for record in file["results"].as_array().unwrap() {
        for trial in record["trials"].as_array().unwrap() {
            let cpu = &trial["cpu"];
            // Its CPU is the server's (not outside load), on the one CPU it was
            // pinned to. (It gets its CPUs back when the run ends:
            // a_users_server_gets_its_cpus_back_after_a_pinned_run.)
            assert!(cpu["server"].is_object(), "no server side in {cpu}");
            assert_eq!(
                cpu["server_cpus"].as_array().map(Vec::len),
                Some(1),
                "{cpu}"
            );
            assert_ne!(
                cpu["server_cpus"],
                serde_json::json!([cpu["client_cpu"]]),
                "{cpu}"
            );
        }
    }
}

#[test]
fn placement_with_a_server_sockbench_cannot_pin_is_refused() {
    let tmp = tempdir();
    // Two processes: no one server to pin.
    let (_unix, unix) = start_serve(
        tmp.path(),
        &[format!("unix:{}", tmp.path().join("sb.sock").display())],
    );
    let (_tcp, tcp) = start_serve(tmp.path(), &["tcp:127.0.0.1:0".into()]);
    let json = tmp.path().join("out.json");
    let out = split_against(tmp.path(), &[unix[0].clone(), tcp[0].clone()], &json);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--placement same or split pins the server, but different processes"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!json.exists());
}

/// The CPUs each thread of process `pid` may run on, by thread id.
fn affinities(pid: u32) -> Vec<(i32, Vec<usize>)> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let tid: i32 = task.file_name().to_str().unwrap().parse().unwrap();
        // SAFETY: an all-zero cpu_set_t is an empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size given.
        let rc = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
        assert_eq!(rc, 0, "thread {tid}");
        let cpus = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `cpu` is below CPU_SETSIZE.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        found.push((tid, cpus));
    }
    found.sort();
    found
}

/// Lets thread `tid` run only on `cpus`.
fn pin(tid: i32, cpus: &[usize]) {
    // SAFETY: an all-zero cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below CPU_SETSIZE (a CPU this machine has).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size given.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) };
    assert_eq!(rc, 0, "thread {tid}");
}

#[test]
fn a_users_server_gets_its_cpus_back_after_a_pinned_run() {
    let tmp = tempdir();
    let sock = tmp.path().join("sb.sock");
    let (server, addrs) = start_serve(tmp.path(), &[format!("unix:{}", sock.display())]);
    let pid = server.0.id();
    let mine = affinities(std::process::id())[0].1.clone();
    if mine.len() < 2 {
        eprintln!("SKIPPED a_users_server_gets_its_cpus_back: needs two CPUs to tell pinned apart");
        return;
    }
    // Every CPU for the main thread, the last one only for every other thread.
    let last = [*mine.last().unwrap()];
    for (tid, _) in affinities(pid) {
        pin(tid, if tid as u32 == pid { &mine } else { &last });
    }
    let before = affinities(pid);
    assert!(before.len() > 1, "serve runs threads: {before:?}");
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--server",
            &addrs[0],
            "--placement",
            "same",
            "--quick",
            "--trials",
            "1",
            "--workloads",
            "connect",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The threads that served the run's connections have ended; the others are
    // where they were.
    let after: Vec<_> = affinities(pid)
        .into_iter()
        .filter(|(tid, _)| before.iter().any(|(t, _)| t == tid))
        .collect();
    assert_eq!(after, before);
}

#[test]
fn serve_on_a_full_standard_output_says_so_and_ends() {
    let tmp = tempdir();
    let sock = tmp.path().join("sb.sock");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let child = sockbench(tmp.path())
        .args(["serve", "--listen"])
        .arg(format!("unix:{}", sock.display()))
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let status = wait_with_timeout(&mut child.0, Duration::from_secs(10));
    let stderr = stderr_of(&mut child);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot write to standard output: No space left on device"),
        "{stderr}"
    );
    assert!(!sock.exists(), "socket file left behind");
}
