//! The JSON result file, rewritten after every finished workload.
//!
//! Each write goes to a new temporary file beside the target and is renamed over it,
//! so the file on disk is always a complete, valid result file: an interrupted or
//! failed run keeps everything that finished. The directory is opened once, when the
//! run starts, and every write goes through that descriptor ([`crate::dir`]): a
//! directory swapped for a symbolic link meanwhile changes nothing. The rename is
//! only ever done over a regular file of the account running sockbench that is a
//! sockbench result file (whose mode the new one keeps), or onto a new path: a
//! device such as /dev/full, a FIFO, a symlink, a directory, another account's file
//! or any other file (a `--script`, say) is refused in one line rather than replaced.
//!
//! The path is checked before any measurement, so a bad one fails at once, but the
//! file is first written when the first experiment finishes: a run whose setup fails
//! leaves no empty result file behind. A default path (`sockbench run` without
//! `--json`) is claimed without replacing anything, so two runs started in the same
//! second get two files.

use crate::dir::{euid, Dir, Entry};
use crate::error::usage;
use crate::results::{ResultFile, ResultRecord};
use anyhow::{Context, Result};
use rustix::fs::FileType;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Whether the result file may replace a file already at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `--json FILE`: a result file there is replaced (its mode kept).
    Replace,
    /// A path sockbench chose: never replace; if a file appears there first, take the
    /// next free name (`NAME-2.json`, …).
    New,
}

/// A result file being filled in: in a directory, or (`--json -`) in memory until
/// the run ends and it goes to standard output.
pub struct JsonSink {
    /// None for standard output.
    dir: Option<Dir>,
    name: OsString,
    claim: Claim,
    file: ResultFile,
    written: bool,
}

impl JsonSink {
    /// Checks that `path` can take the result file, or says why it cannot.
    /// `-` is standard output.
    pub fn create(path: &Path, claim: Claim, file: ResultFile) -> Result<JsonSink> {
        if path == Path::new("-") {
            return Ok(JsonSink {
                dir: None,
                name: "-".into(),
                claim,
                file,
                written: false,
            });
        }
        let (dir, name) = Dir::open_parent(path).map_err(|e| refusal(path, &e.to_string()))?;
        JsonSink::create_in(dir, name, claim, file)
    }

    /// Checks that `name` in the directory `dir` can take the result file.
    pub fn create_in(dir: Dir, name: OsString, claim: Claim, file: ResultFile) -> Result<JsonSink> {
        let path = dir.join(&name);
        if let Some(entry) = replaceable(&dir, &name).map_err(|e| refusal(&path, &e))? {
            if claim == Claim::Replace && entry.size > 0 && !is_result_file(&dir, &name) {
                return Err(refusal(
                    &path,
                    "it is not a sockbench result file, and sockbench replaces only its own \
                     result files",
                ));
            }
        }
        // Proves the directory takes new files now rather than after the first
        // experiment.
        let (_, probe) = dir
            .create_temp(&name, 0o600)
            .map_err(|e| refusal(&path, &e.to_string()))?;
        let _ = dir.remove_file(&probe);
        Ok(JsonSink {
            dir: Some(dir),
            name,
            claim,
            file,
            written: false,
        })
    }

    /// Adds finished records and rewrites the file.
    pub fn push(&mut self, records: &[ResultRecord]) -> Result<()> {
        self.file.results.extend_from_slice(records);
        self.write()
    }

    /// Changes something other than the results (e.g. a system fact learnt late);
    /// the file is rewritten if it has been written already.
    pub fn update(&mut self, change: impl FnOnce(&mut ResultFile)) -> Result<()> {
        change(&mut self.file);
        if self.written {
            self.write()?;
        }
        Ok(())
    }

    /// Where the file is, once it has been written.
    pub fn written_to(&self) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        self.written.then(|| dir.join(&self.name))
    }

    /// Whether the file goes to standard output when the run ends.
    pub fn to_stdout(&self) -> bool {
        self.dir.is_none()
    }

    /// The file as JSON text.
    pub fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(&self.file)? + "\n")
    }

    fn write(&mut self) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let text = self.json()?;
        let path = dir.join(&self.name);
        self.replace_with(text.as_bytes())
            .with_context(|| format!("cannot write the result file {}", path.display()))?;
        self.written = true;
        Ok(())
    }

    fn replace_with(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let before = replaceable(dir, &self.name).map_err(anyhow::Error::msg)?;
        let (temp, temp_name) = scratch_file(dir, &self.name, before.as_ref(), bytes)?;
        drop(temp);
        let placed = if self.claim == Claim::Replace || self.written {
            dir.rename(&temp_name, &self.name).map_err(Into::into)
        } else {
            self.place_new(&temp_name)
        };
        if placed.is_err() {
            if let Some(dir) = &self.dir {
                let _ = dir.remove_file(&temp_name);
            }
        }
        placed
    }

    /// Renames the temporary file to the first free one of `NAME`, `NAME-2`, ….
    fn place_new(&mut self, temp: &OsStr) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let base = self.name.clone();
        for n in 2..1000 {
            match dir.rename_new(temp, &self.name) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    self.name = numbered(&base, n);
                }
                Err(e) => return Err(e.into()),
            }
        }
        anyhow::bail!("no free name beside {}", dir.join(&base).display())
    }
}

/// The one line that refuses a result path.
fn refusal(path: &Path, why: &str) -> anyhow::Error {
    usage(format!(
        "cannot write the result file {}: {why}; choose a writable path for --json",
        path.display()
    ))
}

/// What is at `name` now, when sockbench may replace it: nothing, or a regular file
/// of the account running sockbench. Anything else is an error naming what it is.
pub fn replaceable(dir: &Dir, name: &OsStr) -> Result<Option<Entry>, String> {
    let entry = match dir.entry_at(name) {
        Ok(None) => return Ok(None),
        Ok(Some(entry)) => entry,
        Err(e) => return Err(e.to_string()),
    };
    if entry.file_type != FileType::RegularFile {
        return Err(format!(
            "it is {}, not a regular file, and would be replaced",
            entry.kind()
        ));
    }
    if entry.uid != euid() {
        return Err(format!(
            "it belongs to another account (uid {}), and sockbench does not replace \
             another account's file",
            entry.uid
        ));
    }
    Ok(Some(entry))
}

/// True when the regular file `name` is a sockbench result file.
fn is_result_file(dir: &Dir, name: &OsStr) -> bool {
    const LIMIT: u64 = 256 << 20;
    let Ok(file) = dir.open_read(name) else {
        return false;
    };
    let mut text = String::new();
    if file.take(LIMIT).read_to_string(&mut text).is_err() {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v.get("schema_version").is_some() && v.get("results").is_some())
}

/// A new temporary file beside `name` in `dir` (created exclusively) holding
/// `bytes`, with the mode of the file it will replace; a new file gets 0666 less
/// the umask.
pub fn scratch_file(
    dir: &Dir,
    name: &OsStr,
    replaces: Option<&Entry>,
    bytes: &[u8],
) -> Result<(std::fs::File, OsString)> {
    let (mut temp, temp_name) = dir.create_temp(name, 0o666)?;
    let filled = (|| -> Result<()> {
        if let Some(entry) = replaces {
            rustix::fs::fchmod(&temp, rustix::fs::Mode::from_raw_mode(entry.mode))?;
        }
        temp.write_all(bytes)?;
        temp.flush()?;
        Ok(())
    })();
    match filled {
        Ok(()) => Ok((temp, temp_name)),
        Err(e) => {
            let _ = dir.remove_file(&temp_name);
            Err(e)
        }
    }
}

/// `name-N.ext` for `name.ext`.
fn numbered(name: &OsStr, n: u32) -> OsString {
    let path = Path::new(name);
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match path.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()).into(),
        None => format!("{stem}-{n}").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

    fn sink(path: &Path, claim: Claim) -> Result<JsonSink> {
        JsonSink::create(path, claim, ResultFile::new(vec!["test".into()]))
    }

    #[test]
    fn special_files_and_links_are_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        fs::write(&target, "theirs").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for path in [
            Path::new("/dev/null"),
            Path::new("/dev/full"),
            &link,
            dir.path(),
        ] {
            let e = sink(path, Claim::Replace).err().expect("refused");
            assert_eq!(crate::error::exit_code(&e), 2);
            let text = format!("{e:#}");
            assert!(
                text.contains("not a regular file") && !text.contains('\n'),
                "{text}"
            );
        }
        assert!(fs::symlink_metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "theirs");
    }

    #[test]
    fn a_regular_file_is_replaced_keeping_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.json");
        let old = r#"{"schema_version": 3, "results": []}"#;
        fs::write(&path, old).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let mut s = sink(&path, Claim::Replace).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            old,
            "written before a result"
        );
        s.push(&[]).unwrap();
        assert!(fs::read_to_string(&path)
            .unwrap()
            .contains("schema_version"));
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn files_that_are_not_this_accounts_result_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("bench.sql");
        fs::write(&script, "SELECT 1;").unwrap();
        let e = sink(&script, Claim::Replace).err().expect("refused");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(
            format!("{e:#}").contains("not a sockbench result file"),
            "{e:#}"
        );
        assert_eq!(fs::read_to_string(&script).unwrap(), "SELECT 1;");

        let empty = dir.path().join("empty.json");
        fs::write(&empty, "").unwrap();
        sink(&empty, Claim::Replace).expect("an empty file may be replaced");

        if euid() == 0 {
            let theirs = dir.path().join("theirs.json");
            fs::write(&theirs, r#"{"schema_version": 3, "results": []}"#).unwrap();
            fs::set_permissions(&theirs, fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65_534), Some(65_534)).unwrap();
            let e = sink(&theirs, Claim::Replace).err().expect("refused");
            assert!(format!("{e:#}").contains("another account"), "{e:#}");
        }
    }

    #[test]
    fn a_new_path_is_never_taken_from_someone_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let mut first = sink(&path, Claim::New).unwrap();
        let mut second = sink(&path, Claim::New).unwrap();
        assert!(!path.exists(), "nothing written before a result");
        first.push(&[]).unwrap();
        second.push(&[]).unwrap();
        assert_eq!(first.written_to(), Some(path.clone()));
        assert_eq!(second.written_to(), Some(dir.path().join("run-2.json")));
        second.push(&[]).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
