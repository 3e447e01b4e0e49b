//! A query's result, cleared when dropped.

use pq_sys as pq;
use std::ptr::NonNull;

/// A query result; cleared on drop.
pub struct PgResult {
    pub(super) raw: NonNull<pq::PGresult>,
}

impl Drop for PgResult {
    fn drop(&mut self) {
        // SAFETY: `self.raw` is a result this value owns; it is cleared once, here, and
        // never used after.
        unsafe { pq::PQclear(self.raw.as_ptr()) };
    }
}

impl PgResult {
    pub(super) fn status(&self) -> pq::ExecStatusType {
        // SAFETY: `self.raw` is a result this value owns, not yet cleared.
        unsafe { pq::PQresultStatus(self.raw.as_ptr()) }
    }

    /// Whether the query succeeded (rows or a command's completion).
    pub(super) fn succeeded(&self) -> bool {
        matches!(
            self.status(),
            pq::ExecStatusType::PGRES_TUPLES_OK | pq::ExecStatusType::PGRES_COMMAND_OK
        )
    }

    /// The server's error message, on one line; an empty query has none of its own.
    pub(super) fn error_message(&self) -> String {
        if self.status() == pq::ExecStatusType::PGRES_EMPTY_QUERY {
            return "the command holds no SQL (an empty query)".into();
        }
        // SAFETY: `self.raw` is a result this value owns; the message is copied out
        // before the result can be cleared.
        super::one_line(unsafe { pq::PQresultErrorMessage(self.raw.as_ptr()) })
    }

    pub fn rows(&self) -> usize {
        // SAFETY: `self.raw` is a result this value owns, not yet cleared.
        unsafe { pq::PQntuples(self.raw.as_ptr()) }.max(0) as usize
    }

    /// The text of one value, `None` for NULL or out of range.
    pub fn value(&self, row: usize, column: usize) -> Option<&[u8]> {
        let (r, c) = (row as i32, column as i32);
        let raw = self.raw.as_ptr();
        // SAFETY: `raw` is a result this value owns; row and column are checked against its
        // size before PQgetvalue, whose text of PQgetlength bytes lives as long as the
        // result, which the returned slice borrows.
        unsafe {
            if row >= self.rows() || c >= pq::PQnfields(raw) || pq::PQgetisnull(raw, r, c) != 0 {
                return None;
            }
            let len = pq::PQgetlength(raw, r, c).max(0) as usize;
            Some(std::slice::from_raw_parts(
                pq::PQgetvalue(raw, r, c) as *const u8,
                len,
            ))
        }
    }
}
