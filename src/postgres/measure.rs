//! The PostgreSQL suite end to end: starts a throwaway cluster (or connects to the
//! user's servers once each, so a bad URL fails before any measuring), runs the
//! experiments in order and hands each to the sink as it finishes. The cluster is
//! stopped and removed when [`measure`] returns, whichever way it returns.

use super::bindir::Binaries;
use super::cluster::Cluster;
use super::experiment::{PgExperiment, PgTarget};
use super::plan::{PgSource, PostgresPlan};
use super::preflight;
use super::suite::Suite;
use super::targets::{cluster_targets, user_target};
use crate::harness::{Progress, Sink};
use crate::report::experiment::Plan;
use anyhow::Result;

impl Plan for PostgresPlan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
        measure(self, progress, sink)
    }

    fn experiments(&self) -> usize {
        self.experiments.len()
    }
}

/// Runs every experiment of the plan, saving each into the session as it finishes.
pub fn measure(plan: &PostgresPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
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
        rounds: plan.rounds,
        placements: plan.placements.clone(),
        progress,
        per_query_ns: Default::default(),
    };
    for &experiment in &plan.experiments {
        sink.keep(suite.run(experiment))?;
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
