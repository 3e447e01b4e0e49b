//! The PostgreSQL family: a throwaway cluster sockbench runs itself (or the user's
//! servers), reached through libpq, and the experiments of the PostgreSQL suite.

pub(crate) mod account;
pub mod args;
pub mod bindir;
pub mod cluster;
#[cfg(test)]
pub(crate) mod cluster_tests;
pub(crate) mod describe;
pub(crate) mod experiment;
pub(crate) mod family;
pub mod hba;
pub(crate) mod keys;
pub mod libpq;
mod listeners;
#[cfg(test)]
mod listeners_tests;
pub(crate) mod measure;
pub mod plan;
pub(crate) mod preflight;
mod process;
pub(crate) mod redact;
pub(crate) mod script;
#[cfg(test)]
mod security_tests;
pub(crate) mod suite;
mod tamper;
pub(crate) mod targets;

use crate::report::experiment::Family;
use crate::report::family::RunPart;
use crate::transport::Transport;
use clap::{Args, FromArgMatches};

/// The family as `families.rs` registers it.
pub static FAMILY: Family = Family {
    name: "postgres",
    // Every transport whose place libpq can reach and whose kind it speaks; those
    // into a container reach a second cluster started in one (`cluster.rs`).
    transports: &[
        Transport::Unix,
        Transport::UnixAbstract,
        Transport::Tcp,
        Transport::Tcp6,
        Transport::Tls,
        Transport::Veth,
        Transport::Bridge,
        Transport::Published,
        Transport::DockerProxy,
        Transport::UnixShared,
    ],
    server: Some("PostgreSQL"),
    experiments: &[
        &describe::QUERY,
        &describe::CONNECT,
        &describe::AUTH,
        &describe::ROWS,
        &describe::CONCURRENT,
        // Not an `Experiment` of its own: the concurrent experiment's records at a
        // fixed rate (`--rate`), which compare latency instead of throughput.
        &describe::CONCURRENT_RATE,
    ],
    command: || {
        args::with_defaults(args::PostgresArgs::augment_args(clap::Command::new(
            "postgres",
        )))
    },
    plan: |matches| {
        let args = args::PostgresArgs::from_arg_matches(matches)?;
        Ok(Box::new(plan::PostgresPlan::from_args(&args)?))
    },
    run: Some(RunPart {
        suite: "PostgreSQL",
        says: "when PostgreSQL's binaries are found, `postgres --quick` on a throwaway cluster \
               (query, connect, auth, rows, concurrent)",
        options: family::run_options,
        plan: family::quick,
    }),
    leftovers: &[family::CLUSTER],
    redaction: Some(family::REDACTION),
};
