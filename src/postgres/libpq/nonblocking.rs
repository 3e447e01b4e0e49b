//! libpq's asynchronous interface, for one thread driving many connections the way
//! pgbench does: start a connection and advance it when its socket is ready; send a
//! query, feed the input as it arrives, and collect the results once complete.

use super::{pq, ConnParams, PgConn, PgError};
use std::ffi::{c_char, CStr};
use std::os::fd::RawFd;

crate::named! {
    /// How queries go to the server, as pgbench's `-M`.
    pub enum Protocol as "protocol" {
        /// The simple query protocol (`PQsendQuery`): text in, parsed every time.
        Simple = "simple",
        /// The extended protocol with an unnamed statement each time
        /// (`PQsendQueryParams`): parse, bind, execute.
        Extended = "extended",
        /// Statements prepared once per connection (`PQsendPrepare`), then only
        /// bind and execute (`PQsendQueryPrepared`).
        Prepared = "prepared",
    }
}

/// What a connection being opened waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Read,
    Write,
    Ready,
}

/// How the results of a query ended, once all have arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxOutcome {
    /// More input is needed.
    Pending,
    Succeeded,
    /// The server reported an error for the query; the connection is still usable.
    Failed,
}

impl PgConn {
    /// Starts opening a connection without waiting; advance it with [`PgConn::advance`].
    pub fn start(params: &ConnParams) -> Result<PgConn, PgError> {
        // SAFETY: both arrays hold pointers to NUL-terminated strings owned by `params` and
        // end with a null pointer, as PQconnectStartParams requires; they outlive the call.
        let raw = unsafe {
            pq::PQconnectStartParams(params.keywords.as_ptr(), params.values.as_ptr(), 0)
        };
        let conn = PgConn::wrap(raw)?;
        // SAFETY: `conn.raw` is a live connection this value owns.
        if unsafe { pq::PQstatus(conn.raw.as_ptr()) } == pq::ConnStatusType::CONNECTION_BAD {
            return Err(PgError::Connect(conn.error_message()));
        }
        Ok(conn)
    }

    /// Advances a connection being opened, once its socket is ready.
    pub fn advance(&self) -> Result<Step, PgError> {
        use pq::PostgresPollingStatusType as P;
        // SAFETY: `self.raw` is a live connection this value owns.
        match unsafe { pq::PQconnectPoll(self.raw.as_ptr()) } {
            P::PGRES_POLLING_OK => Ok(Step::Ready),
            P::PGRES_POLLING_READING => Ok(Step::Read),
            P::PGRES_POLLING_WRITING | P::PGRES_POLLING_ACTIVE => Ok(Step::Write),
            P::PGRES_POLLING_FAILED => Err(PgError::Connect(self.error_message())),
        }
    }

    /// The connection's socket, to wait on.
    pub fn socket(&self) -> RawFd {
        // SAFETY: `self.raw` is a live connection this value owns.
        unsafe { pq::PQsocket(self.raw.as_ptr()) }
    }

    /// Sends a query without waiting for its results.
    pub fn send(&self, sql: &CStr) -> Result<(), PgError> {
        // SAFETY: `self.raw` is a live connection this value owns and `sql` is
        // NUL-terminated and outlives the call.
        if unsafe { pq::PQsendQuery(self.raw.as_ptr(), sql.as_ptr()) } == 1 {
            Ok(())
        } else {
            Err(self.lost())
        }
    }

    /// Sends a query with the extended protocol as an unnamed statement, `params` as
    /// text, without waiting.
    pub fn send_params(&self, sql: &CStr, params: &[*const c_char]) -> Result<(), PgError> {
        // SAFETY: `self.raw` is a live connection this value owns; `sql` and every
        // parameter are NUL-terminated and outlive the call (libpq copies them into its
        // output buffer); null types, lengths and formats mean text for all.
        let sent = unsafe {
            pq::PQsendQueryParams(
                self.raw.as_ptr(),
                sql.as_ptr(),
                params.len() as i32,
                std::ptr::null(),
                params.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        };
        self.sent(sent)
    }

    /// Sends the preparation of `sql` as the statement `name`, without waiting; the
    /// server infers the parameters' number and types.
    pub fn send_prepare(&self, name: &CStr, sql: &CStr) -> Result<(), PgError> {
        // SAFETY: `self.raw` is a live connection this value owns; both strings are
        // NUL-terminated and outlive the call; no parameter types are given.
        let sent = unsafe {
            pq::PQsendPrepare(
                self.raw.as_ptr(),
                name.as_ptr(),
                sql.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        self.sent(sent)
    }

    /// Sends the execution of the prepared statement `name`, without waiting.
    pub fn send_prepared(&self, name: &CStr, params: &[*const c_char]) -> Result<(), PgError> {
        // SAFETY: `self.raw` is a live connection this value owns; `name` and every
        // parameter are NUL-terminated and outlive the call; null lengths and formats
        // mean text.
        let sent = unsafe {
            pq::PQsendQueryPrepared(
                self.raw.as_ptr(),
                name.as_ptr(),
                params.len() as i32,
                params.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        };
        self.sent(sent)
    }

    fn sent(&self, status: i32) -> Result<(), PgError> {
        if status == 1 {
            Ok(())
        } else {
            Err(self.lost())
        }
    }

    /// Reads what has arrived and, when the results are complete, consumes them.
    pub fn receive(&self) -> Result<TxOutcome, PgError> {
        let raw = self.raw.as_ptr();
        // SAFETY: `raw` is the live connection this value owns.
        if unsafe { pq::PQconsumeInput(raw) } == 0 {
            return Err(self.lost());
        }
        loop {
            // Never a PQgetResult that would block: a command of several statements
            // has results still on their way after the first (a failure among those
            // read is kept in `self.failed` until the last).
            // SAFETY: `raw` is the live connection this value owns.
            if unsafe { pq::PQisBusy(raw) } != 0 {
                return Ok(TxOutcome::Pending);
            }
            // SAFETY: `raw` is the live connection this value owns.
            let result = unsafe { pq::PQgetResult(raw) };
            if result.is_null() {
                break;
            }
            // SAFETY: `result` is a non-null result just returned by PQgetResult and not
            // yet cleared.
            let status = unsafe { pq::PQresultStatus(result) };
            if super::starts_copy(status) {
                // SAFETY: `result` is non-null, owned here and not used after.
                unsafe { pq::PQclear(result) };
                return Err(PgError::Query(super::COPY_REFUSED.into()));
            }
            if !matches!(
                status,
                pq::ExecStatusType::PGRES_TUPLES_OK | pq::ExecStatusType::PGRES_COMMAND_OK
            ) {
                self.failed.set(true);
            }
            // SAFETY: `result` is non-null, owned by this loop and not used after this
            // call.
            unsafe { pq::PQclear(result) };
        }
        // SAFETY: `raw` is the live connection this value owns.
        if unsafe { pq::PQstatus(raw) } == pq::ConnStatusType::CONNECTION_BAD {
            return Err(self.lost());
        }
        Ok(if self.failed.replace(false) {
            TxOutcome::Failed
        } else {
            TxOutcome::Succeeded
        })
    }
}

/// One connection to wait on in [`wait_any`].
#[repr(transparent)]
pub struct Wait(libc::pollfd);

impl Wait {
    /// Waits on `conn`'s socket until it can be read (or written, with `write`); with
    /// no connection, never ready.
    pub fn new(conn: Option<&PgConn>, write: bool) -> Wait {
        Wait(libc::pollfd {
            fd: conn.map_or(-1, PgConn::socket),
            events: if write { libc::POLLOUT } else { libc::POLLIN },
            revents: 0,
        })
    }

    /// Whether the last [`wait_any`] found it ready (or failed, which the next
    /// libpq call reports).
    pub fn ready(&self) -> bool {
        self.0.revents != 0
    }
}

/// Waits at most `limit` until one of `waits` is ready, like one `ppoll(2)` over
/// their sockets (to the microsecond, for a fixed rate's schedule); a signal ends the
/// wait early without an error.
pub fn wait_any(waits: &mut [Wait], limit: std::time::Duration) -> std::io::Result<()> {
    let timeout = libc::timespec {
        tv_sec: limit.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: libc::c_long::from(limit.subsec_nanos() as i32),
    };
    // SAFETY: `Wait` is a transparent wrapper of `pollfd` in a slice that lives across
    // the call, and its length is passed with it; the timeout lives across the call
    // and no signal mask is given.
    let ready = unsafe {
        libc::ppoll(
            waits.as_mut_ptr().cast(),
            waits.len() as libc::nfds_t,
            &timeout,
            std::ptr::null(),
        )
    };
    if ready < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}
