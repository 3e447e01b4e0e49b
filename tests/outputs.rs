//! Where rendered reports and result files may go: never through a planted link,
//! into a device or FIFO, over another account's file, or over a file being read.

mod common;

use common::{sockbench, text};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixture(tmp: &Path, name: &str) -> PathBuf {
    let path = tmp.join(name);
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
    fs::copy(here, &path).unwrap();
    path
}

/// Runs sockbench with `args`; it must end within 20 s.
fn refused(tmp: &Path, args: &[&str]) -> String {
    let started = Instant::now();
    let out = assert_cmd::Command::from_std(sockbench(tmp))
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "hung: {args:?}"
    );
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn an_output_is_never_written_through_a_link_a_device_or_a_fifo() {
    let tmp = common::tempdir();
    let input = fixture(tmp.path(), "run.json");
    let target = tmp.path().join("precious");
    fs::write(&target, "precious").unwrap();
    let link = tmp.path().join("report.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = tmp.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);

    let input = input.to_str().unwrap();
    for (output, kind) in [
        (link.to_str().unwrap(), "symbolic link"),
        ("/dev/null", "device"),
        (fifo.to_str().unwrap(), "FIFO"),
    ] {
        for args in [
            vec!["report", input, "--format", "html", "--output", output],
            vec!["compare", input, input, "--output", output],
        ] {
            let stderr = refused(tmp.path(), &args);
            assert!(
                stderr.contains(kind) && stderr.contains("--output"),
                "{stderr}"
            );
        }
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let tmp = common::tempdir();
    let a = fixture(tmp.path(), "a.json");
    let b = fixture(tmp.path(), "b.json");
    let before = fs::read(&b).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for args in [
        vec!["report", a, b, "--output", b],
        vec!["compare", a, b, "--output", b],
        vec!["compare", a, b, "--format", "markdown", "--output", a],
    ] {
        let stderr = refused(tmp.path(), &args);
        assert!(stderr.contains("being read"), "{stderr}");
    }
    assert_eq!(fs::read(b).unwrap(), before);
}

#[test]
fn a_result_file_never_replaces_a_file_that_is_not_one() {
    let tmp = common::tempdir();
    let script = tmp.path().join("bench.sql");
    fs::write(&script, "SELECT 1;\n").unwrap();
    let script = script.to_str().unwrap();
    let stderr = refused(
        tmp.path(),
        &["sockets", "--quick", "--trials", "1", "--json", script],
    );
    assert!(stderr.contains("not a sockbench result file"), "{stderr}");
    if common::postgres_installed("a_result_file_never_replaces_a_script") {
        let stderr = refused(
            tmp.path(),
            &["postgres", "--script", script, "--json", script],
        );
        assert!(stderr.contains("not a sockbench result file"), "{stderr}");
    }
    assert_eq!(fs::read_to_string(script).unwrap(), "SELECT 1;\n");
}

#[test]
fn another_accounts_file_is_never_replaced() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED another_accounts_file_is_never_replaced: needs root");
        return;
    }
    let tmp = common::tempdir();
    let input = fixture(tmp.path(), "run.json");
    let theirs = fixture(tmp.path(), "theirs.json");
    fs::set_permissions(&theirs, fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65_534), Some(65_534)).unwrap();
    let before = fs::read(&theirs).unwrap();
    let theirs_arg = theirs.to_str().unwrap();
    for args in [
        vec!["report", input.to_str().unwrap(), "--output", theirs_arg],
        vec!["sockets", "--quick", "--trials", "1", "--json", theirs_arg],
    ] {
        let stderr = refused(tmp.path(), &args);
        assert!(stderr.contains("another account"), "{stderr}");
    }
    assert_eq!(fs::read(&theirs).unwrap(), before);
    assert_eq!(fs::metadata(&theirs).unwrap().uid(), 65_534);
}

#[test]
fn a_report_replaces_an_own_file_keeping_its_mode() {
    let tmp = common::tempdir();
    let input = fixture(tmp.path(), "run.json");
    let output = tmp.path().join("report.md");
    fs::write(&output, "old report").unwrap();
    fs::set_permissions(&output, fs::Permissions::from_mode(0o640)).unwrap();
    let out = sockbench(tmp.path())
        .args(["report", input.to_str().unwrap(), "--format", "markdown"])
        .arg("--output")
        .arg(&output)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(fs::read_to_string(&output).unwrap().contains('|'));
    assert_eq!(fs::metadata(&output).unwrap().mode() & 0o777, 0o640);
    assert_eq!(
        common::leftovers(tmp.path()).len(),
        2,
        "no temporary file left"
    );
}

/// A tiny file system mounted for one test, unmounted on drop.
struct Tiny(PathBuf);

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn an_experiment_measured_on_a_full_disk_is_printed_though_not_saved() {
    let tmp = common::tempdir();
    let mount = tmp.path().join("full");
    fs::create_dir(&mount).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mount)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED an_experiment_measured_on_a_full_disk: cannot mount a tmpfs here");
        return;
    }
    let _tiny = Tiny(mount.clone());
    // Full: a file takes every block, leaving inodes for new (empty) files.
    let mut fill = fs::File::create(mount.join("fill")).unwrap();
    while std::io::Write::write_all(&mut fill, &[0u8; 1024]).is_ok() {}
    let json = mount.join("out.json");
    let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
        .args(["sockets", "--transports", "unix", "--workloads", "connect"])
        .args(["--trials", "1", "--quick", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains("sockets.connect"),
        "the table is printed: {stdout}"
    );
    assert!(
        stderr.contains("could not be saved") && stderr.contains("No space left"),
        "{stderr}"
    );
    // Besides the estimate printed before the first trial, one line.
    let unfolded = stderr.replace("\n  ", " ");
    let lines: Vec<&str> = unfolded.trim().lines().collect();
    assert!(lines[0].starts_with("sockbench expects about "), "{stderr}");
    assert_eq!(lines.len(), 2, "{stderr}");
}
