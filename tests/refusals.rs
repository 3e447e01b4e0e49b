//! What cannot work is refused before measuring (or made to work): client counts
//! beyond the server's slots, peer without a Unix socket, a script that fails, row
//! counts that would not fit in memory, a temporary directory too long for a
//! socket, and unbounded or impossible input files.

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Exit 2 with one line that mentions `mentions`, in under `within`.
fn refused(scratch: &Path, args: &[&str], mentions: &str, within: Duration) {
    let started = Instant::now();
    let out = run(scratch, args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(mentions),
        "{args:?}: '{mentions}' not in {stderr}"
    );
    assert!(
        started.elapsed() < within,
        "{args:?} took {:?}",
        started.elapsed()
    );
}

#[test]
fn peer_without_a_unix_socket_and_rows_beyond_memory() {
    let tmp = tempdir();
    let quick = Duration::from_secs(5);
    refused(
        tmp.path(),
        &[
            "postgres",
            "--experiments",
            "auth",
            "--auth-methods",
            "peer",
            "--transports",
            "tcp",
        ],
        "peer authentication works only over a Unix socket",
        quick,
    );
    refused(
        tmp.path(),
        &[
            "postgres",
            "--experiments",
            "rows",
            "--rows",
            "500000M,1000000M",
        ],
        // Beyond what a run can finish, before memory is even asked.
        "out of range; use 1 to 100M",
        quick,
    );
}

#[test]
fn unbounded_and_impossible_files_are_refused() {
    let tmp = tempdir();
    let quick = Duration::from_secs(5);
    let fifo = tmp.path().join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a plain syscall on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for file in ["/dev/zero", fifo.to_str().unwrap()] {
        refused(tmp.path(), &["report", file], "not a regular file", quick);
        refused(
            tmp.path(),
            &["compare", file, file],
            "not a regular file",
            quick,
        );
        refused(
            tmp.path(),
            &["postgres", "--experiments", "concurrent", "--script", file],
            "not a regular file",
            quick,
        );
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sockets.json");
    let good = std::fs::read_to_string(fixture).unwrap();
    let mut file: serde_json::Value = serde_json::from_str(&good).unwrap();
    for (change, named) in [
        (
            "/results/0/metrics/conn_per_s",
            "results[0].metrics.conn_per_s",
        ),
        ("/results/1/trials", "results[1].trials is empty"),
        (
            "/results/2/trials/0/elapsed_ns",
            "results[2].trials[0].elapsed_ns",
        ),
    ] {
        let mut bad = file.clone();
        *bad.pointer_mut(change).unwrap() = match named {
            n if n.ends_with("empty") => serde_json::json!([]),
            n if n.contains("conn_per_s") => serde_json::json!(1e308),
            _ => serde_json::json!(-5),
        };
        let path = tmp.path().join("bad.json");
        std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
        refused(
            tmp.path(),
            &["report", path.to_str().unwrap()],
            named,
            quick,
        );
    }
    file["schema_version"] = serde_json::json!("2");
    let path = tmp.path().join("typed.json");
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    refused(
        tmp.path(),
        &["report", path.to_str().unwrap()],
        "not a format number",
        quick,
    );
}

#[test]
fn a_thousand_tcp_clients_reach_the_socket_server() {
    let tmp = tempdir();
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--workloads",
            "concurrent",
            "--clients",
            "1024",
            "--transports",
            "tcp",
            "--quick",
            "--trials",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_cluster_is_sized_for_the_clients_and_a_failing_script_is_refused() {
    if !postgres_installed("the_cluster_is_sized_for_the_clients") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let concurrent = [
        "postgres",
        "--experiments",
        "concurrent",
        "--transports",
        "unix",
        "--trials",
        "1",
        "--duration",
        "300ms",
    ];
    let out = run(&scratch, &[&concurrent[..], &["--clients", "500"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("500 clients"),
        "{}",
        text(&out.stdout)
    );

    let script = tmp.path().join("bad.sql");
    std::fs::write(&script, "SELECT 1;\nSELECT * FROM no_such_table;\n").unwrap();
    refused(
        &scratch,
        &[&concurrent[..], &["--script", script.to_str().unwrap()]].concat(),
        "--script: command 2",
        Duration::from_secs(30),
    );
    assert_clean(&scratch);
}

#[test]
fn a_temporary_directory_too_long_for_a_socket_is_refused_at_once() {
    if !postgres_installed("a_temporary_directory_too_long") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let long = scratch.join("d".repeat(90));
    std::fs::create_dir(&long).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&long, std::fs::Permissions::from_mode(0o755)).unwrap();
    refused(
        &long,
        &["postgres", "--experiments", "query", "--trials", "1"],
        "set TMPDIR to a shorter directory",
        Duration::from_secs(5),
    );
    assert_eq!(leftovers(&long), Vec::<std::path::PathBuf>::new());
}
