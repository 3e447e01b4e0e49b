//! `sockbench report FILE…`: saved results as terminal tables, Markdown or HTML.

use crate::cli::ReportArgs;
use crate::export::exporter;
use crate::report;
use anyhow::Result;

pub fn run(args: &ReportArgs) -> Result<()> {
    let files = args
        .files
        .iter()
        .map(|path| Ok((path.display().to_string(), report::load(path)?)))
        .collect::<Result<Vec<_>>>()?;
    let text = exporter(args.render.format).render(&report::document(&files));
    super::emit(&text, args.render.output.as_deref())
}
