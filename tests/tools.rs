//! Habits from other tools: `--version` with the commit, shell completions, the
//! manual page, the exit codes `--help` lists, and `sockets --server` pointed at a
//! server that is not sockbench's (real listeners on loopback, started here).

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn sockbench_out(args: &[&str]) -> Output {
    let tmp = tempdir();
    run(tmp.path(), args)
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    for flag in ["--version", "-V"] {
        let out = sockbench_out(&[flag]);
        assert_eq!(out.status.code(), Some(0));
        let line = text(&out.stdout);
        let prefix = format!("sockbench {} (commit ", env!("CARGO_PKG_VERSION"));
        assert!(line.starts_with(&prefix), "{line}");
        match &head {
            // `-modified` may follow when the checkout has uncommitted changes.
            Some(head) => assert!(line.starts_with(&format!("{prefix}{head}")), "{line}"),
            None => eprintln!("not a git checkout: the commit is not checked ({line})"),
        }
    }
}

#[test]
fn completions_cover_the_families_commands_and_options() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = sockbench_out(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in [
            "postgres",
            "sockets",
            "--transports",
            "serve",
            "completions",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let bash = text(&sockbench_out(&["completions", "bash"]).stdout);
    assert!(bash.contains("complete -F _sockbench"), "{bash}");
    let out = sockbench_out(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The options that take names (`-M`, `--experiments`, `--workloads`,
/// `--transports`) complete to those names, not to file names.
#[test]
fn completions_offer_the_values_of_named_options() {
    let values = [
        "unix unix-abstract unix-seqpacket unix-dgram unix-dgram-abstract udp udp6 \
         udp-unconnected tcp tcp6 tls veth bridge published docker-proxy unix-shared",
        "connect pingpong stream concurrent messages",
        "query connect auth rows concurrent",
        "ping get pipeline connect concurrent",
        "simple extended prepared",
    ];
    for shell in ["bash", "zsh"] {
        let script = text(&sockbench_out(&["completions", shell]).stdout);
        for list in values {
            assert!(
                script.contains(list),
                "{shell} script does not offer {list}"
            );
        }
    }
    // zsh names the option each list belongs to.
    let zsh = text(&sockbench_out(&["completions", "zsh"]).stdout);
    for (option, list) in [
        (
            "'*--workloads=",
            "(connect pingpong stream concurrent messages)",
        ),
        ("'*--experiments=", "(query connect auth rows concurrent)"),
        ("'-M+", "(simple extended prepared)"),
        (
            "'*--transports=",
            "(unix unix-abstract unix-seqpacket unix-dgram unix-dgram-abstract udp udp6 \
             udp-unconnected tcp tcp6 tls veth bridge published docker-proxy unix-shared)",
        ),
    ] {
        assert!(
            zsh.lines()
                .any(|l| l.starts_with(option) && l.contains(list)),
            "zsh: {option} does not complete to {list}"
        );
    }
}

#[test]
fn the_manual_page_is_roff_with_every_command() {
    let out = sockbench_out(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.contains(".TH SOCKBENCH 1"), "{page}");
    for name in [
        "sockets",
        "postgres",
        "serve",
        "report",
        "compare",
        "Exit codes",
    ] {
        assert!(page.contains(name), "the page lacks {name}");
    }

    let tmp = tempdir();
    let out = run(
        tmp.path(),
        &["man", "--output", tmp.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (file, title) in [
        ("sockbench.1", ".TH SOCKBENCH 1"),
        ("sockbench-sockets.1", ".TH SOCKBENCH-SOCKETS 1"),
        ("sockbench-postgres.1", ".TH SOCKBENCH-POSTGRES 1"),
    ] {
        let page = std::fs::read_to_string(tmp.path().join(file)).expect(file);
        assert!(page.contains(title), "{file}");
    }
    let sockets = std::fs::read_to_string(tmp.path().join("sockbench-sockets.1")).unwrap();
    assert!(sockets.contains("transports"), "{sockets}");

    // man itself reads the page without a warning, when it is installed.
    let formatted = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(tmp.path().join("sockbench-sockets.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .stdin(Stdio::null())
        .output();
    match formatted {
        Ok(man) => {
            assert!(man.status.success(), "{}", text(&man.stderr));
            assert_eq!(text(&man.stderr), "", "man warns");
            assert!(text(&man.stdout).contains("--transports"));
        }
        Err(e) => eprintln!("man is not installed ({e}): the page is not formatted"),
    }
}

#[test]
fn help_lists_the_exit_codes_and_they_hold() {
    let help = text(&sockbench_out(&["--help"]).stdout);
    for line in [
        "Exit codes:",
        "0    success",
        "1    a failure",
        "2    bad input",
        "130",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}: {help}");
    }
    // 2: clap's own errors and sockbench's usage errors alike.
    assert_eq!(sockbench_out(&["--no-such-flag"]).status.code(), Some(2));
    assert_eq!(
        sockbench_out(&["sockets", "--clients", "0"]).status.code(),
        Some(2)
    );
    // 1: a failure while measuring (nothing listens on the port).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = format!("tcp:{port}");
    let out = sockbench_out(&["sockets", "--server", &server, "--trials", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // 0: the reader closed standard output before anything was written.
    for args in [&["--help"][..], &["completions", "bash"], &["man"]] {
        let status = sockbench(tempdir().path())
            .args(args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            status.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&status.stderr)
        );
    }
}

#[test]
fn an_interrupted_measurement_exits_130() {
    let tmp = tempdir();
    let mut child = KillOnDrop(
        sockbench(tmp.path())
            .args(["sockets", "--transports", "unix", "--workloads", "connect"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child.0, libc::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130), "{}", stderr_of(&mut child));
}

/// The write end of a pipe whose read end is already closed: every write fails
/// with EPIPE, as when `| head` has gone.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two new descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are new and owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

/// What a listener does with each connection.
#[derive(Clone, Copy)]
enum Peer {
    /// Writes an HTTP status line at once, as a server refusing the request.
    Http400,
    /// Reads and never writes.
    Silent,
    /// Silent until PostgreSQL's SSLRequest, answered with `N`; anything else ends
    /// the connection, as a PostgreSQL server does with a bad startup packet.
    PostgresLike,
}

/// A listener on loopback serving `peer` on a thread until dropped (or 60 s).
struct OtherServer {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OtherServer {
    fn start(peer: Peer) -> OtherServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut held = Vec::new();
            while !stopping.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((conn, _)) => {
                        conn.set_nonblocking(false).unwrap();
                        if let Some(conn) = serve(peer, conn) {
                            held.push(conn);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        OtherServer {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

/// Serves one connection's opening; returns it when it is to stay open.
fn serve(peer: Peer, mut conn: TcpStream) -> Option<TcpStream> {
    match peer {
        Peer::Http400 => {
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\n");
            Some(conn)
        }
        Peer::Silent => Some(conn),
        Peer::PostgresLike => {
            conn.set_read_timeout(Some(Duration::from_millis(1500)))
                .unwrap();
            let mut packet = [0u8; 8];
            match conn.read_exact(&mut packet) {
                Ok(()) if packet == [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f] => {
                    let _ = conn.write_all(b"N");
                    Some(conn)
                }
                _ => None,
            }
        }
    }
}

impl Drop for OtherServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `sockets --server ADDR` against another server: its one error line, and
/// how long it took.
fn against(address: &str) -> (String, Duration) {
    let started = Instant::now();
    let out = sockbench_out(&["sockets", "--server", address, "--trials", "1"]);
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(took < Duration::from_secs(3), "took {took:?}: {stderr}");
    (stderr, took)
}

#[test]
fn a_server_that_is_not_sockbench_is_named_within_seconds() {
    let http = OtherServer::start(Peer::Http400);
    let (line, took) = against(&format!("tcp:{}", http.addr));
    assert!(
        line.contains("answered with 'HTTP/1.1 400 Bad Request': it is not a sockbench server"),
        "{line}"
    );
    assert!(line.contains("`sockbench serve --listen tcp:"), "{line}");
    assert!(
        took < Duration::from_secs(1),
        "an answer is shown at once: {took:?}"
    );

    let silent = OtherServer::start(Peer::Silent);
    let (line, _) = against(&format!("tcp:{}", silent.addr));
    assert!(
        line.contains("sent nothing within 1 s: it is not a sockbench server"),
        "{line}"
    );
    assert!(
        line.contains("start one with `sockbench serve --listen"),
        "{line}"
    );

    let postgres = OtherServer::start(Peer::PostgresLike);
    let (line, _) = against(&format!("tcp:{}", postgres.addr));
    assert!(
        line.contains("answered PostgreSQL's SSLRequest with 'N': it is a PostgreSQL server"),
        "{line}"
    );
    assert!(line.contains("`sockbench postgres`"), "{line}");

    // TLS asked of a server that answers in plain text.
    let (line, _) = against(&format!("tls:{}", http.addr));
    assert!(line.contains("failed the TLS handshake ("), "{line}");
    assert!(line.contains("'HTTP/1.1 400 Bad Request'"), "{line}");
    let (line, _) = against(&format!("tls:{}", silent.addr));
    assert!(
        line.contains("sent nothing within 1 s in answer to a TLS hello"),
        "{line}"
    );
}

#[test]
fn a_sockbench_server_named_with_the_wrong_transport_is_told_which() {
    let tmp = tempdir();
    let (_server, addrs) = start_serve(
        tmp.path(),
        &["tcp:127.0.0.1:0".into(), "tls:127.0.0.1:0".into()],
    );
    let plain_as_tls = addrs[0].replacen("tcp:", "tls:", 1);
    let (line, _) = against(&plain_as_tls);
    assert!(
        line.contains(&format!(
            "it is a sockbench server without TLS there; measure it as --server {}",
            addrs[0]
        )),
        "{line}"
    );
    let tls_as_plain = addrs[1].replacen("tls:", "tcp:", 1);
    let (line, _) = against(&tls_as_plain);
    assert!(
        line.contains(&format!(
            "it serves TLS there; measure it as --server {}",
            addrs[1]
        )),
        "{line}"
    );
}
