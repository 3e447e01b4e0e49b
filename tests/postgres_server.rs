//! sockbench pointed at a user's own PostgreSQL server (`common::user_server`):
//! a bare URI, a key=value conninfo, the caller's PG* variables (a service file
//! included), `--server` comparing the server's transports, and the label checked
//! against what libpq negotiated. The tests need PostgreSQL's server programs (CI
//! installs them); without them they say so and return.

mod common;

use common::user_server::*;
use common::*;
use sockbench::postgres::libpq::{ConnParams, PgConn};
use std::os::fd::AsRawFd;

#[test]
fn the_user_server_fixture_is_set_up_as_a_user_would() {
    if !postgres_installed("the_user_server_fixture") {
        return;
    }
    let server = UserServer::start();
    let app = |sslmode: &str, host: &str| {
        ConnParams::new([
            ("host", host.to_string()),
            ("port", server.port.to_string()),
            ("user", APP_USER.into()),
            ("dbname", APP_DB.into()),
            ("password", APP_PASSWORD.into()),
            ("sslmode", sslmode.into()),
        ])
    };
    let tls = PgConn::connect(&app("require", "127.0.0.1")).expect("app over tls");
    assert!(tls.tls().is_some());
    let plain = PgConn::connect(&app("disable", "127.0.0.1")).expect("app over tcp");
    assert!(plain.tls().is_none());
    let socket = PgConn::connect(&app("disable", server.socket_dir.to_str().unwrap())).unwrap();
    assert!(socket.over_unix_socket());
    assert_eq!(
        socket
            .query_value("SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user")
            .unwrap(),
        "false"
    );
    let wrong = ConnParams::new([
        ("host", "127.0.0.1".to_string()),
        ("port", server.port.to_string()),
        ("user", APP_USER.into()),
        ("dbname", APP_DB.into()),
        ("password", "wrong".into()),
    ]);
    assert!(PgConn::connect(&wrong).err().unwrap().is_auth_failure());
    // The superuser is not admitted over TCP.
    let su = ConnParams::new([
        ("host", "127.0.0.1".to_string()),
        ("port", server.port.to_string()),
        ("user", "postgres".into()),
        ("sslmode", "disable".into()),
    ]);
    assert!(PgConn::connect(&su).is_err());
    assert_eq!(server.admin("SHOW ssl"), "on");
    let (dir, pid) = (server.dir().to_path_buf(), server.pid().unwrap());
    drop(server);
    assert!(!dir.exists());
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

/// A short query-only run against a user's server, with `env` set for sockbench;
/// returns the output and the result file (when written).
fn measure(
    extra: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Output, Option<serde_json::Value>) {
    measure_under(&[], extra, env)
}

/// [`measure`], with sockbench run under `wrapper` (a program and its arguments,
/// e.g. `unshare …`) when it is not empty.
fn measure_under(
    wrapper: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Output, Option<serde_json::Value>) {
    let tmp = tempdir();
    let json = tmp.path().join("out.json");
    let mut args = vec![
        "postgres",
        "--quick",
        "--experiments",
        "query",
        "--trials",
        "2",
        "--queries",
        "1000,2000",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut command = sockbench(tmp.path());
    if let Some((program, rest)) = wrapper.split_first() {
        let mut wrapped = std::process::Command::new(program);
        wrapped.args(rest).arg(command.get_program());
        for (name, value) in command.get_envs() {
            match value {
                Some(value) => wrapped.env(name, value),
                None => wrapped.env_remove(name),
            };
        }
        command = wrapped;
        command.stdin(std::process::Stdio::null());
    }
    let out = assert_cmd::Command::from_std(command)
        .args(&args)
        .envs(env.iter().copied())
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs");
    let file = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).expect("result file is JSON"));
    if let Some(file) = &file {
        assert_eq!(schema_errors(file), Vec::<String>::new());
        assert!(!file.to_string().contains(APP_PASSWORD), "password written");
    }
    (out, file)
}

/// The query records of a result file, by transport label.
fn by_label(file: &serde_json::Value) -> std::collections::BTreeMap<String, serde_json::Value> {
    results(file, "postgres.query")
        .into_iter()
        .map(|r| (r["transport"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

const PASSWORD: (&str, &str) = ("PGPASSWORD", APP_PASSWORD);

/// The `PG*` variables that name the app's database on the server at `port`,
/// over loopback TCP, as a user's environment would.
fn app_variables(port: &str) -> [(&'static str, &str); 4] {
    [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port),
        ("PGUSER", APP_USER),
        ("PGDATABASE", APP_DB),
    ]
}

#[test]
fn bare_uris_and_conninfo_are_named_after_what_they_reach() {
    if !postgres_installed("bare_uris_and_conninfo") {
        return;
    }
    let server = UserServer::start();
    let (out, file) = measure(
        &[
            "--url",
            &server.tcp_uri("sslmode=disable"),
            "--url",
            // libpq's default sslmode=prefer: TLS, so named tls.
            &server.tcp_uri(""),
            "--url",
            &server.socket_conninfo(),
        ],
        &[PASSWORD],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records = by_label(&file.unwrap());
    assert_eq!(
        records.keys().collect::<Vec<_>>(),
        ["tcp", "tls", "unix"],
        "{records:?}"
    );
    let port = server.port.to_string();
    for (label, host) in [
        ("tcp", "127.0.0.1"),
        ("tls", "127.0.0.1"),
        ("unix", server.socket_dir.to_str().unwrap()),
    ] {
        let s = &records[label]["server"];
        assert_eq!(s["kind"], "postgresql", "{label}");
        assert_eq!(s["throwaway"], false, "{label}");
        assert_eq!(s["host"], host, "{label}");
        assert_eq!(s["port"], port.as_str(), "{label}");
        assert!(s["version"].as_str().unwrap().starts_with("PostgreSQL"));
    }
    assert!(records["tls"]["tls"]["version"]
        .as_str()
        .unwrap()
        .starts_with("TLSv1"));
    assert!(records["tls"]["tls"]["cipher"].is_string());
    assert!(records["tcp"].get("tls").is_none_or(|t| t.is_null()));
    // One --url is one transport, as named: one line says how to compare them.
    let (out, _) = measure(&["--url", &server.socket_conninfo()], &[PASSWORD]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "postgres: one --url measures one transport, so no verdict compares transports; \
             to compare this server's unix, tcp and tls, give it as --server URI instead"
        ),
        "{stderr}"
    );
}

#[test]
fn a_tcp_url_that_negotiated_tls_is_refused_in_one_line() {
    if !postgres_installed("a_tcp_url_that_negotiated_tls") {
        return;
    }
    let server = UserServer::start();
    // The password in the URL (which the help advises against) is never shown.
    let uri = server
        .tcp_uri("")
        .replace("app@", &format!("app:{APP_PASSWORD}@"));
    let (out, _) = measure(&["--url", &format!("tcp={uri}")], &[]);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains(APP_PASSWORD), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--url tcp: negotiated TLS") && stderr.contains("sslmode=disable"),
        "{stderr}"
    );
    // And a unix-named URL that reached TCP.
    let (out, _) = measure(
        &[
            "--url",
            &format!("unix={}", server.tcp_uri("sslmode=disable")),
        ],
        &[PASSWORD],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a Unix socket"), "{stderr}");
}

#[test]
fn pg_variables_name_the_users_server_and_say_so() {
    if !postgres_installed("pg_variables_name_the_users_server") {
        return;
    }
    let server = UserServer::start();
    let port = server.port.to_string();
    let variables = [
        &app_variables(&port)[..],
        &[("PGSSLMODE", "disable"), PASSWORD],
    ];
    let (out, file) = measure(&[], &variables.concat());
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The server's transports are compared as --server does; the socket, which
    // app may not see in the settings, is found through the postmaster's file.
    assert!(
        stderr.starts_with(&format!(
            "postgres: measuring your server from PGHOST, PGPORT: app at 127.0.0.1:{port}/app, \
             over unix, tcp, tls; unset them for a throwaway cluster\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("postgres: unix: found the server's socket in ")
            && stderr.contains("named in its postmaster.pid"),
        "{stderr}"
    );
    assert_eq!(
        after_estimate(&stderr).trim_end().lines().count(),
        2,
        "{stderr}"
    );
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls", "unix"]);
    assert_eq!(records["tcp"]["server"]["throwaway"], false);
    assert_eq!(records["tcp"]["server"]["port"], port.as_str());
}

#[test]
fn a_service_file_and_a_passfile_are_read_as_libpq_reads_them() {
    if !postgres_installed("a_service_file_and_a_passfile") {
        return;
    }
    let server = UserServer::start();
    let services = server.scratch_file(
        "pg_service.conf",
        &format!(
            "[bench]\nhost={}\nport={}\nuser={APP_USER}\ndbname={APP_DB}\n",
            server.socket_dir.display(),
            server.port
        ),
    );
    let passfile = server.scratch_file(
        "pgpass",
        &format!("*:*:{APP_DB}:{APP_USER}:{APP_PASSWORD}\n"),
    );
    let (out, file) = measure(
        &[],
        &[
            ("PGSERVICE", "bench"),
            ("PGSERVICEFILE", services.to_str().unwrap()),
            ("PGPASSFILE", passfile.to_str().unwrap()),
            // The service sets port and host: as in libpq, it wins over these.
            ("PGPORT", "1"),
            ("PGHOST", "127.0.0.1"),
        ],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("PGSERVICE: app at "), "{stderr}");
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls", "unix"]);
    assert_eq!(
        records["unix"]["server"]["host"],
        server.socket_dir.to_str().unwrap()
    );
}

#[test]
fn login_variables_alone_leave_the_throwaway_cluster_and_say_so() {
    if !postgres_installed("login_variables_alone") {
        return;
    }
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let out = assert_cmd::Command::from_std(sockbench(&scratch))
        .args(["postgres", "--experiments", "query", "--transports", "unix"])
        .args(["--trials", "1", "--queries", "100,200", "--quiet"])
        .env("PGUSER", "nobody-here")
        .env("PGSSLMODE", "verify-full")
        .timeout(RUN_TIMEOUT)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("creating a throwaway cluster")
            && stderr.contains("PGUSER, PGSSLMODE are not used"),
        "{stderr}"
    );
    assert_clean(&scratch);
}

#[test]
fn server_compares_unix_tcp_and_tls_with_the_facts_recorded() {
    if !postgres_installed("server_compares_unix_tcp_and_tls") {
        return;
    }
    let server = UserServer::start();
    // A user who may read the server's settings (as a monitoring role would).
    server.admin(&format!("GRANT pg_read_all_settings TO {APP_USER}"));
    let (out, file) = measure(&["--server", &server.tcp_uri("")], &[PASSWORD]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls", "unix"]);
    assert_eq!(
        records["unix"]["server"]["host"],
        server.socket_dir.to_str().unwrap()
    );
    assert_eq!(records["tcp"]["server"]["host"], "127.0.0.1");
    assert!(records["tcp"].get("tls").is_none_or(|t| t.is_null()));
    assert!(records["tls"]["tls"]["version"].is_string());
    for r in records.values() {
        assert_eq!(r["server"]["port"], server.port.to_string().as_str());
    }
}

#[test]
fn server_skips_in_one_line_each_what_it_cannot_reach() {
    if !postgres_installed("server_skips_in_one_line_each") {
        return;
    }
    // ssl = off, and app may not read unix_socket_directories.
    let server = UserServer::start_with(UserServerOptions {
        ssl: false,
        ..Default::default()
    });
    let (out, file) = measure(&["--server", &server.tcp_uri("")], &[PASSWORD]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("postgres: tls: skipped: the server has ssl = off"),
        "{stderr}"
    );
    // As root, the socket is found through the server's postmaster.pid.
    assert!(
        stderr.contains(&format!(
            "postgres: unix: found the server's socket in {}, named in its postmaster.pid \
             (the server does not show unix_socket_directories to app)",
            server.socket_dir.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        after_estimate(&stderr).trim_end().lines().count(),
        2,
        "{stderr}"
    );
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "unix"]);
    // Where the server's processes are not visible (sockbench in a PID namespace
    // of its own) and no standard directory holds its socket, one line says what
    // was tried and what to do.
    // SAFETY: a plain syscall.
    let root = unsafe { libc::geteuid() } == 0;
    let unshare = std::process::Command::new("unshare")
        .arg("--help")
        .output()
        .is_ok();
    if !(root && unshare) {
        eprintln!(
            "SKIPPED the socket not found: needs root and unshare (util-linux) for a PID \
             namespace of sockbench's own"
        );
    } else {
        let (out, file) = measure_under(
            &["unshare", "--pid", "--fork", "--mount-proc"],
            &["--server", &server.tcp_uri("")],
            &[PASSWORD],
        );
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let skipped = stderr
            .lines()
            .find(|l| l.starts_with("postgres: unix: skipped:"))
            .unwrap_or_else(|| panic!("{stderr}"));
        let port = server.port;
        for part in [
            "the server does not show unix_socket_directories to app, and its socket was not \
             found (",
            &format!("no .s.PGSQL.{port} in /var/run/postgresql, /run/postgresql, /tmp"),
            "is not visible here",
            "grant app pg_read_all_settings, or give the socket as host=DIR in the URI",
        ] {
            assert!(skipped.contains(part), "{part}: {skipped}");
        }
        let records = by_label(&file.unwrap());
        assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp"]);
    }
    // pg_hba refusing TLS (hostnossl) is skipped in its own line too.
    let server = UserServer::start_with(UserServerOptions {
        tcp_hba: "hostnossl",
        ..Default::default()
    });
    server.admin(&format!("GRANT pg_read_all_settings TO {APP_USER}"));
    let uri = server.tcp_uri("sslmode=disable");
    let (out, file) = measure(&["--server", &uri], &[PASSWORD]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("postgres: tls: skipped:") && stderr.contains("pg_hba.conf"),
        "{stderr}"
    );
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "unix"]);
}

/// `--server` goes only where the server's own account answers: when the socket the
/// server names was swapped by another account (in a directory it may write), not
/// one byte is sent there.
#[test]
fn server_sends_nothing_to_a_socket_another_account_holds() {
    if !postgres_installed("server_sends_nothing_to_a_socket_another_account_holds") {
        return;
    }
    // SAFETY: a plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED server_sends_nothing_to_a_socket_another_account_holds: not root");
        return;
    }
    let nobody = 65534;
    let decoy = tempfile::Builder::new()
        .prefix("sockbench-decoy-")
        .tempdir_in("/tmp")
        .unwrap();
    std::os::unix::fs::chown(decoy.path(), Some(nobody), Some(nobody)).unwrap();
    std::fs::set_permissions(
        decoy.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let server = UserServer::start_with(UserServerOptions {
        first_socket_dir: Some(decoy.path().to_path_buf()),
        ..Default::default()
    });
    server.admin(&format!("GRANT pg_read_all_settings TO {APP_USER}"));
    assert!(
        server
            .admin("SHOW unix_socket_directories")
            .starts_with(decoy.path().to_str().unwrap()),
        "the server names the decoy first"
    );
    // Another account puts its own socket in place of the server's, and keeps what
    // it is sent.
    let socket = decoy.path().join(format!(".s.PGSQL.{}", server.port));
    let kept = decoy.path().join("received");
    let listener = r#"
import os, socket, sys
os.unlink(sys.argv[1])
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(8); s.settimeout(30)
out = open(sys.argv[2], "ab", 0)
print("ready", flush=True)
while True:
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    c.settimeout(2)
    try:
        out.write(c.recv(65536))
    except OSError:
        pass
    c.close()
"#;
    let mut decoy_server = std::process::Command::new("python3");
    std::os::unix::process::CommandExt::uid(&mut decoy_server, nobody);
    std::os::unix::process::CommandExt::gid(&mut decoy_server, nobody);
    let mut child = KillOnDrop(
        decoy_server
            .args([
                "-c",
                listener,
                socket.to_str().unwrap(),
                kept.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs"),
    );
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.0.stdout.as_mut().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready");

    let (out, file) = measure(&["--server", &server.tcp_uri("")], &[PASSWORD]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("postgres: unix: skipped:") && stderr.contains("nobody"),
        "{stderr}"
    );
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls"]);
    drop(child);
    let received = std::fs::read(&kept).unwrap_or_default();
    assert!(
        received.is_empty(),
        "another account's socket got {} bytes: {}",
        received.len(),
        String::from_utf8_lossy(&received)
    );
}

/// `--server` takes from the server's `unix_socket_directories` only what libpq
/// reaches as a socket: an entry that is no absolute path (which libpq would take
/// for a host and reach over TCP) is skipped in one line, nothing connects to the
/// address it names, and the socket of the next entry is measured.
#[test]
fn server_connects_to_no_host_its_socket_directories_name() {
    if !postgres_installed("server_connects_to_no_host_its_socket_directories_name") {
        return;
    }
    // The server takes 127.0.0.2 for a directory in its data directory, and
    // listens there and on the next; libpq would take it for an address.
    let server = UserServer::start_with(UserServerOptions {
        first_socket_dir: Some("127.0.0.2".into()),
        ..Default::default()
    });
    server.admin(&format!("GRANT pg_read_all_settings TO {APP_USER}"));
    assert!(
        server
            .admin("SHOW unix_socket_directories")
            .starts_with("127.0.0.2, "),
        "the server names 127.0.0.2 first"
    );
    // Something of the server's account listens at that address on the server's
    // port (another account there would leave sockbench unable to tell who runs
    // the server), and says what every connection to it sends.
    let listener = r#"
import socket, sys
s = socket.socket()
s.bind(("127.0.0.2", int(sys.argv[1]))); s.listen(8); s.settimeout(60)
print("ready", flush=True)
while True:
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    c.settimeout(2)
    try:
        data = c.recv(65536)
    except OSError:
        data = b""
    print("connection", repr(data), flush=True)
    c.close()
"#;
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(&server.data).unwrap();
    let mut python = std::process::Command::new("python3");
    std::os::unix::process::CommandExt::uid(&mut python, owner.uid());
    std::os::unix::process::CommandExt::gid(&mut python, owner.gid());
    let mut child = KillOnDrop(
        python
            .args(["-c", listener, &server.port.to_string()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs"),
    );
    let mut said = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut said, &mut ready).unwrap();
    assert_eq!(ready.trim(), "ready");

    let (out, file) = measure(&["--server", &server.tcp_uri("")], &[PASSWORD]);
    drop(child);
    let mut arrived = String::new();
    std::io::Read::read_to_string(&mut said, &mut arrived).unwrap();
    assert_eq!(arrived, "", "127.0.0.2 was connected to");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "postgres: unix: skipped 127.0.0.2 of unix_socket_directories: it is no \
             absolute path or @name"
        ),
        "{stderr}"
    );
    let records = by_label(&file.unwrap());
    assert_eq!(
        records.keys().collect::<Vec<_>>(),
        ["tcp", "tls", "unix"],
        "{stderr}"
    );
    assert_eq!(
        records["unix"]["server"]["host"],
        server.socket_dir.to_str().unwrap()
    );
}

/// Runs `f` on a thread of its own in a mount namespace of its own, where a tmpfs
/// lies over `dir` (made the `postgres` account's, as the package makes
/// `/var/run/postgresql`): what `f` starts (the server, sockbench) sees that
/// directory, the host's stays as found, and the mounts go with the last process
/// in the namespace. A checkout or a sockbench binary under `dir` (a clone in
/// `/tmp`) is bound back where it was. `None`, having said why, when the test
/// cannot run here.
fn with_private_dir<T: Send>(test: &str, dir: &str, f: impl FnOnce() -> T + Send) -> Option<T> {
    // SAFETY: a plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED {test}: not root, so no mount namespace of its own");
        return None;
    }
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: plain syscalls on this thread's own namespace and mounts,
                // with valid C strings.
                unsafe {
                    assert_eq!(libc::unshare(libc::CLONE_NEWNS), 0, "unshare");
                    let root = c("/");
                    let none = c("none");
                    let private = libc::MS_REC | libc::MS_PRIVATE;
                    let rc = libc::mount(
                        none.as_ptr(),
                        root.as_ptr(),
                        std::ptr::null(),
                        private,
                        std::ptr::null(),
                    );
                    assert_eq!(rc, 0, "mounts made private");
                    // /var/run/postgresql is /run/postgresql where /var/run links to
                    // /run; where the directory is not there, a tmpfs over /run.
                    let real = std::fs::canonicalize(dir).ok();
                    let (over, make) = match &real {
                        Some(path) => (path.clone(), None),
                        None => (
                            std::path::PathBuf::from("/run"),
                            Some(std::path::PathBuf::from("/run/postgresql")),
                        ),
                    };
                    // Opened in this namespace, before the tmpfs hides them.
                    let kept = needed_under(&over);
                    let tmpfs = c("tmpfs");
                    let mode = c("mode=1777");
                    let target = c(over.to_str().unwrap());
                    let rc = libc::mount(
                        tmpfs.as_ptr(),
                        target.as_ptr(),
                        tmpfs.as_ptr(),
                        0,
                        mode.as_ptr().cast(),
                    );
                    assert_eq!(rc, 0, "tmpfs over {}", over.display());
                    for (path, opened) in &kept {
                        std::fs::create_dir_all(path).unwrap();
                        let from = c(&format!("/proc/thread-self/fd/{}", opened.as_raw_fd()));
                        let to = c(path.to_str().unwrap());
                        let rc = libc::mount(
                            from.as_ptr(),
                            to.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND,
                            std::ptr::null(),
                        );
                        assert_eq!(rc, 0, "{} bound back", path.display());
                    }
                    let made = make.unwrap_or(over);
                    std::fs::create_dir_all(&made).unwrap();
                    if dir != "/tmp" {
                        let name = c("postgres");
                        let entry = libc::getpwnam(name.as_ptr());
                        assert!(!entry.is_null(), "a postgres account");
                        let (uid, gid) = ((*entry).pw_uid, (*entry).pw_gid);
                        std::os::unix::fs::chown(&made, Some(uid), Some(gid)).unwrap();
                        std::fs::set_permissions(
                            &made,
                            std::os::unix::fs::PermissionsExt::from_mode(0o2775),
                        )
                        .unwrap();
                    }
                }
                f()
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .into()
}

/// What a test reads or runs after a tmpfs lies over `over`: the checkout (the
/// result schema) and the directory of the sockbench binary, each opened, when
/// `over` holds it (outermost first, what lies in another left out).
fn needed_under(over: &std::path::Path) -> Vec<(std::path::PathBuf, std::fs::File)> {
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_sockbench"));
    let mut needed: Vec<std::path::PathBuf> = [
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        binary.parent().unwrap(),
    ]
    .iter()
    .map(|p| std::fs::canonicalize(p).unwrap())
    .filter(|p| p.starts_with(over) && p != over)
    .collect();
    needed.sort();
    needed.dedup_by(|inner, outer| inner.starts_with(outer));
    needed
        .into_iter()
        .map(|p| {
            let opened = std::fs::File::open(&p).unwrap();
            (p, opened)
        })
        .collect()
}

/// An ordinary role, which may not read `unix_socket_directories`, still gets the
/// socket compared: `--server` over TCP finds it where PostgreSQL puts it by
/// default (`/var/run/postgresql`, `/tmp`), says so, and measures it.
#[test]
fn server_finds_the_socket_in_a_standard_directory_as_an_ordinary_role() {
    if !postgres_installed("server_finds_the_socket_in_a_standard_directory") {
        return;
    }
    for dir in ["/var/run/postgresql", "/tmp"] {
        with_private_dir(
            "server_finds_the_socket_in_a_standard_directory",
            dir,
            || {
                let server = UserServer::start_with(UserServerOptions {
                    first_socket_dir: Some(dir.into()),
                    ..Default::default()
                });
                let socket = std::path::Path::new(dir).join(format!(".s.PGSQL.{}", server.port));
                assert!(socket.exists(), "the server made {}", socket.display());
                // The role cannot read the setting: what an ordinary user sees.
                let app = ConnParams::new([
                    ("host", server.socket_dir.display().to_string()),
                    ("port", server.port.to_string()),
                    ("user", APP_USER.into()),
                    ("dbname", APP_DB.into()),
                    ("password", APP_PASSWORD.into()),
                ]);
                let conn = PgConn::connect(&app).unwrap();
                assert!(conn.query_value("SHOW unix_socket_directories").is_err());
                drop(conn);
                let (out, file) = measure(&["--server", &server.tcp_uri("")], &[PASSWORD]);
                let stderr = text(&out.stderr);
                assert!(out.status.success(), "{dir}: {stderr}");
                assert!(
                    stderr.contains(&format!(
                        "postgres: unix: found the server's socket in {dir}, a standard directory"
                    )),
                    "{dir}: {stderr}"
                );
                assert!(!stderr.contains("skipped"), "{dir}: {stderr}");
                let records = by_label(&file.unwrap());
                assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls", "unix"]);
                assert_eq!(records["unix"]["server"]["host"], dir, "{dir}");
                assert!(text(&out.stdout).contains("Verdict, on this machine:"));
            },
        );
    }
}

/// `PGHOST=… sockbench postgres` compares the server's transports as `--server`
/// does, and ends with a verdict.
#[test]
fn pg_variables_alone_compare_the_servers_transports() {
    if !postgres_installed("pg_variables_alone_compare_the_servers_transports") {
        return;
    }
    let server = UserServer::start();
    server.admin(&format!("GRANT pg_read_all_settings TO {APP_USER}"));
    let port = server.port.to_string();
    let variables = [&app_variables(&port)[..], &[PASSWORD]];
    let (out, file) = measure(&[], &variables.concat());
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let records = by_label(&file.unwrap());
    assert_eq!(records.keys().collect::<Vec<_>>(), ["tcp", "tls", "unix"]);
    let stdout = text(&out.stdout);
    let verdict = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Verdict"))
        .collect::<Vec<_>>();
    assert_eq!(
        verdict.first().copied(),
        Some("Verdict, on this machine:"),
        "{stdout}"
    );
    assert!(verdict.iter().any(|l| l.contains("unix")), "{stdout}");
}
