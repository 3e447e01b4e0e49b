//! Directories held open, and everything done inside them done through the
//! descriptor: the one way sockbench touches the file system where another local
//! account could change what a path means.
//!
//! Architecture invariant: as root, sockbench never acts by path inside a
//! directory another account can write. It opens such a directory once (from a
//! parent that account cannot change, without following a symbolic link), then
//! creates files with `O_EXCL|O_NOFOLLOW`, sets their mode and owner on the
//! descriptor, replaces them by renaming within the directory (which replaces a
//! planted symbolic link rather than writing through it), and removes trees entry by
//! entry through descriptors opened with `O_NOFOLLOW`. A directory swapped for a
//! symbolic link after it was opened changes nothing: the descriptor still names
//! the directory that was opened. The path to a directory (a `--json` or `--output`
//! file's, TMPDIR) is walked from `/` one component at a time, and a symbolic link
//! on the way is followed only when neither it nor the directory holding it is
//! another account's to change ([`Dir::open`]).

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Directories [`Dir::remove_tree`] holds open at once, the tree's top included
/// (each with a second descriptor while it is listed): PostgreSQL's data directory
/// is four levels deep; a deeper directory (a tree made to exhaust descriptors) is
/// moved up to the top and removed from there on the next pass, so a tree of any
/// depth goes.
const MAX_OPEN: usize = 16;
/// The most entries one [`Dir::remove_tree`] looks at, and the longest it takes: far
/// more than any tree sockbench makes holds (a cluster's, about a thousand), so
/// only a tree grown to hold up its removal is left, for the next sweep.
const MAX_ENTRIES: u64 = 1_000_000;
const MAX_TIME: Duration = Duration::from_secs(30);

/// A directory held open; `path` is only for messages.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The owner and group a file is handed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

/// What is at a name in a directory, seen without following a symbolic link.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub file_type: FileType,
    pub uid: u32,
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub size: u64,
}

impl Entry {
    fn of(stat: &rustix::fs::Stat) -> Entry {
        Entry {
            file_type: FileType::from_raw_mode(stat.st_mode),
            uid: stat.st_uid,
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode & 0o7777,
            size: stat.st_size as u64,
        }
    }

    /// "a directory", "a symbolic link", ... for messages.
    pub fn kind(&self) -> &'static str {
        match self.file_type {
            FileType::RegularFile => "a regular file",
            FileType::Directory => "a directory",
            FileType::Symlink => "a symbolic link",
            FileType::CharacterDevice | FileType::BlockDevice => "a device",
            FileType::Fifo => "a FIFO",
            FileType::Socket => "a socket",
            FileType::Unknown => "a special file",
        }
    }
}

/// The effective user ID sockbench runs as.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// How many symbolic links one path may go through, as the kernel allows.
const MAX_LINKS: usize = 40;

/// Opens the directory `path` one component at a time, from `/` or the working
/// directory, never following a symbolic link by itself. A link on the way is
/// followed (by reading it and going on from where it points) only when no other
/// account can have put it there or can change it: it belongs to root or to the
/// account running sockbench, and so does the directory holding it, which no
/// group or other account may write. Any other link is refused, named: in a
/// shared directory such as `/tmp`, another account could have planted it to send
/// sockbench's files into a directory of root's. Links the system makes, such as
/// `/var/run -> /run`, pass.
fn open_walking(path: &Path) -> io::Result<OwnedFd> {
    use std::path::Component;
    let start = if path.has_root() { "/" } else { "." };
    let mut at = rustix::fs::open(start, dir_flags(), Mode::empty())?;
    // The path walked so far, for messages.
    let mut shown = PathBuf::from(if path.has_root() { "/" } else { "" });
    // Components still to walk, the next one last.
    let mut left: Vec<OsString> = Vec::new();
    let push = |left: &mut Vec<OsString>, path: &Path| {
        for part in path.components().rev() {
            match part {
                Component::Normal(name) => left.push(name.to_os_string()),
                Component::ParentDir => left.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    push(&mut left, path);
    let mut links = 0;
    while let Some(name) = left.pop() {
        let err = match rustix::fs::openat(&at, name.as_os_str(), dir_flags(), Mode::empty()) {
            Ok(next) => {
                at = next;
                shown.push(&name);
                continue;
            }
            Err(e) => e,
        };
        // O_NOFOLLOW|O_DIRECTORY on a link fails with ENOTDIR or ELOOP.
        let stat = match rustix::fs::statat(&at, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => stat,
            _ => return Err(err.into()),
        };
        let link = shown.join(&name);
        trusted_link(&at, stat.st_uid).map_err(|why| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is a symbolic link {why}, which sockbench does not follow",
                    link.display()
                ),
            )
        })?;
        links += 1;
        if links > MAX_LINKS {
            return Err(rustix::io::Errno::LOOP.into());
        }
        let target = PathBuf::from(OsString::from_vec(
            rustix::fs::readlinkat(&at, name.as_os_str(), Vec::new())?.into_bytes(),
        ));
        if target.has_root() {
            at = rustix::fs::open("/", dir_flags(), Mode::empty())?;
            shown = PathBuf::from("/");
        }
        push(&mut left, &target);
    }
    Ok(at)
}

/// Why a symbolic link owned by `uid` in the directory `holder` may not be
/// followed, if it may not.
fn trusted_link(holder: &OwnedFd, uid: u32) -> Result<(), String> {
    let me = euid();
    if uid != 0 && uid != me {
        return Err(format!("of another account (uid {uid})"));
    }
    let dir = Entry::of(&rustix::fs::fstat(holder).map_err(|e| e.to_string())?);
    if (dir.uid != 0 && dir.uid != me) || dir.mode & 0o022 != 0 {
        return Err(format!(
            "in a directory another account can write (mode {:o}, uid {})",
            dir.mode, dir.uid
        ));
    }
    Ok(())
}

impl Dir {
    /// Opens the directory `path` as the user wrote it, through the symbolic links
    /// on the way that no other account controls (see [`open_walking`]).
    pub fn open(path: &Path) -> io::Result<Dir> {
        Ok(Dir {
            fd: open_walking(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The parent directory of `file` (`.` for a bare name) and the file's name.
    pub fn open_parent(file: &Path) -> io::Result<(Dir, OsString)> {
        let name = file
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let parent = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Ok((Dir::open(parent)?, name.to_os_string()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor's number, for `/proc/self/fd/N/…` paths that go through it.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.fd)
    }

    /// The path of `name` in this directory, for messages (`name` alone in `.`).
    pub fn join(&self, name: impl AsRef<OsStr>) -> PathBuf {
        if self.path == Path::new(".") {
            return PathBuf::from(name.as_ref());
        }
        self.path.join(name.as_ref())
    }

    /// The directory's own owner, mode and identity.
    pub fn entry(&self) -> io::Result<Entry> {
        Ok(Entry::of(&rustix::fs::fstat(&self.fd)?))
    }

    /// Sets this directory's own mode.
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        rustix::fs::fchmod(&self.fd, Mode::from_raw_mode(mode))?;
        Ok(())
    }

    /// Opens the directory `name` in this one; a symbolic link there is refused.
    pub fn open_dir(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let fd = rustix::fs::openat(&self.fd, name.as_ref(), dir_flags(), Mode::empty())?;
        Ok(Dir {
            fd,
            path: self.join(name),
        })
    }

    /// Makes the directory `name` with `mode` (less the umask), handed to `owner`,
    /// and opens it.
    pub fn make_dir(
        &self,
        name: impl AsRef<OsStr>,
        mode: u32,
        owner: Option<Owner>,
    ) -> io::Result<Dir> {
        rustix::fs::mkdirat(&self.fd, name.as_ref(), Mode::from_raw_mode(mode))?;
        let dir = self.open_dir(name)?;
        if let Some(o) = owner {
            fchown(&dir.fd, o)?;
        }
        Ok(dir)
    }

    /// Makes a new directory named `prefix` and random characters, with `mode`
    /// (less the umask), and opens it.
    pub fn make_fresh_dir(&self, prefix: &str, mode: u32) -> io::Result<(Dir, OsString)> {
        for _ in 0..100 {
            let name = OsString::from(format!("{prefix}{:012x}", random_u64() >> 16));
            match self.make_dir(&name, mode, None) {
                Ok(dir) => return Ok((dir, name)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free directory name",
        ))
    }

    /// What is at `name`, without following a symbolic link; `None` when nothing.
    pub fn entry_at(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Entry>> {
        match rustix::fs::statat(&self.fd, name.as_ref(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Entry::of(&stat))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the regular file `name` for reading; a symbolic link, FIFO or device
    /// there is refused without blocking.
    pub fn open_read(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rustix::fs::openat(&self.fd, name.as_ref(), flags, Mode::empty())?;
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(File::from(fd))
    }

    /// Creates the new file `name` (never an existing one, never through a link)
    /// with `mode` (less the umask), for writing.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name.as_ref(), flags, Mode::from_raw_mode(mode))?;
        Ok(File::from(fd))
    }

    /// A new file with a fresh name starting `.prefix.` and ending `.tmp`.
    pub fn create_temp(&self, prefix: &OsStr, mode: u32) -> io::Result<(File, OsString)> {
        for _ in 0..100 {
            let mut name = OsString::from(".");
            name.push(prefix);
            name.push(format!(".{:016x}.tmp", random_u64()));
            match self.create_new(&name, mode) {
                Ok(file) => return Ok((file, name)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temporary name",
        ))
    }

    /// Writes `bytes` as the file `name` with exactly `mode`, handed to `owner`:
    /// into a new temporary file renamed over `name`, so whatever was at `name` (a
    /// planted symbolic link included) is replaced, never written through.
    pub fn replace_file(
        &self,
        name: impl AsRef<OsStr>,
        bytes: &[u8],
        mode: u32,
        owner: Option<Owner>,
    ) -> io::Result<()> {
        let (mut file, temp) = self.create_temp(name.as_ref(), 0o600)?;
        let written = (|| {
            if let Some(o) = owner {
                fchown(file.as_fd(), o)?;
            }
            rustix::fs::fchmod(file.as_fd(), Mode::from_raw_mode(mode))?;
            file.write_all(bytes)?;
            file.flush()?;
            self.rename(&temp, name.as_ref())
        })();
        if written.is_err() {
            let _ = self.remove_file(&temp);
        }
        written
    }

    /// Renames `from` to `to` within this directory, replacing what is at `to`.
    pub fn rename(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from.as_ref(), &self.fd, to.as_ref())?;
        Ok(())
    }

    /// Renames `from` to `to` within this directory unless something is at `to`
    /// (an error of kind `AlreadyExists` then).
    pub fn rename_new(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::renameat_with(
            &self.fd,
            from.as_ref(),
            &self.fd,
            to.as_ref(),
            rustix::fs::RenameFlags::NOREPLACE,
        )?;
        Ok(())
    }

    /// Removes the file (or symbolic link, or socket) `name`.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name.as_ref(), AtFlags::empty())?;
        Ok(())
    }

    /// The names in this directory, without `.` and `..`.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }

    /// Removes `name` and, when it is a directory, everything in it, through
    /// descriptors only: a symbolic link is removed itself, never followed, and an
    /// entry swapped meanwhile is at worst left behind. At most [`MAX_OPEN`]
    /// directories are held open, however deep the tree, and at most
    /// [`MAX_ENTRIES`] entries and [`MAX_TIME`] are spent (an error of kind
    /// `TimedOut` then: trying again at once would not do better). Ok when nothing
    /// is left.
    pub fn remove_tree(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = name.as_ref();
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => return Ok(()),
            // Linux says EISDIR for a directory.
            Err(rustix::io::Errno::ISDIR) => {}
            Err(e) => return Err(e.into()),
        }
        let top = self.open_dir(name)?;
        let mut removal = Removal {
            top: &top,
            looked: 0,
            deadline: Instant::now() + MAX_TIME,
            changed: false,
            moved: 0,
            first_error: None,
        };
        // Each pass removes what lies within MAX_OPEN levels and moves what lies
        // deeper up to the top; it ends when a pass changes nothing.
        loop {
            removal.changed = false;
            removal.clear(&top, 1);
            if removal.spent() || !removal.changed {
                break;
            }
        }
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(removal.first_error.unwrap_or_else(|| e.into())),
        }
    }
}

/// One [`Dir::remove_tree`] under way.
struct Removal<'a> {
    /// The directory being emptied, where deeper directories are moved.
    top: &'a Dir,
    /// Entries looked at, against [`MAX_ENTRIES`].
    looked: u64,
    deadline: Instant,
    /// Whether this pass removed or moved anything.
    changed: bool,
    /// Directories moved up so far, for their fresh names.
    moved: u64,
    first_error: Option<io::Error>,
}

impl Removal<'_> {
    /// Removes what it can in `dir`, which is `held` directories down from the top
    /// (the top is 1), its subdirectories first; one that would be held beyond
    /// [`MAX_OPEN`] is moved up to the top instead, for the next pass.
    fn clear(&mut self, dir: &Dir, held: usize) {
        let entries = match rustix::fs::Dir::read_from(&dir.fd) {
            Ok(entries) => entries,
            Err(e) => return self.failed(e.into()),
        };
        for entry in entries {
            if self.spent() {
                return;
            }
            self.looked += 1;
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => return self.failed(e.into()),
            };
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            match rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {
                    self.changed = true;
                    continue;
                }
                Err(rustix::io::Errno::ISDIR) => {}
                Err(e) => {
                    self.failed(e.into());
                    continue;
                }
            }
            if held < MAX_OPEN {
                match dir.open_dir(name) {
                    Ok(inner) => self.clear(&inner, held + 1),
                    Err(e) => self.failed(e),
                }
            }
            match rustix::fs::unlinkat(&dir.fd, name, AtFlags::REMOVEDIR) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => self.changed = true,
                Err(rustix::io::Errno::NOTEMPTY) if held >= MAX_OPEN => self.move_up(dir, name),
                // Not emptied (an entry that could not go, or a new one): the next
                // pass, or the next sweep, tries again.
                Err(rustix::io::Errno::NOTEMPTY) => {}
                Err(e) => self.failed(e.into()),
            }
        }
    }

    /// Moves the directory `name` in `dir` to the top under a fresh name.
    fn move_up(&mut self, dir: &Dir, name: &OsStr) {
        for _ in 0..100 {
            self.moved += 1;
            let fresh = format!(".sockbench-deep-{}", self.moved);
            let flags = rustix::fs::RenameFlags::NOREPLACE;
            match rustix::fs::renameat_with(&dir.fd, name, &self.top.fd, &fresh, flags) {
                Ok(()) => {
                    self.changed = true;
                    return;
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return self.failed(e.into()),
            }
        }
    }

    /// True once the entries or the time are spent (noted as the error).
    fn spent(&mut self) -> bool {
        if self.looked < MAX_ENTRIES && Instant::now() < self.deadline {
            return false;
        }
        let noted = self.first_error.as_ref().map(io::Error::kind);
        if noted != Some(io::ErrorKind::TimedOut) {
            self.first_error = Some(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} holds more than {MAX_ENTRIES} entries or took more than {} s to \
                     remove; left for the next run",
                    self.top.path.display(),
                    MAX_TIME.as_secs()
                ),
            ));
        }
        true
    }

    fn failed(&mut self, e: io::Error) {
        self.first_error.get_or_insert(e);
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn fchown(fd: impl AsFd, owner: Owner) -> io::Result<()> {
    rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(owner.uid)),
        Some(rustix::fs::Gid::from_raw(owner.gid)),
    )?;
    Ok(())
}

/// A random number for temporary names (not a secret: `O_EXCL` makes them safe).
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

#[cfg(test)]
#[path = "dir_tests.rs"]
mod tests;
