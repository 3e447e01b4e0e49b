//! The kernel's account without tracefs mounted, whatever the machine mounts: each
//! run is made in a mount namespace of its own (`unshare -m`), where tracefs is
//! taken away first, so the host's mounts decide nothing and are left as found.
//!
//! - tracefs unmounted: sockbench, as root, reads the tracepoints from a mount of
//!   its own, and the result file counts system calls and packets.
//! - tracefs impossible to mount (its mount point gone, or root only in a user
//!   namespace): one line says what is missing and the command that gives it, once,
//!   and the run goes on.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// The quickest run that has a counting trial over unix and tcp.
const RUN: [&str; 12] = [
    "sockets",
    "--quick",
    "--trials",
    "1",
    "--workloads",
    "pingpong",
    "--transports",
    "unix,tcp",
    "--sizes",
    "64",
    "--placement",
    "free",
];

/// What takes tracefs away inside the namespace before sockbench starts (`$0` is
/// sockbench, the rest its arguments): every tracefs mount unmounted, checked, and
/// then `extra`. Exit 97 when tracefs is still mounted there.
fn script(extra: &str) -> String {
    format!(
        "for d in /sys/kernel/debug/tracing /sys/kernel/tracing; do \
           umount -l \"$d\" 2>/dev/null; \
         done; \
         if grep -q ' - tracefs ' /proc/self/mountinfo; then exit 97; fi; \
         {extra} \
         exec \"$0\" \"$@\""
    )
}

/// Whether the test can run here: as root, with `unshare`; says why not.
fn can_run(test: &str) -> bool {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("SKIPPED {test}: not root, so no mount namespace of its own");
        return false;
    }
    if Command::new("unshare").arg("--help").output().is_err() {
        eprintln!("SKIPPED {test}: unshare is not installed (util-linux)");
        return false;
    }
    true
}

/// Runs sockbench under `unshare FLAGS sh -c SCRIPT`, writing `json`.
fn run_in_namespace(tmp: &Path, flags: &[&str], script: &str, json: &Path) -> (i32, String) {
    let sockbench = sockbench(tmp).get_program().to_owned();
    let mut command = Command::new("unshare");
    command
        .args(flags)
        .args(["sh", "-c", script])
        .arg(&sockbench)
        .args(RUN)
        .arg("--json")
        .arg(json)
        .env("TMPDIR", tmp)
        .env("LC_ALL", "C.UTF-8")
        .current_dir(tmp);
    let out = assert_cmd::Command::from_std(command)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("unshare runs");
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 97, "tracefs could not be unmounted in the namespace");
    (code, text(&out.stderr))
}

/// The `why` of the counting trial of `transport` in the result file.
fn why_of(file: &serde_json::Value, transport: &str) -> serde_json::Value {
    let record = results(file, "sockets.pingpong")
        .into_iter()
        .find(|r| r["transport"] == transport)
        .unwrap_or_else(|| panic!("no {transport} record"));
    record["counters"]["why"].clone()
}

fn events_per_op(why: &serde_json::Value, event: &str) -> f64 {
    why["client"]["events"][event].as_f64().unwrap_or(0.0)
        + why["server"]["events"][event].as_f64().unwrap_or(0.0)
}

/// The lines that say the kernel's account is incomplete.
fn notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("note: the kernel's account of operations is incomplete"))
        .collect()
}

#[test]
fn without_tracefs_mounted_root_still_counts_the_kernels_events() {
    if !can_run("without_tracefs_mounted_root_still_counts_the_kernels_events") {
        return;
    }
    let mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let before = mounts();
    let tmp = tempdir();
    let json = tmp.path().join("run.json");
    let (code, stderr) = run_in_namespace(
        tmp.path(),
        &["-m", "--propagation", "private"],
        &script(""),
        &json,
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(mounts(), before, "the host's mounts changed");
    assert!(
        !notes(&stderr).iter().any(|l| l.contains("tracepoints")),
        "{stderr}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for transport in ["unix", "tcp"] {
        let why = why_of(&file, transport);
        let tracepoints = why["tracepoints"].as_array().expect("tracepoints");
        assert!(
            tracepoints.iter().any(|t| t == "raw_syscalls:sys_enter"),
            "{transport}: {why}"
        );
        assert!(events_per_op(&why, "syscalls") >= 1.0, "{transport}: {why}");
    }
    let tcp = why_of(&file, "tcp");
    assert!(events_per_op(&tcp, "packets_sent") >= 1.0, "{tcp}");
    assert_eq!(events_per_op(&why_of(&file, "unix"), "packets_sent"), 0.0);
}

#[test]
fn where_tracefs_cannot_be_mounted_one_line_says_so_and_the_run_goes_on() {
    if !can_run("where_tracefs_cannot_be_mounted_one_line_says_so_and_the_run_goes_on") {
        return;
    }
    let mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let before = mounts();
    let tmp = tempdir();
    // Its mount point gone (an empty /sys/kernel): tracefs cannot be mounted, the
    // rest of the kernel's account (CPU by layer) still can be had.
    let json = tmp.path().join("gone.json");
    let (code, stderr) = run_in_namespace(
        tmp.path(),
        &["-m", "--propagation", "private"],
        &script("mount -t tmpfs none /sys/kernel || exit 98;"),
        &json,
    );
    assert_eq!(code, 0, "{stderr}");
    let said = notes(&stderr);
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("no tracepoints"), "{}", said[0]);
    assert!(
        said[0].contains("`mount -t tracefs nodev /sys/kernel/tracing`"),
        "{}",
        said[0]
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let why = why_of(&file, "tcp");
    assert_eq!(why["tracepoints"], serde_json::json!([]), "{why}");

    // Root only in a user namespace: no tracefs mount (and, unless the sysctl
    // allows every account, no perf events) for it.
    let json = tmp.path().join("userns.json");
    let (code, stderr) = run_in_namespace(
        tmp.path(),
        &["-U", "-r", "-m", "--propagation", "private"],
        &script(""),
        &json,
    );
    assert_eq!(code, 0, "{stderr}");
    let said = notes(&stderr);
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("`sysctl kernel.perf_event_paranoid=-1`")
            || said[0].contains("`mount -t tracefs nodev /sys/kernel/tracing`"),
        "{}",
        said[0]
    );
    assert!(json.exists(), "no result file: {stderr}");
    assert_eq!(mounts(), before, "the host's mounts changed");
}
