//! `sockbench postgres`: the PostgreSQL suite, its records saved and printed as each
//! experiment finishes.

use super::Session;
use crate::cli::PostgresArgs;
use crate::postgres::measure::measure;
use crate::postgres::plan::PostgresPlan;
use crate::postgres::redact;
use crate::results::file::Claim;
use anyhow::Result;

pub fn run(args: &PostgresArgs, argv: Vec<String>) -> Result<()> {
    let plan = PostgresPlan::from_args(args)?;
    let json = plan.json.as_deref().map(|p| (p, Claim::Replace));
    let mut session = Session::open(json, redact::arguments(argv), args.measuring.quiet)?;
    let progress = session.progress.clone();
    let outcome = measure(&plan, &progress, &mut session);
    session.finish(outcome)
}
