//! `sockbench run` (and `sockbench` alone): the whole answer for this machine in
//! two to three minutes. The quick sockets suite, then, when PostgreSQL's programs are
//! found, the quick PostgreSQL suite on a throwaway cluster, both into one result
//! file, and a verdict in plain words at the end.

use super::{Printing, Session};
use crate::cli::RunArgs;
use crate::dir::{euid, Dir};
use crate::error::usage;
use crate::plan::Measuring;
use crate::postgres::args::PostgresArgs;
use crate::postgres::bindir::Binaries;
use crate::postgres::plan::PostgresPlan;
use crate::results::file::{Claim, JsonSink};
use crate::results::ResultFile;
use crate::sockets::args::SocketsArgs;
use crate::sockets::plan::SocketsPlan;
use anyhow::Result;
use std::path::Path;

/// Where results go when `--json` is not given.
const RESULTS_DIR: &str = "sockbench-results";

pub fn run(args: &RunArgs, argv: Vec<String>) -> Result<()> {
    let sockets_plan = SocketsPlan::from_args(&SocketsArgs {
        measuring: Measuring::quick(),
        ..SocketsArgs::default()
    })?;
    let pg_plan = PostgresPlan::from_args(&PostgresArgs {
        measuring: Measuring::quick(),
        pg_bindir: args.pg_bindir.clone(),
        ..PostgresArgs::default()
    })?;
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
    let command = ResultFile::new(argv);
    let sink = match &args.json {
        Some(path) => JsonSink::create(path, Claim::Replace, command)?,
        None => default_sink(command)?,
    };
    let experiments = sockets_plan.workloads.len()
        + if postgres_found {
            pg_plan.experiments.len()
        } else {
            0
        };
    let mut session = Session::open(
        Some(sink),
        Printing {
            quiet: args.quiet,
            tables: args.tables,
            experiments: Some(experiments),
        },
    );
    let outcome = measure(
        &sockets_plan,
        postgres_found.then_some(&pg_plan),
        &mut session,
    );
    session.finish(outcome)
}

/// Both suites; the session ends with the verdict.
fn measure(
    sockets_plan: &SocketsPlan,
    pg_plan: Option<&PostgresPlan>,
    session: &mut Session,
) -> Result<()> {
    let progress = session.progress.clone();
    crate::sockets::suite::measure(sockets_plan, &progress, session)?;
    if let Some(plan) = pg_plan {
        crate::postgres::measure::measure(plan, &progress, session)?;
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
