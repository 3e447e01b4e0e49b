//! Private temporary directories that a killed run cannot leave behind for good.
//!
//! A run killed with SIGKILL cannot remove its directories (a cluster's is about
//! 40 MB), so each one carries an owner file naming the sockbench process that made
//! it (PID and start time, so a reused PID does not count). Before making a new
//! one, sockbench removes those of either kind in the same temporary directory whose
//! owner is gone, whose files belong to the account running now, and in which no
//! PostgreSQL server is still running.

use anyhow::{Context, Result};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The file in each directory that names its owner.
const OWNER_FILE: &str = "sockbench.owner";
/// The prefixes of sockbench's directories: a throwaway cluster's, and the socket
/// server's. Any run removes the abandoned ones of every kind.
pub const CLUSTER: &str = "sockbench-pg-";
pub const SERVER: &str = "sockbench-srv-";
const KINDS: [&str; 2] = [CLUSTER, SERVER];

/// A private temporary directory, removed on drop with its owner file last, so
/// that a run killed half-way through removing it still leaves it to the sweep.
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Makes a private (0700) temporary directory named `prefix…` (one of the kinds
/// above), after removing abandoned ones.
pub fn private_dir(prefix: &str) -> Result<PrivateDir> {
    let parent = std::env::temp_dir();
    sweep(&parent, &KINDS);
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&parent)
        .with_context(|| {
            format!(
                "cannot create a private directory in {} (from TMPDIR); set TMPDIR to a \
                 writable directory",
                parent.display()
            )
        })?;
    let dir = PrivateDir { path: dir.keep() };
    fs::write(dir.path().join(OWNER_FILE), owner_line(std::process::id()))
        .with_context(|| format!("cannot write into {}", dir.path().display()))?;
    Ok(dir)
}

/// Removes `dir` and everything in it, its owner file last; true when it is gone.
/// A file that appears meanwhile (a server process that is still exiting writes
/// its last one) is removed on the next pass; the owner file goes only once
/// nothing else is left, so a directory that cannot be emptied stays sweepable.
fn remove(dir: &Path) -> bool {
    for pass in 0..REMOVE_PASSES {
        if pass > 0 {
            std::thread::sleep(REMOVE_PAUSE);
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return !dir.exists();
        };
        let mut others = 0;
        for entry in entries.flatten() {
            if entry.file_name() == OWNER_FILE {
                continue;
            }
            others += 1;
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
                _ => fs::remove_file(&path),
            };
        }
        let emptied =
            fs::read_dir(dir).is_ok_and(|e| e.flatten().all(|e| e.file_name() == OWNER_FILE));
        if others == 0 || emptied {
            let _ = fs::remove_file(dir.join(OWNER_FILE));
            if fs::remove_dir(dir).is_ok() {
                return true;
            }
        }
    }
    false
}

/// Passes [`remove`] makes at most, and the pause between them.
const REMOVE_PASSES: u32 = 20;
const REMOVE_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Removes the abandoned directories in `parent` named with one of `prefixes`
/// (never through a symbolic link); returns how many.
pub fn sweep(parent: &Path, prefixes: &[&str]) -> usize {
    let Ok(entries) = fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        let name = entry.file_name();
        let named = prefixes
            .iter()
            .any(|p| name.to_string_lossy().starts_with(p));
        let real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if named && real_dir && abandoned(&dir) && remove(&dir) {
            removed += 1;
        }
    }
    removed
}

fn abandoned(dir: &Path) -> bool {
    let owner = dir.join(OWNER_FILE);
    let Ok(meta) = fs::symlink_metadata(&owner) else {
        return false; // not made by sockbench, or still being made
    };
    // SAFETY: a plain syscall.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me {
        return false;
    }
    let Ok(text) = fs::read_to_string(&owner) else {
        return false;
    };
    let Some(pid) = text.split_whitespace().next().and_then(|p| p.parse().ok()) else {
        return false;
    };
    !alive_as(pid, &text) && !server_running(&dir.join("data"))
}

/// `PID START\n`, START being the process's start time in clock ticks since boot.
fn owner_line(pid: u32) -> String {
    format!("{pid} {}\n", start_time(pid).unwrap_or(0))
}

/// True when process `pid` runs and is the one `line` was written for.
fn alive_as(pid: u32, line: &str) -> bool {
    start_time(pid).is_some_and(|_| owner_line(pid) == line)
}

/// Field 22 of /proc/PID/stat, read after the command name (which may hold spaces).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// True when a PostgreSQL server still runs on the data directory `data`.
fn server_running(data: &Path) -> bool {
    let Ok(text) = fs::read_to_string(data.join("postmaster.pid")) else {
        return false;
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
    else {
        return false;
    };
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_of_a_gone_owner_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let make = |name: &str, owner: Option<String>| {
            let dir = parent.path().join(name);
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join("data"), "x").unwrap();
            if let Some(line) = owner {
                fs::write(dir.join(OWNER_FILE), line).unwrap();
            }
            dir
        };
        // A PID that cannot exist (above the kernel's pid_max limit).
        let gone = make("sockbench-x-gone", Some("4194305 1\n".into()));
        let reused = make(
            "sockbench-x-reused",
            Some(format!("{} 1\n", std::process::id())),
        );
        let mine = make("sockbench-x-mine", Some(owner_line(std::process::id())));
        let foreign = make("sockbench-x-foreign", None);
        let other_kind = make("other-gone", Some("4194305 1\n".into()));
        assert_eq!(sweep(parent.path(), &["sockbench-x-"]), 2);
        assert!(!gone.exists() && !reused.exists());
        assert!(mine.exists() && foreign.exists() && other_kind.exists());
    }

    #[test]
    fn the_owner_line_names_this_process() {
        let line = owner_line(std::process::id());
        assert!(alive_as(std::process::id(), &line), "{line}");
        assert!(start_time(std::process::id()).unwrap() > 0);
    }

    #[test]
    fn files_written_while_removing_do_not_leave_an_ownerless_directory() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("sockbench-x-busy");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(OWNER_FILE), owner_line(std::process::id())).unwrap();
        let writer = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                // A process still exiting writes its last files, for 100 ms.
                let end = std::time::Instant::now() + std::time::Duration::from_millis(100);
                let mut i = 0;
                while std::time::Instant::now() < end {
                    let _ = fs::write(dir.join(format!("late-{i}")), "x");
                    i += 1;
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(10));
        let gone = remove(&dir);
        writer.join().unwrap();
        // Either it is gone, or it still has its owner file for the next sweep.
        assert!(gone || dir.join(OWNER_FILE).exists());
        assert!(gone, "20 passes outlast a writer of 100 ms");
    }
}
