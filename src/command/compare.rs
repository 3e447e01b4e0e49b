//! `sockbench compare A.json B.json [C.json …]`: runs side by side, A the baseline.

use super::report::load;
use crate::cli::CompareArgs;
use crate::error::usage;
use crate::export::Format;
use crate::families;
use crate::report::compare;
use anyhow::Result;

pub fn run(args: &CompareArgs) -> Result<()> {
    if args.render.format == Format::Csv {
        return Err(usage(
            "compare has no CSV form (its rows are comparisons, not records); use --format \
             json for its numbers, or report --format csv for every file's records",
        ));
    }
    let paths = args.files();
    let files = paths
        .iter()
        .map(|path| Ok((path.display().to_string(), load(path)?)))
        .collect::<Result<Vec<_>>>()?;
    let document = compare::document(&files, &families::catalog());
    super::emit(
        &args.render.format.exporter().render(&document),
        args.render.output.as_deref(),
        &paths,
    )
}
