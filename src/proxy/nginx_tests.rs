//! The configuration as text, and a real nginx in front of a stand-in for
//! sockbench's app; each test that needs nginx says why it is skipped when there is
//! none.

use super::*;
use crate::leftovers::{server_runs, sweep, DirKind};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn program() -> Option<PathBuf> {
    let found = find_program();
    if found.is_none() {
        eprintln!("skipped: nginx is not installed (apt-get install nginx)");
    }
    found
}

/// What the stand-in app answers to every request.
const REPLY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
/// The longest a stand-in app serves, so that a failed test ends anyway.
const APP_LIFE: Duration = Duration::from_secs(60);
/// The longest a connection waits for its next bytes in these tests.
const SILENCE: Duration = Duration::from_secs(10);

/// A listener the stand-in app accepts on.
trait Accept: Send + 'static {
    type Stream: Read + Write + Send + 'static;
    /// A connection, blocking with reads bounded by [`SILENCE`]; `WouldBlock` when
    /// none waits.
    fn next(&self) -> io::Result<Self::Stream>;
    fn set_nonblocking(&self) -> io::Result<()>;
}

impl Accept for std::net::TcpListener {
    type Stream = TcpStream;
    fn next(&self) -> io::Result<TcpStream> {
        let (stream, _) = self.accept()?;
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(SILENCE))?;
        Ok(stream)
    }
    fn set_nonblocking(&self) -> io::Result<()> {
        std::net::TcpListener::set_nonblocking(self, true)
    }
}

impl Accept for UnixListener {
    type Stream = UnixStream;
    fn next(&self) -> io::Result<UnixStream> {
        let (stream, _) = self.accept()?;
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(SILENCE))?;
        Ok(stream)
    }
    fn set_nonblocking(&self) -> io::Result<()> {
        UnixListener::set_nonblocking(self, true)
    }
}

/// A TLS listener with sockbench's app server's TLS: its certificate made in
/// memory, and a session ticket handed to every client (`app::session`). It runs
/// each handshake as it accepts, and notes how each went.
struct TlsAccept {
    listener: std::net::TcpListener,
    context: openssl::ssl::SslContext,
    handshakes: Arc<Mutex<Vec<Handshake>>>,
}

/// What one TLS handshake negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handshake {
    version: &'static str,
    resumed: bool,
}

/// A TLS connection that ends with the TLS close (`close_notify`), as the app
/// server's do.
struct TlsStream(openssl::ssl::SslStream<TcpStream>);

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Drop for TlsStream {
    fn drop(&mut self) {
        let _ = self.0.shutdown();
    }
}

impl Accept for TlsAccept {
    type Stream = TlsStream;
    fn next(&self) -> io::Result<TlsStream> {
        let stream = self.listener.next()?;
        let ssl = crate::proxy::app::session(&self.context)?;
        let tls = ssl.accept(stream).map_err(io::Error::other)?;
        self.handshakes.lock().unwrap().push(Handshake {
            version: tls.ssl().version_str(),
            resumed: tls.ssl().session_reused(),
        });
        Ok(TlsStream(tls))
    }
    fn set_nonblocking(&self) -> io::Result<()> {
        Accept::set_nonblocking(&self.listener)
    }
}

/// A stand-in for sockbench's app: answers `ok` to every request, on threads of
/// its own, and counts the connections it accepted (and over TLS notes each
/// handshake); stops accepting when dropped.
struct FakeApp {
    upstream: Upstream,
    accepted: Arc<AtomicUsize>,
    handshakes: Arc<Mutex<Vec<Handshake>>>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl FakeApp {
    fn tcp() -> FakeApp {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = Upstream::Tcp(listener.local_addr().unwrap());
        FakeApp::serve(listener, upstream, None)
    }

    /// On a Unix socket any account may connect to, in a directory any account may
    /// pass through (nginx connects as its account).
    fn unix() -> FakeApp {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let path = dir.path().join("app.sock");
        let listener = UnixListener::bind(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
        FakeApp::serve(listener, Upstream::Unix(path), Some(dir))
    }

    /// Over TLS on 127.0.0.1, bound as the app server binds it.
    fn tls() -> FakeApp {
        let asked: crate::transport::Endpoint = "tls:127.0.0.1:0".parse().unwrap();
        let crate::transport::Listener::Tls(listener, acceptor) =
            crate::transport::Listener::bind(&asked).unwrap()
        else {
            panic!("{asked} bound without TLS")
        };
        let upstream = Upstream::Tls(listener.local_addr().unwrap());
        let handshakes = Arc::new(Mutex::new(Vec::new()));
        let listener = TlsAccept {
            listener,
            context: acceptor.into_context(),
            handshakes: handshakes.clone(),
        };
        let mut app = FakeApp::serve(listener, upstream, None);
        app.handshakes = handshakes;
        app
    }

    fn serve(listener: impl Accept, upstream: Upstream, dir: Option<tempfile::TempDir>) -> FakeApp {
        listener.set_nonblocking().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let (accepted, done) = (accepted.clone(), done.clone());
            std::thread::spawn(move || {
                let end = Instant::now() + APP_LIFE;
                while !done.load(Ordering::SeqCst) && Instant::now() < end {
                    match listener.next() {
                        Ok(stream) => {
                            accepted.fetch_add(1, Ordering::SeqCst);
                            std::thread::spawn(move || answer(stream));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        FakeApp {
            upstream,
            accepted,
            handshakes: Arc::default(),
            done,
            thread: Some(thread),
            _dir: dir,
        }
    }

    fn site(&self, keepalive: bool) -> Site {
        if keepalive {
            Site::kept(self.upstream.clone(), 0)
        } else {
            Site::renewed(self.upstream.clone())
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// How each TLS handshake went, in order.
    fn handshakes(&self) -> Vec<Handshake> {
        self.handshakes.lock().unwrap().clone()
    }
}

impl Drop for FakeApp {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Answers every request on `stream` until the client closes it, asks for it to
/// be closed (HTTP/1.0 without keep-alive, or `Connection: close`), or is silent
/// for [`SILENCE`].
fn answer(mut stream: impl Read + Write) {
    let mut buf = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        while let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            buf.drain(..end + 4);
            if stream.write_all(REPLY).is_err() {
                return;
            }
            let old = head.lines().next().is_some_and(|l| l.ends_with("http/1.0"));
            if head.contains("connection: close")
                || (old && !head.contains("connection: keep-alive"))
            {
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// `count` GET requests through nginx's `port`, one after the other on one
/// connection: each body.
fn get(port: u16, count: usize) -> Vec<String> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    stream.set_read_timeout(Some(SILENCE)).unwrap();
    let mut buf = Vec::new();
    let more = |stream: &mut TcpStream, buf: &mut Vec<u8>| {
        let mut chunk = [0; 4096];
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "nginx closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    };
    let mut bodies = Vec::new();
    for _ in 0..count {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let end = loop {
            if let Some(end) = find(&buf, b"\r\n\r\n") {
                break end;
            }
            more(&mut stream, &mut buf);
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
        let length: usize = head
            .lines()
            .find_map(|l| {
                let l = l.to_ascii_lowercase();
                Some(l.strip_prefix("content-length:")?.trim().parse().unwrap())
            })
            .expect("a Content-Length");
        buf.drain(..end + 4);
        while buf.len() < length {
            more(&mut stream, &mut buf);
        }
        bodies.push(String::from_utf8_lossy(&buf[..length]).into_owned());
        buf.drain(..length);
    }
    bodies
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

/// Its keeper, master and workers.
fn every_pid(nginx: &Nginx) -> Vec<u32> {
    [nginx.pid(), nginx.master_pid()]
        .into_iter()
        .chain(nginx.worker_pids())
        .collect()
}

#[test]
fn the_configuration_reads_nothing_else_and_says_what_each_site_does() {
    let config = NginxConfig {
        program: "/usr/sbin/nginx".into(),
        workers: 2,
        sites: vec![
            Site::kept(Upstream::Unix("/t/app.sock".into()), 0),
            Site::renewed(Upstream::Tcp("127.0.0.1:8080".parse().unwrap())),
            Site {
                keepalive: Some(200),
                ..Site::kept(Upstream::Tcp("127.0.0.1:8081".parse().unwrap()), 0)
            },
            Site::overrun(
                Upstream::Unix("/t/small.sock".into()),
                Duration::from_millis(100),
            ),
            Site::renewed(Upstream::Tls("127.0.0.1:8443".parse().unwrap())),
        ],
    };
    let ports = [7001, 7002, 7003, 7004, 7005];
    let text = config_text(&config, &ports, Path::new("/t/p/srv")).unwrap();
    for wanted in [
        "daemon off;\n",
        "master_process on;\n",
        "worker_processes 2;\n",
        "pid \"/t/p/srv/nginx.pid\";\n",
        "lock_file \"/t/p/srv/nginx.lock\";\n",
        "error_log stderr warn;\n",
        "worker_connections 4096;\n",
        "access_log off;\n",
        "    keepalive_requests 1000000;\n",
        "client_body_temp_path \"/t/p/srv/client_body\";\n",
        "proxy_temp_path \"/t/p/srv/proxy\";\n",
        "fastcgi_temp_path \"/t/p/srv/fastcgi\";\n",
        "uwsgi_temp_path \"/t/p/srv/uwsgi\";\n",
        "scgi_temp_path \"/t/p/srv/scgi\";\n",
        "server \"unix:/t/app.sock\";\n",
        "server 127.0.0.1:8080;\n",
        "listen 127.0.0.1:7001 backlog=4096;\n",
        "listen 127.0.0.1:7002 backlog=4096;\n",
    ] {
        assert!(text.contains(wanted), "{wanted:?} missing from\n{text}");
    }
    for absent in ["include", "user ", "/etc/", "/var/", "proxy_buffering", "$"] {
        assert!(!text.contains(absent), "{absent:?} in\n{text}");
    }
    // Keep-alive upstream, HTTP/1.1 and no Connection header for the first site
    // only: the second has nginx's defaults.
    let (first, second) = text.split_once("upstream site_1").unwrap();
    for wanted in [
        "keepalive 16;\n",
        "        keepalive_requests 1000000;\n",
        "proxy_http_version 1.1;\n",
        "proxy_set_header Connection \"\";\n",
        "proxy_pass http://site_0;\n",
    ] {
        assert!(first.contains(wanted), "{wanted:?} missing from\n{first}");
    }
    let (second, rest) = second.split_once("upstream site_2").unwrap();
    for absent in [
        "keepalive",
        "proxy_http_version",
        "proxy_set_header",
        "proxy_connect_timeout",
    ] {
        assert!(!second.contains(absent), "{absent:?} in\n{second}");
    }
    assert!(second.contains("proxy_pass http://site_1;\n"), "{second}");
    // As many idle upstream connections as asked for, and a short wait for a
    // connection where one is asked for.
    let (third, rest) = rest.split_once("upstream site_3").unwrap();
    assert!(third.contains("keepalive 200;\n"), "{third}");
    assert!(!third.contains("proxy_connect_timeout"), "{third}");
    let (fourth, fifth) = rest.split_once("upstream site_4").unwrap();
    for wanted in ["proxy_connect_timeout 100ms;\n", "error_log stderr crit;\n"] {
        assert!(fourth.contains(wanted), "{wanted:?} missing from\n{fourth}");
    }
    assert!(!fourth.contains("keepalive "), "{fourth}");
    assert_eq!(text.matches("error_log").count(), 2, "{text}");
    // HTTPS to a TLS upstream, its session resumed, its certificate unchecked;
    // TLS only there.
    for wanted in [
        "server 127.0.0.1:8443;\n",
        "proxy_pass https://site_4;\n",
        "proxy_ssl_protocols TLSv1.2 TLSv1.3;\n",
        "proxy_ssl_verify off;\n",
        "proxy_ssl_server_name off;\n",
        "proxy_ssl_session_reuse on;\n",
    ] {
        assert!(fifth.contains(wanted), "{wanted:?} missing from\n{fifth}");
    }
    assert!(!fifth.contains("keepalive "), "{fifth}");
    assert_eq!(text.matches("proxy_ssl_").count(), 4, "{text}");
    assert_eq!(text.matches("https://").count(), 1, "{text}");
}

#[test]
fn odd_paths_are_quoted_or_refused() {
    assert_eq!(
        quoted_path(Path::new("/t/a b;{\"c\\")).unwrap(),
        "\"/t/a b;{\\\"c\\\\\""
    );
    let e = quoted_path(Path::new("/t/a\n}")).unwrap_err();
    assert_eq!(
        crate::error::exit_code(&e),
        2,
        "a TMPDIR refusal is bad input"
    );
    let relative = upstream_text(&Upstream::Unix("app.sock".into())).unwrap_err();
    assert!(
        relative.to_string().contains("not an absolute path"),
        "{relative}"
    );
    let long = format!("/{}", "s".repeat(MAX_UNIX_PATH));
    let e = upstream_text(&Upstream::Unix(long.into())).unwrap_err();
    assert!(e.to_string().contains("108 bytes long"), "{e}");
    let v6 = upstream_text(&Upstream::Tcp("[::1]:80".parse().unwrap())).unwrap();
    assert_eq!(v6, "[::1]:80");
}

#[test]
fn the_version_is_read_from_what_the_program_says() {
    let said = "nginx version: nginx/1.22.1\n";
    assert_eq!(parse_version(said).as_deref(), Some("1.22.1"));
    let said = "nginx version: openresty/1.21.4.1 (Ubuntu)\n";
    assert_eq!(parse_version(said).as_deref(), Some("1.21.4.1"));
    assert_eq!(parse_version("nginx: invalid option: \"v\""), None);
    let Some(program) = program() else { return };
    let found = version(&program).unwrap().expect("a version");
    assert!(found.starts_with(|c: char| c.is_ascii_digit()), "{found}");
}

#[test]
fn every_site_answers_and_only_keepalive_reuses_its_upstream_connection() {
    let Some(program) = program() else { return };
    let apps = [
        FakeApp::unix(),
        FakeApp::unix(),
        FakeApp::tcp(),
        FakeApp::tcp(),
        FakeApp::tls(),
        FakeApp::tls(),
    ];
    let keepalive = [true, false, true, false, true, false];
    let sites = apps.iter().zip(keepalive).map(|(a, k)| a.site(k)).collect();
    let nginx = Nginx::start(&NginxConfig::new(&program, sites)).unwrap();
    for (i, app) in apps.iter().enumerate() {
        let bodies = get(nginx.site_port(i), 50);
        assert!(bodies.iter().all(|b| b == "ok"), "site {i}: {bodies:?}");
        let connections = if keepalive[i] { 1 } else { 50 };
        assert_eq!(
            app.accepted(),
            connections,
            "site {i}: {:?}, keepalive {}",
            app.upstream,
            keepalive[i]
        );
    }
}

#[test]
fn a_new_tls_connection_to_the_app_resumes_the_last_session() {
    let Some(program) = program() else { return };
    let app = FakeApp::tls();
    let nginx = Nginx::start(&NginxConfig::new(&program, vec![app.site(false)])).unwrap();
    let bodies = get(nginx.site_port(0), 20);
    assert!(bodies.iter().all(|b| b == "ok"), "{bodies:?}");
    let handshakes = app.handshakes();
    assert_eq!(handshakes.len(), 20, "a connection per request");
    // TLS 1.3; a full handshake first, then each connection resumes with the
    // ticket the one before it was handed.
    let full = Handshake {
        version: "TLSv1.3",
        resumed: false,
    };
    let resumed = Handshake {
        resumed: true,
        ..full
    };
    assert_eq!(handshakes[0], full);
    assert_eq!(handshakes[1..], [resumed; 19]);
}

#[test]
fn master_and_workers_run_as_the_account_alone_in_their_namespace() {
    let Some(program) = program() else { return };
    let app = FakeApp::tcp();
    let config = NginxConfig {
        workers: 2,
        ..NginxConfig::new(&program, vec![app.site(true)])
    };
    let nginx = Nginx::start(&config).unwrap();
    assert_eq!(get(nginx.site_port(0), 1), ["ok"]);
    let uid = account::uid_of(nginx.account.as_ref());
    assert!(crate::dir::euid() != 0 || uid != 0, "never root");
    let (master, workers) = (nginx.master_pid(), nginx.worker_pids());
    assert_eq!(workers.len(), 2, "{workers:?}");
    // The keeper is the root of the tree, and nothing else is in it.
    assert_eq!(crate::cpu::proc::parent(master), Some(nginx.pid()));
    let mut tree = crate::cpu::proc::descendants(nginx.pid());
    tree.sort();
    let mut expected = every_pid(&nginx)[1..].to_vec();
    expected.sort();
    assert_eq!(tree, expected);
    assert_eq!(status_field(master, "NSpid:"), format!("{master}\t1"));
    assert_eq!(status_field(nginx.pid(), "NSpid:"), nginx.pid().to_string());
    let ids = format!("{uid}\t{uid}\t{uid}\t{uid}");
    for pid in std::iter::once(master).chain(workers) {
        assert_eq!(status_field(pid, "Uid:"), ids, "process {pid}");
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        assert!(environ.is_empty(), "process {pid} has an environment");
    }
    let (top, srv) = nginx.dirs();
    assert!(server_runs(top), "its owner file records a running server");
    // The log is root's (nginx writes it through a descriptor); `srv/` and the
    // configuration are the account's alone.
    let log = top.entry_at(LOG).unwrap().unwrap();
    assert_eq!((log.mode, log.uid), (0o600, crate::dir::euid()));
    let config = srv.entry_at(CONFIG).unwrap().unwrap();
    assert_eq!((config.mode, config.uid), (0o600, uid));
    let srv_entry = srv.entry().unwrap();
    assert_eq!((srv_entry.mode, srv_entry.uid), (0o700, uid));
    assert_eq!(
        top.entry().unwrap().uid,
        crate::dir::euid(),
        "the top stays ours"
    );
    let mut made: Vec<String> = srv
        .names()
        .unwrap()
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    made.sort();
    assert_eq!(
        made,
        [
            "client_body",
            "fastcgi",
            CONFIG,
            PID_FILE,
            "proxy",
            "scgi",
            "uwsgi"
        ]
    );
}

#[test]
fn workers_die_with_a_killed_master() {
    let Some(program) = program() else { return };
    let app = FakeApp::unix();
    let config = NginxConfig {
        workers: 2,
        ..NginxConfig::new(&program, vec![app.site(true)])
    };
    let mut nginx = Nginx::start(&config).unwrap();
    assert_eq!(get(nginx.site_port(0), 1), ["ok"]);
    let workers = nginx.worker_pids();
    assert_eq!(workers.len(), 2, "{workers:?}");
    let master = nginx.master_pid();
    // SAFETY: a plain syscall on the PID of the test's own nginx master, which its
    // keeper has not reaped (the keeper runs, checked by start).
    unsafe { libc::kill(master as libc::pid_t, libc::SIGKILL) };
    let left = still_running(&workers, Duration::from_secs(2));
    assert!(left.is_empty(), "workers {left:?} outlived their master");
    assert!(still_running(&[nginx.pid()], Duration::from_secs(2)).is_empty());
    let e = nginx.check_running().unwrap_err().to_string();
    assert!(e.contains("SIGKILL"), "{e}");
    assert!(!server_runs(nginx.dirs().0), "it records a dead process");
}

#[test]
fn nothing_is_left_after_drop() {
    let Some(program) = program() else { return };
    let app = FakeApp::tcp();
    let config = NginxConfig {
        workers: 2,
        ..NginxConfig::new(&program, vec![app.site(false)])
    };
    let nginx = Nginx::start(&config).unwrap();
    assert_eq!(get(nginx.site_port(0), 1), ["ok"]);
    let pids = every_pid(&nginx);
    assert_eq!(pids.len(), 4, "{pids:?}");
    let base = nginx.dirs().0.path().to_path_buf();
    let stopping = Instant::now();
    drop(nginx);
    // Sooner than the SIGKILL that would follow a SIGTERM without effect.
    assert!(stopping.elapsed() < STOP_TIMEOUT, "nginx ignored SIGTERM");
    let left = still_running(&pids, Duration::ZERO);
    assert!(left.is_empty(), "{left:?} still run");
    assert!(!base.exists(), "{} is gone", base.display());
}

#[test]
fn another_account_can_change_neither_the_configuration_nor_the_directory() {
    let Some(program) = program() else { return };
    if crate::dir::euid() != 0 {
        eprintln!("skipped: playing another account needs root");
        return;
    }
    let app = FakeApp::tcp();
    let nginx = Nginx::start(&NginxConfig::new(&program, vec![app.site(false)])).unwrap();
    let other = match &nginx.account {
        Some(a) if a.name == "nobody" => "daemon",
        _ => "nobody",
    };
    let (top, srv) = nginx.dirs();
    for path in [
        top.path().to_path_buf(),
        top.join(LOG),
        srv.path().to_path_buf(),
        srv.join(CONFIG),
    ] {
        for test in ["-w", "-r"] {
            let allowed = Command::new("runuser")
                .args(["-u", other, "--", "test", test])
                .arg(&path)
                .status()
                .expect("runuser runs");
            // The top may be passed through, but neither read nor written.
            assert!(
                !allowed.success(),
                "{other} passes test {test} on {}",
                path.display()
            );
        }
    }
}

#[test]
fn a_port_taken_meanwhile_is_replaced_by_another() {
    let Some(program) = program() else { return };
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let app = FakeApp::tcp();
    let mut first = true;
    let config = NginxConfig::new(&program, vec![app.site(false)]);
    let nginx = Nginx::start_on(&config, |count| {
        if std::mem::take(&mut first) {
            Ok(vec![port])
        } else {
            free_ports(count)
        }
    })
    .unwrap();
    assert_ne!(nginx.site_port(0), port);
    assert_eq!(get(nginx.site_port(0), 1), ["ok"]);
}

#[test]
fn a_port_taken_every_time_fails_in_one_line_with_nginx_s_words() {
    let Some(program) = program() else { return };
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let app = FakeApp::tcp();
    let config = NginxConfig::new(&program, vec![app.site(false)]);
    let mut tries = 0;
    let e = Nginx::start_on(&config, |_| {
        tries += 1;
        Ok(vec![port])
    })
    .err()
    .expect("it fails");
    let e = format!("{e:#}");
    assert_eq!(tries, TRIES);
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("Address already in use"), "{e}");
    assert!(e.contains("exit status: 1"), "{e}");
}

#[test]
fn a_configuration_nginx_refuses_is_one_line_with_its_words() {
    let Some(program) = program() else { return };
    let site = Site {
        upstream: Upstream::Tcp("127.0.0.1:0".parse().unwrap()),
        keepalive: None,
        connect_timeout: None,
        quiet: false,
    };
    let e = format!(
        "{:#}",
        Nginx::start(&NginxConfig::new(&program, vec![site]))
            .err()
            .expect("it fails")
    );
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("[emerg]") && e.contains("port"), "{e}");
}

/// Set in the child process of the next test.
const KILLED_CHILD: &str = "SOCKBENCH_TEST_NGINX_KILLED";
/// What starts the child's report of nginx's processes.
const PIDS_SAID: &str = "nginx's processes: ";

/// Kills a child process with SIGKILL when dropped, and reaps it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn nothing_of_nginx_outlives_a_killed_sockbench() {
    let Some(program) = program() else { return };
    if std::env::var_os(KILLED_CHILD).is_some() {
        // The child: starts nginx, says its processes, and waits to be killed.
        let app = FakeApp::tcp();
        let config = NginxConfig {
            workers: 2,
            ..NginxConfig::new(&program, vec![app.site(true)])
        };
        let nginx = Nginx::start(&config).unwrap();
        let pids: Vec<String> = every_pid(&nginx).iter().map(u32::to_string).collect();
        // On the line libtest has begun with the test's name.
        println!("{PIDS_SAID}{}", pids.join(" "));
        std::io::stdout().flush().unwrap();
        std::thread::sleep(APP_LIFE);
        return;
    }
    // The parent: runs this test alone in a child process, with its own TMPDIR
    // (which nginx's account may pass through), and kills it once nginx serves.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = KillOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "proxy::nginx::tests::nothing_of_nginx_outlives_a_killed_sockbench",
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
        .expect("the child says nginx's processes");
    let pids: Vec<u32> = said.split(' ').map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 4, "keeper, master, two workers: {pids:?}");
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
