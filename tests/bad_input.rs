//! Bad input gets one line naming the problem and what to do, exit code 2, and no
//! panic or backtrace.

mod common;

use common::*;

/// A mistyped command or option gets clap's "a similar one exists", still in one
/// line with exit 2.
#[test]
fn a_mistyped_command_or_option_is_told_what_was_meant() {
    assert_rejected(&["postgress"], "a similar subcommand exists: 'postgres'");
    assert_rejected(
        &["sockets", "--trails", "3"],
        "a similar argument exists: '--trials'",
    );
}

#[test]
fn unknown_transport() {
    assert_rejected(
        &["sockets", "--transports", "unix,sctp"],
        "unknown transport 'sctp'",
    );
}

#[test]
fn unknown_workload() {
    assert_rejected(
        &["sockets", "--workloads", "latency"],
        "unknown workload 'latency'",
    );
}

#[test]
fn malformed_address() {
    assert_rejected(&["serve", "--listen", "tcp:localhost"], "is not IP:PORT");
    assert_rejected(
        &["serve", "--listen", "sctp:127.0.0.1:9"],
        "unknown transport 'sctp'",
    );
    assert_rejected(
        &["sockets", "--server", "127.0.0.1:9"],
        "no transport prefix",
    );
}

#[test]
fn socket_path_over_107_bytes() {
    let long = format!("unix:/tmp/{}", "x".repeat(103));
    assert_rejected(&["serve", "--listen", &long], "107-byte limit");
}

#[test]
fn zero_trials() {
    assert_rejected(
        &["sockets", "--trials", "0"],
        "--trials must be between 1 and",
    );
}

#[test]
fn bad_sizes() {
    assert_rejected(&["sockets", "--sizes", "64,2MiB"], "outside 1 B to 1 MiB");
    assert_rejected(&["sockets", "--sizes", "big"], "not a number of bytes");
}

#[test]
fn unwritable_json_path() {
    assert_rejected(
        &["sockets", "--json", "/nonexistent-dir/out.json"],
        "choose a writable path",
    );
}

#[test]
fn unknown_tls_version() {
    assert_rejected(
        &["sockets", "--tls-version", "1.1"],
        "unknown TLS version '1.1'; choose from 1.2, 1.3",
    );
}

#[test]
fn unknown_option() {
    assert_rejected(&["sockets", "--fast"], "--fast");
}

#[test]
fn port_in_use() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("tcp:{}", taken.local_addr().unwrap());
    assert_rejected(&["serve", "--listen", &addr], "already in use");
}

#[test]
fn serve_needs_an_address() {
    assert_rejected(&["serve"], "--listen");
}

#[test]
fn postgres_binaries_not_where_pointed() {
    assert_rejected(
        &["postgres", "--pg-bindir", "/nowhere/at/all"],
        "--pg-bindir /nowhere/at/all: no such directory",
    );
    let empty = tempdir();
    assert_rejected(
        &["postgres", "--pg-bindir", empty.path().to_str().unwrap()],
        "no initdb and postgres programs there",
    );
}

#[test]
fn postgres_malformed_and_unreachable_urls() {
    assert_rejected(
        &["postgres", "--url", "nonsense"],
        "is neither a URI, a key=value connection string nor NAME= before one",
    );
    assert_rejected(
        &[
            "postgres",
            "--url",
            "x=postgres://foo@127.0.0.1/foo?colour=blue",
        ],
        "--url x: invalid connection string",
    );
    assert_rejected(
        &[
            "postgres",
            "--url",
            "x=postgres://foo@127.0.0.1:notaport/foo",
        ],
        "invalid integer value \"notaport\"",
    );
    // Port 1 on loopback: nothing listens there.
    let out_of_reach = "x=postgres://foo:secret@127.0.0.1:1/foo?sslmode=disable";
    let tmp = tempdir();
    let said = text(&run(tmp.path(), &["postgres", "--url", out_of_reach]).stderr);
    assert!(
        said.contains("no PostgreSQL server answers at x ("),
        "{said}"
    );
    assert!(!said.contains("secret"), "password shown: {said}");
}

/// A server that is not there gets the same exit code and the same words from
/// every family: which server, where, what the system said, what to do.
#[test]
fn a_server_that_is_not_there_is_said_alike_by_every_family() {
    let tmp = tempdir();
    let nobody = format!("unix:{}", tmp.path().join("nobody.sock").display());
    let cases: [(&[&str], &str, &str); 3] = [
        (
            &["postgres", "--url", "postgresql:///x?host=/nonexistent"],
            "PostgreSQL",
            "--url",
        ),
        (&["redis", "--url", "redis://127.0.0.1:1"], "Redis", "--url"),
        (&["sockets", "--server", &nobody], "sockbench", "--server"),
    ];
    for (args, server, option) in cases {
        let args = [args, &["--quick"]].concat();
        let out = run(tmp.path(), &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        let line = stderr.trim_end();
        assert!(
            line.starts_with(&format!("error: no {server} server answers at ")),
            "{args:?}: {line}"
        );
        assert!(line.contains("; start one there"), "{args:?}: {line}");
        assert!(
            line.ends_with(&format!("or give {option} the address where one listens")),
            "{args:?}: {line}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed results");
    }
}

#[test]
fn postgres_options_that_do_not_fit() {
    // Trust only where no other account can connect: the private socket alone.
    for transports in ["tcp,tls", "unix,unix-abstract"] {
        assert_rejected(
            &[
                "postgres",
                "--experiments",
                "auth",
                "--auth-methods",
                "trust,md5",
                "--transports",
                transports,
            ],
            "trust is offered only over the Unix socket in sockbench's private directory",
        );
    }
    assert_rejected(
        &["postgres", "--experiments", "latency"],
        "unknown experiment 'latency'",
    );
    assert_rejected(
        &["postgres", "--queries", "5000"],
        "at least two different counts",
    );
    assert_rejected(
        &["postgres", "--rows", "1M,lots"],
        "count 'lots' is not a whole number",
    );
    assert_rejected(
        &[
            "postgres",
            "--auth-url",
            "kerberos=postgres://foo@127.0.0.1/foo",
        ],
        "unknown authentication method 'kerberos'",
    );
    assert_rejected(
        &[
            "postgres",
            "--url",
            "a=postgres://127.0.0.1:1",
            "--transports",
            "tcp",
        ],
        "--transports applies to the throwaway cluster",
    );
    assert_rejected(
        &[
            "postgres",
            "--url",
            "a=postgres://127.0.0.1:1",
            "--experiments",
            "auth",
        ],
        "needs --auth-url",
    );
}

#[test]
fn postgres_concurrent_options() {
    assert_rejected(
        &["postgres", "--clients", "0"],
        "--clients must be between 1 and 1000",
    );
    assert_rejected(
        &["postgres", "--threads", "0"],
        "--threads must be between 1 and 256",
    );
    assert_rejected(
        &["postgres", "--duration", "soon"],
        "duration 'soon' is not understood",
    );
    assert_rejected(
        &["postgres", "--script", "/nowhere/tx.sql"],
        "--script /nowhere/tx.sql",
    );
    let tmp = tempdir();
    let script = tmp.path().join("tx.sql");
    std::fs::write(&script, "\\sleep 10 ms\nSELECT 1;\n").unwrap();
    assert_rejected(
        &["postgres", "--script", script.to_str().unwrap()],
        "line 1: pgbench's \\sleep is not supported",
    );
}

#[test]
fn run_with_a_pg_bindir_that_is_not_there() {
    assert_rejected(&["run", "--pg-bindir", "/nonexistent/bin"], "--pg-bindir");
}

#[test]
fn run_with_an_unwritable_result_file() {
    assert_rejected(&["run", "--json", "/proc/sockbench.json"], "--json");
}

#[test]
fn report_and_compare_need_their_files_and_a_known_format() {
    assert_rejected(&["report"], "FILE");
    assert_rejected(&["compare", "tests/fixtures/run.json"], "B.json");
    assert_rejected(
        &["report", "tests/fixtures/run.json", "--format", "pdf"],
        "invalid value 'pdf'",
    );
}

#[test]
fn passwords_are_never_echoed() {
    for args in [
        &[
            "postgres",
            "--url",
            "postgres://u:Hunter2Secret@127.0.0.1:1/db?sslmode=disable",
        ][..],
        &[
            "postgres",
            "--url",
            "x=host=127.0.0.1 port=1 password = Hunter2Secret",
        ],
        &[
            "postgres",
            "--url",
            "x=host=127.0.0.1 port=1 password='open Hunter2Secret'",
        ],
        &[
            "postgres",
            "--url=x=postgres://u:Hunter2&Secret@127.0.0.1:1/db",
        ],
        &["postgres", "postgres://u:Hunter2Secret@127.0.0.1:1/db"],
        &[
            "postgres",
            "--auth-url",
            "scram=host=127.0.0.1 port=1 password=Hunter2Secret",
        ],
    ] {
        let tmp = tempdir();
        let out = run(tmp.path(), args);
        let stderr = text(&out.stderr);
        // Refused (2), or, where the URL holds, no server at port 1 (1).
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("Hunter2"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Secret"), "{args:?}: {stderr}");
    }
}

#[test]
fn unknown_placement() {
    assert_rejected(
        &["sockets", "--placement", "same,near"],
        "unknown placement 'near'; choose from free, same, split",
    );
}

#[test]
fn split_placement_on_one_cpu() {
    let tmp = tempdir();
    let base = sockbench(tmp.path());
    // Allowed only CPU 0, as a container or `taskset` would.
    let mut command = std::process::Command::new("taskset");
    command
        .args(["-c", "0"])
        .arg(base.get_program())
        .args(["sockets", "--placement", "split"]);
    for (key, value) in base.get_envs() {
        match value {
            Some(v) => command.env(key, v),
            None => command.env_remove(key),
        };
    }
    if let Some(dir) = base.get_current_dir() {
        command.current_dir(dir);
    }
    let Ok(out) = command.output() else {
        eprintln!("skipped: taskset (util-linux) is not installed");
        return;
    };
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--placement split needs two CPUs"),
        "{stderr}"
    );
}

#[test]
fn urls_libpq_cannot_parse_keep_their_password_hidden() {
    for url in [
        "x=http://bob:Hunter2Secret@127.0.0.1:47432/bob",
        "x=postgres://bob:Hunter2Secret@[::1/bob",
        "x=postgresql://bob:Hunter2Secret@[::1",
        "x=postgres://bob:Hunter2Secret%zz@127.0.0.1/bob",
    ] {
        assert_rejected(
            &["postgres", "--url", url],
            "--url x: invalid connection string",
        );
        let tmp = tempdir();
        let said = text(&run(tmp.path(), &["postgres", "--url", url]).stderr);
        assert!(!said.contains("Hunter2"), "{url}: password shown: {said}");
    }
}

#[test]
fn a_symlink_at_a_serve_socket_path_is_named_and_not_followed() {
    let tmp = tempdir();
    let target = tmp.path().join("kept");
    std::fs::write(&target, "kept").unwrap();
    let link = tmp.path().join("sb.sock");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let listen = format!("unix:{}", link.display());
    assert_rejected(&["serve", "--listen", &listen], "is a symbolic link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_number_below_zero_names_its_option_and_what_it_takes() {
    for (args, says) in [
        (
            &["sockets", "--trials", "-5"][..],
            "'--trials <N>': takes a whole number",
        ),
        (
            &["sockets", "--parallel", "-1"],
            "'--parallel <N>': takes a whole number",
        ),
        (
            &["postgres", "-c", "-5"],
            "'--clients <LIST>': takes a whole number",
        ),
        (
            &["redis", "-P", "-2"],
            "'--pipeline <N>': takes a whole number",
        ),
        (
            &["postgres", "-T", "-3"],
            "--duration: duration '-3' is below zero",
        ),
        (
            &["sockets", "--sizes", "-64"],
            "--sizes: size '-64' is below zero",
        ),
        (&["postgres", "-L", "-3"], "--latency-limit must be between"),
    ] {
        assert_rejected(args, says);
    }
}

/// A list starting below zero is the option's value, refused by what the list
/// takes, not read as an unknown flag.
#[test]
fn a_list_starting_below_zero_is_the_options_value() {
    for (args, says) in [
        (&["postgres", "--rows", "-5,10"][..], "--rows: count '-5'"),
        (&["postgres", "--queries", "-5,10"], "--queries: count '-5'"),
        (
            &["postgres", "-c", "-5,10"],
            "invalid value '-5' for '--clients <LIST>'",
        ),
        (&["sockets", "--sizes", "-5,10"], "--sizes: size '-5'"),
        (
            &["sockets", "--write-sizes", "-1,2"],
            "--write-sizes: size '-1'",
        ),
        (
            &[
                "sockets",
                "--workloads",
                "messages",
                "--message-sizes",
                "-1,2",
            ],
            "--message-sizes: size '-1'",
        ),
        (&["redis", "--sizes", "-1,2"], "--sizes: size '-1'"),
        (&["proxy", "--sizes", "-1,4KiB"], "--sizes: size '-1'"),
    ] {
        assert_rejected(args, says);
    }
}
