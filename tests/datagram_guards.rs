//! What another local account, or a server that misbehaves, can do to a
//! measurement, and what it must not: a greeting sent first to a client's datagram
//! socket (every account sees it in /proc/net) refuses the session instead of being
//! measured; a server that answers twice, short or not at all is refused in one
//! line; a receiver that stops reading ends the messages workload within its limit
//! and at once on Ctrl-C; and a flood of requests makes sockbench's server start a
//! bounded number of sessions, or none without its secret. The other account is
//! played by `nobody` (these tests need root for that, and say so otherwise), with
//! the attack scripts in `fixtures/`.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SPOOFER: &str = include_str!("fixtures/spoofer.py");
const FLOODER: &str = include_str!("fixtures/flooder.py");
const HOSTILE: &str = include_str!("fixtures/hostile_server.py");
/// Sends 40 session requests from one socket that never reads its greetings, each
/// again while the server's queue is full, for 5 s at most.
const DEAF_PEER: &str = r#"
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0deaf%d" % os.getpid())
s.setblocking(False)
header = b"P\0\0\0" + (64).to_bytes(4, "little") + bytes(8)
end = time.time() + 5
for _ in range(40):
    for request in (header, header + bytes(16) + os.urandom(16)):
        while time.time() < end:
            try:
                s.sendto(request, "\0" + sys.argv[1])
                break
            except BlockingIOError:
                time.sleep(0.01)
print("sent", flush=True)
time.sleep(float(sys.argv[2]))
"#;
/// The most sessions a sockbench server keeps (`server/protocol.rs`).
const MAX_SESSIONS: usize = 2_048;

/// The `nobody` account, played by a root test; `None` (said) otherwise.
fn nobody(test: &str) -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED {test}: playing another account needs root");
        return None;
    }
    let name = std::ffi::CString::new("nobody").unwrap();
    // SAFETY: `name` is NUL-terminated and outlives the call; the result is checked.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        eprintln!("SKIPPED {test}: there is no nobody account");
        return None;
    }
    // SAFETY: a non-null entry from getpwnam, read at once.
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

/// `python3 -c SCRIPT ARGS…`, as `account` when given, its output piped.
fn python(script: &str, args: &[&str], account: Option<(u32, u32)>) -> KillOnDrop {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(script)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((uid, gid)) = account {
        cmd.uid(uid).gid(gid);
    }
    KillOnDrop(cmd.spawn().expect("python3 starts (.ci/run installs it)"))
}

/// The first line `child` prints.
fn first_line(child: &mut KillOnDrop) -> String {
    let mut line = String::new();
    BufReader::new(child.0.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(!line.is_empty(), "no line: {}", stderr_of(child));
    line.trim().to_string()
}

/// A server of `kind` that misbehaves as `mode` says for `seconds`, and its address.
fn hostile(tmp: &Path, kind: &str, mode: &str, seconds: u32) -> (KillOnDrop, String) {
    static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let path = tmp.join(format!("{kind}-{mode}-{n}.sock"));
    let args = [kind, path.to_str().unwrap(), mode, &seconds.to_string()];
    let mut server = python(HOSTILE, &args, None);
    let address = first_line(&mut server);
    (server, address)
}

/// `sockets` against `server`: one quick round of `workload`.
fn against(server: &str, workload: &str) -> Vec<String> {
    [
        "sockets",
        "--server",
        server,
        "--quick",
        "--trials",
        "1",
        "--workloads",
        workload,
        "--placement",
        "free",
        "--sizes",
        "64",
        "--message-sizes",
        "1KiB",
    ]
    .iter()
    .filter(|&&a| workload == "messages" || a != "--message-sizes" && a != "1KiB")
    .map(|a| a.to_string())
    .collect()
}

/// Runs `args` and returns its exit and its stderr, which must be one error line.
fn refused(tmp: &Path, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(tmp, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        !out.status.success(),
        "{args:?} succeeded:\n{stdout}\n{stderr}"
    );
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(!stderr.contains("os error 11"), "{stderr}");
    errors[0].to_string()
}

/// Another account greets every new client socket before the server does: the
/// session is refused in one line that names that account, never measured.
#[test]
fn a_greeting_from_another_account_refuses_the_datagram_session() {
    let Some(account) = nobody("a_greeting_from_another_account_refuses_the_datagram_session")
    else {
        return;
    };
    let tmp = tempdir();
    // Servers that never answer: only the other account does.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port().to_string();
    let path = tmp.path().join("silent.sock");
    let _unix = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    let servers = [
        ("udp", format!("udp:127.0.0.1:{port}")),
        ("unix", format!("unix-dgram:{}", path.display())),
    ];
    for (kind, server) in servers {
        let _spoofer = python(SPOOFER, &[kind, &port, "60"], Some(account));
        std::thread::sleep(Duration::from_millis(300));
        // The line names the other account: its greeting came, and was refused.
        let line = refused(tmp.path(), &against(&server, "pingpong"));
        assert!(line.contains("account nobody"), "{kind}: {line}");
        assert!(line.contains("refused"), "{kind}: {line}");
    }
}

/// A server that answers each message twice would be timed by the reply already
/// waiting; one that answers short would leave a read waiting for the rest. Both
/// are refused in one line that says so.
#[test]
fn a_server_that_answers_twice_or_short_is_refused() {
    let tmp = tempdir();
    for (kind, mode, says) in [
        ("udp", "twice", "out of step"),
        ("tcp", "twice", "out of step"),
        ("unix-dgram", "twice", "out of step"),
        (
            "udp",
            "short",
            "a datagram of 63 B came where one of 64 B was expected",
        ),
    ] {
        let (_server, address) = hostile(tmp.path(), kind, mode, 60);
        let line = refused(tmp.path(), &against(&address, "pingpong"));
        assert!(line.contains(says), "{kind} {mode}: {line}");
    }
}

/// Runs `args` for 3 s, then Ctrl-C, which must end it at once.
fn ctrl_c_ends(tmp: &Path, args: &[String]) {
    let mut child = KillOnDrop(
        sockbench(tmp)
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_secs(3));
    signal(&child.0, libc::SIGINT);
    let (status, took) = exit_within(&mut child, Duration::from_secs(5));
    assert_eq!(
        status.code(),
        Some(130),
        "{args:?}: {}",
        stderr_of(&mut child)
    );
    assert!(
        took < Duration::from_secs(2),
        "{args:?}: Ctrl-C took {took:?}"
    );
}

/// A server that greets and then answers nothing: Ctrl-C ends the trial at once,
/// and without it the trial ends within its limit, saying why.
#[test]
fn a_silent_server_ends_the_trial_in_one_line_and_ctrl_c_at_once() {
    let tmp = tempdir();
    let (_server, address) = hostile(tmp.path(), "udp", "silent", 120);
    let args = against(&address, "pingpong");
    ctrl_c_ends(tmp.path(), &args);

    let line = refused(tmp.path(), &args);
    assert!(
        line.contains("timed out after 10 s") || line.contains("did no work"),
        "{line}"
    );
}

/// A receiver that stops reading, over a stream and over datagrams: the sender's
/// wait for room ends on Ctrl-C at once, and by itself within its limit.
#[test]
fn a_receiver_that_stops_reading_ends_the_messages_trial() {
    let tmp = tempdir();
    for kind in ["unix", "unix-dgram"] {
        let (_server, address) = hostile(tmp.path(), kind, "deaf", 120);
        ctrl_c_ends(tmp.path(), &against(&address, "messages"));
    }
    let (_server, address) = hostile(tmp.path(), "unix", "deaf", 120);
    let line = refused(tmp.path(), &against(&address, "messages"));
    assert!(
        line.contains("took no message") || line.contains("did no work"),
        "{line}"
    );
}

/// Threads of process `pid`.
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// `sockbench serve` on a free UDP port, given `secret` on its standard input.
fn serve_udp(tmp: &Path, secret: Option<&str>) -> (KillOnDrop, String) {
    let mut cmd = sockbench(tmp);
    cmd.args(["serve", "--listen", "udp:127.0.0.1:0"])
        .stdout(Stdio::piped());
    if secret.is_some() {
        cmd.arg("--secret-on-stdin").stdin(Stdio::piped());
    }
    let mut child = KillOnDrop(cmd.spawn().unwrap());
    if let Some(secret) = secret {
        let mut stdin = child.0.stdin.take().unwrap();
        writeln!(stdin, "{secret}").unwrap();
    }
    let line = first_line(&mut child);
    let address = line.strip_prefix("listening ").expect(&line).to_string();
    // Its threads start once it has said where it listens.
    std::thread::sleep(Duration::from_millis(300));
    (child, address)
}

/// Runs the flooder as `account` against `port` and waits for it.
fn flood(account: (u32, u32), port: &str, nonces: usize, sockets: usize) {
    let mut flooder = python(
        FLOODER,
        &[port, &nonces.to_string(), &sockets.to_string()],
        Some(account),
    );
    let (status, _) = exit_within(&mut flooder, Duration::from_secs(60));
    assert!(status.success(), "{}", stderr_of(&mut flooder));
    // What the server received is served within a second.
    std::thread::sleep(Duration::from_secs(1));
}

/// Another account sends thousands of session requests: from one socket they
/// start one session at a time, from thousands of sockets at most the server's
/// bound, which a client is then told; a server with a secret starts none.
#[test]
fn a_flood_from_another_account_starts_a_bounded_number_of_sessions() {
    let Some(account) = nobody("a_flood_from_another_account_starts_a_bounded_number_of_sessions")
    else {
        return;
    };
    let tmp = tempdir();
    let (server, address) = serve_udp(tmp.path(), None);
    let pid = server.0.id();
    let port = address.rsplit(':').next().unwrap().to_string();
    let before = threads(pid);
    flood(account, &port, 1_000, 0);
    let one_socket = threads(pid);
    assert!(
        one_socket <= before + 2,
        "{before} threads, then {one_socket}"
    );
    flood(account, &port, 0, MAX_SESSIONS + 500);
    let many = threads(pid);
    assert!(
        many <= before + MAX_SESSIONS + 2,
        "{before} threads, then {many}"
    );
    let line = refused(tmp.path(), &against(&address, "pingpong"));
    assert!(line.contains("keeps as many sessions as it may"), "{line}");
    drop(server);

    let secret = "0123456789abcdef0123456789abcdef";
    let (server, address) = serve_udp(tmp.path(), Some(secret));
    let port = address.rsplit(':').next().unwrap().to_string();
    let before = threads(server.0.id());
    flood(account, &port, 200, 200);
    assert_eq!(
        threads(server.0.id()),
        before,
        "a request without the secret started a session"
    );
}

/// Greetings to a peer that never reads (another account's socket) hold up no
/// other client of a Unix datagram server.
#[test]
fn a_peer_that_never_reads_its_greetings_holds_up_no_one() {
    let Some(account) = nobody("a_peer_that_never_reads_its_greetings_holds_up_no_one") else {
        return;
    };
    let tmp = tempdir();
    let name = format!("sockbench-guard-{}", std::process::id());
    let (_server, _) = start_serve(tmp.path(), &[format!("unix-dgram-abstract:{name}")]);
    let mut deaf = python(DEAF_PEER, &[&name, "120"], Some(account));
    assert_eq!(first_line(&mut deaf), "sent");
    std::thread::sleep(Duration::from_millis(300));
    let args = against(&format!("unix-dgram-abstract:{name}"), "pingpong");
    let mut child = KillOnDrop(
        sockbench(tmp.path())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // A few seconds, as against a server no one else uses; long before the peer
    // gives up.
    let (status, took) = exit_within(&mut child, Duration::from_secs(30));
    assert!(status.success(), "{}", stderr_of(&mut child));
    assert!(took < Duration::from_secs(15), "took {took:?}");
}
