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
