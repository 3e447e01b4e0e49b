//! Servers that never finish: each must end the Redis family's waits within the
//! target's limit, with one line saying what the server did, and a signal must end
//! them within a second. The servers are threads of the test on 127.0.0.1 or a Unix
//! socket in a temporary directory; every loop of theirs is bounded in time, and
//! they stop when the test's guard drops.

use super::concurrent;
use super::connect;
use super::roundtrip::{self, Exchange};
use super::suite::reported_version;
use super::target::Target;
use super::url;
use crate::cpu::Meter;
use crate::wait::SLICE;
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The limit the targets of these tests wait: short, so each test takes seconds.
const LIMIT: Duration = Duration::from_secs(2);
/// How often a dripping server sends a byte: within one slice of the client's.
const DRIP: Duration = Duration::from_millis(500);
/// The longest any hostile server lives, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(60);

/// How a hostile server treats each connection.
#[derive(Debug, Clone, Copy)]
enum Manner {
    /// Answers as Redis would (PING, SET, GET of 64 B, INFO, AUTH) until this long
    /// after it started, then sends every reply one byte per [`DRIP`].
    DripsAfter(Duration),
    /// Accepts and never reads a byte.
    NeverReads,
    /// Reads the TLS hello, then answers with a record one byte per [`DRIP`].
    DripsHandshake,
}

/// A hostile server, stopped when dropped.
struct Hostile {
    stop: Arc<AtomicBool>,
    listener: Option<JoinHandle<()>>,
    /// The URL that reaches it.
    url: String,
    _dir: Option<tempfile::TempDir>,
}

/// Either kind of listening socket, accepting without blocking.
enum Listening {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// A connected socket of either kind.
trait Duplex: Read + Write + Send + 'static {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()>;
}

impl Duplex for std::net::TcpStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        std::net::TcpStream::set_read_timeout(self, wait)
    }
}

impl Duplex for std::os::unix::net::UnixStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        std::os::unix::net::UnixStream::set_read_timeout(self, wait)
    }
}

impl Listening {
    fn accept(&self) -> io::Result<Box<dyn Duplex>> {
        Ok(match self {
            Listening::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Box::new(s)
            }
            Listening::Unix(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Box::new(s)
            }
        })
    }
}

impl Hostile {
    /// On 127.0.0.1, reached as `scheme://127.0.0.1:PORT`.
    fn tcp(manner: Manner, scheme: &str) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "{scheme}://127.0.0.1:{}",
            listener.local_addr().unwrap().port()
        );
        listener.set_nonblocking(true).unwrap();
        Hostile::serve(Listening::Tcp(listener), manner, url, None)
    }

    /// On a Unix socket in a temporary directory, reached as `unix:///…`.
    fn unix(manner: Manner) -> Hostile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hostile.sock");
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("unix://{}", path.display());
        Hostile::serve(Listening::Unix(listener), manner, url, Some(dir))
    }

    fn serve(
        listening: Listening,
        manner: Manner,
        url: String,
        dir: Option<tempfile::TempDir>,
    ) -> Hostile {
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let listener = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut conns = Vec::new();
                while !stop.load(Ordering::Relaxed) && started.elapsed() < LIFETIME {
                    match listening.accept() {
                        Ok(stream) => {
                            let stop = stop.clone();
                            conns.push(std::thread::spawn(move || {
                                let _ = treat(stream, manner, started, &stop);
                            }));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
                stop.store(true, Ordering::Relaxed);
                for c in conns {
                    let _ = c.join();
                }
            })
        };
        Hostile {
            stop,
            listener: Some(listener),
            url,
            _dir: dir,
        }
    }

    /// A user's target for this server, waiting [`LIMIT`].
    fn target(&self) -> Target {
        Target::user(&url::parse(&self.url).unwrap())
            .unwrap()
            .limited(LIMIT)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(l) = self.listener.take() {
            let _ = l.join();
        }
    }
}

/// What the server does with one connection, until `stop` or [`LIFETIME`].
fn treat(
    mut stream: Box<dyn Duplex>,
    manner: Manner,
    started: Instant,
    stop: &AtomicBool,
) -> io::Result<()> {
    let going = || !stop.load(Ordering::Relaxed) && started.elapsed() < LIFETIME;
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let drip = |stream: &mut Box<dyn Duplex>, bytes: &[u8]| -> io::Result<()> {
        for b in bytes {
            if !going() {
                return Ok(());
            }
            stream.write_all(&[*b])?;
            std::thread::sleep(DRIP);
        }
        Ok(())
    };
    match manner {
        Manner::NeverReads => {
            while going() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Manner::DripsHandshake => {
            let mut hello = [0; 4096];
            while going() && !matches!(stream.read(&mut hello), Ok(n) if n > 0) {}
            // A handshake record of 16 KiB, never complete.
            let mut record = vec![0x16, 0x03, 0x03, 0x40, 0x00];
            record.resize(5 + 0x4000, 0);
            drip(&mut stream, &record)?;
        }
        Manner::DripsAfter(healthy) => {
            let mut pending = Vec::new();
            let mut chunk = [0; 64 << 10];
            while going() {
                match stream.read(&mut chunk) {
                    Ok(0) => return Ok(()),
                    Ok(n) => pending.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
                while let Some((command, used)) = command(&pending) {
                    pending.drain(..used);
                    let reply = answer(&command);
                    if started.elapsed() < healthy {
                        stream.write_all(&reply)?;
                    } else {
                        drip(&mut stream, &reply)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The first command in `buf` (its name, upper case) and the bytes it took.
fn command(buf: &[u8]) -> Option<(String, usize)> {
    let line = |at: usize| -> Option<(&[u8], usize)> {
        let end = buf[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((&buf[at..end], end + 2))
    };
    let (head, mut at) = line(0)?;
    let args: usize = std::str::from_utf8(head.strip_prefix(b"*")?)
        .ok()?
        .parse()
        .ok()?;
    let mut name = String::new();
    for i in 0..args {
        let (len, next) = line(at)?;
        let len: usize = std::str::from_utf8(len.strip_prefix(b"$")?)
            .ok()?
            .parse()
            .ok()?;
        if buf.len() < next + len + 2 {
            return None;
        }
        if i == 0 {
            name = String::from_utf8_lossy(&buf[next..next + len]).to_uppercase();
        }
        at = next + len + 2;
    }
    Some((name, at))
}

/// What Redis would answer.
fn answer(command: &str) -> Vec<u8> {
    match command {
        "PING" => b"+PONG\r\n".to_vec(),
        "SET" | "AUTH" | "SELECT" => b"+OK\r\n".to_vec(),
        "GET" => format!("$64\r\n{}\r\n", "x".repeat(64)).into_bytes(),
        "INFO" => {
            let text = "# RedisServer\r\nredis_version:7.0.0\r\n";
            format!("${}\r\n{text}\r\n", text.len()).into_bytes()
        }
        _ => b"-ERR unknown command\r\n".to_vec(),
    }
}

/// Runs `op`, which must fail within the limit and a slice or two; its error.
fn fails_in_time<T>(op: impl FnOnce() -> anyhow::Result<T>) -> String {
    let started = Instant::now();
    let Err(e) = op() else {
        panic!("a hostile server's wait ended without an error")
    };
    let took = started.elapsed();
    let said = format!("{e:#}");
    assert!(took < LIMIT + 4 * SLICE + DRIP, "took {took:?}: {said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    said
}

/// The family's round trips on `target`: ping, for a second.
fn ping(target: &Target) -> anyhow::Result<crate::results::Trial> {
    let second = Duration::from_secs(1);
    roundtrip::trial(
        target,
        &Exchange::ping(),
        None,
        second,
        &mut Meter::times(&[]),
    )
}

#[test]
fn a_reply_dripped_a_byte_at_a_time_ends_ping_within_the_limit() {
    // Healthy for the warm-up, then dripping inside the timed loop.
    let server = Hostile::tcp(Manner::DripsAfter(Duration::from_millis(300)), "redis");
    let target = server.target();
    let said = fails_in_time(|| ping(&target));
    let port = server.url.rsplit(':').next().unwrap();
    assert!(
        said.contains(&format!("the Redis server at tcp:127.0.0.1:{port} sent its reply too slowly: not complete within 2 s")),
        "{said}"
    );
}

#[test]
fn a_reply_dripped_over_a_unix_url_ends_ping_within_the_limit() {
    let server = Hostile::unix(Manner::DripsAfter(Duration::from_millis(300)));
    let said = fails_in_time(|| ping(&server.target()));
    assert!(
        said.contains("sent its reply too slowly: not complete within 2 s"),
        "{said}"
    );
    assert!(said.contains("hostile.sock"), "{said}");
}

#[test]
fn a_reply_dripped_ends_the_connect_loop_within_the_limit() {
    let server = Hostile::tcp(Manner::DripsAfter(Duration::from_millis(300)), "redis");
    let target = server.target();
    let said =
        fails_in_time(|| connect::trial(&target, Duration::from_secs(1), &mut Meter::times(&[])));
    assert!(said.contains("sent its reply too slowly"), "{said}");
}

#[test]
fn a_reply_dripped_ends_the_fifty_client_loop_within_the_limit() {
    let server = Hostile::tcp(Manner::DripsAfter(Duration::from_millis(500)), "redis");
    let target = server.target();
    let said = fails_in_time(|| {
        concurrent::trial(&target, 5, Duration::from_secs(1), &mut Meter::times(&[]))
    });
    assert!(said.contains("sent its reply too slowly"), "{said}");
}

#[test]
fn a_dripped_version_ends_the_version_check_within_the_limit() {
    let server = Hostile::tcp(Manner::DripsAfter(Duration::ZERO), "redis");
    let said = fails_in_time(|| reported_version(&server.target()));
    assert!(
        said.contains("sent its reply too slowly: not complete within 2 s"),
        "{said}"
    );
    // A server that answers gives its version.
    let healthy = Hostile::tcp(Manner::DripsAfter(LIFETIME), "redis");
    let version = reported_version(&healthy.target()).unwrap();
    assert_eq!(version.as_deref(), Some("7.0.0"));
}

#[test]
fn a_request_the_server_never_reads_ends_within_the_limit() {
    for server in [
        Hostile::tcp(Manner::NeverReads, "redis"),
        Hostile::unix(Manner::NeverReads),
    ] {
        let target = server.target();
        let mut client = target.open(0).unwrap();
        // Far more than the socket buffers hold.
        let said = fails_in_time(|| roundtrip::set_value(&mut client, 32 << 20));
        assert!(
            said.contains("read the request too slowly: not all sent within 2 s"),
            "{said}"
        );
    }
}

#[test]
fn a_silent_server_ends_ping_within_the_limit() {
    let server = Hostile::tcp(Manner::NeverReads, "redis");
    let said = fails_in_time(|| ping(&server.target()));
    assert!(said.contains("did not answer within 2 s"), "{said}");
}

#[test]
fn a_dripped_tls_handshake_ends_within_the_limit() {
    let server = Hostile::tcp(Manner::DripsHandshake, "rediss");
    let target = server.target();
    let said = fails_in_time(|| target.open(0));
    assert!(
        said.contains("the TLS handshake was not complete within 2 s"),
        "{said}"
    );
    assert!(
        said.contains("cannot connect to the Redis server at tls:"),
        "{said}"
    );
    // The connection of the timed loop, too.
    let started = Instant::now();
    let e = target.connect().err().expect("no handshake");
    assert!(started.elapsed() < LIMIT + 4 * SLICE + DRIP, "{e}");
    assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
}

/// Set in the child process of the next test: which wait the signal cuts.
const SIGNALLED_CHILD: &str = "SOCKBENCH_TEST_REDIS_SIGNALLED";

#[test]
fn a_signal_ends_every_wait_within_a_second() {
    if let Ok(case) = std::env::var(SIGNALLED_CHILD) {
        // The child: waits on a hostile server that would hold it for a minute,
        // and gets SIGINT a second in.
        crate::interrupt::install();
        let (server, manner) = match case.as_str() {
            "reply" => ("redis", Manner::DripsAfter(Duration::ZERO)),
            "handshake" => ("rediss", Manner::DripsHandshake),
            _ => ("redis", Manner::NeverReads),
        };
        let server = Hostile::tcp(manner, server);
        let target = server.target().limited(LIFETIME);
        let signalled = Arc::new(std::sync::Mutex::new(None));
        let raiser = {
            let signalled = signalled.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(1));
                *signalled.lock().unwrap() = Some(Instant::now());
                // SAFETY: raise sends a signal to this process, whose handler only
                // counts it.
                unsafe { libc::raise(libc::SIGINT) };
            })
        };
        let e = match case.as_str() {
            "reply" => ping(&target).err(),
            "handshake" => target.open(0).err(),
            _ => target
                .open(0)
                .and_then(|mut c| roundtrip::set_value(&mut c, 32 << 20))
                .err(),
        };
        raiser.join().unwrap();
        let after = signalled.lock().unwrap().expect("signalled").elapsed();
        println!(
            "ended {} ms after the signal: {}",
            after.as_millis(),
            e.map(|e| format!("{e:#}")).unwrap_or_default()
        );
        return;
    }
    for case in ["reply", "handshake", "write"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "redis::hostile_tests::a_signal_ends_every_wait_within_a_second",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(SIGNALLED_CHILD, case)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{case}: {said}");
        // After the test's name on the same line.
        let line = said
            .lines()
            .find_map(|l| Some(l.split_once("ended ")?.1))
            .unwrap_or_else(|| panic!("{case}: {said}"));
        let (ms, rest) = line.split_once(" ms after the signal: ").unwrap();
        let ms: u64 = ms.parse().unwrap();
        assert!(ms < 1_000, "{case}: {line}");
        assert!(rest.ends_with("interrupted"), "{case}: {line}");
    }
}
