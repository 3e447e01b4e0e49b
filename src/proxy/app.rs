//! sockbench's own HTTP app server, the upstream behind nginx: `GET /?size=N`
//! answered with `200` and a body of N bytes (0 to [`MAX_SIZE`]), anything else
//! with `400`, `404` or `405`. It runs as `sockbench serve --http`, with the same
//! output and the same stop as the socket server (`command/serve.rs`).
//!
//! Why hyper on one tokio thread: the hop measured is nginx's, so the app should
//! cost as little per request as a real HTTP server can, and be one nobody doubts
//! speaks HTTP/1.0 and 1.1 correctly (keep-alive, `Connection: close`); a parser of
//! sockbench's own would be neither. One current-thread runtime serves every
//! connection, as one nginx worker does, so the server is one thread to place and
//! count. A request costs hyper's parse and write and nothing of sockbench's: no
//! logging, and the body is a slice of one buffer made at start (a reference count,
//! no copy).
//!
//! Over TLS (`tls:127.0.0.1:PORT`) it speaks HTTPS with the certificate every
//! sockbench TLS server makes in memory at start (`transport::tls`), through
//! `tokio-openssl` on the same OpenSSL, each handshake in its connection's own task.
//! Why it lets clients resume their TLS sessions, where `transport::tls` turns
//! session tickets off: there, every connection is to pay a full handshake, what a
//! client without session reuse pays. Here the client is nginx, which resumes by
//! default (`proxy_ssl_session_reuse on`), and real HTTPS app servers let it (they
//! keep OpenSSL's default of two tickets per handshake): with upstream keepalive
//! off, what nginx pays per request is a resumed handshake, and a full one would
//! overstate the tls hop. So each connection gets one TLS 1.3 ticket
//! ([`TICKETS`]); `nginx_tests.rs` checks that nginx resumes with it.
//!
//! What the server does not bound: a client that connects and never sends holds its
//! connection, as it would on any server; the server only ever reads.

use crate::dir::{Dir, Entry, Owner};
use crate::error::usage;
use crate::system::account::Account;
use crate::transport::{BindError, Endpoint, Listener};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use hyper_util::rt::TokioIo;
use openssl::ssl::{Ssl, SslContext};
use std::convert::Infallible;
use std::ffi::OsStr;
use std::io;
use std::pin::Pin;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The largest body the server sends: 1 MiB.
pub(crate) const MAX_SIZE: usize = 1 << 20;

/// How long the accept loop rests when the process is out of descriptors, rather
/// than spin on the error.
const ACCEPT_REST: Duration = Duration::from_millis(10);

/// TLS 1.3 session tickets sent after each handshake: one, all that nginx keeps
/// (one session per upstream server) and one fewer encryption and write per
/// handshake than OpenSSL's default of two. The tickets are stateless, sealed with
/// keys OpenSSL draws at random when the TLS context is made, in memory only.
pub(crate) const TICKETS: usize = 1;

/// A listener bound for the app server, with the address it really got (the real
/// port when port 0 was asked for).
pub(crate) struct Listening {
    pub endpoint: Endpoint,
    socket: Socket,
}

enum Socket {
    Unix(std::os::unix::net::UnixListener),
    Tcp(std::net::TcpListener),
    /// With its certificate and key, made when it was bound.
    Tls(std::net::TcpListener, SslContext),
}

/// Binds every endpoint, or fails on the first that cannot be bound, each with
/// at most `backlog` connections waiting to be accepted (`None`: as many as the
/// kernel allows). An address in use, or a path that is not a socket, is the
/// user's to change (exit 2).
pub(crate) fn bind(endpoints: &[Endpoint], backlog: Option<u32>) -> Result<Vec<Listening>> {
    endpoints
        .iter()
        .map(|asked| {
            let listener = Listener::bind_backlog(asked, backlog).map_err(|e| match e {
                BindError::InUse(_) | BindError::NotSocket(_) => usage(e.to_string()),
                other => other.into(),
            })?;
            let endpoint = listener.local_endpoint(asked);
            let socket = match listener {
                Listener::Unix(l) => Socket::Unix(l),
                Listener::Tcp(l) => Socket::Tcp(l),
                Listener::Tls(l, acceptor) => Socket::Tls(l, acceptor.into_context()),
                Listener::Datagram(..) => {
                    return Err(usage(format!(
                        "{asked}: the app server serves streams only"
                    )))
                }
            };
            Ok(Listening { endpoint, socket })
        })
        .collect()
}

/// The server at work on its own thread; dropping it stops the server and closes
/// its listeners and connections.
pub(crate) struct Serving {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts serving on every listener, on one new thread.
pub(crate) fn spawn(listening: Vec<Listening>) -> io::Result<Serving> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let sockets = {
        // Listeners join the runtime's reactor here, so a failure is returned now.
        let _inside = runtime.enter();
        listening
            .into_iter()
            .map(|l| match l.socket {
                Socket::Unix(l) => {
                    l.set_nonblocking(true)?;
                    tokio::net::UnixListener::from_std(l).map(Accepting::Unix)
                }
                Socket::Tcp(l) => {
                    l.set_nonblocking(true)?;
                    tokio::net::TcpListener::from_std(l).map(Accepting::Tcp)
                }
                Socket::Tls(l, context) => {
                    l.set_nonblocking(true)?;
                    tokio::net::TcpListener::from_std(l).map(|l| Accepting::Tls(l, context))
                }
            })
            .collect::<io::Result<Vec<_>>>()?
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let body = Bytes::from(vec![b'x'; MAX_SIZE]);
    let thread = std::thread::Builder::new()
        .name("http app".into())
        .spawn(move || {
            for socket in sockets {
                runtime.spawn(accept_loop(socket, body.clone()));
            }
            // Ends when `Serving` is dropped; the runtime, dropped with this thread's
            // closure, then drops every task, so every socket closes.
            let _ = runtime.block_on(stopped);
        })?;
    Ok(Serving {
        stop: Some(stop),
        thread: Some(thread),
    })
}

enum Accepting {
    Unix(tokio::net::UnixListener),
    Tcp(tokio::net::TcpListener),
    Tls(tokio::net::TcpListener, SslContext),
}

/// Accepts connections for ever, each served by a task of its own.
async fn accept_loop(listener: Accepting, body: Bytes) {
    loop {
        let accepted = match &listener {
            Accepting::Unix(l) => l.accept().await.map(|(stream, _)| {
                tokio::spawn(connection(stream, body.clone()));
            }),
            Accepting::Tcp(l) => l.accept().await.and_then(|(stream, _)| {
                stream.set_nodelay(true)?;
                tokio::spawn(connection(stream, body.clone()));
                Ok(())
            }),
            Accepting::Tls(l, context) => l.accept().await.and_then(|(stream, _)| {
                stream.set_nodelay(true)?;
                let stream = tokio_openssl::SslStream::new(session(context)?, stream)
                    .map_err(io::Error::other)?;
                tokio::spawn(encrypted(stream, body.clone()));
                Ok(())
            }),
        };
        if let Err(e) = accepted {
            // Out of descriptors (or memory): wait for connections to close. A
            // connection that failed on its own (aborted, no TCP_NODELAY) is dropped.
            if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
                || e.kind() == io::ErrorKind::OutOfMemory
            {
                tokio::time::sleep(ACCEPT_REST).await;
            }
        }
    }
}

/// A server's TLS session for one connection: its context's, with [`TICKETS`]
/// session tickets to hand out.
pub(super) fn session(context: &SslContext) -> io::Result<Ssl> {
    let mut ssl = Ssl::new(context).map_err(io::Error::other)?;
    ssl.set_num_tickets(TICKETS).map_err(io::Error::other)?;
    Ok(ssl)
}

/// Runs the TLS handshake on `stream`, then serves it; a client that gives up
/// or speaks no TLS is dropped.
async fn encrypted(mut stream: tokio_openssl::SslStream<tokio::net::TcpStream>, body: Bytes) {
    if Pin::new(&mut stream).accept().await.is_ok() {
        connection(stream, body).await;
    }
}

/// Serves one connection until the client closes it (or sends what is not HTTP).
async fn connection(stream: impl AsyncRead + AsyncWrite + Unpin, body: Bytes) {
    let service =
        service_fn(move |request| std::future::ready(Ok::<_, Infallible>(answer(&request, &body))));
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// The response to one request: `GET /?size=N`, N bytes of `body`.
fn answer(request: &hyper::Request<Incoming>, body: &Bytes) -> Response<Full<Bytes>> {
    let (status, bytes) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/") => match size(request.uri().query()) {
            Some(n) => (StatusCode::OK, body.slice(..n)),
            None => (
                StatusCode::BAD_REQUEST,
                Bytes::from_static(b"ask for GET /?size=N with N from 0 to 1048576\n"),
            ),
        },
        (_, "/") => (
            StatusCode::METHOD_NOT_ALLOWED,
            Bytes::from_static(b"only GET is served\n"),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"only / is served\n"),
        ),
    };
    // hyper writes Content-Length from the body's exact size.
    let mut response = Response::new(Full::new(bytes));
    *response.status_mut() = status;
    response
}

/// N of `size=N` in the query, when it is a whole number from 0 to [`MAX_SIZE`];
/// other parameters are ignored.
fn size(query: Option<&str>) -> Option<usize> {
    let value = query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("size="))?;
    if value.is_empty() || value.len() > 7 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok().filter(|&n| n <= MAX_SIZE)
}

/// The account `--account NAME` names, to run the server as. Only root can switch
/// accounts, and the account must not be root itself.
pub(crate) fn account(name: &str) -> Result<Account> {
    let account =
        crate::system::account::server_account(&[name], "the HTTP app server")?.ok_or_else(
            || usage(format!("--account {name} needs root: only root can run the server as another account; leave it out to run as yourself")),
        )?;
    if account.uid == 0 {
        return Err(usage(format!(
            "--account {name} is root; name an unprivileged account for the server to run as"
        )));
    }
    Ok(account)
}

/// Hands the socket file `name` in `dir` to `owner`, mode 0600, if it is still the
/// socket that was bound (`bound`). It is opened once through the directory
/// without following a link (`O_PATH`, the one way to hold a socket file), and
/// its owner and mode are set on that descriptor, so nothing put at the name
/// meanwhile is changed.
pub(crate) fn hand_socket(dir: &Dir, name: &OsStr, bound: &Entry, owner: Owner) -> Result<()> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let shown = dir.join(name);
    // SAFETY: `dir` holds the descriptor open for as long as this borrow is used.
    let at = unsafe { std::os::fd::BorrowedFd::borrow_raw(dir.raw_fd()) };
    let held = rustix::fs::openat(
        at,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open the socket {}", shown.display()))?;
    let now = rustix::fs::fstat(&held)?;
    if rustix::fs::FileType::from_raw_mode(now.st_mode) != rustix::fs::FileType::Socket
        || now.st_dev != bound.dev
        || now.st_ino != bound.ino
    {
        bail!(
            "{} is no longer the socket the server bound; something replaced it",
            shown.display()
        );
    }
    let handed = rustix::fs::chownat(
        &held,
        "",
        Some(rustix::fs::Uid::from_raw(owner.uid)),
        Some(rustix::fs::Gid::from_raw(owner.gid)),
        AtFlags::EMPTY_PATH,
    )
    .and_then(|()| {
        // A mode is set on the file the descriptor holds through its /proc link:
        // `fchmod` refuses an O_PATH descriptor.
        let through = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&held));
        rustix::fs::chmod(through.as_str(), Mode::from_raw_mode(0o600))
    });
    handed.with_context(|| format!("cannot hand the socket {} to its account", shown.display()))
}

/// Runs the rest of the process as `account`: no supplementary groups, then its
/// group, then its user, checked (no way back to root).
pub(crate) fn run_as(account: &Account) -> Result<()> {
    let parent = std::os::unix::process::parent_id();
    let failed = |what: &str| {
        let e = io::Error::last_os_error();
        anyhow::anyhow!(
            "cannot run as the '{}' account: {what} failed: {e}",
            account.name
        )
    };
    // SAFETY: setgroups with a count of 0 reads no list; glibc applies it (and the
    // two calls below) to every thread of the process.
    if unsafe { libc::setgroups(0, std::ptr::null()) } != 0 {
        return Err(failed("setgroups"));
    }
    // SAFETY: setgid takes any group ID; its result is checked.
    if unsafe { libc::setgid(account.gid) } != 0 {
        return Err(failed("setgid"));
    }
    // SAFETY: setuid takes any user ID; its result is checked.
    if unsafe { libc::setuid(account.uid) } != 0 {
        return Err(failed("setuid"));
    }
    // SAFETY: getuid, geteuid and setuid(0) have no memory effects; setuid(0) must
    // fail now that root is given up.
    let (uid, euid, back) = unsafe { (libc::getuid(), libc::geteuid(), libc::setuid(0)) };
    if uid != account.uid || euid != account.uid || uid == 0 || back == 0 {
        bail!(
            "cannot run as the '{}' account: the process still has user ID {uid} \
             (effective {euid}) after setuid",
            account.name
        );
    }
    // A change of credentials clears the signal the parent's death sends
    // (`PR_SET_PDEATHSIG`), which sockbench set so that the app server dies with
    // it: set it again, then make sure the parent did not die in between.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; no memory.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
        return Err(failed("prctl(PR_SET_PDEATHSIG)"));
    }
    if std::os::unix::process::parent_id() != parent {
        bail!("the process that started the app server is gone");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::http::{self, HttpConn, HttpRequest, Status, LIMIT};
    use std::io::{Read, Write};
    use std::path::Path;

    /// The server on a Unix socket in `dir` and on 127.0.0.1:0 in plain TCP and in
    /// TLS, on a thread.
    fn start(dir: &Path) -> (Serving, Vec<Endpoint>) {
        let asked: Vec<Endpoint> = [
            format!("unix:{}", dir.join("app.sock").display()),
            "tcp:127.0.0.1:0".to_string(),
            "tls:127.0.0.1:0".to_string(),
        ]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
        let listening = bind(&asked, None).unwrap();
        let endpoints: Vec<Endpoint> = listening.iter().map(|l| l.endpoint.clone()).collect();
        assert_ne!(endpoints[1].to_string(), "tcp:127.0.0.1:0", "the real port");
        assert_ne!(endpoints[2].to_string(), "tls:127.0.0.1:0", "the real port");
        (spawn(listening).unwrap(), endpoints)
    }

    fn client(at: &Endpoint) -> HttpConn {
        HttpConn::new(http::connect(at).unwrap(), MAX_SIZE, at, LIMIT).unwrap()
    }

    /// `request` sent as it is on a new connection, and all the server sends until
    /// it closes.
    fn raw(at: &Endpoint, request: &[u8]) -> String {
        let mut conn = http::connect(at).unwrap();
        conn.write_all(request).unwrap();
        let mut said = Vec::new();
        conn.read_to_end(&mut said).unwrap();
        String::from_utf8(said).unwrap()
    }

    #[test]
    fn every_size_comes_with_exactly_its_bytes_over_unix_tcp_and_tls() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        for at in &endpoints {
            let mut conn = client(at);
            for size in [0, 4 << 10, 64 << 10, MAX_SIZE] {
                let request = HttpRequest::get("localhost", size, true).unwrap();
                // A body of another size fails the exchange.
                assert_eq!(conn.exchange(&request).unwrap(), Status(200), "{at} {size}");
                assert!(conn.is_open());
            }
        }
        // The body is the server's buffer, byte for byte.
        let said = raw(
            &endpoints[0],
            b"GET /?size=7 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        );
        assert!(said.starts_with("HTTP/1.1 200 OK\r\n"), "{said}");
        assert!(
            said.to_ascii_lowercase()
                .contains("\r\ncontent-length: 7\r\n"),
            "{said}"
        );
        assert!(said.ends_with("\r\n\r\nxxxxxxx"), "{said}");
    }

    #[test]
    fn one_connection_carries_a_thousand_requests() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        for at in &endpoints {
            let mut conn = client(at);
            let request = HttpRequest::get("localhost", 100, true).unwrap();
            for i in 0..1_000 {
                // No reconnection here: a closed connection fails the exchange.
                let status = conn
                    .exchange(&request)
                    .unwrap_or_else(|e| panic!("{at} #{i}: {e}"));
                assert_eq!(status, Status(200));
            }
        }
    }

    #[test]
    fn bad_sizes_paths_and_methods_are_refused_and_the_connection_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        let mut conn = client(&endpoints[1]);
        let too_big = HttpRequest::get("localhost", 2_000_000, true).unwrap();
        assert_eq!(conn.exchange(&too_big).unwrap(), Status(400));
        let over = HttpRequest::get("localhost", MAX_SIZE + 1, true).unwrap();
        assert_eq!(conn.exchange(&over).unwrap(), Status(400));
        assert!(conn.is_open());
        let fine = HttpRequest::get("localhost", 3, true).unwrap();
        assert_eq!(conn.exchange(&fine).unwrap(), Status(200));
        for (request, status) in [
            ("GET /other?size=3 HTTP/1.1", "404"),
            ("GET / HTTP/1.1", "400"),
            ("GET /?size=-1 HTTP/1.1", "400"),
            ("GET /?size=1e3 HTTP/1.1", "400"),
            ("POST /?size=3 HTTP/1.1", "405"),
        ] {
            let said = raw(
                &endpoints[0],
                format!("{request}\r\nHost: a\r\nConnection: close\r\n\r\n").as_bytes(),
            );
            assert!(
                said.starts_with(&format!("HTTP/1.1 {status} ")),
                "{request}: {said}"
            );
        }
    }

    #[test]
    fn http_1_0_gets_its_body_and_the_connection_closed() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        for at in &endpoints {
            // read_to_end returning at all is the EOF.
            let said = raw(at, b"GET /?size=5 HTTP/1.0\r\n\r\n");
            assert!(
                said.starts_with("HTTP/1.") && said.contains(" 200 OK\r\n"),
                "{said}"
            );
            assert!(
                said.to_ascii_lowercase()
                    .contains("\r\ncontent-length: 5\r\n"),
                "{said}"
            );
            assert!(said.ends_with("\r\n\r\nxxxxx"), "{said}");
        }
    }

    #[test]
    fn a_request_without_keep_alive_gets_its_response_then_eof() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        for at in &endpoints {
            let mut conn = client(at);
            let once = HttpRequest::get("localhost", 4 << 10, false).unwrap();
            assert_eq!(conn.exchange(&once).unwrap(), Status(200));
            assert!(!conn.is_open());
            let mut old = conn.swap(http::connect(at).unwrap());
            assert_eq!(
                old.read(&mut [0; 16]).unwrap(),
                0,
                "{at}: EOF after the response"
            );
            assert_eq!(
                conn.exchange(&once).unwrap(),
                Status(200),
                "{at}: a new connection"
            );
        }
    }

    /// A connection to the Unix socket at `path` that does not wait, as nginx
    /// makes its connections to an upstream.
    fn connect_nonblocking(path: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: a plain system call; its result is checked before it is owned.
        let fd = unsafe {
            libc::socket(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new socket nothing else owns.
        let socket = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        // SAFETY: an all-zero sockaddr_un is valid; the path is copied in below,
        // shorter than sun_path (a temporary directory's), so it stays
        // NUL-terminated.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = path.as_os_str().as_bytes();
        assert!(bytes.len() < addr.sun_path.len(), "{}", path.display());
        for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
            *to = *from as libc::c_char;
        }
        // SAFETY: `addr` is a sockaddr_un on the stack, its size given.
        let rc = unsafe {
            libc::connect(
                fd,
                std::ptr::addr_of!(addr).cast(),
                std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(socket)
    }

    #[test]
    fn a_small_backlog_refuses_a_unix_connection_past_it_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let connect_all = |backlog: Option<u32>| -> Vec<std::io::ErrorKind> {
            let path = dir.path().join("app.sock");
            let at: Endpoint = format!("unix:{}", path.display()).parse().unwrap();
            // Bound, never accepting: every connection waits in the backlog.
            let _listening = bind(&[at], backlog).unwrap();
            let mut held = Vec::new();
            let mut refused = Vec::new();
            for _ in 0..4 {
                match connect_nonblocking(&path) {
                    Ok(socket) => held.push(socket),
                    Err(e) => refused.push(e.kind()),
                }
            }
            std::fs::remove_file(&path).unwrap();
            refused
        };
        // The kernel lets one more than the backlog wait; nginx, connecting
        // without blocking, gets EAGAIN past that (and answers 502).
        assert_eq!(connect_all(Some(1)), [std::io::ErrorKind::WouldBlock; 2]);
        assert_eq!(connect_all(None), []);
    }

    #[test]
    fn sizes_are_whole_numbers_up_to_one_mib() {
        assert_eq!(size(Some("size=0")), Some(0));
        assert_eq!(size(Some("a=1&size=1048576")), Some(MAX_SIZE));
        for bad in [
            "size=1048577",
            "size=",
            "size=+1",
            "size=0x10",
            "sizes=1",
            "size=99999999",
        ] {
            assert_eq!(size(Some(bad)), None, "{bad}");
        }
        assert_eq!(size(None), None);
    }

    /// One request on a new TLS connection to `at` from `connector`, which offers
    /// `session` to resume: whether the server resumed it, and the session to
    /// offer next (made of the last ticket the server handed out, if any).
    fn resumed(
        at: &Endpoint,
        connector: &openssl::ssl::SslConnector,
        session: Option<&openssl::ssl::SslSession>,
    ) -> (bool, Option<openssl::ssl::SslSession>) {
        let crate::transport::Address::Ip(addr) = at.address else {
            panic!("{at} is no IP address")
        };
        let mut ssl = connector
            .configure()
            .unwrap()
            .into_ssl("localhost")
            .unwrap();
        if let Some(session) = session {
            // SAFETY: the session comes from a connection made with this same
            // connector's context, as set_session requires.
            unsafe { ssl.set_session(session).unwrap() };
        }
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(LIMIT)).unwrap();
        let mut tls = ssl.connect(tcp).unwrap();
        tls.write_all(b"GET /?size=3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut said = Vec::new();
        // The ticket comes after the handshake, before the response.
        tls.read_to_end(&mut said).unwrap();
        assert!(said.ends_with(b"\r\n\r\nxxx"), "{said:?}");
        // Closed as nginx closes: OpenSSL makes the session of a connection freed
        // without its close_notify sent unfit to resume.
        let _ = tls.shutdown();
        let reused = tls.ssl().session_reused();
        (reused, tls.ssl().session().map(|s| s.to_owned()))
    }

    #[test]
    fn a_tls_client_can_resume_its_session_as_nginx_does() {
        let dir = tempfile::tempdir().unwrap();
        let (_serving, endpoints) = start(dir.path());
        let tls = &endpoints[2];
        let mut builder =
            openssl::ssl::SslConnector::builder(openssl::ssl::SslMethod::tls_client()).unwrap();
        builder.set_verify(openssl::ssl::SslVerifyMode::NONE);
        let connector = builder.build();
        let (first, session) = resumed(tls, &connector, None);
        assert!(!first, "a first connection has nothing to resume");
        let session = session.expect("a session to resume");
        assert_eq!(session.protocol_version(), openssl::ssl::SslVersion::TLS1_3);
        let (again, next) = resumed(tls, &connector, Some(&session));
        assert!(again, "the server did not resume the session");
        // Each handshake hands out a new ticket, so a client can go on resuming.
        let (still, _) = resumed(tls, &connector, next.as_ref());
        assert!(
            still,
            "the session handed out by a resumed handshake did not resume"
        );
        // What sockbench's own client negotiated, for the facts of the tls column.
        let conn = http::connect(tls).unwrap();
        let info = conn.tls_info().expect("TLS");
        assert_eq!(info.version, "TLSv1.3");
    }

    #[test]
    fn root_cannot_be_the_account_and_only_root_switches() {
        let e = account("root").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let said = e.to_string();
        if crate::dir::euid() == 0 {
            assert!(said.contains("is root"), "{said}");
        } else {
            assert!(said.contains("needs root"), "{said}");
        }
    }

    #[test]
    fn a_socket_is_handed_over_only_while_it_is_the_one_bound() {
        let top = tempfile::tempdir().unwrap();
        let path = top.path().join("app.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let (dir, name) = Dir::open_parent(&path).unwrap();
        let bound = dir.entry_at(&name).unwrap().unwrap();
        // As root, to another account; otherwise to the account running the test.
        let owner = match crate::system::account::server_account(&["nobody"], "a test").unwrap() {
            Some(nobody) => nobody.owner(),
            None => Owner {
                uid: crate::dir::euid(),
                gid: rustix::process::getegid().as_raw(),
            },
        };
        hand_socket(&dir, &name, &bound, owner).unwrap();
        let now = dir.entry_at(&name).unwrap().unwrap();
        assert_eq!((now.uid, now.mode), (owner.uid, 0o600));
        // Another socket at the name is left as it is.
        std::fs::remove_file(&path).unwrap();
        let _other = std::os::unix::net::UnixListener::bind(&path).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = hand_socket(&dir, &name, &bound, owner).unwrap_err();
        assert!(e.to_string().contains("no longer the socket"), "{e}");
        assert_eq!(dir.entry_at(&name).unwrap().unwrap().mode, 0o644);
    }
}
