//! Faults a careless or unlucky user meets: an idle client at the server, a closed or
//! full standard output, a setup that fails, signals in the middle of a long trial,
//! and a run killed outright. Nothing finished may be lost, nothing half-done left.

mod common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn an_idle_client_holds_up_nobody() {
    let tmp = tempdir();
    let sock = tmp.path().join("sb.sock");
    let (_server, addrs) = start_serve(
        tmp.path(),
        &[
            format!("unix:{}", sock.display()),
            "tcp:127.0.0.1:0".into(),
            "tls:127.0.0.1:0".into(),
        ],
    );
    // One client on each address that connects and then says nothing, not even a
    // TLS hello.
    let _idle_unix = UnixStream::connect(&sock).unwrap();
    let _idle_tcp: Vec<TcpStream> = addrs[1..]
        .iter()
        .map(|a| TcpStream::connect(a.split_once(':').unwrap().1).unwrap())
        .collect();
    let mut greeting = [0u8; 12];
    let mut next = UnixStream::connect(&sock).unwrap();
    next.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    next.read_exact(&mut greeting)
        .expect("a greeting while another client idles");

    let started = Instant::now();
    let mut args = SHORT_SOCKETS.to_vec();
    for addr in &addrs {
        args.extend(["--server", addr.as_str()]);
    }
    let out = run(tmp.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "held up for {:?}",
        started.elapsed()
    );
}

/// `sockets` on unix only, one trial, connect then pingpong, into `json`.
fn short_sockets_run(json: &Path) -> Vec<String> {
    [
        "sockets",
        "--quick",
        "--trials",
        "1",
        "--transports",
        "unix",
        "--workloads",
        "connect,pingpong",
        "--sizes",
        "64",
        "--json",
        json.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

fn experiments_in(json: &Path) -> Vec<String> {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    experiments(&file)
}

#[test]
fn a_closed_stdout_ends_quietly_and_keeps_what_finished() {
    let tmp = tempdir();
    let json = tmp.path().join("o.json");
    let mut child = sockbench(tmp.path())
        .args(short_sockets_run(&json))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader went away, as `| head -0` does
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(experiments_in(&json), ["sockets.connect"]);
}

#[test]
fn a_full_stdout_is_one_error_line() {
    let tmp = tempdir();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sockets.json");
    let out = sockbench(tmp.path())
        .args(["report", fixture.to_str().unwrap()])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("No space left"), "{stderr}");
}

#[test]
fn json_never_replaces_a_device_or_a_link() {
    let tmp = tempdir();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    for target in [Path::new("/dev/full"), link.as_path()] {
        let out = run(
            tmp.path(),
            &["sockets", "--quick", "--json", target.to_str().unwrap()],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
    use std::os::unix::fs::FileTypeExt;
    let full = std::fs::metadata("/dev/full").unwrap();
    assert!(full.file_type().is_char_device(), "/dev/full was replaced");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A directory with an `initdb` and a `postgres` that fail at once.
fn failing_bindir(tmp: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp.join("bin");
    std::fs::create_dir(&dir).unwrap();
    for name in ["initdb", "postgres"] {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\necho \"$0: cannot set up\" >&2\nexit 3\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for d in [tmp, dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[test]
fn a_failed_setup_leaves_no_result_file_and_no_directory() {
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let bindir = failing_bindir(tmp.path());
    let json = tmp.path().join("out.json");
    let out = run(
        &scratch,
        &[
            "postgres",
            "--pg-bindir",
            bindir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("initdb") && stderr.contains("cannot set up"),
        "{stderr}"
    );
    assert!(!json.exists(), "a result file with no results was left");
    assert_clean(&scratch);
}

/// Starts a PostgreSQL run whose one trial lasts 20 s, and returns once it measures.
fn start_long_postgres_run(scratch: &Path, json: &Path) -> KillOnDrop {
    let child = sockbench(scratch)
        .args([
            "postgres",
            "--experiments",
            "concurrent",
            "--transports",
            "unix",
            "--clients",
            "2",
            "--duration",
            "20s",
            "--trials",
            "1",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    wait_until(&mut child, "the cluster never started", || {
        cluster_dirs(scratch)
            .iter()
            .any(|d| d.join("data/postmaster.pid").exists())
    });
    // The cluster is up; connecting and the warm-up take well under 3 s.
    std::thread::sleep(Duration::from_secs(3));
    child
}

#[test]
fn a_signal_mid_trial_stops_within_a_second_and_says_nothing_was_kept() {
    if !postgres_installed("a_signal_mid_trial_stops_within_a_second") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let mut child = start_long_postgres_run(&scratch, &json);
        let sent = Instant::now();
        signal(&child.0, sig);
        let status = wait_for_exit(&mut child, "no exit after the signal");
        let took = sent.elapsed();
        let stderr = stderr_of(&mut child);
        assert_eq!(status.code(), Some(130), "signal {sig}: {stderr}");
        // A second to notice, plus the cluster's shutdown.
        assert!(took < Duration::from_secs(6), "signal {sig}: took {took:?}");
        assert!(
            stderr.contains("no experiment had finished; no result file was written"),
            "{stderr}"
        );
        assert!(!json.exists());
        assert_clean(&scratch);
    }
}

#[test]
fn a_second_signal_ends_at_once_and_the_next_run_cleans_up() {
    if !postgres_installed("a_second_signal_ends_at_once") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_long_postgres_run(&scratch, &json);
    signal(&child.0, libc::SIGINT);
    signal(&child.0, libc::SIGTERM);
    let status = wait_for_exit(&mut child, "no exit after two signals");
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    next_run_leaves_nothing(&scratch, &tmp.path().join("next.json"));
}

#[test]
fn after_sigkill_the_next_run_removes_what_was_left() {
    if !postgres_installed("after_sigkill_the_next_run_removes_what_was_left") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    // Killed while initdb runs, then while the server runs.
    let mut child = KillOnDrop(
        sockbench(&scratch)
            .args(["postgres", "--quick", "--transports", "unix"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until(&mut child, "no cluster directory", || {
        cluster_dirs(&scratch)
            .iter()
            .any(|d| d.join("data").exists())
    });
    signal(&child.0, libc::SIGKILL);
    let _ = child.0.wait();
    no_process_mentions(&scratch);
    let first = cluster_dirs(&scratch);
    assert_eq!(first.len(), 1, "a killed run leaves its directory");
    let mut child = start_long_postgres_run(&scratch, &json);
    assert!(
        !first[0].exists(),
        "the next run did not remove the first one's"
    );
    signal(&child.0, libc::SIGKILL);
    let _ = child.0.wait();
    no_process_mentions(&scratch);
    assert_eq!(
        cluster_dirs(&scratch).len(),
        1,
        "the second killed run left none"
    );
    next_run_leaves_nothing(&scratch, &tmp.path().join("next.json"));
}

/// Every server of a killed run dies with it (within 5 s).
fn no_process_mentions(scratch: &Path) {
    let marker = scratch.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "left running: {:?}",
            processes_mentioning(&marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A short run in the same TMPDIR removes what killed runs left, and itself leaves
/// nothing.
fn next_run_leaves_nothing(scratch: &Path, json: &Path) {
    let args = short_sockets_run(json);
    let out = run(
        scratch,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_clean(scratch);
}
