//! `sockbench report FILE|DIR…`: saved results as terminal tables, Markdown, HTML,
//! CSV or JSON. A directory stands for the result files in it.

use crate::cli::ReportArgs;
use crate::error::usage;
use crate::families;
use crate::report;
use crate::results;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub fn run(args: &ReportArgs) -> Result<()> {
    let mut paths = Vec::new();
    for path in &args.files {
        paths.extend(expand(path)?);
    }
    let files = paths
        .iter()
        .map(|path| Ok((path.display().to_string(), load(path)?)))
        .collect::<Result<Vec<_>>>()?;
    let document = report::document(&files, &families::catalog());
    let text = args.render.format.exporter().render(&document);
    let inputs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    super::emit(&text, args.render.output.as_deref(), &inputs)
}

/// A directory's `*.json` files in name order; any other path as it is (the loader
/// then checks it). Each file found is read by the loader like one named, with its
/// checks: a file in the directory that is not a result file is refused, not
/// skipped, so a report never leaves out a run without saying so.
fn expand(path: &Path) -> Result<Vec<PathBuf>> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| usage(format!("cannot read the directory {}: {e}", path.display())))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(usage(format!(
            "{} holds no result files (*.json); give a result file or a directory of them",
            path.display()
        )));
    }
    Ok(found)
}

/// Loads a result file whose experiments this sockbench knows.
pub(super) fn load(path: &Path) -> Result<crate::results::ResultFile> {
    let catalog = families::catalog();
    results::load(path, |id| catalog.find(id).map(|e| e.declared()))
}
