//! `sockbench run` (and `sockbench` alone): the whole answer for this machine in
//! about two minutes. Each registered family's quick plan, in the registry's
//! order (the sockets suite, then, when PostgreSQL's programs are found, the
//! PostgreSQL suite on a throwaway cluster, …), all into one result file, and a
//! verdict in plain words at the end. This file names no family: what each one adds
//! is its [`RunPart`](crate::report::family::RunPart).

use super::{foretell, sweep_leftovers, Printing, Session};
use crate::cli::{self, RunArgs};
use crate::dir::{euid, Dir};
use crate::error::usage;
use crate::families::{self, FAMILIES};
use crate::harness::estimate::Estimate;
use crate::report::family::Plan;
use crate::results::file::{Claim, JsonSink};
use crate::results::ResultFile;
use anyhow::{Context, Result};
use clap::ArgMatches;
use std::path::Path;

/// Where results go when `--json` is not given.
const RESULTS_DIR: &str = "sockbench-results";

pub fn run(args: &RunArgs, argv: Vec<String>) -> Result<()> {
    let matches = run_matches(&argv)?;
    // Every plan is checked before anything is measured or the result file claimed.
    let mut plans: Vec<Box<dyn Plan>> = Vec::new();
    for quick in FAMILIES.iter().filter_map(|f| f.run).map(|r| r.plan) {
        plans.extend(quick(&matches)?);
    }
    let command = ResultFile::new(families::redact_arguments(argv));
    let system = command.system.clone();
    let sink = match &args.output.json {
        Some(path) => JsonSink::create(path, Claim::Replace, command)?,
        None => default_sink(command)?,
    };
    sweep_leftovers();
    let mut session = Session::open(
        Some(sink),
        system,
        Printing {
            quiet: args.output.quiet || plans.iter().any(|p| p.prints_progress()),
            tables: args.output.tables,
            experiments: Some(plans.iter().map(|p| p.experiments()).sum()),
        },
    );
    foretell(
        &session.progress,
        Estimate::of_command(plans.iter().map(|p| p.estimate())),
    );
    let outcome = measure(&plans, &mut session);
    session.finish(outcome)
}

/// The arguments of `run` as clap matches them, for the families' quick plans: a
/// family reads its own option of `run` (declared by its `RunPart::options`) from
/// these, by its id, as its `plan` reads its own command's. `cli::parse_from` keeps
/// only the `RunArgs` they became, so `argv` (already accepted) is matched again
/// here. `sockbench` alone is `run` with no arguments.
fn run_matches(argv: &[String]) -> Result<ArgMatches> {
    let parse = |args: &[&str]| {
        cli::command()
            .try_get_matches_from(std::iter::once("sockbench").chain(args.iter().copied()))
    };
    let given: Vec<&str> = argv.iter().map(String::as_str).collect();
    let matches = match parse(&given)?.subcommand() {
        Some(("run", run)) => run.clone(),
        _ => parse(&["run"])?
            .subcommand_matches("run")
            .cloned()
            .context("the command line has no `run`")?,
    };
    Ok(matches)
}

/// Every family's plan in turn; the session ends with the verdict.
fn measure(plans: &[Box<dyn Plan>], session: &mut Session) -> Result<()> {
    let progress = session.progress.clone();
    for plan in plans {
        plan.measure(&progress, session)?;
    }
    Ok(())
}

/// `sockbench-results/<start time>.json`, creating the directory. The file itself is
/// claimed without replacing anything when the first experiment is saved. The
/// directory is opened once, never through a symbolic link, and must be this
/// account's: in a shared directory another account could have put a link or a
/// directory of its own there.
fn default_sink(command: ResultFile) -> Result<JsonSink> {
    let refuse = |why: String| {
        usage(format!(
            "cannot use {RESULTS_DIR}/ for the result file: {why}; run from a writable \
             directory of your own or pass --json FILE"
        ))
    };
    let here = Dir::open(Path::new(".")).map_err(|e| refuse(e.to_string()))?;
    let dir = match here.make_dir(RESULTS_DIR, 0o777, None) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match here.entry_at(RESULTS_DIR) {
                Ok(Some(entry)) if entry.file_type != rustix::fs::FileType::Directory => {
                    return Err(refuse(format!("it is {}", entry.kind())));
                }
                _ => here
                    .open_dir(RESULTS_DIR)
                    .map_err(|e| refuse(e.to_string()))?,
            }
        }
        Err(e) => return Err(refuse(e.to_string())),
    };
    let owner = dir.entry().map_err(|e| refuse(e.to_string()))?.uid;
    if owner != euid() {
        return Err(refuse(format!(
            "it belongs to another account (uid {owner})"
        )));
    }
    let stamp = crate::timestamp::now_rfc3339().replace(':', "-");
    JsonSink::create_in(dir, format!("{stamp}.json").into(), Claim::New, command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick_plans(argv: &[&str]) -> Result<Vec<Box<dyn Plan>>> {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let matches = run_matches(&argv)?;
        let mut plans = Vec::new();
        for quick in FAMILIES.iter().filter_map(|f| f.run).map(|r| r.plan) {
            plans.extend(quick(&matches)?);
        }
        Ok(plans)
    }

    #[test]
    fn sockbench_alone_is_run_with_its_defaults() {
        let alone = quick_plans(&[]).unwrap();
        let run = quick_plans(&["run"]).unwrap();
        assert!(!alone.is_empty());
        assert_eq!(
            alone.iter().map(|p| p.experiments()).collect::<Vec<_>>(),
            run.iter().map(|p| p.experiments()).collect::<Vec<_>>()
        );
    }

    /// What `sockbench run` foresees for itself stays within the two minutes the
    /// README promises, every installed family counted and, as root, the container
    /// comparison (`bench/run-time.sh` measures the run itself: the foreseen time
    /// was within 1% of the measured 107.5 s on 2 quiet cores).
    #[test]
    fn the_default_run_is_foreseen_within_two_minutes() {
        let plans = quick_plans(&["run"]).unwrap();
        let foreseen = Estimate::of_command(plans.iter().map(|p| p.estimate())).expected_s();
        assert!(
            foreseen <= 120.0,
            "sockbench run foresees {foreseen:.0} s for {} experiments",
            plans.iter().map(|p| p.experiments()).sum::<usize>()
        );
    }

    #[test]
    fn an_option_of_run_reaches_the_family_it_is_for() {
        let Err(e) = quick_plans(&["run", "--json", "x.json", "--pg-bindir", "/nonexistent/bin"])
        else {
            panic!("a --pg-bindir that is not there was accepted");
        };
        assert!(format!("{e:#}").contains("/nonexistent/bin"), "{e:#}");
    }
}
