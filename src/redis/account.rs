//! The account the throwaway `redis-server` runs as, when sockbench runs as root:
//! `redis` (the account Debian's package creates and its own service runs as), else
//! `postgres`, else `nobody` (see `system::account`).

pub use crate::system::account::{can_reach, uid_of, Account};
use anyhow::Result;

/// `None` when not root (the server runs as the current user), else the account.
pub fn server_account() -> Result<Option<Account>> {
    crate::system::account::server_account(&["redis", "postgres", "nobody"], "redis-server")
}
