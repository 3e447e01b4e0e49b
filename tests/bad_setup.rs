//! A process set up so that it cannot do what is asked (standard output closed or
//! full, too few open files allowed, a TMPDIR PostgreSQL cannot use) gets one line
//! saying so and a non-zero exit, before anything is measured where it can.

mod common;

use common::*;

/// Runs sockbench through `sh -c SCRIPT` (the binary is `$0`), for what only a shell
/// sets up: a closed descriptor, a lowered limit.
fn through_shell(tmp: &std::path::Path, script: &str) -> std::process::Output {
    let base = sockbench(tmp);
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", script])
        .arg(base.get_program())
        .env("TMPDIR", tmp)
        .stdin(std::process::Stdio::null());
    assert_cmd::Command::from_std(command)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sh runs")
}

#[test]
fn a_closed_or_full_standard_output_is_a_failure() {
    let tmp = tempdir();
    for script in [
        r#"exec "$0" report tests/fixtures/run.json >&-"#,
        r#"exec "$0" --help >&-"#,
    ] {
        let out = through_shell(tmp.path(), script);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("standard output is closed"), "{stderr}");
    }
    for args in [
        &["--help"][..],
        &["report", "--help"],
        &["--version"],
        &["report", "tests/fixtures/run.json"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut command = sockbench(tmp.path());
        command.args(args).stdout(full);
        let out = command.output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("No space left on device"), "{stderr}");
    }
}

#[test]
fn a_low_soft_open_file_limit_is_raised_and_a_low_hard_one_refused() {
    let tmp = tempdir();
    // 300 clients hold 300 sockets in sockbench and 300 in its server child: more
    // than a soft limit of 256 allows, well within the hard limit.
    let out = through_shell(
        tmp.path(),
        r#"ulimit -Sn 256 && exec "$0" sockets --workloads concurrent --clients 300 \
           --transports unix --trials 1 --quick --quiet"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = through_shell(
        tmp.path(),
        r#"ulimit -n 256 && exec "$0" sockets --workloads concurrent --clients 1024 --quick"#,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--clients 1024 needs about"), "{stderr}");
    assert!(
        stderr.contains("may open only 256") && stderr.contains("ulimit -n"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_tmpdir_with_a_comma_is_refused_before_the_cluster_starts() {
    if !postgres_installed("a_tmpdir_with_a_comma_is_refused_before_the_cluster_starts") {
        return;
    }
    let tmp = tempdir();
    let comma = tmp.path().join("a,b");
    std::fs::create_dir(&comma).unwrap();
    let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
        .env("TMPDIR", &comma)
        .args([
            "postgres",
            "--quick",
            "--experiments",
            "query",
            "--trials",
            "1",
        ])
        .timeout(RUN_TIMEOUT)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("TMPDIR") && stderr.contains("holds a comma"),
        "{stderr}"
    );
    assert!(leftovers(&comma).is_empty(), "{:?}", leftovers(&comma));
}

/// A TMPDIR with a newline would split the servers' arguments and every message that
/// names them: each family refuses it in one line before starting anything.
#[test]
fn a_tmpdir_with_a_newline_is_refused_in_one_line_by_every_family() {
    let tmp = tempdir();
    let broken = tmp.path().join("a\nb");
    std::fs::create_dir(&broken).unwrap();
    for family in ["sockets", "postgres", "redis"] {
        let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
            .env("TMPDIR", &broken)
            .args([family, "--quick", "--trials", "1"])
            .timeout(RUN_TIMEOUT)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        if stderr.contains("not installed") || stderr.contains("not found") {
            eprintln!("{family}: its server is not installed; skipped: {stderr}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{family}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{family}: {stderr}");
        assert!(
            errors[0].contains("TMPDIR") && errors[0].contains("control character"),
            "{family}: {stderr}"
        );
        assert!(leftovers(&broken).is_empty(), "{:?}", leftovers(&broken));
    }
}

/// libpq reads a named service's file itself, and would wait on a FIFO or read
/// `/dev/zero` for ever: such a file is refused in one line before any connection.
#[test]
fn a_service_file_that_is_not_a_file_is_refused_in_one_line() {
    let tmp = tempdir();
    let fifo = tmp.path().join("services");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a plain syscall on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for file in [fifo.to_str().unwrap(), "/dev/zero"] {
        let started = std::time::Instant::now();
        let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
            .args(["postgres", "--quick", "--experiments", "query"])
            .env("PGSERVICE", "app")
            .env("PGSERVICEFILE", file)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            started.elapsed().as_secs() < 20,
            "{file}: took {:?}",
            started.elapsed()
        );
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(
            errors[0].contains("PGSERVICEFILE") && errors[0].contains(file),
            "{stderr}"
        );
    }
}

#[test]
fn an_unusable_tmpdir_is_bad_input_named_like_every_tmpdir_refusal() {
    use std::os::unix::process::CommandExt;
    let tmp = tempdir();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let locked = tmp.path().join("root-only");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut cases = vec![
        (tmp.path().join("missing"), "it does not exist", None),
        (file, "it is not a directory", None),
    ];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Not writable: root's 0755 directory, for nobody.
        cases.push((
            locked,
            "this account cannot make a directory there",
            Some(65534),
        ));
    }
    for (tmpdir, why, uid) in cases {
        let mut command = sockbench(tmp.path());
        command
            .env("TMPDIR", &tmpdir)
            .current_dir(tmp.path())
            .args(SHORT_SOCKETS)
            .args(["--transports", "unix", "--json", "-"]);
        if let Some(uid) = uid {
            command.uid(uid).gid(uid);
        }
        let out = assert_cmd::Command::from_std(command)
            .timeout(RUN_TIMEOUT)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", tmpdir.display());
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        let named = format!("TMPDIR ({}) cannot take", tmpdir.display());
        assert!(stderr.contains(&named) && stderr.contains(why), "{stderr}");
        assert!(
            stderr.contains("set TMPDIR to a writable directory"),
            "{stderr}"
        );
    }
}
