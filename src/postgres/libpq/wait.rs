//! Every wait on a server, bounded and interruptible.
//!
//! libpq's blocking calls (`PQexec`, `PQconnectdbParams`) wait in `poll(2)` with no
//! time limit, and a Ctrl-C cannot reach them: a stopped or stalled backend hung the
//! run. So sockbench never lets libpq wait. It sends with `PQsendQuery` (or starts
//! a connection with `PQconnectStartParams`) and waits on the socket itself, in
//! slices of [`SLICE`]: after each empty slice it checks Ctrl-C, and after
//! [`OP_LIMIT`] of them the operation is given up: the query is cancelled
//! (`PQcancel`, on a thread of its own, since it waits for the postmaster) and the
//! connection is closed by its owner.
//!
//! Why this and not a watchdog thread around a blocking `PQexec`: the wait here is
//! the very `poll(2)` that `PQexec` makes, with a timeout instead of none, followed
//! by the same `recv(2)` (`PQconsumeInput`); the timed loops gain no system call,
//! no clock read and no shared-memory write per query (the slices are counted, not
//! timed, and only when one ends empty). A watchdog would need the loop to publish
//! its progress on every query, and a second thread to break the connection from
//! outside. Data OpenSSL has already read but not handed over is looked for before
//! every wait, as libpq does, or a TLS connection would sit a whole slice on it.

use super::{pq, PgConn, PgError};
use std::time::Duration;

/// The longest one operation (a connection, a query and its results) may wait for
/// the server, like the socket experiments' `IO_TIMEOUT`.
pub const OP_LIMIT: Duration = Duration::from_secs(10);
/// How long one `poll(2)` waits before Ctrl-C is checked again.
const SLICE: Duration = Duration::from_millis(100);
const SLICES: u32 = (OP_LIMIT.as_millis() / SLICE.as_millis()) as u32;

extern "C" {
    // From the OpenSSL that libpq uses (the same library sockbench links).
    fn SSL_pending(ssl: *const std::ffi::c_void) -> libc::c_int;
}

/// Counts the empty slices of one operation.
pub(super) struct Slices {
    empty: u32,
}

impl Slices {
    pub(super) fn new() -> Slices {
        Slices { empty: 0 }
    }
}

impl PgConn {
    /// Waits until the socket is ready for `events`, spending from `budget`; an
    /// error when the budget is spent (the server stalled) or on Ctrl-C.
    pub(super) fn wait_for(
        &self,
        events: libc::c_short,
        budget: &mut Slices,
    ) -> Result<(), PgError> {
        let mut fd = libc::pollfd {
            fd: self.socket(),
            events,
            revents: 0,
        };
        let slice_ms = SLICE.as_millis() as libc::c_int;
        loop {
            // SAFETY: `fd` is a valid pollfd on the stack and 1 is the number of entries
            // behind the pointer.
            match unsafe { libc::poll(&mut fd, 1, slice_ms) } {
                n if n > 0 => return Ok(()),
                n if n < 0
                    && std::io::Error::last_os_error().kind()
                        != std::io::ErrorKind::Interrupted =>
                {
                    return Err(PgError::Query(std::io::Error::last_os_error().to_string()))
                }
                // An empty slice, or a signal: see whether to go on.
                _ => {
                    if crate::interrupt::interrupted() {
                        return Err(self.abandon(PgError::Interrupted(Default::default())));
                    }
                    budget.empty += 1;
                    if budget.empty >= SLICES {
                        return Err(self.abandon(PgError::Stalled(self.server())));
                    }
                }
            }
        }
    }

    /// Waits until the results of the query sent last are complete (libpq would
    /// not block in `PQgetResult`).
    pub(super) fn wait_results(&self, budget: &mut Slices) -> Result<(), PgError> {
        let raw = self.raw.as_ptr();
        // SAFETY: `raw` is the live connection this value owns.
        while unsafe { pq::PQisBusy(raw) } != 0 {
            if !self.tls_pending() {
                self.wait_for(libc::POLLIN, budget)?;
            }
            // SAFETY: `raw` is the live connection this value owns.
            if unsafe { pq::PQconsumeInput(raw) } == 0 {
                return Err(self.lost());
            }
        }
        Ok(())
    }

    /// Whether OpenSSL holds decrypted bytes libpq has not read yet (`poll` cannot
    /// see them).
    #[inline]
    pub(super) fn tls_pending(&self) -> bool {
        let ssl = self.ssl;
        // SAFETY: `ssl` is null or the `SSL*` of this live connection, owned by libpq
        // for the life of the connection; SSL_pending only reads its buffer counts.
        !ssl.is_null() && unsafe { SSL_pending(ssl) } > 0
    }

    /// OpenSSL's `SSL*` of the connection, null until its TLS handshake starts.
    pub(super) fn ssl_struct(&self) -> *const std::ffi::c_void {
        // SAFETY: `self.raw` is a live connection this value owns; the name is
        // NUL-terminated. The pointer lives as long as the connection.
        unsafe { pq::PQsslStruct(self.raw.as_ptr(), c"OpenSSL".as_ptr()) }
    }

    /// The error for a connection that failed under a query: the server closed it
    /// (its backend or the server exited or was killed), or libpq's own message.
    pub(super) fn lost(&self) -> PgError {
        // SAFETY: `self.raw` is a live connection this value owns.
        if unsafe { pq::PQstatus(self.raw.as_ptr()) } == pq::ConnStatusType::CONNECTION_BAD {
            PgError::Lost(self.server(), self.error_message())
        } else {
            PgError::Query(self.error_message())
        }
    }

    /// Asks the server to cancel what runs on this connection (from a thread of its
    /// own: `PQcancel` waits for the postmaster, which may be stalled too) and
    /// returns `error`. The owner then drops the connection.
    fn abandon(&self, error: PgError) -> PgError {
        // SAFETY: `self.raw` is a live connection this value owns; the cancel object
        // is a copy libpq makes, independent of the connection.
        let cancel = unsafe { pq::PQgetCancel(self.raw.as_ptr()) };
        if !cancel.is_null() {
            let cancel = Cancel(cancel);
            let _ = std::thread::Builder::new()
                .name("pg-cancel".into())
                .spawn(move || cancel.send());
        }
        // No wait on a full send buffer when the connection is closed.
        // SAFETY: `self.raw` is a live connection this value owns.
        unsafe { pq::PQsetnonblocking(self.raw.as_ptr(), 1) };
        error
    }

    /// The error for an operation on this connection that has waited longer than
    /// [`OP_LIMIT`], for a caller that does its own waiting: the query is cancelled
    /// and the connection is to be dropped.
    pub fn stalled(&self) -> PgError {
        self.abandon(PgError::Stalled(self.server()))
    }

    /// Which server this connection is to: host (or socket directory) and port.
    pub(super) fn server(&self) -> String {
        let text = |p: *const libc::c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: non-null, a NUL-terminated string libpq owns for the life of
                // the connection; copied out at once.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        // SAFETY: `self.raw` is a live connection this value owns.
        let (host, port) =
            unsafe { (pq::PQhost(self.raw.as_ptr()), pq::PQport(self.raw.as_ptr())) };
        format!("{} port {}", text(host), text(port))
    }
}

/// A cancel request, sent once from its own thread and then freed.
struct Cancel(*mut pq::PGcancel);

// SAFETY: a PGcancel is a self-contained copy of the connection's address and key;
// libpq documents PQcancel as safe to call from any thread, and only this value
// uses it.
unsafe impl Send for Cancel {}

impl Cancel {
    fn send(self) {
        let mut message = [0 as libc::c_char; 256];
        // SAFETY: `self.0` is a live cancel object; `message` is a writable buffer of
        // the length passed; the object is freed once, after the call.
        unsafe {
            pq::PQcancel(self.0, message.as_mut_ptr(), message.len() as libc::c_int);
            pq::PQfreeCancel(self.0);
        }
    }
}
