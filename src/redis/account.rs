//! The unprivileged account the throwaway `redis-server` runs as.
//!
//! When sockbench runs as root it starts the server as `redis` (the account
//! Debian's `redis-server` package creates and its own service runs as), else
//! `postgres`, else `nobody`; otherwise as the current user. The server's files then
//! belong to that account, and every directory above them must let it through.
//!
//! NOTE: this repeats a small part of `postgres/account.rs` (families do not use
//! each other). Both want one base module (e.g. `system/account.rs`, taking the
//! list of account names); until it exists, a fix to one belongs in the other.

use crate::error::usage;
use anyhow::Result;
use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The accounts tried in turn when sockbench runs as root.
const CANDIDATES: [&str; 3] = ["redis", "postgres", "nobody"];

/// An account to switch to before running the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// `None` when not root (the server runs as the current user), else the account.
pub fn server_account() -> Result<Option<Account>> {
    if crate::dir::euid() != 0 {
        return Ok(None);
    }
    CANDIDATES
        .iter()
        .find_map(|name| lookup(name))
        .map(Some)
        .ok_or_else(|| {
            usage(
                "running as root, and none of the accounts 'redis', 'postgres' or 'nobody' \
                 exists to run redis-server; create one (useradd --system redis) or run \
                 sockbench as another user",
            )
        })
}

/// The user ID the server runs as: the account's, or sockbench's own.
pub fn uid_of(account: Option<&Account>) -> u32 {
    account.map_or_else(crate::dir::euid, |a| a.uid)
}

fn lookup(name: &str) -> Option<Account> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: `c_name` is a NUL-terminated string that outlives the call; the result is
    // checked for null.
    let entry = unsafe { libc::getpwnam(c_name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: `entry` is a non-null passwd entry from getpwnam, read before any other
    // getpw* call.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Some(Account {
        name: name.to_string(),
        uid,
        gid,
    })
}

/// True when `account` may pass through every directory from `/` down to `dir`.
pub fn can_reach(account: &Account, dir: &Path) -> bool {
    dir.ancestors().all(|d| {
        let Ok(meta) = std::fs::metadata(d) else {
            return false;
        };
        let bit = if meta.uid() == account.uid {
            0o100
        } else if meta.gid() == account.gid {
            0o010
        } else {
            0o001
        };
        meta.mode() & bit != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_closed_directory_blocks_other_accounts() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let stranger = Account {
            name: "stranger".into(),
            uid: 54_321,
            gid: 54_321,
        };
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let open_above = dir
            .path()
            .ancestors()
            .skip(1)
            .all(|d| can_reach(&stranger, d));
        assert!(!can_reach(&stranger, &inner));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        assert_eq!(can_reach(&stranger, &inner), open_above);
    }

    #[test]
    fn root_runs_the_server_as_another_account() {
        let account = server_account().unwrap();
        assert_eq!(account.is_some(), crate::dir::euid() == 0);
        assert!(account.is_none_or(|a| a.uid != 0), "never root itself");
    }
}
