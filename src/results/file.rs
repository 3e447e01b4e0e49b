//! The JSON result file, rewritten after every finished workload.
//!
//! Each write goes to a new temporary file beside the target and is renamed over it,
//! so the file on disk is always a complete, valid result file: an interrupted or
//! failed run keeps everything that finished. The rename is only ever done over a
//! regular file (whose mode, and owner when sockbench is root, the new one keeps) or
//! onto a new path: a device such as /dev/full, a FIFO, a symlink or a directory is
//! refused in one line rather than replaced.
//!
//! The path is checked before any measurement, so a bad one fails at once, but the
//! file is first written when the first experiment finishes: a run whose setup fails
//! leaves no empty result file behind. A default path (`sockbench run` without
//! `--json`) is claimed without replacing anything, so two runs started in the same
//! second get two files.

use crate::error::usage;
use crate::results::{ResultFile, ResultRecord};
use anyhow::{Context, Result};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Whether the result file may replace a file already at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `--json FILE`: a regular file there is replaced (its mode kept).
    Replace,
    /// A path sockbench chose: never replace; if a file appears there first, take the
    /// next free name (`NAME-2.json`, …).
    New,
}

/// A result file being filled in.
pub struct JsonSink {
    path: PathBuf,
    claim: Claim,
    file: ResultFile,
    written: bool,
}

impl JsonSink {
    /// Checks that `path` can take the result file, or says why it cannot.
    pub fn create(path: &Path, claim: Claim, file: ResultFile) -> Result<JsonSink> {
        let refuse = |why: String| {
            usage(format!(
                "cannot write the result file {}: {why}; choose a writable path for --json",
                path.display()
            ))
        };
        existing(path).map_err(|e| refuse(format!("{e:#}")))?;
        // Proves the directory takes new files now rather than after the first
        // experiment; the probe file is removed when it drops.
        scratch_file(path, None).map_err(|e| refuse(e.root_cause().to_string()))?;
        Ok(JsonSink {
            path: path.to_path_buf(),
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

    /// The file as measured so far.
    pub fn file(&self) -> &ResultFile {
        &self.file
    }

    /// Where the file is, once it has been written.
    pub fn written_to(&self) -> Option<&Path> {
        self.written.then_some(self.path.as_path())
    }

    fn write(&mut self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.file)? + "\n";
        self.replace_with(text.as_bytes())
            .with_context(|| format!("cannot write the result file {}", self.path.display()))?;
        self.written = true;
        Ok(())
    }

    fn replace_with(&mut self, bytes: &[u8]) -> Result<()> {
        let before = existing(&self.path)?;
        let mut temp = scratch_file(&self.path, before.as_ref())?;
        temp.write_all(bytes)?;
        temp.flush()?;
        if self.claim == Claim::Replace || self.written {
            temp.persist(&self.path)?;
            return Ok(());
        }
        let base = self.path.clone();
        for n in 2..1000 {
            match temp.persist_noclobber(&self.path) {
                Ok(_) => return Ok(()),
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                    temp = e.file;
                    self.path = numbered(&base, n);
                }
                Err(e) => return Err(e.error.into()),
            }
        }
        anyhow::bail!("no free name beside {}", base.display())
    }
}

/// What is at `path` now: nothing, or a regular file (its metadata); anything else
/// is an error naming what it is.
fn existing(path: &Path) -> Result<Option<fs::Metadata>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_file() {
        return Ok(Some(meta));
    }
    anyhow::bail!(
        "it is {}, not a regular file, and would be replaced",
        crate::input::kind(&meta.file_type())
    )
}

/// A new temporary file beside `path` (created exclusively), with the mode, and as
/// root the owner, of the file it will replace; a new file gets 0666 less the umask.
fn scratch_file(path: &Path, replaces: Option<&fs::Metadata>) -> Result<tempfile::NamedTempFile> {
    let name = path.file_name().context("the path names no file")?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(meta) = replaces {
        let file = temp.as_file();
        file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        // SAFETY: a plain syscall.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()))?;
        }
    }
    Ok(temp)
}

/// `dir/name-N.ext` for `dir/name.ext`.
fn numbered(path: &Path, n: u32) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

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
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let mut s = sink(&path, Claim::Replace).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "old",
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
    fn a_new_path_is_never_taken_from_someone_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let mut first = sink(&path, Claim::New).unwrap();
        let mut second = sink(&path, Claim::New).unwrap();
        assert!(!path.exists(), "nothing written before a result");
        first.push(&[]).unwrap();
        second.push(&[]).unwrap();
        assert_eq!(first.written_to(), Some(path.as_path()));
        assert_eq!(
            second.written_to(),
            Some(dir.path().join("run-2.json").as_path())
        );
        second.push(&[]).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
