//! Private temporary directories that a killed run cannot leave behind for good.
//!
//! A run killed with SIGKILL cannot remove its directories (a cluster's is about
//! 40 MB), so each one carries an owner file naming the sockbench process that made
//! it (PID and start time, so a reused PID does not count) and, once started, the
//! server it runs there ([`PrivateDir::record_server`]: PID, start time and
//! account). Before a measuring command starts, sockbench removes those of every
//! [`DirKind`] in the temporary directory whose owner is gone, which belong (directory
//! and owner file) to the account running now, and whose recorded server no longer
//! runs.
//!
//! Whether a server still runs is read from the owner file alone, which only the
//! account that made the directory can write, and checked against `/proc` (the same
//! start time and account): never from a pid file the server account writes, since
//! that account could name any living process there and keep the directory for
//! ever.
//!
//! This module is a base layer: it does not know which kinds exist. Each server
//! family declares its own (a name prefix), and the command layer calls
//! [`sweep_temp`] with all of them (`families::leftover_kinds`).
//!
//! The directory itself always belongs to the account sockbench runs as, even when
//! what is inside belongs to the server account: in a sticky temporary directory
//! (`/tmp`) no other account can then rename it or put something in its place.
//! Everything inside is removed through descriptors ([`crate::dir`]), so an entry
//! another account swaps for a symbolic link is removed, never followed, and a tree
//! of any depth goes without running out of descriptors.

use crate::dir::{euid, Dir};
use crate::error::usage;
use anyhow::{Context, Result};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;

/// The file in each directory that names its owner.
const OWNER_FILE: &str = "sockbench.owner";

/// A kind of private directory a server family makes: what its name starts with.
#[derive(Debug, Clone, Copy)]
pub struct DirKind {
    pub prefix: &'static str,
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

    /// Notes in the owner file that process `pid` (started here, as whichever
    /// account) is the server running from this directory: while it runs, the
    /// sweep leaves the directory alone, even once this run is gone. A process
    /// already gone is not noted (its start says why).
    pub fn record_server(&self, pid: u32) -> Result<()> {
        let Some(server) = process(pid) else {
            return Ok(());
        };
        let text = format!(
            "{}{SERVER}{pid} {} {}\n",
            owner_line(std::process::id()),
            server.start,
            server.uid
        );
        self.dir
            .replace_file(OWNER_FILE, text.as_bytes(), 0o644, None)
            .with_context(|| format!("cannot write into {}", self.path().display()))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        remove(&self.parent, &self.name, &self.dir);
    }
}

/// Makes a private (0700) temporary directory named `prefix…` (the prefix of a
/// [`DirKind`] its family declares). Abandoned ones are removed earlier, by
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
            match dir.remove_tree(other) {
                // A tree grown to hold up its removal: left for the next sweep.
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
                _ => {}
            }
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
pub fn sweep_temp(kinds: &[DirKind]) -> usize {
    match Dir::open(&std::env::temp_dir()) {
        Ok(parent) => sweep(&parent, kinds),
        Err(_) => 0,
    }
}

/// Removes the abandoned directories in `parent` named with the prefix of one of
/// `kinds` (never through a symbolic link, never one of another account, never one
/// whose recorded server still runs); returns how many.
pub fn sweep(parent: &Dir, kinds: &[DirKind]) -> usize {
    let Ok(names) = parent.names() else {
        return 0;
    };
    let mut removed = 0;
    for name in names {
        if !kinds
            .iter()
            .any(|k| name.to_string_lossy().starts_with(k.prefix))
        {
            continue;
        }
        let Ok(dir) = parent.open_dir(&name) else {
            continue; // a symbolic link, a file, or gone
        };
        let mine = dir.entry().is_ok_and(|e| e.uid == euid());
        if mine && abandoned(&dir) {
            removed += usize::from(remove(parent, &name, &dir));
        }
    }
    removed
}

/// True when the sockbench process that made `dir` is gone, and so is the server
/// it recorded there, if any: both as the owner file says, which only this
/// account can write.
fn abandoned(dir: &Dir) -> bool {
    let Ok(text) = read_small(dir, OWNER_FILE) else {
        return false; // not made by sockbench, or still being made
    };
    let owner_gone = text
        .lines()
        .next()
        .and_then(|line| line.split_whitespace().next()?.parse().ok())
        .is_some_and(|pid| !alive_as(pid, &text));
    owner_gone && !recorded_server_runs(&text)
}

/// True when the server recorded in `dir`'s owner file ([`PrivateDir::record_server`])
/// still runs: the same process (start time) as the same account.
#[cfg(test)]
pub fn server_runs(dir: &Dir) -> bool {
    read_small(dir, OWNER_FILE).is_ok_and(|text| recorded_server_runs(&text))
}

/// True when the server an owner file's `text` records still runs.
fn recorded_server_runs(text: &str) -> bool {
    text.lines()
        .filter_map(|line| line.strip_prefix(SERVER))
        .any(|server| {
            let mut fields = server.split_whitespace().map(str::parse::<u64>);
            match (fields.next(), fields.next(), fields.next()) {
                (Some(Ok(pid)), Some(Ok(start)), Some(Ok(uid))) => {
                    u32::try_from(pid).ok().and_then(process) == Some(Process { start, uid })
                }
                _ => false,
            }
        })
}

/// The start of the regular file `name` in `dir` (never through a link, never
/// blocking), when it is a file of the account running now.
fn read_small(dir: &Dir, name: &str) -> std::io::Result<String> {
    let file = dir.open_read(name)?;
    if std::os::unix::fs::MetadataExt::uid(&file.metadata()?) != euid() {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text)?;
    Ok(text)
}

/// What starts the owner file's line for the server.
const SERVER: &str = "server ";

/// `PID START\n`, START being the process's start time in clock ticks since boot.
fn owner_line(pid: u32) -> String {
    format!("{pid} {}\n", start_time(pid).unwrap_or(0))
}

/// True when process `pid` runs and is the one `text` (an owner file) was written
/// for, by its first line.
fn alive_as(pid: u32, text: &str) -> bool {
    start_time(pid).is_some_and(|_| text.lines().next() == owner_line(pid).lines().next())
}

/// The start time of process `pid` while it runs.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    process(pid).map(|p| p.start)
}

/// A running process as the owner file records a server: its start time (so a
/// reused PID does not count) and its account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Process {
    start: u64,
    uid: u64,
}

/// Process `pid` while it runs (not exited, not a zombie): field 22 of
/// /proc/PID/stat, read after the command name (which may hold spaces), and the
/// owner of /proc/PID.
fn process(pid: u32) -> Option<Process> {
    use std::os::unix::fs::MetadataExt;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    if matches!(fields.next(), Some("Z" | "X") | None) {
        return None;
    }
    let start = fields.nth(18)?.parse().ok()?;
    let uid = std::fs::metadata(format!("/proc/{pid}")).ok()?.uid();
    Some(Process {
        start,
        uid: u64::from(uid),
    })
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

    fn kind(prefix: &'static str) -> DirKind {
        DirKind { prefix }
    }

    #[test]
    fn a_directory_is_kept_while_its_recorded_server_runs_and_no_pid_file_counts() {
        let parent = tempfile::tempdir().unwrap();
        let held = Dir::open(parent.path()).unwrap();
        let mut server = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        // As a run makes it, then killed: its owner gone, its server recorded.
        let (dir, name) = held.make_fresh_dir("sockbench-up-", 0o700).unwrap();
        dir.create_new(OWNER_FILE, 0o644).unwrap();
        let private = PrivateDir {
            parent: Dir::open(parent.path()).unwrap(),
            name: name.clone(),
            dir,
        };
        private.record_server(server.id()).unwrap();
        let text = fs::read_to_string(private.path().join(OWNER_FILE)).unwrap();
        let recorded = text.lines().nth(1).unwrap().to_string();
        let up = parent.path().join(&name);
        std::mem::forget(private);
        fs::write(up.join(OWNER_FILE), format!("4194305 1\n{recorded}\n")).unwrap();
        // The server account's pid file would name a living process (init); it is
        // not what counts.
        let make = |name: &str, server: Option<String>| {
            let dir = parent.path().join(name);
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join("server.pid"), "1\n").unwrap();
            let line = server.map(|s| format!("{s}\n")).unwrap_or_default();
            fs::write(dir.join(OWNER_FILE), format!("4194305 1\n{line}")).unwrap();
        };
        let fields: Vec<u64> = recorded
            .strip_prefix(SERVER)
            .unwrap()
            .split(' ')
            .map(|f| f.parse().unwrap())
            .collect();
        let (pid, start, uid) = (fields[0], fields[1], fields[2]);
        make("sockbench-up-pidfile", None);
        // The same PID started at another time (reused), or run by another account.
        make(
            "sockbench-up-reused",
            Some(format!("{SERVER}{pid} {} {uid}", start + 1)),
        );
        make(
            "sockbench-up-other",
            Some(format!("{SERVER}{pid} {start} {}", uid + 1)),
        );
        assert_eq!(sweep(&held, &[kind("sockbench-up-")]), 3);
        assert!(up.join(OWNER_FILE).exists(), "its server runs");
        assert_eq!(held.names().unwrap(), [name]);
        server.kill().unwrap();
        server.wait().unwrap();
        assert_eq!(sweep(&held, &[kind("sockbench-up-")]), 1);
        assert!(!up.exists());
    }

    #[test]
    fn the_owner_line_names_this_process() {
        let line = owner_line(std::process::id());
        assert!(alive_as(std::process::id(), &line), "{line}");
        let with_server = format!("{line}{SERVER}1 1 0\n");
        assert!(alive_as(std::process::id(), &with_server), "{with_server}");
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
