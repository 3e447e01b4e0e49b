//! A small safe wrapper over libpq (through `pq-sys`): the same client library psql
//! and pgbench use, so sockbench's figures compare with theirs.
//!
//! Only what the experiments need: connecting (step by step, with the time of each
//! connection phase when asked), running a query (simple, extended or prepared, as
//! pgbench's `-M`), reading values, and the facts of
//! a connection (server version, TLS in use). Connection parameters are prepared once
//! as C strings ([`ConnParams`]) so a timed loop allocates nothing of its own. No call
//! here waits on the server without a bound or past a Ctrl-C (`wait.rs` says how),
//! except `ConnParams::ping` (`PQpingParams`, bounded by `connect_timeout` only).

mod nonblocking;
mod params;
mod result;
mod wait;

pub use nonblocking::{wait_any, Protocol, Step, TxOutcome, Wait};
pub use params::{environment_defaults, is_keyword, parse_conninfo, ConnParams};
use pq_sys as pq;
pub use result::PgResult;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::NonNull;
use std::time::Instant;
pub use wait::OP_LIMIT;

/// A libpq failure, with libpq's message on one line.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("{0}")]
    Connect(String),
    #[error("{0}")]
    Query(String),
    #[error("invalid connection string: {0}")]
    Conninfo(String),
    /// The server did not answer within [`wait::OP_LIMIT`]; the query was cancelled.
    #[error(
        "the PostgreSQL server at {0} did not answer within {limit} s (stopped or stalled); \
         sockbench cancelled the query and closed the connection; the experiments that \
         finished before are kept",
        limit = wait::OP_LIMIT.as_secs()
    )]
    Stalled(String),
    /// The connection broke under a query: the backend or the server is gone.
    #[error(
        "the PostgreSQL server at {0} closed the connection (its backend or the server \
         exited or was killed): {1}"
    )]
    Lost(String, String),
    #[error("interrupted")]
    Interrupted(#[source] crate::error::Interrupted),
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

    /// libpq's account of a connection that found no server (refused, or no
    /// socket file), without its hint; `None` for any other failure. libpq says so
    /// only in words: "… failed: Connection refused" and "Is the server running …".
    pub fn unreachable(&self) -> Option<&str> {
        let PgError::Connect(message) = self else {
            return None;
        };
        let (what, _hint) = message.split_once("; Is the server running")?;
        Some(what)
    }
}

/// What a command that starts a COPY gets: sockbench neither sends COPY data nor reads
/// it, and a connection in a COPY state answers nothing else.
pub const COPY_REFUSED: &str = "the command started a COPY (TO STDOUT or FROM STDIN), whose \
    data sockbench neither sends nor reads; take COPY out of the script";

/// True for a result that puts the connection in a COPY state: libpq then hands out
/// the same result again and again, and the connection is good for nothing else.
fn starts_copy(status: pq::ExecStatusType) -> bool {
    use pq::ExecStatusType as E;
    matches!(
        status,
        E::PGRES_COPY_IN | E::PGRES_COPY_OUT | E::PGRES_COPY_BOTH
    )
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
pub struct PgConn {
    raw: NonNull<pq::PGconn>,
    /// OpenSSL's `SSL*` of the connection once it is open, null without TLS.
    ssl: *const c_void,
    /// A result of the command being received failed (its later results may still
    /// be on their way: see `nonblocking::receive`).
    failed: std::cell::Cell<bool>,
}

// A libpq connection may move between threads as long as one thread uses it at a time.
// SAFETY: libpq allows a connection to be used from any thread as long as one thread uses
// it at a time; `PgConn` is not `Sync` and is only used through `&self`/`&mut self` by its
// owner.
unsafe impl Send for PgConn {}

impl Drop for PgConn {
    fn drop(&mut self) {
        // SAFETY: `self.raw` is a live connection this value owns; it is finished once,
        // here, and never used after.
        unsafe { pq::PQfinish(self.raw.as_ptr()) };
    }
}

impl PgConn {
    /// Connects, like psql does, but never waiting longer than [`wait::OP_LIMIT`]
    /// or past a Ctrl-C.
    pub fn connect(params: &ConnParams) -> Result<PgConn, PgError> {
        PgConn::connect_timed(params).map(|(conn, _)| conn)
    }

    /// Connects through `PQconnectStartParams` and `PQconnectPoll`, noting when each
    /// phase ends. Nothing here allocates besides libpq itself.
    pub fn connect_timed(params: &ConnParams) -> Result<(PgConn, ConnectTimes), PgError> {
        use pq::ConnStatusType as S;
        use pq::PostgresPollingStatusType as P;
        let start = Instant::now();
        // SAFETY: both arrays hold pointers to NUL-terminated strings owned by `params` and
        // end with a null pointer, as PQconnectStartParams requires; they outlive the call.
        let raw = unsafe {
            pq::PQconnectStartParams(params.keywords.as_ptr(), params.values.as_ptr(), 0)
        };
        let mut conn = PgConn::wrap(raw)?;
        let mut budget = wait::Slices::new();
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
                    conn.ssl = conn.ssl_struct();
                    return Ok((conn, times));
                }
                P::PGRES_POLLING_FAILED => return Err(PgError::Connect(conn.error_message())),
                P::PGRES_POLLING_READING => {
                    // As libpq does: what OpenSSL holds already needs no wait.
                    conn.ssl = conn.ssl_struct();
                    if !conn.tls_pending() {
                        conn.wait_for(libc::POLLIN, &mut budget)?;
                    }
                }
                P::PGRES_POLLING_WRITING => conn.wait_for(libc::POLLOUT, &mut budget)?,
                P::PGRES_POLLING_ACTIVE => {}
            }
            // SAFETY: `conn.raw` is a live connection `conn` owns.
            poll = unsafe { pq::PQconnectPoll(conn.raw.as_ptr()) };
        }
    }

    /// Takes ownership of a new connection and silences its notices: libpq would
    /// print the server's warnings (e.g. on shutdown) on stderr, in the middle of
    /// sockbench's output. Errors still arrive as results and error messages.
    fn wrap(raw: *mut pq::PGconn) -> Result<PgConn, PgError> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| PgError::Connect("libpq could not allocate a connection".into()))?;
        // SAFETY: `raw` is non-null (checked above) and freshly allocated by libpq; the
        // processor is a plain function that ignores its arguments.
        unsafe {
            pq::PQsetNoticeProcessor(raw.as_ptr(), Some(ignore_notice), std::ptr::null_mut())
        };
        Ok(PgConn {
            raw,
            ssl: std::ptr::null(),
            failed: std::cell::Cell::new(false),
        })
    }

    fn error_message(&self) -> String {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        one_line(unsafe { pq::PQerrorMessage(self.raw.as_ptr()) })
    }

    /// Runs one query with the simple query protocol and checks it succeeded: like
    /// `PQexec` (the last result is returned, an error result first), with every wait
    /// bounded (see `wait.rs`).
    pub fn exec(&self, sql: &CStr) -> Result<PgResult, PgError> {
        self.send(sql)?;
        self.collect()
    }

    /// The same with the extended query protocol (`PQsendQueryParams`, an unnamed
    /// statement each time), `params` as text.
    pub fn exec_params(&self, sql: &CStr, params: &[*const c_char]) -> Result<PgResult, PgError> {
        self.send_params(sql, params)?;
        self.collect()
    }

    /// Prepares `sql` as the statement `name` on this connection (`PQsendPrepare`).
    pub fn prepare(&self, name: &CStr, sql: &CStr) -> Result<PgResult, PgError> {
        self.send_prepare(name, sql)?;
        self.collect()
    }

    /// Runs the prepared statement `name` (`PQsendQueryPrepared`).
    pub fn exec_prepared(
        &self,
        name: &CStr,
        params: &[*const c_char],
    ) -> Result<PgResult, PgError> {
        self.send_prepared(name, params)?;
        self.collect()
    }

    /// Waits for the results of what was sent, like `PQexec` does.
    fn collect(&self) -> Result<PgResult, PgError> {
        let mut budget = wait::Slices::new();
        let mut kept: Option<PgResult> = None;
        loop {
            self.wait_results(&mut budget)?;
            // SAFETY: `self.raw` is a live connection this value owns; the results are
            // complete, so PQgetResult does not wait.
            let Some(raw) = NonNull::new(unsafe { pq::PQgetResult(self.raw.as_ptr()) }) else {
                break;
            };
            let result = PgResult { raw };
            if starts_copy(result.status()) {
                return Err(PgError::Query(COPY_REFUSED.into()));
            }
            if kept.as_ref().is_none_or(|k| k.succeeded()) {
                kept = Some(result);
            }
        }
        match kept {
            None => Err(self.lost()),
            Some(result) if result.succeeded() => Ok(result),
            Some(result) => Err(PgError::Query(result.error_message())),
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

    /// True when the session is outside any transaction block and ready
    /// (`PQtransactionStatus` is `PQTRANS_IDLE`).
    pub fn idle(&self) -> bool {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        let status = unsafe { pq::PQtransactionStatus(self.raw.as_ptr()) };
        status == pq::PGTransactionStatusType::PQTRANS_IDLE
    }

    /// True when the connection runs over a Unix socket, from the socket's own
    /// address family (what libpq reached, whatever `host` and `hostaddr` said).
    pub fn over_unix_socket(&self) -> bool {
        self.socket_family() == Some(libc::AF_UNIX)
    }

    /// The account at the other end of the connection when it runs over a Unix
    /// socket (`SO_PEERCRED`): the server's own.
    pub fn peer_uid(&self) -> Option<u32> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        let fd = unsafe { pq::PQsocket(self.raw.as_ptr()) };
        if fd < 0 || !self.over_unix_socket() {
            return None;
        }
        // SAFETY: `fd` is the connection's open socket, which libpq keeps open while
        // `self` lives; the borrow ends within this call.
        let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        crate::system::peers::socket_peer(socket)
            .ok()
            .map(|p| p.uid)
    }

    /// The process on this machine that serves this connection, when sockbench
    /// can tell: the backend whose PID the server gave at startup, checked to be
    /// at the other end of the socket. Over a Unix socket it must be a child of the
    /// process listening there (`SO_PEERCRED` names the postmaster); over TCP it
    /// must hold the socket's other end. `None` for a server elsewhere, in another
    /// PID or network namespace, or behind a pooler (whose PID is not a process).
    pub fn serving_process(&self) -> Option<u32> {
        let backend = u32::try_from(self.backend_pid()).ok().filter(|&p| p > 0)?;
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        let fd = unsafe { pq::PQsocket(self.raw.as_ptr()) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is the connection's open socket, which libpq keeps open while
        // `self` lives; the borrow ends within this call.
        let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let ours = if self.over_unix_socket() {
            let listener = crate::system::peers::socket_peer(socket).ok()?.pid;
            crate::cpu::proc::parent(backend) == Some(listener)
        } else {
            crate::system::peers::tcp_peer_inode(socket)
                .is_some_and(|inode| crate::system::peers::holds(backend, inode))
        };
        ours.then_some(backend)
    }

    /// The address family of the connection's socket (`AF_UNIX`, `AF_INET`,
    /// `AF_INET6`), from `getsockname`.
    pub fn socket_family(&self) -> Option<libc::c_int> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        let fd = unsafe { pq::PQsocket(self.raw.as_ptr()) };
        if fd < 0 {
            return None;
        }
        // SAFETY: an all-zero sockaddr_storage is a valid value of this plain C struct.
        let mut address: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut length = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: `fd` is the connection's open socket; `address` and `length` are valid
        // for writing, and `length` holds the size of `address`.
        let done = unsafe {
            libc::getsockname(
                fd,
                (&mut address as *mut libc::sockaddr_storage).cast(),
                &mut length,
            )
        };
        (done == 0).then_some(libc::c_int::from(address.ss_family))
    }
}

impl PgConn {
    /// The host libpq reached: a socket directory (or `@name`) over a Unix socket,
    /// else the host name or address (`PQhost`).
    pub fn host(&self) -> Option<String> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        self.text(unsafe { pq::PQhost(self.raw.as_ptr()) })
    }

    /// The user the connection logged in as (`PQuser`).
    pub fn user(&self) -> Option<String> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        self.text(unsafe { pq::PQuser(self.raw.as_ptr()) })
    }

    /// The database of the connection (`PQdb`).
    pub fn database(&self) -> Option<String> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        self.text(unsafe { pq::PQdb(self.raw.as_ptr()) })
    }

    /// The port libpq reached (`PQport`).
    pub fn port(&self) -> Option<String> {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        self.text(unsafe { pq::PQport(self.raw.as_ptr()) })
    }

    /// A parameter the server reported at startup (`PQparameterStatus`), such as
    /// `server_version` or `application_name`.
    pub fn parameter(&self, name: &CStr) -> Option<String> {
        // SAFETY: `self.raw` is a live connection and `name` is NUL-terminated.
        self.text(unsafe { pq::PQparameterStatus(self.raw.as_ptr(), name.as_ptr()) })
    }

    /// The process ID the server gave in its BackendKeyData (`PQbackendPID`); a
    /// pooler in between gives its own number, not the backend's.
    pub fn backend_pid(&self) -> i32 {
        // SAFETY: `self.raw` is a live connection this value owns, not yet finished.
        unsafe { pq::PQbackendPID(self.raw.as_ptr()) }
    }

    /// A string libpq owns for the life of the connection, copied; `None` for null
    /// or empty.
    fn text(&self, value: *const c_char) -> Option<String> {
        if value.is_null() {
            return None;
        }
        // SAFETY: `value` is non-null and points to a NUL-terminated string libpq owns
        // for the life of the connection, which `&self` keeps open; copied at once.
        let text = unsafe { CStr::from_ptr(value) }.to_string_lossy();
        (!text.is_empty()).then(|| text.into_owned())
    }
}

unsafe extern "C" fn ignore_notice(_arg: *mut std::ffi::c_void, _message: *const c_char) {}
