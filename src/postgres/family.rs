//! What the registry composes from the PostgreSQL family besides its command: its
//! quick plan for `sockbench run`, the directories its throwaway clusters leave
//! when a run is killed, and its redaction of passwords.

use super::args::PostgresArgs;
use super::bindir::Binaries;
use super::plan::{LeftOut, PostgresPlan};
use crate::container::Network;
use crate::leftovers::DirKind;
use crate::plan::{Measuring, DEFAULT_TRANSPORTS};
use crate::report::family::{Plan, Redaction};
use crate::transport::Transport;
use anyhow::Result;
use std::path::PathBuf;

/// `run`'s `--pg-bindir`, which [`quick`] reads.
pub fn run_options(run: clap::Command) -> clap::Command {
    run.arg(
        clap::Arg::new(PG_BINDIR)
            .long("pg-bindir")
            .value_name("DIR")
            .value_parser(clap::value_parser!(PathBuf))
            .help(
                "Directory holding PostgreSQL's initdb and postgres [default: from pg_config, \
                 then the newest /usr/lib/postgresql/*/bin, then PATH]",
            ),
    )
}

/// The id of `run`'s `--pg-bindir`.
const PG_BINDIR: &str = "pg_bindir";

/// `postgres --quick` on a throwaway cluster, with `run`'s `--pg-bindir`. An
/// explicit `--pg-bindir` that is wrong is an error; PostgreSQL simply not being
/// installed only leaves the family out, in one line.
pub fn quick(run: &clap::ArgMatches) -> Result<Option<Box<dyn Plan>>> {
    let pg_bindir = run.get_one::<PathBuf>(PG_BINDIR).cloned();
    // As root, one container comparison: the query round trip over a published
    // port, the bridge and a shared socket, beside the host's transports.
    let contained: Vec<Transport> = CONTAINED
        .into_iter()
        .filter(|t| t.crossing().and_then(Network::missing).is_none())
        .collect();
    let mut transports = DEFAULT_TRANSPORTS.to_vec();
    transports.extend(&contained);
    let mut plan = PostgresPlan::from_args(&PostgresArgs {
        measuring: Measuring::quick(),
        pg_bindir: pg_bindir.clone(),
        transports: Some(transports),
        ..PostgresArgs::default()
    })?;
    plan.left_out = LeftOut {
        query_only: contained,
        auth: vec![Transport::Tcp, Transport::Tls],
    };
    match Binaries::find(pg_bindir.as_deref()) {
        Ok(_) => Ok(Some(Box::new(plan))),
        Err(_) if pg_bindir.is_none() => {
            eprintln!(
                "postgres: skipped, PostgreSQL's initdb and postgres were not found; install \
                 PostgreSQL (Debian/Ubuntu: apt-get install postgresql) or pass --pg-bindir DIR"
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The ways into a container `run` measures the query over, as root.
const CONTAINED: [Transport; 3] = [
    Transport::Published,
    Transport::Bridge,
    Transport::UnixShared,
];

/// A throwaway cluster's directory (`cluster.rs`), with its data directory in
/// `data/`; it records its postmaster in its owner file, so the sweep keeps it
/// while that postmaster runs.
pub const CLUSTER: DirKind = DirKind {
    prefix: "sockbench-pg-",
};

/// Passwords in connection strings, found by libpq's own parse (`redact.rs`).
pub const REDACTION: Redaction = Redaction {
    argument: super::redact::argument,
    message: super::redact::message,
};
