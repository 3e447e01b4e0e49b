//! A minimal HTTP/1.1 client for the timed loops: a request encoded once before
//! the loop ([`HttpRequest`]), the response read into one buffer made before it and
//! its header parsed in place by `httparse` ([`HttpConn::exchange`]). Inside the loop
//! a request costs a write, a read or a few, and a header parse: no allocation.
//!
//! It reads what the proxy experiments need and no more: a status and a
//! `Content-Length` body, kept open or closed as the response says. A chunked
//! response is refused, named, rather than read: nginx and sockbench's app server
//! both send a length for a body they know.
//!
//! Every wait is bounded as a whole and sees Ctrl-C, as the Redis client's are
//! (`wait.rs`): reads and writes block at most a slice, and the clock is read only
//! when a slice ends empty or a response needs a further read.

use crate::transport::{Conn, Connector, Endpoint, TlsVersion};
use crate::wait::{self, Patience};
use anyhow::{bail, Context, Result};
use std::io::{self, Read, Write};
use std::time::Duration;

pub(crate) use crate::wait::LIMIT;

/// Room for a response's status line and headers (nginx sends about 250 bytes).
const HEAD_ROOM: usize = 16 << 10;
/// The most headers one response may have.
const MAX_HEADERS: usize = 32;
/// The largest buffer made for a body: a larger body is read through it in parts.
const MAX_BUFFER: usize = 4 << 20;

/// What each request asks the app server for: a body of a size from sockbench's
/// own app server or gunicorn (`GET /?size=N`), or a path of the user's app,
/// whatever its body (`--path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    Size(u64),
    Path(String),
}

/// The buffer made for a response of the user's app, whose body's size is not
/// known before: a larger body is read through it in parts.
const USER_BODY_ROOM: usize = 64 << 10;

impl Ask {
    /// What the case with `params` asks for: its path when it has one, else its
    /// size.
    pub fn of(params: &crate::results::Params) -> Result<Ask> {
        match params.get(super::keys::PATH) {
            Some(path) => Ok(Ask::Path(path)),
            None => params
                .get(super::keys::SIZE)
                .map(Ask::Size)
                .context("experiment parameter missing"),
        }
    }

    /// The request that asks it, with `Connection: close` when the connection is
    /// not to be kept.
    pub fn request(&self, keep_alive: bool) -> Result<HttpRequest> {
        match self {
            Ask::Size(size) => HttpRequest::get(HOST, *size as usize, keep_alive),
            Ask::Path(path) => HttpRequest::get_path(HOST, path, keep_alive),
        }
    }

    /// The body a client's buffer holds in one piece.
    pub fn body_room(&self) -> usize {
        match self {
            Ask::Size(size) => *size as usize,
            Ask::Path(_) => USER_BODY_ROOM,
        }
    }
}

/// The Host every request names: nginx and the app servers answer any.
pub(crate) const HOST: &str = "127.0.0.1";

/// One request, encoded once: `GET /?size=N` (or the user's path) with its
/// `Host`, and `Connection: close` when the connection is not to be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpRequest {
    bytes: Vec<u8>,
    keep_alive: bool,
    /// The body asked for, which a 2xx response must have; `None`: any (a user's
    /// path).
    size: Option<usize>,
}

impl HttpRequest {
    /// `GET /?size=SIZE HTTP/1.1` to `host` (a name or `ADDRESS:PORT`, visible
    /// ASCII only).
    pub fn get(host: &str, size: usize, keep_alive: bool) -> Result<HttpRequest> {
        let mut request = HttpRequest::get_path(host, &format!("/?size={size}"), keep_alive)?;
        request.size = Some(size);
        Ok(request)
    }

    /// `GET PATH HTTP/1.1` to `host`, whatever the body of its answer. `path`
    /// starts with `/` and is visible ASCII (a query may follow it).
    pub fn get_path(host: &str, path: &str, keep_alive: bool) -> Result<HttpRequest> {
        if host.is_empty() || !host.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("the Host of an HTTP request must be visible ASCII, not {host:?}");
        }
        check_path(path).map_err(|why| anyhow::anyhow!(why))?;
        let close = if keep_alive {
            ""
        } else {
            "Connection: close\r\n"
        };
        Ok(HttpRequest {
            bytes: format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{close}\r\n").into_bytes(),
            keep_alive,
            size: None,
        })
    }

    /// The request as sent.
    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Why `path` cannot be a request's target, if it cannot: it must start with `/`
/// and be 1 to 2048 visible ASCII characters (no space, no control character).
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err(format!("the path must start with '/', not {path:?}"));
    }
    if path.len() > 2048 || !path.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "the path must be at most 2048 visible ASCII characters (no space; encode one \
             as %20), not {path:?}"
        ));
    }
    Ok(())
}

/// The status code of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Status(pub u16);

impl Status {
    /// 2xx: the request did what was asked.
    pub fn is_success(self) -> bool {
        (200..300).contains(&self.0)
    }
}

/// Why an exchange did not end with a whole response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    /// The server closed the connection: before a whole response, or before this
    /// request because its last response said `Connection: close`. A new
    /// connection may go on.
    #[error(transparent)]
    Closed(io::Error),
    /// Anything else: a wait over the limit (kind `TimedOut`), Ctrl-C (kind
    /// `Interrupted`), a response this client does not read.
    #[error(transparent)]
    Failed(io::Error),
}

/// What the header of a response says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    status: Status,
    /// Bytes of the status line and headers, blank line included.
    length: usize,
    body: usize,
    /// The server closes the connection after this response.
    closing: bool,
}

/// A connection to an HTTP server with its response buffer.
pub(crate) struct HttpConn {
    conn: Conn,
    buf: Vec<u8>,
    /// False once the server closed, or said it closes, the connection.
    open: bool,
    /// How long the exchange under way may still wait for the server.
    patience: Patience,
    /// `the HTTP server at …`, for the errors that say what it did.
    server: String,
}

impl HttpConn {
    /// A client on `conn` to the server at `at`, whose buffer holds a response with
    /// a body of `body_bytes` in one piece (up to 4 MiB; a larger body is read in
    /// parts), allocated and touched here. Reads and writes on `conn` are made to
    /// block a slice (`wait::SLICE`) at most; one exchange may wait `limit`.
    pub fn new(
        conn: Conn,
        body_bytes: usize,
        at: &Endpoint,
        limit: Duration,
    ) -> io::Result<HttpConn> {
        conn.set_read_timeout(Some(wait::SLICE))?;
        conn.set_write_timeout(Some(wait::SLICE))?;
        let size = body_bytes.min(MAX_BUFFER) + HEAD_ROOM;
        let mut buf = crate::harness::measure::sample_buffer::<u8>(size);
        buf.resize(size, 0);
        Ok(HttpConn {
            conn,
            buf,
            open: true,
            patience: Patience::new(limit),
            server: format!("the HTTP server at {at}"),
        })
    }

    /// False once the server closed the connection or said it would (its last
    /// response had `Connection: close`, or the request asked for it): the next
    /// exchange needs a new connection ([`HttpConn::swap`]).
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Puts `conn` in place of the client's connection, keeping the buffer (for a
    /// timed loop of new connections: no allocation), and returns the old one.
    /// `conn` must block a slice at most in a read or write, as
    /// [`Connector::connect_sliced`] makes it.
    #[inline]
    pub fn swap(&mut self, conn: Conn) -> Conn {
        self.open = true;
        std::mem::replace(&mut self.conn, conn)
    }

    /// Sends `request` and reads its whole response; its status, whatever it is
    /// (a 5xx is the caller's to count, not an error). A 2xx response with a body
    /// of another size than the one asked for is an error.
    #[inline]
    pub fn exchange(&mut self, request: &HttpRequest) -> Result<Status, HttpError> {
        if !self.open {
            return Err(self.gone());
        }
        let done = self.send(request).and_then(|()| self.receive());
        self.ended(request, done)
    }

    /// An exchange that ended with `done`: its status, or why it failed; whether
    /// the connection stays open.
    #[inline]
    fn ended(
        &mut self,
        request: &HttpRequest,
        done: Result<Head, HttpError>,
    ) -> Result<Status, HttpError> {
        match done {
            Ok(head)
                if head.status.is_success() && request.size.is_some_and(|s| head.body != s) =>
            {
                self.open = false;
                Err(self.failed(format!(
                    "answered {} with a body of {} bytes where {} were asked for",
                    head.status.0,
                    head.body,
                    request.size.unwrap_or_default()
                )))
            }
            Ok(head) => {
                self.open = !head.closing && request.keep_alive;
                Ok(head.status)
            }
            Err(e) => {
                self.open = false;
                Err(e)
            }
        }
    }

    /// After a response that ends the connection (the request asked for
    /// `Connection: close`, or the response said it): waits until the server
    /// closes it, as `ab` without `-k` reads until the server's close. A byte
    /// after the response is an error; the wait is the exchange's, bounded as its
    /// reads are.
    #[inline]
    pub fn until_closed(&mut self) -> Result<(), HttpError> {
        loop {
            match self.conn.read(&mut self.buf) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    return Err(self.failed(format!(
                        "sent {n} bytes after a response that ended the connection"
                    )))
                }
                Err(e) if wait::slice_ended(&e) => {
                    let server = &self.server;
                    self.patience
                        .check(|| {
                            format!("{server} did not close the connection after its response")
                        })
                        .map_err(HttpError::Failed)?;
                }
                Err(e) => return Err(self.closed(e)),
            }
        }
    }

    /// The connection, for a check of who answers on it.
    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// The socket, for a client that waits on many connections at once.
    pub fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.conn.as_raw_fd()
    }

    /// Sends `request` without reading its response ([`HttpConn::finish`] reads
    /// it), for a client that has a request out on many connections at once; as
    /// [`HttpConn::exchange`] otherwise.
    #[inline]
    pub fn start(&mut self, request: &HttpRequest) -> Result<(), HttpError> {
        if !self.open {
            return Err(self.gone());
        }
        self.send(request).inspect_err(|_| self.open = false)
    }

    /// Reads the whole response to `request`, sent by [`HttpConn::start`]; its
    /// status, as [`HttpConn::exchange`] gives it.
    #[inline]
    pub fn finish(&mut self, request: &HttpRequest) -> Result<Status, HttpError> {
        let done = self.receive();
        self.ended(request, done)
    }

    /// Writes the whole request, and starts the exchange's wait for the server.
    #[inline]
    fn send(&mut self, request: &HttpRequest) -> Result<(), HttpError> {
        self.patience.restart();
        let bytes = &request.bytes;
        let mut sent = 0;
        loop {
            match self.conn.write(&bytes[sent..]) {
                Ok(n) if sent + n == bytes.len() => return Ok(()),
                Ok(0) => return Err(self.closed(io::ErrorKind::WriteZero.into())),
                Ok(n) => sent += n,
                Err(e) if wait::slice_ended(&e) => {}
                Err(e) => return Err(self.closed(e)),
            }
            let server = &self.server;
            self.patience
                .check(|| format!("{server} read the request too slowly: not all sent"))
                .map_err(HttpError::Failed)?;
        }
    }

    /// Reads one whole response: its header into the buffer, then its body
    /// through it.
    #[inline]
    fn receive(&mut self) -> Result<Head, HttpError> {
        let mut end = 0;
        let head = loop {
            end += self.read_into(end, self.buf.len(), end > 0)?;
            if let Some(head) = parse(&self.buf[..end]).map_err(|e| self.failed(e))? {
                break head;
            }
            if end >= HEAD_ROOM {
                return Err(self.failed(format!("sent a response header over {HEAD_ROOM} bytes")));
            }
        };
        let mut left = head
            .body
            .checked_sub(end - head.length)
            .ok_or_else(|| self.failed("sent more bytes than its Content-Length".into()))?;
        while left > 0 {
            let part = left.min(self.buf.len());
            left -= self.read_into(0, part, true)?;
        }
        Ok(head)
    }

    /// Reads at least one byte into `buf[from..to]`; a `further` read first looks
    /// at Ctrl-C and the clock.
    #[inline]
    fn read_into(&mut self, from: usize, to: usize, further: bool) -> Result<usize, HttpError> {
        if further {
            self.look(true)?;
        }
        loop {
            match self.conn.read(&mut self.buf[from..to]) {
                Ok(0) => return Err(self.closed(io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => return Ok(n),
                Err(e) if wait::slice_ended(&e) => self.look(further || from > 0)?,
                Err(e) => return Err(self.closed(e)),
            }
        }
    }

    /// The error of an exchange on a connection the server closed, or said it would.
    #[cold]
    fn gone(&self) -> HttpError {
        HttpError::Closed(io::Error::new(
            io::ErrorKind::NotConnected,
            format!(
                "{} closed the connection after its last response",
                self.server
            ),
        ))
    }

    /// Whether the response awaited may still be waited for (Ctrl-C, the limit).
    #[cold]
    fn look(&mut self, partial: bool) -> Result<(), HttpError> {
        let server = &self.server;
        self.patience
            .check(|| {
                if partial {
                    format!("{server} sent its response too slowly: not complete")
                } else {
                    format!("{server} did not answer")
                }
            })
            .map_err(HttpError::Failed)
    }

    /// What a failed read or write means: the server closed the connection, or
    /// something else went wrong; the server named either way.
    #[cold]
    fn closed(&self, e: io::Error) -> HttpError {
        use io::ErrorKind::*;
        match e.kind() {
            UnexpectedEof | ConnectionReset | BrokenPipe | ConnectionAborted | WriteZero => {
                HttpError::Closed(io::Error::new(
                    e.kind(),
                    format!(
                        "{} closed the connection before its response was complete",
                        self.server
                    ),
                ))
            }
            kind => HttpError::Failed(io::Error::new(kind, format!("{}: {e}", self.server))),
        }
    }

    /// A response this client does not read, with the server named.
    #[cold]
    fn failed(&self, what: String) -> HttpError {
        HttpError::Failed(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} {what}", self.server),
        ))
    }
}

/// Puts a new connection made by `connector` in place of `client`'s, which the
/// server closed (or said it would): connected as every connection of the
/// client is, within [`LIMIT`], and for a server that closes every connection
/// (gunicorn's sync workers) a part of each request's time, as for any client
/// of such a server. The old connection is closed here.
#[inline]
pub(crate) fn reconnect(connector: &Connector, client: &mut HttpConn) -> Result<(), HttpError> {
    let mut patience = Patience::new(LIMIT);
    let mut waited = || patience.check(|| "the TLS handshake was not complete".into());
    let conn = connector
        .connect_sliced(wait::SLICE, Some(LIMIT), &mut waited)
        .map_err(HttpError::Failed)?;
    drop(client.swap(conn));
    Ok(())
}

/// Opens a connection to `endpoint` for an [`HttpConn`] (not timed): reads and
/// writes block a slice at most, `TCP_NODELAY` on TCP, the connect and a TLS
/// handshake bounded by [`LIMIT`].
pub(crate) fn connect(endpoint: &Endpoint) -> Result<Conn> {
    let connector = Connector::new(endpoint, TlsVersion::V1_3)?;
    let mut patience = Patience::new(LIMIT);
    let mut waited = || patience.check(|| "the TLS handshake was not complete".into());
    connector
        .connect_sliced(wait::SLICE, Some(LIMIT), &mut waited)
        .with_context(|| format!("cannot connect to the HTTP server at {endpoint}"))
}

/// The header at the start of `buf`, once it is whole. The error says what is
/// wrong, to follow the server's name.
fn parse(buf: &[u8]) -> Result<Option<Head>, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let length = match response.parse(buf) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("sent what is not an HTTP/1.x response ({e})")),
    };
    let code = response.code.unwrap_or(0);
    // HTTP/1.0 closes unless the server says it keeps the connection.
    let mut closing = response.version == Some(0);
    let mut body = None;
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            let value = std::str::from_utf8(header.value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or("sent a malformed Content-Length")?;
            if body.is_some_and(|b| b != value) {
                return Err("sent two different Content-Length headers".into());
            }
            body = Some(value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(format!(
                "sent a response with Transfer-Encoding: {} (chunked); sockbench's HTTP client \
                 reads only responses with a Content-Length",
                String::from_utf8_lossy(header.value)
            ));
        } else if name.eq_ignore_ascii_case("connection") {
            for token in header.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    closing = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    closing = false;
                }
            }
        }
    }
    let body = match (code, body) {
        (100..=199, _) => return Err(format!("sent an interim response ({code})")),
        (204 | 304, _) => 0,
        (_, Some(body)) => body,
        (_, None) => return Err(format!("sent a response ({code}) without Content-Length")),
    };
    Ok(Some(Head {
        status: Status(code),
        length,
        body,
        closing,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::time::Instant;

    #[test]
    fn requests_are_encoded_once_with_their_host() {
        let kept = HttpRequest::get("127.0.0.1:8080", 4096, true).unwrap();
        assert_eq!(
            kept.bytes(),
            b"GET /?size=4096 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
        );
        let once = HttpRequest::get("localhost", 0, false).unwrap();
        assert_eq!(
            once.bytes(),
            b"GET /?size=0 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        );
        for bad in ["", "a b", "a\r\nX: y"] {
            assert!(HttpRequest::get(bad, 1, true).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_header_says_its_status_length_and_whether_the_connection_closes() {
        let head = |text: &str| parse(text.as_bytes()).unwrap().unwrap();
        let ok = head("HTTP/1.1 200 OK\r\nServer: x\r\ncontent-length: 12\r\n\r\nbody");
        assert_eq!((ok.status, ok.body, ok.closing), (Status(200), 12, false));
        assert_eq!(ok.length, 50);
        let closing =
            head("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: Close\r\n\r\n");
        assert_eq!((closing.status, closing.closing), (Status(502), true));
        assert!(!closing.status.is_success());
        assert!(head("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n").closing);
        let kept = head("HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n");
        assert!(!kept.closing);
        assert_eq!(head("HTTP/1.1 204 No Content\r\n\r\n").body, 0);
        assert_eq!(parse(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap(), None);
    }

    #[test]
    fn chunked_lengthless_and_malformed_responses_are_refused_by_name() {
        let refused = |text: &str| parse(text.as_bytes()).unwrap_err();
        let chunked = refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert!(
            chunked.contains("chunked") && chunked.contains("Content-Length"),
            "{chunked}"
        );
        let lengthless = refused("HTTP/1.1 200 OK\r\n\r\n");
        assert!(
            lengthless.contains("without Content-Length"),
            "{lengthless}"
        );
        let two = refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
        assert!(two.contains("two different"), "{two}");
        assert!(refused("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n").contains("malformed"));
        assert!(refused("SSH-2.0-OpenSSH\r\n\r\n").contains("not an HTTP/1.x response"));
    }

    /// A server on a Unix socket that answers one connection by `answer`, which
    /// gets the request's bytes; and the endpoint to reach it.
    fn stub(
        answer: impl FnOnce(&mut UnixStream) + Send + 'static,
    ) -> (tempfile::TempDir, Endpoint, std::thread::JoinHandle<()>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stub.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let thread = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            answer(&mut stream);
        });
        let at = format!("unix:{}", path.display()).parse().unwrap();
        (dir, at, thread)
    }

    fn client(at: &Endpoint, limit: Duration) -> HttpConn {
        HttpConn::new(connect(at).unwrap(), 1024, at, limit).unwrap()
    }

    fn get() -> HttpRequest {
        HttpRequest::get("localhost", 2, true).unwrap()
    }

    #[test]
    fn a_server_that_never_answers_ends_the_exchange_within_its_bound() {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (_dir, at, server) = stub(move |_| {
            let _ = wait.recv_timeout(Duration::from_secs(10));
        });
        let mut conn = client(&at, Duration::from_millis(500));
        let started = Instant::now();
        let Err(HttpError::Failed(e)) = conn.exchange(&get()) else {
            panic!("a silent server answered")
        };
        let waited = started.elapsed();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(
            e.to_string().ends_with("did not answer within 0.5 s"),
            "{e}"
        );
        assert!(e.to_string().contains(&at.to_string()), "{e}");
        assert!(waited >= Duration::from_millis(500), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
        drop(done);
        server.join().unwrap();
    }

    #[test]
    fn a_response_a_byte_at_a_time_ends_the_exchange_within_its_bound() {
        let (_dir, at, server) = stub(|s| {
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".repeat(10) {
                if s.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut conn = client(&at, Duration::from_millis(500));
        let started = Instant::now();
        let Err(HttpError::Failed(e)) = conn.exchange(&get()) else {
            panic!("a dripped response was taken")
        };
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(
            e.to_string().contains("sent its response too slowly"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(conn);
        server.join().unwrap();
    }

    #[test]
    fn a_connection_closed_before_the_whole_response_is_told_apart() {
        let (_dir, at, server) = stub(|s| {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        });
        let mut conn = client(&at, LIMIT);
        let Err(HttpError::Closed(e)) = conn.exchange(&get()) else {
            panic!("a cut response was taken")
        };
        assert!(
            e.to_string()
                .contains("closed the connection before its response"),
            "{e}"
        );
        assert!(!conn.is_open());
        server.join().unwrap();
        // Closed before the request: its write finds no reader.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let at: Endpoint = format!("unix:{}", path.display()).parse().unwrap();
        let mut conn = client(&at, LIMIT);
        drop(listener.accept().unwrap());
        let Err(HttpError::Closed(e)) = conn.exchange(&get()) else {
            panic!("a closed connection was used")
        };
        assert!(e.to_string().contains("closed the connection"), "{e}");
    }

    #[test]
    fn a_success_with_another_size_than_asked_is_an_error() {
        let (_dir, at, server) = stub(|s| {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
        });
        let mut conn = client(&at, LIMIT);
        let Err(HttpError::Failed(e)) = conn.exchange(&get()) else {
            panic!("3 bytes taken for 2")
        };
        assert!(
            e.to_string()
                .contains("answered 200 with a body of 3 bytes where 2"),
            "{e}"
        );
        server.join().unwrap();
    }

    #[test]
    fn after_a_closing_response_the_client_waits_for_the_close_bounded() {
        let once = || HttpRequest::get("localhost", 2, false).unwrap();
        let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        // The close comes: the connection is over, and a new one may take its place.
        let (_dir, at, server) = stub(|s| s.write_all(reply).unwrap());
        let mut conn = client(&at, LIMIT);
        assert_eq!(conn.exchange(&once()).unwrap(), Status(200));
        conn.until_closed().unwrap();
        server.join().unwrap();
        // Bytes after the response are not a close (sent apart: bytes that come
        // with the response are more than its Content-Length, refused already).
        let (_dir, at, server) = stub(|s| {
            s.write_all(reply).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
        });
        let mut conn = client(&at, LIMIT);
        assert_eq!(conn.exchange(&once()).unwrap(), Status(200));
        let Err(HttpError::Failed(e)) = conn.until_closed() else {
            panic!("bytes after the response taken for a close")
        };
        assert!(e.to_string().contains("bytes after a response"), "{e}");
        server.join().unwrap();
        // A server that never closes ends the wait within its bound.
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (_dir, at, server) = stub(move |s| {
            s.write_all(reply).unwrap();
            let _ = wait.recv_timeout(Duration::from_secs(10));
        });
        let mut conn = client(&at, Duration::from_millis(500));
        assert_eq!(conn.exchange(&once()).unwrap(), Status(200));
        let started = Instant::now();
        let Err(HttpError::Failed(e)) = conn.until_closed() else {
            panic!("an open connection taken for a close")
        };
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(
            e.to_string().contains("did not close the connection"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(done);
        server.join().unwrap();
    }

    #[test]
    fn connection_close_in_a_response_ends_the_connection_after_it() {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (_dir, at, server) = stub(move |s| {
            s.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
                .unwrap();
            let _ = wait.recv_timeout(Duration::from_secs(10));
        });
        let mut conn = client(&at, LIMIT);
        // A failure status is the caller's to count, not an error.
        assert_eq!(conn.exchange(&get()).unwrap(), Status(503));
        assert!(!conn.is_open());
        // Told without waiting for the server, which keeps the socket open.
        let started = Instant::now();
        let Err(HttpError::Closed(e)) = conn.exchange(&get()) else {
            panic!("a closed connection was used")
        };
        assert!(started.elapsed() < Duration::from_millis(100));
        assert!(e.to_string().contains("after its last response"), "{e}");
        drop(done);
        server.join().unwrap();
    }
}
