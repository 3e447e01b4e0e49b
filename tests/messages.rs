//! Error messages say each thing once, in the words that fit: an OS error or an
//! OpenSSL error appears once, a timeout is called one, a regular file in the way of
//! a socket is not "in use".

mod common;

use common::*;

fn stderr_of(tmp: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = run(tmp, args);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    (out.status.code(), stderr)
}

#[test]
fn os_errors_are_said_once_and_a_file_is_not_in_use() {
    let tmp = tempdir();
    let (code, stderr) = stderr_of(tmp.path(), &["serve", "--listen", "unix:/proc/no/x.sock"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("(os error").count(), 1, "{stderr}");

    let file = tmp.path().join("regular");
    std::fs::write(&file, "not a socket").unwrap();
    let listen = format!("unix:{}", file.display());
    let (code, stderr) = stderr_of(tmp.path(), &["serve", "--listen", &listen]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("not a socket") && !stderr.contains("in use"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a socket");
}

#[test]
fn a_tls_failure_is_said_once_and_a_silent_server_times_out() {
    let tmp = tempdir();
    // A sockbench server without TLS, asked for TLS.
    let (_server, addrs) = start_serve(tmp.path(), &["tcp:127.0.0.1:0".into()]);
    let tls = addrs[0].replace("tcp:", "tls:");
    let (code, stderr) = stderr_of(tmp.path(), &["sockets", "--quick", "--server", &tls]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("wrong version number").count(),
        1,
        "{stderr}"
    );

    // A listener that accepts (the kernel does) but never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("tcp:{}", silent.local_addr().unwrap());
    let (code, stderr) = stderr_of(
        tmp.path(),
        &[
            "sockets",
            "--quick",
            "--workloads",
            "pingpong",
            "--server",
            &addr,
        ],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("sent nothing within 1 s: it is not a sockbench server"),
        "{stderr}"
    );
    assert!(!stderr.contains("temporarily unavailable"), "{stderr}");
}

/// A server's words reach the terminal escaped: an escape sequence or a
/// bidirectional override in a Redis error reply is shown, not acted on.
#[test]
fn a_servers_control_characters_are_shown_escaped() {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    let tmp = tempdir();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    // A fake server: every connection's first command gets a hostile error reply.
    // Bounded: a few connections, until the run ends and for at most 60 s.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ended = done.clone();
    let fake = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut served = 0;
        while served < 8 && Instant::now() < deadline && !ended.load(Ordering::Relaxed) {
            let Ok((mut conn, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            served += 1;
            conn.set_nonblocking(false).unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut command = [0u8; 4096];
            if conn.read(&mut command).is_ok() {
                let _ = conn.write_all("-ERR \x1b[31mred\u{202e}txt\r\n".as_bytes());
            }
        }
    });
    let url = format!("redis://127.0.0.1:{port}");
    let out = run(tmp.path(), &["redis", "--url", &url, "--quick"]);
    done.store(true, Ordering::Relaxed);
    let _ = fake.join();
    let stderr = after_estimate(&text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("red"), "the reply is shown: {stderr}");
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\u{202e}'),
        "{stderr:?}"
    );
    assert!(stderr.contains("\\u{1b}[31mred\\u{202e}txt"), "{stderr}");
}
