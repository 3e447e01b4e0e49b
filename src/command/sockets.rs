//! `sockbench sockets`: the raw transport experiments, their records saved and
//! printed as each workload finishes.

use super::Session;
use crate::cli::SocketsArgs;
use crate::results::file::Claim;
use crate::sockets::plan::SocketsPlan;
use crate::sockets::suite::measure;
use anyhow::Result;

pub fn run(args: &SocketsArgs, argv: Vec<String>) -> Result<()> {
    let plan = SocketsPlan::from_args(args)?;
    let json = plan.json.as_deref().map(|p| (p, Claim::Replace));
    let mut session = Session::open(json, argv, args.measuring.quiet)?;
    let progress = session.progress.clone();
    let outcome = measure(&plan, &progress, &mut session);
    session.finish(outcome)
}
