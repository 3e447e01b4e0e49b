//! The JSON result file, rewritten after every finished workload.
//!
//! Each write goes to a temporary file beside the target and is renamed over it, so
//! the file on disk is always a complete, valid result file: an interrupted or failed
//! run keeps everything that finished. The first write happens before any
//! measurement, so an unwritable path is reported at once.

use crate::error::usage;
use crate::results::{ResultFile, ResultRecord};
use anyhow::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// A result file being filled in.
pub struct JsonSink {
    path: PathBuf,
    file: ResultFile,
}

impl JsonSink {
    /// Writes `file` (usually with no results yet) to `path`, or says why it cannot.
    pub fn create(path: &Path, file: ResultFile) -> Result<JsonSink> {
        let sink = JsonSink {
            path: path.to_path_buf(),
            file,
        };
        sink.write().map_err(|e| {
            usage(format!(
                "cannot write the result file {}: {}; choose a writable path for --json",
                path.display(),
                e.root_cause()
            ))
        })?;
        Ok(sink)
    }

    /// Adds finished records and rewrites the file.
    pub fn push(&mut self, records: &[ResultRecord]) -> Result<()> {
        self.file.results.extend_from_slice(records);
        self.write()
            .with_context(|| format!("cannot update the result file {}", self.path.display()))
    }

    /// Changes something other than the results (e.g. a system fact learnt late)
    /// and rewrites the file.
    pub fn update(&mut self, change: impl FnOnce(&mut ResultFile)) -> Result<()> {
        change(&mut self.file);
        self.write()
            .with_context(|| format!("cannot update the result file {}", self.path.display()))
    }

    /// The file as written so far.
    pub fn file(&self) -> &ResultFile {
        &self.file
    }

    fn write(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.file)? + "\n";
        let name = self
            .path
            .file_name()
            .context("the path names no file")?
            .to_string_lossy();
        let temp = self
            .path
            .with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        fs::write(&temp, text)?;
        fs::rename(&temp, &self.path).inspect_err(|_| {
            let _ = fs::remove_file(&temp);
        })?;
        Ok(())
    }
}
