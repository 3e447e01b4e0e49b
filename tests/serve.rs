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
    assert!(stderr.contains("sockets.pingpong (64 B) over"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
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
    let (server, addrs) = start_serve(
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
            // Its CPU is the server's (not outside load), on the CPU it was pinned to.
            assert!(cpu["server"].is_object(), "no server side in {cpu}");
            assert_ne!(
                cpu["server_cpus"],
                serde_json::json!([cpu["client_cpu"]]),
                "{cpu}"
            );
        }
    }
    // The user's server was really pinned: one CPU left to it.
    // SAFETY: an all-zero cpu_set_t is an empty set; `set` is valid for its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pid is the serve child's, alive until `server` drops.
    let rc = unsafe {
        libc::sched_getaffinity(server.0.id() as i32, std::mem::size_of_val(&set), &mut set)
    };
    assert_eq!(rc, 0);
    // SAFETY: `set` was filled by sched_getaffinity.
    assert_eq!(unsafe { libc::CPU_COUNT(&set) }, 1);
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
