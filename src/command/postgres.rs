//! `sockbench postgres`: the PostgreSQL experiments, end to end.
//!
//! Starts a throwaway cluster (or connects to the user's servers once each, so a bad
//! URL fails before any measuring), runs the experiments in order, prints a table
//! after each and adds its records to the result file. The cluster is stopped and
//! removed when this function returns, whichever way it returns.

use super::Session;
use crate::cli::PostgresArgs;
use crate::export::json::Claim;
use crate::output::pg_table;
use crate::plan::postgres::{PgSource, PostgresPlan};
use crate::postgres::bindir::Binaries;
use crate::postgres::cluster::Cluster;
use crate::postgres::experiment::PgExperiment;
use crate::postgres::experiment::PgTarget;
use crate::postgres::preflight;
use crate::postgres::redact;
use crate::postgres::suite::Suite;
use crate::postgres::targets::{cluster_targets, user_target};
use anyhow::Result;

pub fn run(args: &PostgresArgs, argv: Vec<String>) -> Result<()> {
    let plan = PostgresPlan::from_args(args)?;
    let json = plan.json.as_deref().map(|p| (p, Claim::Replace));
    let mut session = Session::open(json, redact::arguments(argv), args.quiet)?;
    let outcome = measure(&plan, &mut session);
    session.finish(outcome)
}

/// Runs every experiment of the plan, saving each into the session as it finishes.
pub fn measure(plan: &PostgresPlan, session: &mut Session) -> Result<()> {
    let progress = session.progress.clone();
    let mut cluster = None;
    let (targets, auth_targets, methods) = match &plan.source {
        PgSource::Cluster {
            bindir,
            transports,
            methods,
        } => {
            let binaries = Binaries::find(bindir.as_deref())?;
            progress.note("postgres: creating a throwaway cluster");
            let started = Cluster::start(&binaries, transports, connections_needed(plan))?;
            let targets = cluster_targets(&started, transports)?;
            cluster = Some(started);
            (targets, Vec::new(), methods.clone())
        }
        PgSource::Urls { urls, auth_urls } => {
            progress.note("postgres: connecting to the servers");
            let targets = urls
                .iter()
                .map(|u| user_target(&u.name, &u.uri))
                .collect::<Result<Vec<_>>>()?;
            let auth_targets = auth_urls
                .iter()
                .map(|(m, uri)| {
                    let target = relabel(user_target(&format!("--auth-url {m}"), uri)?);
                    preflight::auth_is(&target, *m)?;
                    Ok((*m, target))
                })
                .collect::<Result<Vec<_>>>()?;
            if plan.experiments.contains(&PgExperiment::Concurrent) {
                for target in &targets {
                    preflight::slots_for(target, connections_needed(plan))?;
                }
            }
            (targets, auth_targets, Vec::new())
        }
    };
    if let Some(first) = targets.first() {
        let version = first.server.version.clone();
        session.note_postgres_version(&version)?;
        if plan.experiments.contains(&PgExperiment::Concurrent) {
            preflight::script_runs(first, &plan.concurrent.script)?;
        }
    }
    let mut suite = Suite {
        targets,
        auth_targets,
        cluster: cluster.as_mut().map(|c| (c, methods)),
        budget: plan.budget.clone(),
        concurrent: plan.concurrent.clone(),
        trials: plan.trials,
        progress: &progress,
        per_query_ns: Default::default(),
    };
    for &experiment in &plan.experiments {
        let records = suite.run(experiment);
        session.keep(records, |r| pg_table::block(experiment, r).to_terminal())?;
    }
    Ok(())
}

/// The most connections the plan opens at once: the largest client count.
fn connections_needed(plan: &PostgresPlan) -> u32 {
    plan.concurrent.clients.iter().copied().max().unwrap_or(1)
}

/// Names an auth target after the transport it really uses.
fn relabel(mut target: PgTarget) -> PgTarget {
    target.label = if target.unix_socket {
        "unix"
    } else if target.tls.is_some() {
        "tls"
    } else {
        "tcp"
    }
    .to_string();
    target
}
