//! A `--url` Redis server that sends its reply a byte at a time must end
//! `sockbench redis` within its 10 s limit, with one line saying what the server
//! did; SIGTERM during that wait must end it within two seconds with exit 130. The
//! server is a thread of the test on 127.0.0.1, living at most a minute; the run is
//! killed (by its PID) if it outlives its bound, so a regression fails, not hangs.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the server sends a byte: more often than any per-read timeout.
const DRIP: Duration = Duration::from_millis(500);
/// The longest the server lives, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(60);

/// A server that reads a request, then answers it with a bulk string one byte per
/// [`DRIP`]; stopped when dropped.
struct Dripping {
    port: u16,
    /// Set once a request has come.
    asked: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Dripping {
    fn start() -> Dripping {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (asked, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let thread = {
            let (asked, stop) = (asked.clone(), stop.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let going = || !stop.load(Ordering::Relaxed) && started.elapsed() < LIFETIME;
                let mut conn = loop {
                    if !going() {
                        return;
                    }
                    match listener.accept() {
                        Ok((conn, _)) => break conn,
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_read_timeout(Some(Duration::from_millis(50)))
                    .unwrap();
                let mut request = [0; 4096];
                while going() && !matches!(conn.read(&mut request), Ok(n) if n > 0) {}
                asked.store(true, Ordering::Relaxed);
                let reply = format!("$1000\r\n{}\r\n", "x".repeat(1000));
                for b in reply.bytes() {
                    if !going() || conn.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(DRIP);
                }
            })
        };
        Dripping {
            port,
            asked,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Dripping {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `sockbench redis --url redis://127.0.0.1:PORT --quick` in the background.
fn run_against(server: &Dripping, scratch: &Path) -> KillOnDrop {
    let child = sockbench(scratch)
        .args(["redis", "--quick", "--url"])
        .arg(format!("redis://127.0.0.1:{}", server.port))
        .arg("--json")
        .arg(scratch.join("out.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

#[test]
fn a_url_server_that_drips_its_reply_ends_the_run_in_one_line() {
    let server = Dripping::start();
    let tmp = tempdir();
    let mut run = run_against(&server, tmp.path());
    // 10 s from the first byte that came too slowly, a slice or two more, and the
    // start of the run on a busy machine.
    let (status, took) = exit_within(&mut run, Duration::from_secs(20));
    let stderr = stderr_of(&mut run);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        took >= Duration::from_secs(10),
        "gave up after {took:?}: {stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    let said = format!(
        "the Redis server at tcp:127.0.0.1:{} sent its reply too slowly: not complete \
         within 10 s",
        server.port
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(leftovers(tmp.path()), Vec::<std::path::PathBuf>::new());
}

#[test]
fn sigterm_while_a_url_server_drips_ends_the_run_within_two_seconds() {
    let server = Dripping::start();
    let tmp = tempdir();
    let mut run = run_against(&server, tmp.path());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !server.asked.load(Ordering::Relaxed) {
        assert!(
            Instant::now() < deadline,
            "sockbench never asked the server"
        );
        assert!(
            run.0.try_wait().unwrap().is_none(),
            "{}",
            stderr_of(&mut run)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well inside the wait for the reply.
    std::thread::sleep(Duration::from_secs(1));
    signal(&run.0, libc::SIGTERM);
    let (status, took) = exit_within(&mut run, Duration::from_secs(10));
    let stderr = stderr_of(&mut run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(2), "took {took:?} after SIGTERM");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(leftovers(tmp.path()), Vec::<std::path::PathBuf>::new());
}
