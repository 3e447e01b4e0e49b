//! The unprivileged account a throwaway server runs as, for every family.
//!
//! PostgreSQL refuses to run as root, and no server sockbench starts should. When
//! sockbench itself runs as root it starts a family's server programs as the first of
//! its accounts that exists (the one distribution packages create, e.g. `postgres`,
//! `redis`, then `nobody`); otherwise as the current user. The server's files then
//! belong to that account, and every directory above them must let it through.

use crate::dir::Owner;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use anyhow::Result;
use std::ffi::{CStr, CString};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// An account to switch to before running the server programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// `None` when not root (the programs run as the current user), else the first of
/// `candidates` that exists, to run `program` (named in the error when none does).
pub fn server_account(candidates: &[&str], program: &str) -> Result<Option<Account>> {
    if crate::dir::euid() != 0 {
        return Ok(None);
    }
    candidates
        .iter()
        .find_map(|name| lookup(name))
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<String> = candidates.iter().map(|c| format!("'{c}'")).collect();
            usage(format!(
                "running as root, and none of the accounts {} exists to run {program}; create \
                 one (useradd --system {}) or run sockbench as another user",
                names.join(", "),
                candidates.first().unwrap_or(&"sockbench")
            ))
        })
}

impl Account {
    /// The account as the owner of a file or directory made for it.
    pub fn owner(&self) -> Owner {
        Owner {
            uid: self.uid,
            gid: self.gid,
        }
    }
}

/// A private directory (`leftovers::private_dir(prefix)`) for a server that runs as
/// `account`. It stays sockbench's own, so no other account can rename it or
/// anything at its top in a sticky TMPDIR; it is 0711 so that the account passes
/// through to what it is given inside (0700 when there is no account). Refused in
/// one line when `socket`, a path inside it, would be longer than `max_socket`
/// bytes, or when the account cannot reach it; `program` names the server.
pub fn server_dir(
    account: Option<&Account>,
    prefix: &str,
    program: &str,
    socket: &str,
    max_socket: usize,
) -> Result<PrivateDir> {
    let dir = crate::leftovers::private_dir(prefix)?;
    let base = dir.path();
    let socket = base.join(socket);
    if socket.as_os_str().len() > max_socket {
        return Err(usage(format!(
            "the temporary directory {} is too long for {program}'s Unix socket path ({} \
             bytes, at most {max_socket}); set TMPDIR to a shorter directory such as /tmp",
            std::env::temp_dir().display(),
            socket.as_os_str().len()
        )));
    }
    dir.dir()
        .set_mode(if account.is_some() { 0o711 } else { 0o700 })?;
    if let Some(a) = account.filter(|a| !can_reach(a, base)) {
        return Err(usage(format!(
            "{program} runs as the '{}' account, which cannot reach {}; set TMPDIR to a \
             directory every user can pass through (e.g. /tmp)",
            a.name,
            base.display()
        )));
    }
    Ok(dir)
}

/// The user ID a server runs as: the account's, or sockbench's own.
pub fn uid_of(account: Option<&Account>) -> u32 {
    account.map_or_else(crate::dir::euid, |a| a.uid)
}

/// The name of the account sockbench itself runs as (for peer authentication).
pub fn current_user_name() -> String {
    let uid = crate::dir::euid();
    user_name(uid).unwrap_or_else(|| uid.to_string())
}

/// The name of the account with user ID `uid`, if it has one.
pub fn user_name(uid: u32) -> Option<String> {
    // SAFETY: getpwuid takes any uid; its result is checked for null before use.
    let entry = unsafe { libc::getpwuid(uid) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: `entry` is a non-null passwd entry from getpwuid, whose pw_name is a
    // NUL-terminated string valid until the next getpw* call, and it is copied out at once.
    let name = unsafe { CStr::from_ptr((*entry).pw_name) };
    Some(name.to_string_lossy().into_owned())
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
        let mode = meta.mode();
        let bit = if meta.uid() == account.uid {
            0o100
        } else if meta.gid() == account.gid {
            0o010
        } else {
            0o001
        };
        mode & bit != 0
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
    fn root_runs_a_server_as_another_account_and_says_which_it_looked_for() {
        let account = server_account(&["nobody"], "a server").unwrap();
        assert_eq!(account.is_some(), crate::dir::euid() == 0);
        assert!(account.is_none_or(|a| a.uid != 0), "never root itself");
        if crate::dir::euid() == 0 {
            let e = server_account(
                &["sockbench-no-such-1", "sockbench-no-such-2"],
                "redis-server",
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("'sockbench-no-such-1', 'sockbench-no-such-2'"),
                "{e}"
            );
            assert!(e.contains("to run redis-server"), "{e}");
        }
    }
}
