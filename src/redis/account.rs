//! The account the throwaway `redis-server` runs as, when sockbench runs as root:
//! `redis` (the account Debian's package creates and its own service runs as), else
//! `nobody` (see `system::account`); never an account that owns other data, such as
//! `postgres`, since every local account can reach the server over loopback.

pub use crate::system::account::{uid_of, Account};
use anyhow::Result;

/// `None` when not root (the server runs as the current user), else the account.
pub fn server_account() -> Result<Option<Account>> {
    crate::system::account::server_account(&["redis", "nobody"], "redis-server")
}
