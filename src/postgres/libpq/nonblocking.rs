//! libpq's asynchronous interface, for one thread driving many connections the way
//! pgbench does: start a connection and advance it when its socket is ready; send a
//! query, feed the input as it arrives, and collect the results once complete.

use super::{pq, Conn, ConnParams, PgError};
use std::ffi::CStr;
use std::os::fd::RawFd;

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

impl Conn {
    /// Starts opening a connection without waiting; advance it with [`Conn::advance`].
    pub fn start(params: &ConnParams) -> Result<Conn, PgError> {
        let raw = unsafe {
            pq::PQconnectStartParams(params.keywords.as_ptr(), params.values.as_ptr(), 0)
        };
        let conn = Conn::wrap(raw)?;
        if unsafe { pq::PQstatus(conn.raw.as_ptr()) } == pq::ConnStatusType::CONNECTION_BAD {
            return Err(PgError::Connect(conn.error_message()));
        }
        Ok(conn)
    }

    /// Advances a connection being opened, once its socket is ready.
    pub fn advance(&self) -> Result<Step, PgError> {
        use pq::PostgresPollingStatusType as P;
        match unsafe { pq::PQconnectPoll(self.raw.as_ptr()) } {
            P::PGRES_POLLING_OK => Ok(Step::Ready),
            P::PGRES_POLLING_READING => Ok(Step::Read),
            P::PGRES_POLLING_WRITING | P::PGRES_POLLING_ACTIVE => Ok(Step::Write),
            P::PGRES_POLLING_FAILED => Err(PgError::Connect(self.error_message())),
        }
    }

    /// The connection's socket, to wait on.
    pub fn socket(&self) -> RawFd {
        unsafe { pq::PQsocket(self.raw.as_ptr()) }
    }

    /// Sends a query without waiting for its results.
    pub fn send(&self, sql: &CStr) -> Result<(), PgError> {
        if unsafe { pq::PQsendQuery(self.raw.as_ptr(), sql.as_ptr()) } == 1 {
            Ok(())
        } else {
            Err(PgError::Query(self.error_message()))
        }
    }

    /// Reads what has arrived and, when the results are complete, consumes them.
    pub fn receive(&self) -> Result<TxOutcome, PgError> {
        let raw = self.raw.as_ptr();
        if unsafe { pq::PQconsumeInput(raw) } == 0 {
            return Err(PgError::Query(self.error_message()));
        }
        if unsafe { pq::PQisBusy(raw) } != 0 {
            return Ok(TxOutcome::Pending);
        }
        let mut outcome = TxOutcome::Succeeded;
        loop {
            let result = unsafe { pq::PQgetResult(raw) };
            if result.is_null() {
                break;
            }
            let status = unsafe { pq::PQresultStatus(result) };
            if !matches!(
                status,
                pq::ExecStatusType::PGRES_TUPLES_OK | pq::ExecStatusType::PGRES_COMMAND_OK
            ) {
                outcome = TxOutcome::Failed;
            }
            unsafe { pq::PQclear(result) };
        }
        if unsafe { pq::PQstatus(raw) } == pq::ConnStatusType::CONNECTION_BAD {
            return Err(PgError::Query(self.error_message()));
        }
        Ok(outcome)
    }
}
