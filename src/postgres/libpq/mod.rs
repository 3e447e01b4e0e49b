//! A small safe wrapper over libpq (through `pq-sys`): the same client library psql
//! and pgbench use, so sockbench's figures compare with theirs.
//!
//! Only what the experiments need: connecting (blocking, or step by step with the
//! time of each connection phase), running a query, reading values, and the facts of
//! a connection (server version, TLS in use). Connection parameters are prepared once
//! as C strings ([`ConnParams`]) so a timed loop allocates nothing of its own.

mod nonblocking;
mod params;
mod result;

pub use nonblocking::{wait_any, Step, TxOutcome, Wait};
pub use params::{environment_defaults, parse_conninfo, ConnParams};
use pq_sys as pq;
pub use result::PgResult;
use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;
use std::time::Instant;

/// A libpq failure, with libpq's message on one line.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("{0}")]
    Connect(String),
    #[error("{0}")]
    Query(String),
    #[error("invalid connection string: {0}")]
    Conninfo(String),
}

impl PgError {
    /// True when the server refused the credentials (wrong password, unknown role,
    /// failed peer check).
    pub fn is_auth_failure(&self) -> bool {
        let PgError::Connect(message) = self else {
            return false;
        };
        message.contains("authentication failed") || message.contains("no password supplied")
    }
}

/// libpq's message, trimmed to one line.
fn one_line(raw: *const c_char) -> String {
    if raw.is_null() {
        return "unknown libpq error".into();
    }
    // SAFETY: `raw` is non-null (checked above) and points to a NUL-terminated message
    // libpq owns, copied out before libpq is called again.
    let text = unsafe { CStr::from_ptr(raw) }.to_string_lossy();
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if joined.is_empty() {
        "unknown libpq error".into()
    } else {
        joined
    }
}

/// The longest a step-by-step connection may take before it is given up.
const CONNECT_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Moments at which a connection passed each phase, as observed through libpq's
/// non-blocking connect. A phase libpq did not stop in has the time of the next one.
#[derive(Debug, Clone, Copy)]
pub struct ConnectTimes {
    pub start: Instant,
    /// The socket is connected (TCP handshake done; immediate on a Unix socket).
    pub connected: Instant,
    /// The TLS handshake is done (equal to `connected` without TLS).
    pub tls_done: Instant,
    /// The server accepted the credentials. PostgreSQL holds back its acceptance
    /// until the backend has started, so this is usually also the ready moment.
    pub authenticated: Instant,
    /// The backend is ready for a query.
    pub ready: Instant,
}

/// An open connection; closed on drop.
pub struct Conn {
    raw: NonNull<pq::PGconn>,
}

// A libpq connection may move between threads as long as one thread uses it at a time.
// SAFETY: libpq allows a connection to be used from any thread as long as one thread uses
// it at a time; `Conn` is not `Sync` and is only used through `&self`/`&mut self` by its
// owner.
unsafe impl Send for Conn {}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: `self.raw` is a live connection this value owns; it is finished once,
        // here, and never used after.
        unsafe { pq::PQfinish(self.raw.as_ptr()) };
    }
}

impl Conn {
    /// Connects, blocking, like psql does.
    pub fn connect(params: &ConnParams) -> Result<Conn, PgError> {
        let raw =
            // SAFETY: both arrays hold pointers to NUL-terminated strings owned by `params`
            // and end with a null pointer, as PQconnectdbParams requires; they outlive the
            // call.
            unsafe { pq::PQconnectdbParams(params.keywords.as_ptr(), params.values.as_ptr(), 0) };
        Conn::checked(raw)
    }

    /// Connects through `PQconnectStartParams` and `PQconnectPoll`, noting when each
    /// phase ends. Nothing here allocates besides libpq itself.
    pub fn connect_timed(params: &ConnParams) -> Result<(Conn, ConnectTimes), PgError> {
        use pq::ConnStatusType as S;
        use pq::PostgresPollingStatusType as P;
        let start = Instant::now();
        // SAFETY: both arrays hold pointers to NUL-terminated strings owned by `params` and
        // end with a null pointer, as PQconnectStartParams requires; they outlive the call.
        let raw = unsafe {
            pq::PQconnectStartParams(params.keywords.as_ptr(), params.values.as_ptr(), 0)
        };
        let conn = Conn::wrap(raw)?;
        let mut times = ConnectTimes {
            start,
            connected: start,
            tls_done: start,
            authenticated: start,
            ready: start,
        };
        let (mut connected, mut in_tls, mut tls_done, mut authenticated) =
            (false, false, false, false);
        let mut poll = P::PGRES_POLLING_WRITING;
        loop {
            // SAFETY: `conn.raw` is a live connection `conn` owns.
            let status = unsafe { pq::PQstatus(conn.raw.as_ptr()) };
            let now = Instant::now();
            if status == S::CONNECTION_BAD {
                return Err(PgError::Connect(conn.error_message()));
            }
            if now - start > CONNECT_LIMIT {
                return Err(PgError::Connect(format!(
                    "the connection was not ready within {} s",
                    CONNECT_LIMIT.as_secs()
                )));
            }
            if !connected && status != S::CONNECTION_STARTED && status != S::CONNECTION_NEEDED {
                connected = true;
                times.connected = now;
            }
            let past_startup = matches!(
                status,
                S::CONNECTION_AWAITING_RESPONSE | S::CONNECTION_AUTH_OK | S::CONNECTION_OK
            ) || poll == P::PGRES_POLLING_OK;
            if status == S::CONNECTION_SSL_STARTUP {
                in_tls = true;
            } else if past_startup && !tls_done {
                tls_done = true;
                times.tls_done = if in_tls { now } else { times.connected };
            }
            if !authenticated && (status == S::CONNECTION_AUTH_OK || poll == P::PGRES_POLLING_OK) {
                authenticated = true;
                times.authenticated = now;
            }
            match poll {
                P::PGRES_POLLING_OK => {
                    times.ready = now;
                    return Ok((conn, times));
                }
                P::PGRES_POLLING_FAILED => return Err(PgError::Connect(conn.error_message())),
                P::PGRES_POLLING_READING => conn.wait(libc::POLLIN)?,
                P::PGRES_POLLING_WRITING => conn.wait(libc::POLLOUT)?,
                P::PGRES_POLLING_ACTIVE => {}
            }
            // SAFETY: `conn.raw` is a live connection `conn` owns.
            poll = unsafe { pq::PQconnectPoll(conn.raw.as_ptr()) };
        }
    }

    /// Takes ownership of a new connection and silences its notices: libpq would
    /// print the server's warnings (e.g. on shutdown) on stderr, in the middle of
    /// sockbench's output. Errors still arrive as results and error messages.
    fn wrap(raw: *mut pq::PGconn) -> Result<Conn, PgError> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| PgError::Connect("libpq could not allocate a connection".into()))?;
        // SAFETY: `raw` is non-null (checked above) and freshly allocated by libpq; the
        // processor is a plain function that ignores its arguments.
        unsafe {
            pq::PQsetNoticeProcessor(raw.as_ptr(), Some(ignore_notice), std::ptr::null_mut())
        };
        Ok(Conn { raw })
    }

    fn checked(raw: *mut pq::PGconn) -> Result<Conn, PgError> {
        let conn = Conn::wrap(raw)?;
        // SAFETY: `conn.raw` is a live connection `conn` owns.
        if unsafe { pq::PQstatus(conn.raw.as_ptr()) } == pq::ConnStatusType::CONNECTION_OK {
            Ok(conn)
        } else {
            Err(PgError::Connect(conn.error_message()))
        }
    }

    /// Waits (at most 30 s) for the connection's socket to become ready for `events`.
    fn wait(&self, events: libc::c_short) -> Result<(), PgError> {
        let mut fd = libc::pollfd {
            // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
            fd: unsafe { pq::PQsocket(self.raw.as_ptr()) },
            events,
            revents: 0,
        };
        loop {
            // SAFETY: `fd` is a valid pollfd on the stack and 1 is the number of entries
            // behind the pointer.
            match unsafe { libc::poll(&mut fd, 1, 30_000) } {
                0 => {
                    return Err(PgError::Connect(
                        "the server did not answer within 30 s".into(),
                    ))
                }
                n if n > 0 => return Ok(()),
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => {
                    return Err(PgError::Connect(
                        std::io::Error::last_os_error().to_string(),
                    ))
                }
            }
        }
    }

    fn error_message(&self) -> String {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        one_line(unsafe { pq::PQerrorMessage(self.raw.as_ptr()) })
    }

    /// Runs one query with the simple query protocol and checks it succeeded.
    pub fn exec(&self, sql: &CStr) -> Result<PgResult, PgError> {
        // SAFETY: `self.raw` is a live connection this value owns and `sql` is
        // NUL-terminated and outlives the call.
        let raw = unsafe { pq::PQexec(self.raw.as_ptr(), sql.as_ptr()) };
        let Some(raw) = NonNull::new(raw) else {
            return Err(PgError::Query(self.error_message()));
        };
        let result = PgResult { raw };
        // SAFETY: `raw` is a non-null result just returned by PQexec, owned by `result`.
        match unsafe { pq::PQresultStatus(raw.as_ptr()) } {
            pq::ExecStatusType::PGRES_TUPLES_OK | pq::ExecStatusType::PGRES_COMMAND_OK => {
                Ok(result)
            }
            // SAFETY: `raw` is a non-null result owned by `result`; the message is copied
            // out before `result` is dropped.
            _ => Err(PgError::Query(one_line(unsafe {
                pq::PQresultErrorMessage(raw.as_ptr())
            }))),
        }
    }

    /// True when the server asked for a password and one was sent (so not trust,
    /// peer or a certificate).
    pub fn used_password(&self) -> bool {
        // SAFETY: `raw` is an open connection for as long as `self` lives.
        unsafe { pq::PQconnectionUsedPassword(self.raw.as_ptr()) == 1 }
    }

    /// The first value of a one-value query, as text.
    pub fn query_value(&self, sql: &str) -> Result<String, PgError> {
        let sql = CString::new(sql).map_err(|e| PgError::Query(e.to_string()))?;
        let result = self.exec(&sql)?;
        Ok(String::from_utf8_lossy(result.value(0, 0).unwrap_or_default()).into_owned())
    }

    /// The TLS protocol and cipher when the connection is encrypted.
    pub fn tls(&self) -> Option<(String, String)> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        if unsafe { pq::PQsslInUse(self.raw.as_ptr()) } == 0 {
            return None;
        }
        let attribute = |name: &CStr| {
            // SAFETY: `self.raw` is a live connection and `name` is NUL-terminated; the
            // result is checked for null.
            let value = unsafe { pq::PQsslAttribute(self.raw.as_ptr(), name.as_ptr()) };
            if value.is_null() {
                "unknown".to_string()
            } else {
                // SAFETY: `value` is non-null and points to a NUL-terminated string libpq
                // owns for the life of the connection; it is copied out at once.
                unsafe { CStr::from_ptr(value) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        Some((attribute(c"protocol"), attribute(c"cipher")))
    }

    /// True when the connection runs over a Unix socket.
    pub fn over_unix_socket(&self) -> bool {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        let host = unsafe { pq::PQhost(self.raw.as_ptr()) };
        !host.is_null() && {
            // SAFETY: `host` is non-null and points to a NUL-terminated string libpq owns
            // for the life of the connection.
            let host = unsafe { CStr::from_ptr(host) }.to_bytes();
            host.is_empty() || host[0] == b'/' || host[0] == b'@'
        }
    }
}

unsafe extern "C" fn ignore_notice(_arg: *mut std::ffi::c_void, _message: *const c_char) {}
