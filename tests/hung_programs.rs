//! A program sockbench asks about itself (`redis-server --version`, `pg_config
//! --bindir`) that hangs must end the run within a few seconds with one line
//! naming it, and a Ctrl-C while it hangs must end the run at once; the program and
//! what it started are gone afterwards. The programs are shell scripts standing
//! first on `PATH`, where sockbench finds them.

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A directory holding `name`, a script that hangs in `sleep MARKER` (a child of
/// its own), MARKER being a duration no other process sleeps, to find what the
/// script left behind.
fn hanging(tmp: &Path, name: &str, marker: &str) -> std::path::PathBuf {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join(name);
    std::fs::write(&script, format!("#!/bin/sh\nsleep {marker}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `sockbench ARGS` with `bin` first on `PATH`, in the background.
fn start(tmp: &Path, bin: &Path, args: &[&str]) -> KillOnDrop {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let child = sockbench(tmp)
        .args(args)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

/// No `sleep MARKER` is left (killed processes take a moment to go).
fn assert_none_left(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_mentioning(marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(processes_mentioning(marker), Vec::<u32>::new());
}

#[test]
fn a_hanging_program_ends_the_run_in_one_line_within_seconds() {
    let tmp = tempdir();
    for (program, args, said) in [
        (
            "redis-server",
            &["redis", "--quick", "--transports", "tcp"][..],
            "redis-server --version did not finish within 5 s and was killed",
        ),
        (
            "pg_config",
            &["postgres", "--quick", "--transports", "tcp"],
            "pg_config --bindir did not finish within 5 s and was killed",
        ),
    ] {
        let bin = hanging(tmp.path(), program, "67.125");
        let mut run = start(tmp.path(), &bin, args);
        let (status, took) = exit_within(&mut run, Duration::from_secs(15));
        let stderr = stderr_of(&mut run);
        std::fs::remove_file(bin.join(program)).unwrap();
        assert_eq!(status.code(), Some(1), "{program}: {stderr}");
        assert!(took >= Duration::from_secs(5), "{program}: {took:?}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        assert_none_left("67.125");
    }
}

#[test]
fn ctrl_c_while_a_program_hangs_ends_the_run_at_once() {
    let tmp = tempdir();
    let marker = "67.375";
    let bin = hanging(tmp.path(), "redis-server", marker);
    let mut run = start(
        tmp.path(),
        &bin,
        &["redis", "--quick", "--transports", "tcp"],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_mentioning(marker).is_empty() {
        assert!(Instant::now() < deadline, "the program never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    signal(&run.0, libc::SIGINT);
    let (status, took) = exit_within(&mut run, Duration::from_secs(10));
    let stderr = stderr_of(&mut run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(1), "took {took:?} after Ctrl-C");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert_none_left(marker);
}
