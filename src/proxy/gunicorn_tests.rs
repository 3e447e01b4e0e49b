//! What is read from gunicorn's words, and a real gunicorn (Debian's) serving
//! sockbench's app; each test that needs gunicorn says it is skipped when there
//! is none.

use super::*;
use crate::dir::Dir;
use crate::leftovers::{server_runs, sweep, DirKind};
use crate::proxy::http::{self, LIMIT};
use std::io::{BufRead, Write};
use std::os::unix::fs::PermissionsExt;

/// True when gunicorn is installed; else says that `test` is skipped.
fn installed(test: &str) -> bool {
    let found = find_program().is_some();
    if !found {
        eprintln!("SKIPPED {test}: gunicorn is not installed (apt-get install gunicorn)");
    }
    found
}

/// The account nginx runs as, which gunicorn runs as too.
fn account() -> Option<Account> {
    crate::proxy::nginx::server_account().unwrap()
}

fn start(transports: &[Transport], workers: u32) -> Gunicorn {
    Gunicorn::start(transports, account().as_ref(), workers, None).unwrap()
}

/// `GET /?size=SIZE` on a new connection, its peer checked first, by
/// sockbench's client (which refuses a 2xx body of another size than asked):
/// the status, and whether the connection is still open after it.
fn get(gunicorn: &Gunicorn, transport: Transport, size: usize) -> (Status, bool) {
    let at = gunicorn.endpoint(transport).unwrap();
    let conn = http::connect(at).unwrap();
    gunicorn.check_peer(&conn).unwrap();
    let mut client = HttpConn::new(conn, size, at, LIMIT).unwrap();
    let request = HttpRequest::get("localhost", size, true).unwrap();
    let status = client.exchange(&request).unwrap();
    (status, client.is_open())
}

/// Sends `request` as it is on a new connection, its peer checked first, and
/// reads until gunicorn closes it: the response's header, and its body.
fn raw(gunicorn: &Gunicorn, transport: Transport, request: &str) -> (String, Vec<u8>) {
    let mut conn = http::connect(gunicorn.endpoint(transport).unwrap()).unwrap();
    gunicorn.check_peer(&conn).unwrap();
    conn.set_read_timeout(Some(LIMIT)).unwrap();
    conn.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    conn.read_to_end(&mut response).unwrap();
    let end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a whole header");
    let head = String::from_utf8_lossy(&response[..end]).into_owned();
    (head, response[end + 4..].to_vec())
}

/// The value of a line of /proc/PID/status, such as `Uid:`.
fn status_field(pid: u32, name: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| Some(l.strip_prefix(name)?.trim().to_string()))
        .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
}

/// Waits up to `limit` for none of `pids` to run; those still running.
fn still_running(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|&p| crate::cpu::proc::runs(p))
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The master and every process below it.
fn every_pid(gunicorn: &Gunicorn) -> Vec<u32> {
    std::iter::once(gunicorn.pid())
        .chain(crate::cpu::proc::descendants(gunicorn.pid()))
        .collect()
}

#[test]
fn the_version_is_read_from_what_the_program_says() {
    assert_eq!(
        parse_version("gunicorn (version 20.1.0)\n").as_deref(),
        Some("20.1.0")
    );
    assert_eq!(parse_version("usage: gunicorn [OPTIONS]"), None);
    assert_eq!(parse_version("gunicorn (version x)"), None);
    if !installed("the_version_is_read_from_what_the_program_says (its real half)") {
        return;
    }
    let found = version(&find_program().unwrap())
        .unwrap()
        .expect("a version");
    assert!(found.starts_with(|c: char| c.is_ascii_digit()), "{found}");
}

#[test]
fn the_listening_line_names_each_endpoint_in_the_order_bound() {
    let socket = "/t/sockbench-proxy-x/run/gunicorn.sock";
    let both = [Transport::Unix, Transport::Tcp];
    let found = listening(
        &format!("unix:{socket},http://127.0.0.1:41234 (77)"),
        &both,
        socket,
        77,
    )
    .unwrap();
    assert_eq!(
        found,
        [
            format!("unix:{socket}").parse::<Endpoint>().unwrap(),
            "tcp:127.0.0.1:41234".parse().unwrap()
        ]
    );
    let tcp_first = listening(
        &format!("http://127.0.0.1:5 ,unix:{socket} (77)"),
        &[Transport::Tcp, Transport::Unix],
        socket,
        77,
    );
    assert!(tcp_first.is_err(), "a stray space is not skipped");
    for (line, why) in [
        (format!("unix:{socket},http://127.0.0.1:41234 (78)"), "78"),
        (
            format!("unix:{socket},http://127.0.0.1:0 (77)"),
            "cannot read",
        ),
        (
            format!("unix:{socket},http://127.0.0.1:99999 (77)"),
            "cannot read",
        ),
        (
            format!("unix:{socket}x,http://127.0.0.1:1 (77)"),
            "cannot read",
        ),
        (format!("unix:{socket} (77)"), "cannot read"),
        (
            format!("unix:{socket},http://127.0.0.1:1,x (77)"),
            "cannot read",
        ),
        (format!("unix:{socket},http://127.0.0.1:1"), "cannot read"),
    ] {
        let e = listening(&line, &both, socket, 77).unwrap_err().to_string();
        assert!(e.contains(why), "{line}: {e}");
    }
}

#[test]
fn the_log_lines_shown_are_the_ones_that_say_what_went_wrong() {
    assert_eq!(
        shorten("[2026-11-27 01:13:09 +0000] [4988] [INFO] Listening at: x (1)"),
        "[INFO] Listening at: x (1)"
    );
    assert_eq!(shorten("  File \"x.py\", line 1"), "File \"x.py\", line 1");
    assert_eq!(shorten("[not a log line] [x] y"), "[not a log line] [x] y");
    let (tx, lines) = mpsc::channel();
    let mut log = Log {
        lines,
        kept: VecDeque::new(),
    };
    assert_eq!(log.tail(), None);
    for line in [
        "[t] [9] [INFO] Booting worker with pid: 10",
        "[t] [10] [ERROR] Exception in worker process",
        "Traceback (most recent call last):",
        "  File \"/t/app/sockbench_app.py\", line 1, in <module>",
        "RuntimeError: no app here",
        "[t] [10] [INFO] Worker exiting (pid: 10)",
        "[t] [9] [INFO] Shutting down: Master",
        "[t] [9] [INFO] Reason: Worker failed to boot.",
    ] {
        tx.send(line.to_string()).unwrap();
    }
    drop(tx);
    log.drain(Duration::from_secs(1));
    assert_eq!(
        log.tail().unwrap(),
        "Traceback (most recent call last): | File \"/t/app/sockbench_app.py\", line 1, in \
         <module> | RuntimeError: no app here | [INFO] Reason: Worker failed to boot."
    );
}

#[test]
fn what_gunicorn_cannot_serve_is_refused_before_anything_starts() {
    let program = Path::new("/nonexistent/gunicorn");
    let account = account();
    let refused = |transports: &[Transport], workers: u32| {
        Gunicorn::start_with(program, APP, transports, account.as_ref(), workers, None)
            .err()
            .expect("refused")
            .to_string()
    };
    assert!(refused(&[Transport::Tls], 1).contains("not tls"));
    assert!(refused(&[Transport::UnixAbstract], 1).contains("not unix-abstract"));
    assert!(refused(&[], 1).contains("at least one transport"));
    assert!(refused(&[Transport::Unix], 0).contains("at least one worker"));
    if crate::dir::euid() == 0 {
        let as_root = Gunicorn::start_with(program, APP, &[Transport::Unix], None, 1, None);
        let e = as_root.err().expect("refused").to_string();
        assert!(e.contains("never run as root"), "{e}");
    }
    // A program that is not there: one line that names it.
    let missing = Gunicorn::start_with(program, APP, &[Transport::Unix], account.as_ref(), 1, None);
    let e = format!(
        "{:#}",
        missing.err().expect("a missing program does not start")
    );
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.starts_with("cannot start gunicorn (/nonexistent/gunicorn)"),
        "{e}"
    );
}

#[test]
fn every_size_is_served_exactly_over_unix_and_tcp() {
    if !installed("every_size_is_served_exactly_over_unix_and_tcp") {
        return;
    }
    let gunicorn = start(&[Transport::Unix, Transport::Tcp], 2);
    let unix = gunicorn.endpoint(Transport::Unix).unwrap();
    assert!(
        unix.path().unwrap().ends_with("run/gunicorn.sock"),
        "{unix}"
    );
    let Address::Ip(tcp) = gunicorn.endpoint(Transport::Tcp).unwrap().address else {
        panic!("tcp is an IP address")
    };
    assert_eq!(tcp.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_ne!(tcp.port(), 0);
    for transport in [Transport::Unix, Transport::Tcp] {
        for size in [0, 4096, 65536, 1 << 20] {
            // The client has checked the body's length against the size asked.
            let (status, open) = get(&gunicorn, transport, size);
            assert_eq!(status, Status(200), "{transport} {size}");
            assert!(!open, "{transport}: sync workers close every connection");
        }
        let (head, body) = raw(
            &gunicorn,
            transport,
            "GET /?size=65536 HTTP/1.1\r\nHost: x\r\n\r\n",
        );
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("\r\nContent-Length: 65536"), "{head}");
        assert!(body.len() == 65536 && body.iter().all(|&b| b == b'x'));
        assert_eq!(get(&gunicorn, transport, 2_000_000).0, Status(400));
        for (request, status) in [
            ("GET /?size=12a HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
            ("GET /?size=%B2 HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
            ("GET /?size= HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
            ("GET /?other=1&size=3 HTTP/1.1\r\nHost: x\r\n\r\n", "200"),
            ("GET /other?size=1 HTTP/1.1\r\nHost: x\r\n\r\n", "404"),
            (
                "POST /?size=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                "405",
            ),
        ] {
            let (head, _) = raw(&gunicorn, transport, request);
            assert!(
                head.starts_with(&format!("HTTP/1.1 {status} ")),
                "{request:?}: {head}"
            );
        }
    }
}

#[test]
fn keep_alive_is_refused_and_http_1_0_answered_in_kind() {
    if !installed("keep_alive_is_refused_and_http_1_0_answered_in_kind") {
        return;
    }
    let gunicorn = start(&[Transport::Unix, Transport::Tcp], 1);
    for transport in [Transport::Unix, Transport::Tcp] {
        // As nginx asks with upstream keepalive on: closed all the same.
        let (head, body) = raw(
            &gunicorn,
            transport,
            "GET /?size=5 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
        );
        assert!(head.contains("\r\nConnection: close\r\n"), "{head}");
        assert_eq!(body, b"xxxxx");
        // As nginx asks by default: HTTP/1.0, no keep-alive.
        let (head, body) = raw(&gunicorn, transport, "GET /?size=3 HTTP/1.0\r\n\r\n");
        assert!(head.starts_with("HTTP/1.0 200 OK\r\n"), "{head}");
        assert!(head.contains("\r\nConnection: close\r\n"), "{head}");
        assert!(head.contains("\r\nContent-Length: 3"), "{head}");
        assert_eq!(body, b"xxx");
    }
}

#[test]
fn master_and_workers_run_as_the_account_with_nothing_but_their_environment() {
    if !installed("master_and_workers_run_as_the_account_with_nothing_but_their_environment") {
        return;
    }
    let gunicorn = start(&[Transport::Unix, Transport::Tcp], 2);
    let uid = account::uid_of(account().as_ref());
    assert!(crate::dir::euid() != 0 || uid != 0, "never root");
    let master = gunicorn.pid();
    let workers = crate::cpu::proc::descendants(master);
    assert_eq!(workers.len(), 2, "{workers:?}");
    let gid = account().map_or_else(
        || status_field(master, "Gid:"),
        |a| format!("{0}\t{0}\t{0}\t{0}", a.gid),
    );
    for pid in std::iter::once(master).chain(workers.iter().copied()) {
        assert_eq!(
            status_field(pid, "Uid:"),
            format!("{uid}\t{uid}\t{uid}\t{uid}"),
            "process {pid}"
        );
        assert_eq!(status_field(pid, "Gid:"), gid, "process {pid}");
        if account().is_some() {
            assert_eq!(status_field(pid, "Groups:"), "", "process {pid}");
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&environ),
            "PYTHONDONTWRITEBYTECODE=1\0PYTHONNOUSERSITE=1\0",
            "process {pid}"
        );
        assert_eq!(
            status_field(pid, "NSpgid:"),
            master.to_string(),
            "process {pid} is in the master's own process group"
        );
    }
    let top = gunicorn.dir();
    assert!(server_runs(top), "its owner file records a running server");
    let me = crate::dir::euid();
    let entry = top.entry().unwrap();
    let top_mode = if account().is_some() { 0o711 } else { 0o700 };
    assert_eq!((entry.mode, entry.uid), (top_mode, me));
    let app = top.open_dir(APP_DIR).unwrap();
    let entry = app.entry().unwrap();
    assert_eq!((entry.mode, entry.uid), (0o755, me));
    for name in [APP_FILE, SETTINGS_FILE] {
        let entry = app.entry_at(name).unwrap().unwrap();
        assert_eq!((entry.mode, entry.uid), (0o644, me), "{name}");
    }
    let mut in_app = app.names().unwrap();
    in_app.sort();
    assert_eq!(in_app, [APP_FILE, SETTINGS_FILE], "no byte code written");
    let run = top.open_dir(RUN_DIR).unwrap();
    let entry = run.entry().unwrap();
    assert_eq!((entry.mode, entry.uid), (0o700, uid));
    // The heartbeat files are unlinked as soon as they are made.
    assert_eq!(run.names().unwrap(), [SOCKET]);
    assert_eq!(run.entry_at(SOCKET).unwrap().unwrap().uid, uid);
}

#[test]
fn a_socket_not_gunicorn_s_is_refused_before_anything_is_sent() {
    if !installed("a_socket_not_gunicorn_s_is_refused_before_anything_is_sent") {
        return;
    }
    let gunicorn = start(&[Transport::Unix, Transport::Tcp], 1);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("planted.sock");
    let _planted = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let conn = Conn::Unix(std::os::unix::net::UnixStream::connect(&path).unwrap());
    let e = gunicorn.check_peer(&conn).unwrap_err().to_string();
    assert!(e.contains("is not gunicorn's"), "{e}");
    assert!(
        e.contains(&format!("PID {}", std::process::id())),
        "it names who answered: {e}"
    );
    let tcp = http::connect(gunicorn.endpoint(Transport::Tcp).unwrap()).unwrap();
    gunicorn.check_peer(&tcp).unwrap();
}

#[test]
fn an_app_that_fails_is_one_line_with_gunicorn_s_words() {
    if !installed("an_app_that_fails_is_one_line_with_gunicorn_s_words") {
        return;
    }
    let started = Instant::now();
    let e = Gunicorn::start_with(
        &find_program().unwrap(),
        "raise RuntimeError('no app here')\n",
        &[Transport::Unix],
        account().as_ref(),
        1,
        None,
    )
    .err()
    .expect("it fails");
    let e = format!("{e:#}");
    assert!(started.elapsed() < READY_TIMEOUT, "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("/gunicorn exited (exit status: "), "{e}");
    assert!(e.contains("RuntimeError: no app here"), "{e}");
    assert!(e.ends_with("Reason: Worker failed to boot."), "{e}");
}

#[test]
fn workers_die_with_a_killed_master() {
    if !installed("workers_die_with_a_killed_master") {
        return;
    }
    let mut gunicorn = start(&[Transport::Unix], 2);
    let workers = crate::cpu::proc::descendants(gunicorn.pid());
    assert_eq!(workers.len(), 2, "{workers:?}");
    // SAFETY: a plain syscall on the PID of the test's own child, not yet reaped.
    unsafe { libc::kill(gunicorn.pid() as libc::pid_t, libc::SIGKILL) };
    let left = still_running(&workers, Duration::from_secs(1));
    assert!(left.is_empty(), "workers {left:?} outlived their master");
    assert!(!gunicorn.running());
    assert!(!server_runs(gunicorn.dir()), "it records a dead process");
}

#[test]
fn nothing_is_left_after_drop() {
    if !installed("nothing_is_left_after_drop") {
        return;
    }
    let gunicorn = start(&[Transport::Unix, Transport::Tcp], 2);
    assert_eq!(get(&gunicorn, Transport::Tcp, 1).0, Status(200));
    let pids = every_pid(&gunicorn);
    assert_eq!(pids.len(), 3, "{pids:?}");
    let base = gunicorn.dir().path().to_path_buf();
    let stopping = Instant::now();
    drop(gunicorn);
    // Sooner than the SIGKILL that would follow a SIGTERM without effect.
    assert!(
        stopping.elapsed() < STOP_TIMEOUT,
        "gunicorn ignored SIGTERM"
    );
    let left = still_running(&pids, Duration::ZERO);
    assert!(left.is_empty(), "{left:?} still run");
    assert!(!base.exists(), "{} is gone", base.display());
}

#[test]
fn another_account_can_change_neither_the_app_nor_the_directory() {
    if !installed("another_account_can_change_neither_the_app_nor_the_directory") {
        return;
    }
    if crate::dir::euid() != 0 {
        eprintln!(
            "SKIPPED another_account_can_change_neither_the_app_nor_the_directory: playing \
             another account needs root"
        );
        return;
    }
    let gunicorn = start(&[Transport::Unix], 1);
    let other = match account() {
        Some(a) if a.name == "nobody" => "daemon",
        _ => "nobody",
    };
    let top = gunicorn.dir();
    let app = top.join(APP_DIR);
    let run = top.join(RUN_DIR);
    let test = |test: &str, path: &Path| {
        Command::new("runuser")
            .args(["-u", other, "--", "test", test])
            .arg(path)
            .status()
            .expect("runuser runs")
            .success()
    };
    for path in [
        top.path().to_path_buf(),
        app.clone(),
        app.join(APP_FILE),
        app.join(SETTINGS_FILE),
        run.clone(),
        run.join(SOCKET),
    ] {
        assert!(!test("-w", &path), "{other} may write {}", path.display());
    }
    // The top is passed through, not listed; the server account's own is closed.
    assert!(!test("-r", top.path()), "{other} may list the top");
    assert!(!test("-x", &run), "{other} may enter run/");
    // What gunicorn runs is readable: that is how its account imports it.
    assert!(test("-r", &app.join(APP_FILE)));
}

/// Set in the child process of the next test.
const KILLED_CHILD: &str = "SOCKBENCH_TEST_GUNICORN_KILLED";
/// What starts the child's report of gunicorn's processes.
const PIDS_SAID: &str = "gunicorn's processes: ";
/// The longest the child waits to be killed.
const CHILD_LIFE: Duration = Duration::from_secs(60);

/// Kills a child process with SIGKILL when dropped, and reaps it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn nothing_of_gunicorn_outlives_a_killed_sockbench() {
    if !installed("nothing_of_gunicorn_outlives_a_killed_sockbench") {
        return;
    }
    if std::env::var_os(KILLED_CHILD).is_some() {
        // The child: starts gunicorn, says its processes, and waits to be killed.
        let gunicorn = start(&[Transport::Unix, Transport::Tcp], 2);
        let pids: Vec<String> = every_pid(&gunicorn).iter().map(u32::to_string).collect();
        // On the line libtest has begun with the test's name.
        println!("{PIDS_SAID}{}", pids.join(" "));
        std::io::stdout().flush().unwrap();
        std::thread::sleep(CHILD_LIFE);
        return;
    }
    // The parent: runs this test alone in a child process, with its own TMPDIR
    // (which gunicorn's account may pass through), and kills it once gunicorn
    // serves.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = KillOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "proxy::gunicorn::tests::nothing_of_gunicorn_outlives_a_killed_sockbench",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(KILLED_CHILD, "1")
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let said = BufReader::new(child.0.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find_map(|l| Some(l.split_once(PIDS_SAID)?.1.to_string()))
        .expect("the child says gunicorn's processes");
    let pids: Vec<u32> = said.split(' ').map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 3, "master, two workers: {pids:?}");
    drop(child);
    let left = still_running(&pids, Duration::from_secs(2));
    assert!(left.is_empty(), "{left:?} outlived the killed sockbench");
    // Its server gone, the leftover sweep removes the directory.
    let held = Dir::open(tmp.path()).unwrap();
    let kinds = [DirKind {
        prefix: super::super::DIR_PREFIX,
    }];
    assert_eq!(sweep(&held, &kinds), 1);
    assert!(held.names().unwrap().is_empty());
}
