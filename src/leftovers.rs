//! Private temporary directories that a killed run cannot leave behind for good.
//!
//! A run killed with SIGKILL cannot remove its directories (a cluster's is about
//! 40 MB), so each one carries an owner file naming the sockbench process that made
//! it (PID and start time, so a reused PID does not count). Before a measuring
//! command starts, sockbench removes those of every [`Kind`] in the temporary
//! directory whose owner is gone, which belong (directory and owner file) to the
//! account running now, and in which no server is still running.
//!
//! This module is a base layer: it does not know which kinds exist. Each server
//! family declares its own (a name prefix, and how to tell that a server it started
//! in such a directory still runs), and the command layer calls [`sweep_temp`] with
//! all of them (`families::leftover_kinds`).
//!
//! The directory itself always belongs to the account sockbench runs as, even when
//! what is inside belongs to the server account: in a sticky temporary directory
//! (`/tmp`) no other account can then rename it or put something in its place.
//! Everything inside is removed through descriptors ([`crate::dir`]), so an entry
//! another account swaps for a symbolic link is removed, never followed.

use crate::dir::{euid, Dir};
use crate::error::usage;
use anyhow::{Context, Result};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;

/// The file in each directory that names its owner.
const OWNER_FILE: &str = "sockbench.owner";

/// A kind of private directory a server family makes: what its name starts with,
/// and how to tell that a server started in one is still running (then it is never
/// removed, even when the sockbench run that made it is gone).
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    pub prefix: &'static str,
    /// True when a server still runs from the directory (e.g. PostgreSQL's
    /// `data/postmaster.pid` names a live process). Called only on a directory of
    /// this account whose owner is gone; read it with [`read_head`].
    pub alive: fn(&Dir) -> bool,
}

impl Kind {
    /// For a directory no server outlives (its server dies with sockbench).
    pub fn never_alive(_: &Dir) -> bool {
        false
    }
}

/// A private temporary directory, held open, and removed on drop through
/// descriptors with its owner file last, so that a run killed half-way through
/// removing it still leaves it to the sweep.
pub struct PrivateDir {
    parent: Dir,
    name: OsString,
    dir: Dir,
}

impl PrivateDir {
    /// Its path, for messages and for the programs given it.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The directory itself, to make and write what is inside.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        remove(&self.parent, &self.name, &self.dir);
    }
}

/// Makes a private (0700) temporary directory named `prefix…` (the prefix of a
/// [`Kind`] its family declares). Abandoned ones are removed earlier, by
/// [`sweep_temp`].
pub fn private_dir(prefix: &str) -> Result<PrivateDir> {
    let path = std::env::temp_dir();
    // A newline in a path splits the servers' command lines and configuration
    // files (and every message that names them) where none was meant.
    if path
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(u8::is_ascii_control)
    {
        return Err(usage(format!(
            "TMPDIR ({}) holds a control character (a newline, a tab, …), which the servers' \
             arguments and configuration files cannot carry; set TMPDIR to a plain directory \
             such as /tmp",
            crate::units::printable(&path.display().to_string())
        )));
    }
    // Bad input, as every refusal of TMPDIR is: what to change is TMPDIR.
    let cannot = |e: std::io::Error| {
        let why = match e.raw_os_error() {
            Some(libc::ENOENT) => "it does not exist".to_string(),
            Some(libc::ENOTDIR) => "it is not a directory".to_string(),
            Some(libc::EACCES | libc::EPERM | libc::EROFS) => {
                format!("this account cannot make a directory there ({e})")
            }
            _ => e.to_string(),
        };
        usage(format!(
            "TMPDIR ({}) cannot take sockbench's private directory: {why}; set TMPDIR to a \
             writable directory such as /tmp",
            crate::units::shown(&path.display().to_string())
        ))
    };
    let parent = Dir::open(&path).map_err(cannot)?;
    let (dir, name) = parent.make_fresh_dir(prefix, 0o700).map_err(cannot)?;
    let owner = dir.create_new(OWNER_FILE, 0o644).and_then(|mut f| {
        std::io::Write::write_all(&mut f, owner_line(std::process::id()).as_bytes())
    });
    let private = PrivateDir { parent, name, dir };
    owner.with_context(|| format!("cannot write into {}", private.path().display()))?;
    Ok(private)
}

/// Removes `name` in `parent` (opened as `dir`) and everything in it, its owner
/// file last; true when it is gone. A file that appears meanwhile (a server process
/// that is still exiting writes its last one) is removed on the next pass; the
/// owner file goes only once nothing else is left, so a directory that cannot be
/// emptied stays sweepable.
fn remove(parent: &Dir, name: &OsStr, dir: &Dir) -> bool {
    for pass in 0..REMOVE_PASSES {
        if pass > 0 {
            std::thread::sleep(REMOVE_PAUSE);
        }
        let Ok(names) = dir.names() else {
            return parent.entry_at(name).is_ok_and(|e| e.is_none());
        };
        for other in names.iter().filter(|n| *n != OWNER_FILE) {
            let _ = dir.remove_tree(other);
        }
        let emptied = dir.names().is_ok_and(|n| n.iter().all(|n| n == OWNER_FILE));
        if emptied && same(parent, name, dir) {
            let _ = dir.remove_file(OWNER_FILE);
            if parent.remove_tree(name).is_ok() {
                return true;
            }
        }
    }
    false
}

/// True when `name` in `parent` is still the directory `dir` (not something put
/// in its place).
fn same(parent: &Dir, name: &OsStr, dir: &Dir) -> bool {
    match (parent.entry_at(name), dir.entry()) {
        (Ok(Some(at)), Ok(held)) => at.dev == held.dev && at.ino == held.ino,
        _ => false,
    }
}

/// Passes [`remove`] makes at most, and the pause between them.
const REMOVE_PASSES: u32 = 20;
const REMOVE_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Removes the abandoned directories of `kinds` in the temporary directory (from
/// `TMPDIR`); returns how many. One that cannot be looked at is left alone: making
/// a new directory there then says what is wrong.
pub fn sweep_temp(kinds: &[Kind]) -> usize {
    match Dir::open(&std::env::temp_dir()) {
        Ok(parent) => sweep(&parent, kinds),
        Err(_) => 0,
    }
}

/// Removes the abandoned directories in `parent` named with the prefix of one of
/// `kinds` (never through a symbolic link, never one of another account, never one
/// in which a kind it is named for says a server still runs); returns how many.
pub fn sweep(parent: &Dir, kinds: &[Kind]) -> usize {
    let Ok(names) = parent.names() else {
        return 0;
    };
    let mut removed = 0;
    for name in names {
        let named: Vec<&Kind> = kinds
            .iter()
            .filter(|k| name.to_string_lossy().starts_with(k.prefix))
            .collect();
        if named.is_empty() {
            continue;
        }
        let Ok(dir) = parent.open_dir(&name) else {
            continue; // a symbolic link, a file, or gone
        };
        let mine = dir.entry().is_ok_and(|e| e.uid == euid());
        if mine && owner_gone(&dir) && !named.iter().any(|k| (k.alive)(&dir)) {
            removed += usize::from(remove(parent, &name, &dir));
        }
    }
    removed
}

/// True when the sockbench process that made `dir` is gone.
fn owner_gone(dir: &Dir) -> bool {
    let Ok(text) = read_small(dir, OWNER_FILE, true) else {
        return false; // not made by sockbench, or still being made
    };
    let Some(pid) = text.split_whitespace().next().and_then(|p| p.parse().ok()) else {
        return false;
    };
    !alive_as(pid, &text)
}

/// The start (4 KiB) of the regular file `name` in `dir`, whoever owns it (a
/// server account's pid file), never through a link, never blocking: for a
/// [`Kind`]'s `alive`.
pub fn read_head(dir: &Dir, name: &str) -> std::io::Result<String> {
    read_small(dir, name, false)
}

/// The start of a regular file in `dir` (never through a link, never blocking);
/// with `own`, only a file of the account running now.
fn read_small(dir: &Dir, name: &str, own: bool) -> std::io::Result<String> {
    let file = dir.open_read(name)?;
    if own && std::os::unix::fs::MetadataExt::uid(&file.metadata()?) != euid() {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text)?;
    Ok(text)
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
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
        // A link to an abandoned-looking directory is not followed.
        let target = make("elsewhere", Some("4194305 1\n".into()));
        std::os::unix::fs::symlink(&target, parent.path().join("sockbench-x-link")).unwrap();
        // A directory another account made (and could swap) is never removed, even
        // with an owner file of this account's in it.
        let theirs = make("sockbench-x-theirs", Some("4194305 1\n".into()));
        if euid() == 0 {
            std::os::unix::fs::chown(&theirs, Some(65_534), None).unwrap();
        } else {
            fs::remove_dir_all(&theirs).unwrap();
        }
        let held = Dir::open(parent.path()).unwrap();
        assert_eq!(sweep(&held, &[kind("sockbench-x-")]), 2);
        assert!(!gone.exists() && !reused.exists());
        assert!(mine.exists() && foreign.exists() && other_kind.exists());
        assert!(target.join("data").exists());
        assert!(euid() != 0 || theirs.join("data").exists());
    }

    fn kind(prefix: &'static str) -> Kind {
        Kind {
            prefix,
            alive: Kind::never_alive,
        }
    }

    #[test]
    fn a_directory_whose_kind_says_its_server_runs_is_kept() {
        let parent = tempfile::tempdir().unwrap();
        for name in ["sockbench-up-1", "sockbench-down-1"] {
            let dir = parent.path().join(name);
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join(OWNER_FILE), "4194305 1\n").unwrap();
            fs::write(dir.join("server.pid"), "1\n").unwrap();
        }
        let up = Kind {
            prefix: "sockbench-up-",
            // As a family would: its pid file names a process that exists (init).
            alive: |dir| {
                read_head(dir, "server.pid")
                    .is_ok_and(|pid| Path::new(&format!("/proc/{}", pid.trim())).exists())
            },
        };
        let held = Dir::open(parent.path()).unwrap();
        assert_eq!(sweep(&held, &[up, kind("sockbench-down-")]), 1);
        assert!(parent.path().join("sockbench-up-1/server.pid").exists());
        assert!(!parent.path().join("sockbench-down-1").exists());
        // A kind that never calls it alive, sharing the prefix, does not overrule one
        // that does.
        assert_eq!(sweep(&held, &[kind("sockbench-up-"), up]), 0);
        assert_eq!(sweep(&held, &[kind("sockbench-up-")]), 1);
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
        let held = Dir::open(parent.path()).unwrap();
        let opened = held.open_dir("sockbench-x-busy").unwrap();
        let gone = remove(&held, OsStr::new("sockbench-x-busy"), &opened);
        writer.join().unwrap();
        // Either it is gone, or it still has its owner file for the next sweep.
        assert!(gone || dir.join(OWNER_FILE).exists());
        assert!(gone, "20 passes outlast a writer of 100 ms");
    }
}
