//! `sockbench report FILE…`: saved results as terminal tables, Markdown or HTML.

use crate::cli::ReportArgs;
use crate::families;
use crate::report;
use crate::results;
use anyhow::Result;

pub fn run(args: &ReportArgs) -> Result<()> {
    let files = args
        .files
        .iter()
        .map(|path| Ok((path.display().to_string(), load(path)?)))
        .collect::<Result<Vec<_>>>()?;
    let document = report::document(&files, &families::catalog());
    let text = args.render.format.exporter().render(&document);
    let inputs: Vec<&std::path::Path> = args.files.iter().map(|p| p.as_path()).collect();
    super::emit(&text, args.render.output.as_deref(), &inputs)
}

/// Loads a result file whose experiments this sockbench knows.
pub(super) fn load(path: &std::path::Path) -> Result<crate::results::ResultFile> {
    let catalog = families::catalog();
    results::load(path, |id| catalog.find(id).map(|e| e.headline))
}
