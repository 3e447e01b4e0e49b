//! The account the throwaway cluster runs as: PostgreSQL refuses root, so as root
//! `initdb` and `postgres` run as `postgres` (the account distribution packages
//! create), else `nobody` (see `system::account`).

pub use crate::system::account::{current_user_name, Account};
use anyhow::Result;

/// `None` when not root (the programs run as the current user), else the account.
pub fn server_account() -> Result<Option<Account>> {
    crate::system::account::server_account(&["postgres", "nobody"], "PostgreSQL")
}
