//! `sockbench compare A.json B.json`: two runs side by side.

use crate::cli::CompareArgs;
use crate::export::exporter;
use crate::report::{self, compare};
use anyhow::Result;

pub fn run(args: &CompareArgs) -> Result<()> {
    let (a_name, b_name) = (args.a.display().to_string(), args.b.display().to_string());
    let (a, b) = (report::load(&args.a)?, report::load(&args.b)?);
    let document = compare::document((&a_name, &a), (&b_name, &b));
    super::emit(
        &exporter(args.render.format).render(&document),
        args.render.output.as_deref(),
    )
}
