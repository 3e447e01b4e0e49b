//! Against a real `redis-server`; each test says why it is skipped when there is
//! none.

use super::*;
use crate::leftovers::server_runs;
use crate::redis::config::PID_FILE;
use crate::redis::find_program;
use std::os::unix::fs::PermissionsExt;

fn program() -> Option<PathBuf> {
    let found = find_program();
    if found.is_none() {
        eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
    }
    found
}

fn names(dir: &Dir) -> Vec<String> {
    let mut names: Vec<String> = dir
        .names()
        .unwrap()
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn it_answers_over_every_transport_and_keeps_a_value_of_64_kib() {
    let Some(program) = program() else { return };
    let server = RedisServer::start(&program).unwrap();
    let value: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    for transport in [Transport::Unix, Transport::Tcp, Transport::Tls] {
        if let (Transport::Tls, Some(why)) = (transport, server.tls_missing()) {
            eprintln!("tls skipped: {why}");
            continue;
        }
        let mut client = server.connect(transport, value.len()).unwrap();
        assert_eq!(
            client.conn().tls_info().is_some(),
            transport == Transport::Tls
        );
        client
            .exchange(&Encoded::new(&[b"PING"]), Expect::Status("PONG"))
            .unwrap();
        let key = format!("value-{}", transport.name());
        let set = Encoded::new(&[b"SET", key.as_bytes(), &value]);
        client.exchange(&set, Expect::Status("OK")).unwrap();
        client
            .send(&Encoded::new(&[b"GET", key.as_bytes()]))
            .unwrap();
        assert_eq!(client.reply().unwrap(), Reply::Bulk(&value), "{transport}");
        let pipelined = Encoded::pipelined(&[b"GET", key.as_bytes()], 16);
        client
            .exchange(&pipelined, Expect::Bulk(value.len()))
            .unwrap();
    }
}

#[test]
fn nothing_is_kept_on_disk_and_nothing_is_left_after_drop() {
    let Some(program) = program() else { return };
    let mut server = RedisServer::start(&program).unwrap();
    let base = server.dirs().0.path().to_path_buf();
    assert!(
        server_runs(server.dirs().0),
        "its owner file records a running server"
    );
    let mut client = server.connect(Transport::Unix, 0).unwrap();
    for i in 0..100 {
        let key = format!("k{i}");
        let set = Encoded::new(&[b"SET", key.as_bytes(), b"v"]);
        client.exchange(&set, Expect::Status("OK")).unwrap();
    }
    let running = names(server.dirs().1);
    assert_eq!(
        running,
        [CONFIG, PID_FILE, SOCKET, "server.crt", "server.key"],
        "no RDB or AOF file while it runs"
    );
    // A clean shutdown saves nothing either (`save ""`).
    server.stop();
    assert!(!server_runs(server.dirs().0), "stopped");
    let left = names(server.dirs().1);
    assert!(
        left.iter()
            .all(|n| [CONFIG, "server.crt", "server.key"].contains(&n.as_str())),
        "{left:?}"
    );
    drop(server);
    assert!(!base.exists(), "{} is gone", base.display());
}

#[test]
fn the_password_is_in_no_command_line_and_its_files_are_the_servers_alone() {
    let Some(program) = program() else { return };
    let server = RedisServer::start(&program).unwrap();
    let pid = server.pid().unwrap();
    let (_, password) = server.credentials();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    for seen in [&cmdline, &environ] {
        assert!(
            !seen
                .windows(password.len())
                .any(|w| w == password.as_bytes()),
            "the password is visible in /proc/{pid}"
        );
    }
    let (top, srv) = server.dirs();
    // It works in its own directory (the Ctrl-C test below looks for it so).
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
    assert_eq!(cwd, srv.path());
    let mut config = String::new();
    srv.open_read(CONFIG)
        .unwrap()
        .read_to_string(&mut config)
        .unwrap();
    assert!(!config.contains(password));
    assert!(config.contains(&config::sha256_hex(password)));
    let uid = account::uid_of(server.account.as_ref());
    for name in [CONFIG, "server.crt", "server.key"] {
        let entry = srv.entry_at(name).unwrap().unwrap();
        assert_eq!((entry.mode, entry.uid), (0o600, uid), "{name}");
    }
    let srv_entry = srv.entry().unwrap();
    assert_eq!((srv_entry.mode, srv_entry.uid), (0o700, uid));
    assert_eq!(
        top.entry().unwrap().uid,
        crate::dir::euid(),
        "the top stays ours"
    );
}

/// Runs `redis-cli ARGS… PING` as `nobody`; what it printed.
fn ping_as_nobody(args: &[&str]) -> String {
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", "redis-cli"])
        .args(args)
        .arg("PING")
        .output()
        .expect("runuser runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn another_local_account_can_run_no_command() {
    let Some(program) = program() else { return };
    if crate::dir::euid() != 0 || find_on_path("redis-cli").is_none() {
        eprintln!("skipped: needs root (to act as nobody) and redis-cli");
        return;
    }
    let server = RedisServer::start(&program).unwrap();
    let port = server.port.to_string();
    let said = ping_as_nobody(&["-h", "127.0.0.1", "-p", &port]);
    assert!(said.contains("NOAUTH"), "over TCP: {said}");
    if let Some(tls_port) = server.tls_port {
        let tls_port = tls_port.to_string();
        let said = ping_as_nobody(&["--tls", "--insecure", "-h", "127.0.0.1", "-p", &tls_port]);
        assert!(said.contains("NOAUTH"), "over TLS: {said}");
    }
    if server.account.as_ref().is_some_and(|a| a.name == "nobody") {
        eprintln!("socket part skipped: the server itself runs as nobody");
        return;
    }
    let socket = server.socket().display().to_string();
    let said = ping_as_nobody(&["-s", &socket]);
    assert!(
        said.contains("Permission denied"),
        "over the socket: {said}"
    );
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[test]
fn a_server_killed_mid_run_gives_a_clear_error_and_leaves_nothing() {
    let Some(program) = program() else { return };
    let mut server = RedisServer::start(&program).unwrap();
    let base = server.dirs().0.path().to_path_buf();
    let mut client = server.connect(Transport::Unix, 0).unwrap();
    let ping = Encoded::new(&[b"PING"]);
    client.exchange(&ping, Expect::Status("PONG")).unwrap();
    // SAFETY: a plain syscall on the PID of the test's own server child.
    unsafe { libc::kill(server.pid().unwrap() as libc::pid_t, libc::SIGKILL) };
    let e = client.exchange(&ping, Expect::Status("PONG")).unwrap_err();
    assert!(e.to_string().contains("closed the connection"), "{e}");
    std::thread::sleep(Duration::from_millis(50));
    let e = server.check_running().unwrap_err().to_string();
    assert!(e.contains("SIGKILL"), "{e}");
    assert!(!server_runs(server.dirs().0), "it records a dead process");
    drop(server);
    assert!(!base.exists(), "{} is gone", base.display());
}

/// A stand-in for `redis-server`: a shell script in a directory the server account
/// can read, kept until the test ends.
fn fake_server(script: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("redis-server");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

#[test]
fn a_server_that_fails_to_start_says_why_and_leaves_nothing() {
    // It prints the configuration's path (into the log the error quotes) and fails.
    let (_keep, fake) = fake_server("echo \"config at $1\"; exit 3");
    let e = format!("{:#}", RedisServer::start(&fake).err().expect("it fails"));
    assert!(e.contains("exit status: 3"), "{e}");
    let config = e
        .split("config at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the log is quoted");
    let base = Path::new(config).parent().unwrap().parent().unwrap();
    assert!(
        base.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(super::super::DIR_PREFIX),
        "{config}"
    );
    assert!(!base.exists(), "{} is gone", base.display());
}

#[test]
fn a_build_without_tls_starts_without_it_and_says_so() {
    let Some(program) = program() else { return };
    // Refuses the TLS lines as a build without TLS would, else is redis-server.
    let script = format!(
        "if /bin/grep -q '^tls-port' \"$1\"; then echo \">>> 'tls-port 1' Bad directive or \
         wrong number of arguments\"; exit 1; fi\nexec {} \"$1\"",
        program.display()
    );
    let (_keep, fake) = fake_server(&script);
    let server = RedisServer::start(&fake).unwrap();
    let why = server.tls_missing().expect("tls is reported missing");
    assert!(why.contains("Bad directive"), "{why}");
    assert!(server.endpoint(Transport::Tls).is_none());
    let mut client = server.connect(Transport::Tcp, 0).unwrap();
    client
        .exchange(&Encoded::new(&[b"PING"]), Expect::Status("PONG"))
        .unwrap();
}

/// Set in the child process of the next test.
const INTERRUPTED_CHILD: &str = "SOCKBENCH_TEST_REDIS_INTERRUPTED";

#[test]
fn a_ctrl_c_while_starting_leaves_no_server_and_no_directory() {
    let Some(program) = program() else { return };
    if std::env::var_os(INTERRUPTED_CHILD).is_some() {
        // The child: Ctrl-C arrives, then the server is started (its process runs
        // before the start notices the signal).
        crate::interrupt::install();
        // SAFETY: raise sends a signal to this process, whose handler only counts it.
        unsafe { libc::raise(libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !crate::interrupt::interrupted() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let e = RedisServer::start(&program)
            .err()
            .expect("the start is interrupted");
        println!("start failed: {e:#}");
        return;
    }
    // The parent: runs this test alone in a child process, with its own TMPDIR.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "redis::server::tests::a_ctrl_c_while_starting_leaves_no_server_and_no_directory",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(INTERRUPTED_CHILD, "1")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("start failed: interrupted"), "{said}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // No process runs in that TMPDIR (redis-server changes to its `dir`, and
    // rewrites its command line).
    let marker = tmp.path().to_string_lossy().into_owned();
    let running = std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
        std::fs::read_link(p.path().join("cwd"))
            .is_ok_and(|cwd| cwd.to_string_lossy().starts_with(&marker))
    });
    assert!(!running, "a redis-server from {marker} still runs");
}
