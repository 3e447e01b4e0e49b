//! The throwaway cluster next to other local accounts and the caller's environment:
//! the caller's `PG*` variables never reach it (a `--url` server still reads them),
//! an account that alters the benchmark role mid-run gets the experiment refused, and
//! a squatter on the abstract socket name gets no password and a clear refusal. The
//! tests need PostgreSQL's server programs (CI installs them); without them they say
//! so and return.

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;

/// A short query-only run, with `env` set for sockbench.
fn query_run(
    scratch: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut args = vec![
        "postgres",
        "--experiments",
        "query",
        "--trials",
        "1",
        "--queries",
        "100,200",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    assert_cmd::Command::from_std(sockbench(scratch))
        .args(&args)
        .envs(env.iter().copied())
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs")
}

#[test]
fn the_callers_pg_variables_never_reach_the_throwaway_cluster() {
    if !postgres_installed("the_callers_pg_variables_never_reach") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let started = std::time::Instant::now();
    // Each would break every connection with a message not naming it, or steer the
    // server. (PGHOST, PGHOSTADDR, PGPORT and PGSERVICE name the caller's own server,
    // which is then measured instead: see the next test.)
    let out = query_run(
        &scratch,
        &["--transports", "unix,unix-abstract,tcp"],
        &[
            ("PGOPTIONS", "-cwork_mem=bogus"),
            ("PGREQUIREPEER", "sockbench-nobody"),
            ("PGUSER", "sockbench-nobody"),
            ("PGDATABASE", "sockbench-nowhere"),
            ("PGSSLMODE", "verify-full"),
            ("PGCHANNELBINDING", "require"),
            ("PGTARGETSESSIONATTRS", "standby"),
            ("PGDATA", "/nonexistent"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "{:?}",
        started.elapsed()
    );
    assert_clean(&scratch);
}

#[test]
fn pg_variables_naming_a_server_start_no_throwaway_cluster() {
    if !postgres_installed("pg_variables_naming_a_server") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    // Port 1 on loopback: nothing listens there, so the caller's server is refused in
    // one line, and no cluster was made for it.
    let out = query_run(
        &scratch,
        &[],
        &[
            ("PGHOSTADDR", "127.0.0.1"),
            ("PGPORT", "1"),
            ("PGSSLMODE", "disable"),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no PostgreSQL server answers at the address your PG* variables name")
            && stderr.contains("give PGHOST and PGPORT the address where one listens"),
        "{stderr}"
    );
    assert_clean(&scratch);
}

#[test]
fn a_url_target_still_reads_the_callers_pg_variables() {
    use sockbench::postgres::{bindir::Binaries, cluster::Cluster, hba::AuthMethod};
    use sockbench::transport::Transport;
    if !postgres_installed("a_url_target_still_reads_the_callers_pg_variables") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let binaries = Binaries::find(None).unwrap();
    let mut cluster = Cluster::start(&binaries, &[Transport::Tcp], 1).unwrap();
    cluster.set_auth(AuthMethod::Scram).unwrap();
    let params = cluster.params(Transport::Tcp).unwrap();
    let (port, password) = (params.get("port").unwrap(), params.get("password").unwrap());
    // Neither user nor password in the URL: libpq takes them from PGUSER and PGPASSWORD.
    let url = format!("user=postgres://127.0.0.1:{port}/foo?sslmode=disable");
    let env = [("PGUSER", "foo"), ("PGPASSWORD", password.as_str())];
    let out = query_run(&scratch, &["--url", &url], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = query_run(&scratch, &["--url", &url], &env[..1]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("password"),
        "{}",
        text(&out.stderr)
    );
}

/// The TCP port of the throwaway cluster whose data directory is under `scratch`,
/// read from the postmaster's command line as any local account can.
fn cluster_port(scratch: &std::path::Path) -> Option<u16> {
    processes_mentioning(scratch.to_str().unwrap())
        .into_iter()
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
        .flat_map(|line| {
            line.split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
        })
        .find_map(|arg| arg.strip_prefix("port=")?.parse().ok())
}

#[test]
fn no_other_process_logs_in_as_role_foo_while_a_run_goes_on() {
    use sockbench::postgres::libpq::{ConnParams, PgConn};
    if !postgres_installed("no_other_process_logs_in_as_role_foo") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let mut child = start_then_wait_for(
        &scratch,
        &json,
        "postgres.query",
        &[
            "postgres",
            "--experiments",
            "query,connect",
            "--transports",
            "tcp",
            "--trials",
            "4",
            "--queries",
            "200,400",
        ],
    );
    let port = cluster_port(&scratch).expect("the postmaster's port");
    // Any local account knows the port, as this test does; without the run's
    // password it gets no further than the question for it.
    let attempt = PgConn::connect(&ConnParams::new([
        ("host", "127.0.0.1".to_string()),
        ("port", port.to_string()),
        ("user", "foo".into()),
        ("dbname", "foo".into()),
        ("sslmode", "disable".into()),
        ("passfile", "/nonexistent".into()),
    ]));
    let e = attempt
        .err()
        .expect("role foo is closed to whoever lacks its password");
    assert!(e.is_auth_failure(), "{e}");
    let status = wait_for_exit(&mut child, "sockbench did not end");
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(!results(&file, "postgres.connect").is_empty());
    assert_clean(&scratch);
}

/// What runs as role foo can still change its defaults: a script that does is run
/// once before measuring, and the experiment is then refused, as the cluster is
/// not as it was made.
#[test]
fn a_script_that_alters_role_foo_is_refused_before_it_is_measured() {
    if !postgres_installed("a_script_that_alters_role_foo") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let script = tmp.path().join("alter.sql");
    std::fs::write(&script, "ALTER ROLE foo SET jit_above_cost = 0;\n").unwrap();
    let json = tmp.path().join("out.json");
    let out = assert_cmd::Command::from_std(sockbench(&scratch))
        .args([
            "postgres",
            "--experiments",
            "concurrent",
            "-c",
            "1",
            "-T",
            "1",
        ])
        .args(["--trials", "1", "--transports", "unix", "--json"])
        .arg(&json)
        .arg("-f")
        .arg(&script)
        .timeout(RUN_TIMEOUT)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("not as it was made")
            && errors[0].contains("jit_above_cost=0")
            && errors[0].contains("--script"),
        "{stderr}"
    );
    if let Ok(written) = std::fs::read_to_string(&json) {
        let file: Value = serde_json::from_str(&written).unwrap();
        assert!(results(&file, "postgres.concurrent").is_empty());
    }
    assert_clean(&scratch);
}

/// The abstract socket name and port from a postmaster's command line under
/// `scratch`, as any local account can read them before the postmaster binds.
fn abstract_socket(scratch: &std::path::Path) -> Option<String> {
    for pid in processes_mentioning(scratch.to_str().unwrap()) {
        let Ok(line) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = line
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let name = args.iter().find_map(|a| {
            let dirs = a.strip_prefix("unix_socket_directories=")?;
            Some(dirs.split_once(",@")?.1.to_string())
        });
        let port = args.iter().find_map(|a| a.strip_prefix("port="));
        if let (Some(name), Some(port)) = (name, port) {
            return Some(format!("{name}/.s.PGSQL.{port}"));
        }
    }
    None
}

#[test]
fn a_watcher_as_nobody_squatting_the_abstract_name_ends_the_run_in_one_line() {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if !postgres_installed("a_watcher_as_nobody_squatting") || unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED a_watcher_as_nobody_squatting: needs PostgreSQL and root");
        return;
    }
    let name = std::ffi::CString::new("nobody").unwrap();
    // SAFETY: getpwnam returns NULL or a static entry, read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(!entry.is_null(), "a 'nobody' account");
    // SAFETY: non-null, as checked.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    let mut won = 0;
    for _attempt in 0..3 {
        let tmp = tempdir();
        let scratch = scratch(tmp.path());
        let mut run = KillOnDrop(
            sockbench(&scratch)
                .args([
                    "postgres",
                    "--experiments",
                    "query",
                    "--transports",
                    "unix-abstract",
                ])
                .args(["--trials", "1", "--queries", "100,200", "--quiet"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        // The watcher: binds the name as soon as the postmaster's command line shows it.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let socket = loop {
            if let Some(socket) = abstract_socket(&scratch) {
                break Some(socket);
            }
            if run.0.try_wait().unwrap().is_some() || std::time::Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        let socket = socket.expect("the postmaster's command line names its abstract socket");
        let squatter = assert_cmd::cargo::cargo_bin("sockbench");
        let mut squatter = KillOnDrop(
            std::process::Command::new(squatter)
                .args(["serve", "--listen", &format!("unix-abstract:{socket}")])
                .current_dir("/")
                .uid(uid)
                .gid(gid)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        let status = wait_for_exit(&mut run, "sockbench did not end");
        let mut stderr = String::new();
        std::io::Read::read_to_string(run.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let mut said = String::new();
        signal(&squatter.0, libc::SIGKILL);
        let _ = std::io::Read::read_to_string(squatter.0.stdout.as_mut().unwrap(), &mut said);
        if said.contains("ready") {
            won += 1;
            assert_eq!(status.code(), Some(1), "{stderr}");
            assert!(
                stderr.contains("someone else holds the abstract socket name"),
                "{stderr}"
            );
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        } else {
            assert!(
                status.success(),
                "the postmaster won the name, yet: {stderr}"
            );
        }
        assert_clean(&scratch);
        if won > 0 {
            return;
        }
    }
    eprintln!("NOTE a_watcher_as_nobody_squatting: the postmaster bound the name first 3 times");
}
