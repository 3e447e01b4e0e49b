//! Helpers shared by the integration tests: running the real binary, and guards that
//! stop servers and remove temporary directories even when a test fails.

#![allow(dead_code)]

pub mod consistency;
pub mod container;
pub mod fixtures;
pub mod pgbouncer;
pub mod redis;
pub mod user_server;

use assert_cmd::cargo::CommandCargoExt;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The sockbench binary, with TMPDIR pointing into `tmp` so that everything it
/// creates there can be checked and cleaned up.
pub fn sockbench(tmp: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sockbench").expect("binary built");
    // Output as a UTF-8 terminal shows it, 80 columns wide (a pipe's default).
    cmd.env("TMPDIR", tmp)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("COLUMNS")
        .stdin(Stdio::null());
    cmd
}

/// Runs sockbench to completion; a run that hangs is killed after [`RUN_TIMEOUT`].
pub fn run(tmp: &Path, args: &[&str]) -> Output {
    assert_cmd::Command::from_std(sockbench(tmp))
        .args(args)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs")
}

pub const RUN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The shortest sockets run: one quick round of connect.
pub const SHORT_SOCKETS: [&str; 6] = [
    "sockets",
    "--quick",
    "--trials",
    "1",
    "--workloads",
    "connect",
];

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A private temporary directory, removed on drop.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sockbench-test-")
        .tempdir()
        .expect("temp dir")
}

/// Entries left in a directory (what a run forgot to clean up).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// PIDs of running processes whose command line mentions `marker`.
pub fn processes_mentioning(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let is_zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(false);
        if cmdline.contains(marker) && !is_zombie {
            pids.push(pid);
        }
    }
    pids
}

/// A child process killed (by its PID) and reaped when the guard drops.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends a signal to a child we started.
pub fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: plain syscall on the PID of our own, not yet reaped child.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
}

/// Validates a result file against the JSON Schema in `schema/`.
pub fn schema_errors(instance: &serde_json::Value) -> Vec<String> {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/result.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema readable"))
            .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// True when PostgreSQL's server programs are installed; otherwise says why the test
/// is skipped.
pub fn postgres_installed(test: &str) -> bool {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .any(|v| v.path().join("bin/initdb").exists())
        || std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("initdb").exists()));
    if !found {
        eprintln!("SKIPPED {test}: PostgreSQL's initdb is not installed");
    }
    found
}

/// A scratch TMPDIR the server account (not root) can pass through.
pub fn scratch(tmp: &Path) -> PathBuf {
    let dir = tmp.join("scratch");
    std::fs::create_dir(&dir).unwrap();
    for d in [tmp, dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// Nothing of the run is left: no process mentions the scratch directory (the
/// cluster's data directory lives there) and the directory is empty.
pub fn assert_clean(scratch: &Path) {
    let marker = scratch.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        processes_mentioning(&marker),
        Vec::<u32>::new(),
        "postgres left running"
    );
    assert_eq!(leftovers(scratch), Vec::<PathBuf>::new(), "left behind");
}

/// Starts `sockbench ARGS --json JSON` in the background and returns once records of
/// `experiment` are in the file.
pub fn start_then_wait_for(
    scratch: &Path,
    json: &Path,
    experiment: &str,
    args: &[&str],
) -> KillOnDrop {
    let child = sockbench(scratch)
        .args(args)
        .arg("--json")
        .arg(json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let finished = || {
        std::fs::read_to_string(json)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|f| {
                f["results"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["experiment"] == experiment))
            })
    };
    wait_until(
        &mut child,
        &format!("{experiment} never finished"),
        finished,
    );
    child
}

/// Waits (at most 90 s) until `done`, while the background run goes on.
pub fn wait_until(child: &mut KillOnDrop, complaint: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !done() {
        assert!(Instant::now() < deadline, "{complaint}");
        if child.0.try_wait().unwrap().is_some() {
            panic!("sockbench ended early: {}", stderr_of(child));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (at most 60 s) for the background run to end.
pub fn wait_for_exit(child: &mut KillOnDrop, complaint: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "{complaint}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits at most `limit` for a background run to end, and how long it took; kills
/// it (through the guard) and fails when it does not, so the test never hangs.
pub fn exit_within(
    child: &mut KillOnDrop,
    limit: Duration,
) -> (std::process::ExitStatus, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return (status, started.elapsed());
        }
        assert!(started.elapsed() < limit, "still running after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `bench/NAME` end to end against this build's sockbench, with TMPDIR
/// `tmp` and the variables `env`, and returns what it printed on stdout; fails
/// (killing it) unless it succeeds within `limit`.
pub fn bench_script(name: &str, tmp: &Path, env: &[(&str, &str)], limit: Duration) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bench")
        .join(name);
    let mut child = KillOnDrop(
        Command::new("bash")
            .arg(&script)
            .env("SOCKBENCH", env!("CARGO_BIN_EXE_sockbench"))
            .env("TMPDIR", tmp)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (status, _) = exit_within(&mut child, limit);
    let mut out = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    let err = stderr_of(&mut child);
    assert!(status.success(), "{name}: {out}\n{err}");
    out
}

/// Starts `sockbench serve` and returns it with the addresses it reported.
pub fn start_serve(tmp: &Path, listen: &[String]) -> (KillOnDrop, Vec<String>) {
    let mut cmd = sockbench(tmp);
    cmd.arg("serve");
    for addr in listen {
        cmd.arg("--listen").arg(addr);
    }
    let mut child = KillOnDrop(cmd.stdout(Stdio::piped()).spawn().unwrap());
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut addrs = Vec::new();
    loop {
        let line = lines.next().expect("serve said ready").unwrap();
        if line == "ready" {
            break;
        }
        addrs.push(
            line.strip_prefix("listening ")
                .expect("listening line")
                .to_string(),
        );
    }
    (child, addrs)
}

/// The experiments in a result file, in order, each once.
pub fn experiments(file: &serde_json::Value) -> Vec<String> {
    let mut names: Vec<String> = file["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["experiment"].as_str().unwrap().to_string())
        .collect();
    names.dedup();
    names
}

/// Bad input: exit 2, one line mentioning `mentions` (any case), no panic, nothing
/// on stdout.
pub fn assert_rejected(args: &[&str], mentions: &str) {
    let tmp = tempdir();
    let out = run(tmp.path(), args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?} should print one line, got:\n{stderr}"
    );
    assert!(
        stderr.to_lowercase().contains(&mentions.to_lowercase()),
        "{args:?}: '{mentions}' not in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} printed results");
}

/// The throwaway cluster directories in `scratch`.
pub fn cluster_dirs(scratch: &Path) -> Vec<PathBuf> {
    leftovers(scratch)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("sockbench-pg-"))
        .collect()
}

/// What a background run said on stderr (once it has ended).
pub fn stderr_of(child: &mut KillOnDrop) -> String {
    let mut said = String::new();
    if let Some(mut e) = child.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut said);
    }
    said
}

/// The records of `experiment` in a result file.
pub fn results<'a>(file: &'a serde_json::Value, experiment: &str) -> Vec<&'a serde_json::Value> {
    file["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["experiment"] == experiment)
        .collect()
}

/// Stops a child this test started, by its PID: each signal in turn, waiting up to
/// its time for the child to exit, then reaps it.
pub fn stop_child(child: &mut Child, steps: &[(libc::c_int, Duration)]) {
    for &(signal, wait) in steps {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        // SAFETY: plain syscall on the PID of our own, not yet reaped child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.wait();
}

/// The records of a CSV text, each a list of fields (RFC 4180: quoted fields may
/// hold commas, doubled quotes and line breaks; records end with CRLF).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\n') => panic!("a record ended by LF alone"),
            (false, c) => field.push(c),
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "unfinished"
    );
    records
}

/// Busy loops on every CPU (at least two), each a child process killed by its PID
/// when dropped, so also when the test fails.
pub fn load_every_cpu() -> Vec<KillOnDrop> {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    (0..cpus)
        .map(|_| {
            KillOnDrop(
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("sh starts"),
            )
        })
        .collect()
}

/// Standard error without the line a measuring command prints before its first
/// trial (how long it expects to take, folded onto indented lines), for a test
/// that checks an error comes as one line after it.
pub fn after_estimate(stderr: &str) -> String {
    let mut out = Vec::new();
    let mut in_estimate = false;
    for line in stderr.lines() {
        if line.starts_with("sockbench expects about ") {
            in_estimate = true;
            continue;
        }
        if in_estimate && line.starts_with("  ") {
            continue;
        }
        in_estimate = false;
        out.push(line);
    }
    let mut text = out.join("\n");
    if stderr.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    text
}
