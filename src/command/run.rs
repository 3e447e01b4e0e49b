//! `sockbench run` (and `sockbench` alone): the whole answer for this machine in
//! about a minute. The quick sockets suite, then, when PostgreSQL's programs are
//! found, the quick PostgreSQL suite on a throwaway cluster, both into one result
//! file, and a verdict in plain words at the end.

use super::{postgres, sockets, Session};
use crate::cli::{PostgresArgs, RunArgs, SocketsArgs};
use crate::export::json::Claim;
use crate::output::stdout;
use crate::plan::postgres::PostgresPlan;
use crate::plan::SocketsPlan;
use crate::postgres::bindir::Binaries;
use crate::report::verdict;
use anyhow::{Context, Result};
use clap::{Args, FromArgMatches};
use std::path::{Path, PathBuf};

/// Where results go when `--json` is not given.
const RESULTS_DIR: &str = "sockbench-results";

pub fn run(args: &RunArgs, argv: Vec<String>) -> Result<()> {
    let sockets_plan = SocketsPlan::from_args(&defaults::<SocketsArgs>(&["--quick"]))?;
    let mut pg_args = defaults::<PostgresArgs>(&["--quick"]);
    pg_args.pg_bindir = args.pg_bindir.clone();
    let pg_plan = PostgresPlan::from_args(&pg_args)?;
    // An explicit --pg-bindir that is wrong is an error; PostgreSQL simply not being
    // installed only leaves its half out.
    let postgres_found = match Binaries::find(args.pg_bindir.as_deref()) {
        Ok(_) => true,
        Err(_) if args.pg_bindir.is_none() => {
            eprintln!(
                "postgres: skipped, PostgreSQL's initdb and postgres were not found; install \
                 PostgreSQL (Debian/Ubuntu: apt-get install postgresql) or pass --pg-bindir DIR"
            );
            false
        }
        Err(e) => return Err(e),
    };
    let json = match &args.json {
        Some(path) => (path.clone(), Claim::Replace),
        None => (default_path()?, Claim::New),
    };
    let mut session = Session::open(Some((&json.0, json.1)), argv, args.quiet)?;
    let outcome = measure(
        &sockets_plan,
        postgres_found.then_some(&pg_plan),
        &mut session,
    );
    let saved = session.saved_to().map(Path::to_path_buf);
    session.finish(outcome)?;
    let Some(path) = saved else {
        return Ok(());
    };
    stdout::print(&format!(
        "Results saved to {}; share it, or render it with `sockbench report {} --format html \
         --output report.html`.\n",
        path.display(),
        path.display()
    ))
}

/// Both suites, then the verdict.
fn measure(
    sockets_plan: &SocketsPlan,
    pg_plan: Option<&PostgresPlan>,
    session: &mut Session,
) -> Result<()> {
    sockets::measure(sockets_plan, session)?;
    if let Some(plan) = pg_plan {
        postgres::measure(plan, session)?;
    }
    if let Some(file) = session.file() {
        stdout::print(&format!(
            "{}\n",
            verdict::text(&verdict::lines(&file.results))
        ))?;
    }
    Ok(())
}

/// A subcommand's arguments as if typed with only `extra`.
fn defaults<T: Args + FromArgMatches>(extra: &[&str]) -> T {
    let command = T::augment_args(clap::Command::new("sockbench"));
    let matches =
        command.get_matches_from(std::iter::once("sockbench").chain(extra.iter().copied()));
    T::from_arg_matches(&matches).expect("the built-in defaults parse")
}

/// `sockbench-results/<start time>.json`, creating the directory. The file itself is
/// claimed without replacing anything when the first experiment is saved.
fn default_path() -> Result<PathBuf> {
    let dir = Path::new(RESULTS_DIR);
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}; run from a writable directory or pass --json FILE",
            dir.display()
        )
    })?;
    let stamp = crate::timestamp::now_rfc3339().replace(':', "-");
    Ok(dir.join(format!("{stamp}.json")))
}
