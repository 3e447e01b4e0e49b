//! The PostgreSQL suite end to end: starts a throwaway cluster (or connects to the
//! user's servers once each, so a bad URL fails before any measuring), runs the
//! experiments in order and hands each to the sink as it finishes. The cluster is
//! stopped and removed when [`measure`] returns, whichever way it returns.

use super::bindir::Binaries;
use super::cluster::Cluster;
use super::experiment::{Experiment, Target};
use super::hba::AuthMethod;
use super::libpq::PgConn;
use super::plan::{PostgresPlan, Source};
use super::preflight;
use super::suite::Suite;
use super::targets::{
    cluster_target, name_apart, server_targets, url_target, user_target, ServerTargets, UrlArg,
};
use crate::cpu::affinity::Placement;
use crate::harness::estimate::{Estimate, Timing};
use crate::harness::{Progress, Sink};
use crate::report::experiment::Plan;
use crate::system::pg_environment;
use crate::transport::Transport;
use crate::units::printable;
use anyhow::Result;
use std::time::Duration;

/// Making and starting the throwaway cluster (initdb, certificates, the server,
/// the baseline of what role `foo` may change), and stopping it: about 2.5 s on
/// 2 vCPUs.
const CLUSTER_START: Duration = Duration::from_millis(2_500);
/// The second cluster, for the transports into a container: its network, a copy
/// of the first's data directory, the server and its baseline, and removing them:
/// about 0.9 s here with other builds running.
const CONTAINER_START: Duration = Duration::from_millis(1_000);

impl Plan for PostgresPlan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
        measure(self, progress, sink)
    }

    fn experiments(&self) -> usize {
        self.experiments.len()
    }

    fn estimate(&self) -> Estimate {
        let setup = match &self.source {
            Source::Throwaway { transports, .. } => {
                let contained = transports.iter().any(|t| t.crossing().is_some());
                let second = if contained {
                    CONTAINER_START
                } else {
                    Duration::ZERO
                };
                CLUSTER_START + second
            }
            Source::User { .. } => Duration::ZERO,
        };
        let targets = |e: Experiment| match &self.source {
            Source::Throwaway { transports, .. } => {
                let left_out = self.left_out.of(e);
                transports.iter().filter(|t| !left_out.contains(t)).count()
            }
            // A `--server` is compared over the transports it is found on: unix,
            // tcp and tls at most.
            Source::User { urls, server, .. } => urls.len() + if server.is_some() { 3 } else { 0 },
        };
        let placed = self.placements.len() as u64;
        let works = self
            .experiments
            .iter()
            .map(|&e| {
                let targets = targets(e);
                let cases = match e {
                    Experiment::Concurrent => self.concurrent.clients.len() * targets,
                    Experiment::Auth => match &self.source {
                        Source::Throwaway { methods, .. } => methods.len() * targets,
                        Source::User { auth_urls, .. } => auth_urls.len(),
                    },
                    _ => targets,
                };
                let timing = Timing {
                    rounds: self.rounds,
                    trial: self.budget.trial(e),
                    around: self.budget.around(e),
                };
                timing.work(cases as u64 * placed)
            })
            .collect();
        Estimate { setup, works }
    }

    fn prints_progress(&self) -> bool {
        self.concurrent.progress.is_some() && self.experiments.contains(&Experiment::Concurrent)
    }

    fn full_tables(&self) -> bool {
        self.concurrent.per_command && self.experiments.contains(&Experiment::Concurrent)
    }
}

/// Runs every experiment of the plan, saving each into the session as it finishes.
pub fn measure(plan: &PostgresPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
    let mut clusters = Vec::new();
    let (targets, auth_targets, methods) = match &plan.source {
        Source::Throwaway {
            bindir,
            transports,
            methods,
        } => {
            let (started, targets) = start_clusters(plan, bindir.as_deref(), transports, progress)?;
            clusters = started;
            (targets, Vec::new(), methods.clone())
        }
        Source::User {
            urls,
            server,
            auth_urls,
            from_environment,
        } => {
            let server = server
                .as_deref()
                .map(|uri| (uri, from_environment.as_slice()));
            let targets = user_targets(urls, server, auth_urls)?;
            let auth_targets = auth_targets(plan, auth_urls)?;
            if plan.experiments.contains(&Experiment::Concurrent) {
                for target in &targets {
                    preflight::slots_for(target, connections_needed(plan))?;
                }
            }
            (targets, auth_targets, Vec::new())
        }
    };
    if let Some(first) = targets.first() {
        if plan.experiments.contains(&Experiment::Concurrent) {
            let serving = first
                .transport
                .and_then(|t| Some((clusters.iter().find(|c| c.serves(t))?, t)));
            let _client = match serving {
                Some((cluster, t)) => cluster.client_side(t)?,
                None => None,
            };
            preflight::script_runs(first, &plan.concurrent.script)?;
        }
    }
    let placements = placements(plan, &targets, !clusters.is_empty())?;
    let mut suite = Suite {
        targets,
        auth_targets,
        clusters: clusters.iter_mut().collect(),
        methods,
        budget: plan.budget.clone(),
        concurrent: plan.concurrent.clone(),
        rounds: plan.rounds,
        placements,
        progress,
        per_query_ns: Default::default(),
        left_out: plan.left_out.clone(),
    };
    for &experiment in &plan.experiments {
        sink.keep(suite.run(experiment))?;
    }
    Ok(())
}

/// The throwaway clusters, started on `transports` with their line said (one on
/// the host, one in a container for the transports into one), and the targets,
/// in the order of `transports`.
fn start_clusters(
    plan: &PostgresPlan,
    bindir: Option<&std::path::Path>,
    transports: &[Transport],
    progress: &dyn Progress,
) -> Result<(Vec<Cluster>, Vec<Target>)> {
    let binaries = Binaries::find(bindir)?;
    let (line, surprising) = cluster_line();
    // On stderr to stay, when login variables set for some server are not
    // used; else on the progress line.
    if surprising {
        eprintln!("{}", printable(&line));
    }
    progress.note(&line);
    let started = Cluster::start_all(&binaries, transports, connections_needed(plan))?;
    let targets = transports
        .iter()
        .map(|&t| match started.iter().find(|c| c.serves(t)) {
            Some(cluster) => cluster_target(cluster, t),
            None => anyhow::bail!("no throwaway cluster serves {t}"),
        })
        .collect::<Result<_>>()?;
    Ok((started, targets))
}

/// The user's servers as targets: each `--url`, and each transport `--server`
/// is found on (`server`: its URI, and the `PG*` variables that named it when
/// they did), what was found or skipped said in a line each.
fn user_targets(
    urls: &[UrlArg],
    server: Option<(&str, &[&'static str])>,
    auth_urls: &[(AuthMethod, String)],
) -> Result<Vec<Target>> {
    let mut targets = urls
        .iter()
        .map(|u| url_target(u.name.as_deref(), &u.uri))
        .collect::<Result<Vec<_>>>()?;
    let derived: Vec<bool> = urls.iter().map(|u| u.name.is_none()).collect();
    name_apart(&mut targets, &derived)?;
    if let Some((uri, from_environment)) = server {
        let found = server_targets(uri, !from_environment.is_empty())?;
        if !from_environment.is_empty() {
            eprintln!("{}", printable(&environment_line(from_environment, &found)));
        }
        for line in found.notes {
            eprintln!("postgres: {}", printable(&line));
        }
        targets.extend(found.targets);
    } else if targets.len() == 1 && auth_urls.is_empty() {
        eprintln!(
            "postgres: one --url measures one transport, so no verdict compares \
             transports; to compare this server's unix, tcp and tls, give it as \
             --server URI instead"
        );
    }
    Ok(targets)
}

/// Each `--auth-url`'s target, checked to use its method; without any, the line
/// that says why the default experiments leave auth out.
fn auth_targets(
    plan: &PostgresPlan,
    auth_urls: &[(AuthMethod, String)],
) -> Result<Vec<(AuthMethod, Target)>> {
    let auth_targets = auth_urls
        .iter()
        .map(|(m, uri)| {
            let target = relabel(user_target(&format!("--auth-url {m}"), uri)?);
            preflight::auth_is(&target, *m)?;
            Ok((*m, target))
        })
        .collect::<Result<Vec<_>>>()?;
    let defaulted = plan.experiments.len() == Experiment::ALL.len() - 1;
    if auth_urls.is_empty() && defaulted && !plan.experiments.contains(&Experiment::Auth) {
        eprintln!(
            "postgres: auth skipped: on your own server it needs --auth-url METHOD=URI \
             for each method, as sockbench never reconfigures a server it did not start"
        );
    }
    Ok(auth_targets)
}

/// The placements to measure. On a user's server a pinned placement places the
/// backend of each of sockbench's connections, which must then run on this
/// machine where sockbench can see it: when one does not (a server elsewhere, in a
/// container, behind a pooler), the default gives way to free placement, said in
/// one line, and a placement the user asked for is refused.
fn placements(plan: &PostgresPlan, targets: &[Target], throwaway: bool) -> Result<Vec<Placement>> {
    if throwaway || plan.placements == [Placement::Free] {
        return Ok(plan.placements.clone());
    }
    let unseen = targets.iter().find(|t| {
        PgConn::connect(&t.params)
            .ok()
            .and_then(|c| c.serving_process())
            .is_none()
    });
    let Some(target) = unseen else {
        return Ok(plan.placements.clone());
    };
    let why = format!(
        "the backend serving {} is not a process sockbench can see on this machine (a \
         server elsewhere, in a container, or behind a pooler)",
        target.label
    );
    if plan.placement_asked {
        return Err(crate::error::usage(format!(
            "--placement same or split pins the backend of sockbench's connections, but {why}; \
             use --placement free"
        )));
    }
    eprintln!("postgres: placed freely: {why}, so it cannot be pinned with the client");
    Ok(vec![Placement::Free])
}

/// The most connections the plan opens at once: the largest client count.
fn connections_needed(plan: &PostgresPlan) -> u32 {
    plan.concurrent.clients.iter().copied().max().unwrap_or(1)
}

/// The line that says a throwaway cluster is made, and why (no server named); true
/// when login variables are set that it does not use.
fn cluster_line() -> (String, bool) {
    let set = pg_environment::stashed_names();
    let login: Vec<&str> = [
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGPASSFILE",
        "PGSSLMODE",
    ]
    .into_iter()
    .filter(|n| set.contains(n))
    .collect();
    let ignored = if login.is_empty() {
        String::new()
    } else {
        format!(
            "; {} {} not used, as {} no server (set PGHOST or PGPORT, or give --url, to \
             measure yours)",
            login.join(", "),
            if login.len() == 1 { "is" } else { "are" },
            if login.len() == 1 {
                "it names"
            } else {
                "they name"
            }
        )
    };
    let line = format!(
        "postgres: creating a throwaway cluster (no --url, --server, PGHOST, PGHOSTADDR, \
         PGPORT or PGSERVICE){ignored}"
    );
    (line, !login.is_empty())
}

/// The line that says the `PG*` variables named the server measured, and over
/// which of its transports.
fn environment_line(from_environment: &[&str], found: &ServerTargets) -> String {
    let labels: Vec<&str> = found.targets.iter().map(|t| t.label.as_str()).collect();
    format!(
        "postgres: measuring your server from {}: {}, over {}; unset {} for a throwaway \
         cluster",
        from_environment.join(", "),
        who(&found.reached),
        labels.join(", "),
        if from_environment.len() == 1 {
            "it"
        } else {
            "them"
        }
    )
}

/// `user at host:port/database` of a target, as libpq reaches it (a service file
/// may name the user and database, so the connection is asked).
fn who(t: &Target) -> String {
    let conn = PgConn::connect(&t.params).ok();
    let ask = |f: fn(&PgConn) -> Option<String>| conn.as_ref().and_then(f).unwrap_or_default();
    format!(
        "{} at {}:{}/{}",
        ask(PgConn::user),
        t.server.host.as_deref().unwrap_or("?"),
        t.server.port.as_deref().unwrap_or("?"),
        ask(PgConn::database)
    )
}

/// Names an auth target after the transport it really uses.
fn relabel(mut target: Target) -> Target {
    target.label = super::targets::reached(&target).to_string();
    target
}
