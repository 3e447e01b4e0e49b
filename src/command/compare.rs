//! `sockbench compare A.json B.json`: two runs side by side.

use super::report::load;
use crate::cli::CompareArgs;
use crate::families;
use crate::report::compare;
use anyhow::Result;

pub fn run(args: &CompareArgs) -> Result<()> {
    let (a_name, b_name) = (args.a.display().to_string(), args.b.display().to_string());
    let (a, b) = (load(&args.a)?, load(&args.b)?);
    let document = compare::document((&a_name, &a), (&b_name, &b), &families::catalog());
    super::emit(
        &args.render.format.exporter().render(&document),
        args.render.output.as_deref(),
        &[&args.a, &args.b],
    )
}
