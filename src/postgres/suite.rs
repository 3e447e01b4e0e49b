//! Runs one PostgreSQL experiment over all its targets and rounds through the
//! harness and builds its records, with the figures derived across experiments
//! (handshake = connection − one query; auth cost = connection − trust's).
//!
//! On the throwaway clusters (the host's, and the one in a container for the
//! transports into one), every experiment is checked against each cluster's clean
//! baseline before and after it runs (`tamper.rs`).

use super::cluster::Cluster;
use super::experiment::concurrent::{self, RunSpec};
use super::experiment::{connect, fitted, Budget, Experiment, Target};
use super::hba::{AuthMethod, STANDING};
use super::libpq::Protocol;
use super::plan::{ConcurrentPlan, LeftOut};
use crate::cpu::affinity::Placement;
use crate::cpu::{Meter, ServerRole};
use crate::harness::estimate::Timing;
use crate::harness::{self, Progress, Runner};
use crate::plan::run_cases;
use crate::postgres::keys::*;
use crate::report::experiment::Description;
use crate::results::paired::pair;
use crate::results::{Params, ResultRecord, Trial};
use crate::transport::Transport;
use anyhow::{Context, Result};
use std::collections::HashMap;

/// What the experiments run against, and what they learn from each other.
pub struct Suite<'a> {
    pub targets: Vec<Target>,
    /// For the auth experiment on user servers: each method's target.
    pub auth_targets: Vec<(AuthMethod, Target)>,
    /// The throwaway clusters (none on a user's servers): each target of one is
    /// served by the cluster that [`Cluster::serves`] its transport.
    pub clusters: Vec<&'a mut Cluster>,
    /// The methods the auth experiment compares on the throwaway clusters.
    pub methods: Vec<AuthMethod>,
    pub budget: Budget,
    pub concurrent: ConcurrentPlan,
    pub rounds: crate::harness::Rounds,
    pub placements: Vec<Placement>,
    pub progress: &'a dyn Progress,
    /// Time per query from the query experiment, by target label.
    pub per_query_ns: HashMap<String, f64>,
    /// Transports some experiments leave out.
    pub left_out: LeftOut,
}

/// One experiment's cases as the harness runs them: each case's parameters, the
/// targets it runs on, and for auth the method to switch the cluster to first.
struct PostgresRunner<'s> {
    experiment: Experiment,
    targets: &'s [Target],
    cases: &'s [PgCase],
    clusters: Vec<&'s mut Cluster>,
    budget: &'s Budget,
}

impl PostgresRunner<'_> {
    /// The throwaway cluster that serves `target`, if any.
    fn cluster(&self, target: &Target) -> Option<(&Cluster, Transport)> {
        let transport = target.transport?;
        let cluster = self.clusters.iter().find(|c| c.serves(transport))?;
        Some((&**cluster, transport))
    }
}

/// `targets` and `cases` without the targets over `left_out`, each case's
/// targets renumbered; a case left with none goes.
fn without(
    targets: Vec<Target>,
    cases: Vec<PgCase>,
    left_out: &[Transport],
) -> (Vec<Target>, Vec<PgCase>) {
    if left_out.is_empty() {
        return (targets, cases);
    }
    let mut renumbered = Vec::with_capacity(targets.len());
    let mut kept = Vec::new();
    for target in targets {
        let keep = !target.transport.is_some_and(|t| left_out.contains(&t));
        renumbered.push(keep.then_some(kept.len()));
        if keep {
            kept.push(target);
        }
    }
    let cases = cases
        .into_iter()
        .filter_map(|mut c| {
            c.targets = c.targets.iter().filter_map(|&t| renumbered[t]).collect();
            (!c.targets.is_empty()).then_some(c)
        })
        .collect();
    (kept, cases)
}

#[derive(Clone)]
struct PgCase {
    label: String,
    params: Params,
    targets: Vec<usize>,
    method: Option<AuthMethod>,
    load: Option<RunSpec>,
}

impl Runner for PostgresRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].label.clone()
    }

    fn enter(&mut self, case: usize) -> Result<()> {
        if let Some(method) = self.cases[case].method {
            for cluster in &mut self.clusters {
                cluster.set_auth(method).with_context(|| {
                    format!("cannot switch the throwaway cluster to {method} authentication")
                })?;
            }
        }
        Ok(())
    }

    fn server_roles(&self, target: usize) -> Vec<ServerRole> {
        match self.cluster(&self.targets[target]) {
            Some((cluster, transport)) => cluster.roles(transport),
            None => Vec::new(),
        }
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let (t, b) = (&self.targets[target], &self.budget.for_trial(meter));
        // Over the bridge, the client is in a container of its own.
        let _client = match self.cluster(t) {
            Some((cluster, transport)) => cluster.client_side(transport)?,
            None => None,
        };
        match self.experiment {
            Experiment::Query => fitted::query_trial(t, &b.queries, b.protocol, meter),
            Experiment::Rows => fitted::rows_trial(t, &b.rows, meter),
            Experiment::Connect => connect::trial(t, b.connections, b.connect_time, meter),
            Experiment::Auth => connect::trial(t, b.auth_connections, b.auth_time, meter),
            Experiment::Concurrent => {
                let case = &self.cases[case];
                let mut load = case.load.clone().context("no load")?;
                load.duration = b.concurrent_time;
                if let Some((_, label)) = &mut load.progress {
                    *label = format!("{}, {}", t.label, case.label);
                }
                concurrent::trial(t, &load, meter)
            }
        }
    }
}

impl Suite<'_> {
    /// The placements `experiment` runs under. On a user's server a new
    /// connection's backend is forked by the user's postmaster, which serves others
    /// and is never pinned, so connect and auth run placed freely there, as said.
    fn placements_for(&self, experiment: Experiment) -> Vec<Placement> {
        let forks = matches!(experiment, Experiment::Connect | Experiment::Auth);
        if !self.clusters.is_empty() || !forks || self.placements == [Placement::Free] {
            return self.placements.clone();
        }
        eprintln!(
            "postgres: {} placed freely: each new connection's backend is started by your \
             server's postmaster, which serves others, so sockbench does not pin it",
            experiment.describe().id
        );
        vec![Placement::Free]
    }

    /// Runs every round of `experiment` and returns its paired records.
    pub fn run(&mut self, experiment: Experiment) -> Result<Vec<ResultRecord>> {
        let (targets, cases) = self.cases(experiment);
        let (targets, cases) = without(targets, cases, &self.left_out.of(experiment));
        let described = self.described(experiment);
        let placements = self.placements_for(experiment);
        let mut cases = harness::placed(cases, &placements, |c| &mut c.params);
        for c in &mut cases {
            c.label = described.case_label(&c.params);
        }
        let timing = Timing {
            rounds: self.rounds,
            trial: self.budget.trial(experiment),
            around: self.budget.around(experiment),
        };
        let on: Vec<(Params, Vec<usize>)> = (cases.iter())
            .map(|c| (c.params.clone(), c.targets.clone()))
            .collect();
        let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
        let tls: Vec<_> = targets.iter().map(|t| t.tls.clone()).collect();
        // A user's script may create its own objects as it runs.
        let script = experiment == Experiment::Concurrent && !self.concurrent.script.is_default();
        self.untouched(described.id, !script)?;
        let mut runner = PostgresRunner {
            experiment,
            targets: &targets,
            cases: &cases,
            clusters: self.clusters.iter_mut().map(|c| &mut **c).collect(),
            budget: &self.budget,
        };
        let per_case = run_cases(
            described,
            &on,
            &labels,
            &tls,
            timing,
            &mut runner,
            self.progress,
        )?;
        if experiment == Experiment::Auth {
            for cluster in &mut runner.clusters {
                cluster.set_auth(STANDING)?;
            }
        }
        self.untouched(described.id, !script)?;
        if script {
            for cluster in &mut self.clusters {
                cluster.accept_objects()?;
            }
        }
        let mut records = self.records(experiment, &targets, &cases, per_case);
        pair(&mut records, &described.headline);
        Ok(records)
    }

    /// On the throwaway clusters, an error unless what role `foo` could change is
    /// as it was when each was made (its objects only when `objects`).
    fn untouched(&self, experiment: &str, objects: bool) -> Result<()> {
        for cluster in &self.clusters {
            if let Some(baseline) = cluster.baseline() {
                baseline.unchanged(cluster, experiment, objects)?;
            }
        }
        Ok(())
    }

    /// How `experiment` describes itself in this run: the concurrent experiment at a
    /// fixed rate compares latency, so it has its own description.
    fn described(&self, experiment: Experiment) -> &'static Description {
        if experiment == Experiment::Concurrent && self.concurrent.rate.is_some() {
            &super::describe::CONCURRENT_RATE
        } else {
            experiment.describe()
        }
    }

    /// The targets of `experiment` and its cases over them.
    fn cases(&self, experiment: Experiment) -> (Vec<Target>, Vec<PgCase>) {
        let all: Vec<usize> = (0..self.targets.len()).collect();
        let standing = (!self.clusters.is_empty()).then(|| STANDING.name().to_string());
        let described = self.described(experiment);
        let protocol = (self.budget.protocol != Protocol::Simple)
            .then(|| self.budget.protocol.name().to_string());
        let case = |params: Params, targets: Vec<usize>| PgCase {
            label: described.case_label(&params),
            params,
            targets,
            method: None,
            load: None,
        };
        match experiment {
            Experiment::Query | Experiment::Rows => {
                let counts = if experiment == Experiment::Query {
                    &self.budget.queries
                } else {
                    &self.budget.rows
                };
                let params = Params::default().with(COUNTS, Some(counts.clone())).with(
                    PROTOCOL,
                    protocol.clone().filter(|_| experiment == Experiment::Query),
                );
                (self.targets.clone(), vec![case(params, all)])
            }
            Experiment::Connect => {
                let params = Params::default().with(AUTH_METHOD, standing);
                (self.targets.clone(), vec![case(params, all)])
            }
            Experiment::Auth => self.auth_cases(),
            Experiment::Concurrent => {
                let plan = &self.concurrent;
                let cases = plan
                    .clients
                    .iter()
                    .map(|&clients| {
                        let load = RunSpec {
                            clients,
                            threads: plan.threads.min(clients),
                            duration: self.budget.concurrent_time,
                            warmup: self.budget.concurrent_warmup,
                            script: plan.script.clone(),
                            connect_per_transaction: plan.connect_per_transaction,
                            protocol: self.budget.protocol,
                            rate: plan.rate.map(|r| r as f64),
                            latency_limit: plan.latency_limit,
                            progress: plan.progress.map(|p| (p, String::new())),
                            per_command: plan.per_command,
                        };
                        let params = Params::default()
                            .with(CLIENTS, Some(u64::from(clients)))
                            .with(THREADS, Some(u64::from(load.threads)))
                            .with(DURATION_MS, Some(load.duration.as_millis() as u64))
                            .with(CONNECT_PER_TRANSACTION, load.connect_per_transaction)
                            .with(AUTH_METHOD, standing.clone())
                            .with(PROTOCOL, protocol.clone())
                            .with(SCRIPT, plan.script_name.clone())
                            .with(RATE_PER_S, plan.rate)
                            .with(
                                LATENCY_LIMIT_US,
                                plan.latency_limit.map(|l| l.as_micros() as u64),
                            );
                        PgCase {
                            load: Some(load),
                            ..case(params, all.clone())
                        }
                    })
                    .collect();
                (self.targets.clone(), cases)
            }
        }
    }

    /// The auth experiment's cases: per method, every target it applies to; on a
    /// user's servers, each method's own target.
    fn auth_cases(&self) -> (Vec<Target>, Vec<PgCase>) {
        let case = |method: AuthMethod, targets: Vec<usize>| {
            let params = Params::default().with(AUTH_METHOD, Some(method.name().to_string()));
            PgCase {
                label: Experiment::Auth.describe().case_label(&params),
                params,
                targets,
                method: Some(method),
                load: None,
            }
        };
        if self.clusters.is_empty() {
            let targets = self.auth_targets.iter().map(|(_, t)| t.clone()).collect();
            let cases = self
                .auth_targets
                .iter()
                .enumerate()
                .map(|(i, (m, _))| case(*m, vec![i]))
                .collect();
            return (targets, cases);
        }
        let cases = self
            .methods
            .iter()
            .map(|&m| {
                let applies = (0..self.targets.len())
                    .filter(|&t| !m.local_only() || self.targets[t].unix_socket)
                    // Trust: the Unix sockets in a cluster's private directory.
                    .filter(|&t| {
                        !m.private_only()
                            || matches!(
                                self.targets[t].transport,
                                Some(Transport::Unix | Transport::UnixShared)
                            )
                    })
                    .collect();
                case(m, applies)
            })
            .collect();
        (self.targets.clone(), cases)
    }

    /// The records of a finished experiment (for each case, one per target it
    /// ran on) with their servers, and the figures derived from others.
    fn records(
        &mut self,
        experiment: Experiment,
        targets: &[Target],
        cases: &[PgCase],
        per_case: Vec<Vec<ResultRecord>>,
    ) -> Vec<ResultRecord> {
        let mut records = Vec::new();
        for (case, per_target) in cases.iter().zip(per_case) {
            for (&t, mut r) in case.targets.iter().zip(per_target) {
                let target = &targets[t];
                let mut server = target.server.clone();
                if !self.clusters.is_empty() {
                    let method = case.method.unwrap_or(STANDING);
                    server.password_storage = Some(method.password_storage().to_string());
                }
                r.server = Some(server.record());
                records.push(r);
            }
        }
        match experiment {
            Experiment::Query => {
                for r in &records {
                    if let Some(q) = r.metrics.get(PER_QUERY_NS) {
                        self.per_query_ns.insert(r.transport.clone(), q);
                    }
                }
            }
            Experiment::Connect => {
                for r in &mut records {
                    let query = self
                        .per_query_ns
                        .get(&r.transport)
                        .copied()
                        .or(r.metrics.get(PHASES_NS).map(|p| p.query));
                    let handshake = r.metrics.get(CONNECT_NS).zip(query).map(|(c, q)| c.p50 - q);
                    r.metrics.set(HANDSHAKE_NS, handshake);
                }
            }
            Experiment::Auth => auth_costs(&mut records),
            _ => {}
        }
        records
    }
}

/// Each record's connection time over trust's on the same transport.
fn auth_costs(records: &mut [ResultRecord]) {
    let trust: HashMap<String, f64> = records
        .iter()
        .filter(|r| r.params.get(AUTH_METHOD).as_deref() == Some(AuthMethod::Trust.name()))
        .filter_map(|r| Some((r.transport.clone(), r.metrics.get(CONNECT_NS)?.p50)))
        .collect();
    for r in records {
        let auth = r
            .metrics
            .get(CONNECT_NS)
            .zip(trust.get(&r.transport))
            .map(|(c, t)| c.p50 - t);
        r.metrics.set(AUTH_NS, auth);
    }
}
