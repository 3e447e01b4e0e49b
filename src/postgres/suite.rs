//! Runs one PostgreSQL experiment over all its targets and trials and builds its
//! records: the trial loop, interleaving and the figures derived across experiments
//! (handshake = connection − one query; auth cost = connection − trust's).
//!
//! Within each trial every target runs once, and the target that goes first rotates
//! from trial to trial, so slow drift in the machine spreads over all transports.

use super::cluster::Cluster;
use super::experiment::concurrent::{self, Load};
use super::experiment::{connect, fitted, PgBudget, PgExperiment, PgTarget};
use super::hba::AuthMethod;
use crate::experiment::records::{rank, record};
use crate::interrupt;
use crate::output::progress::Progress;
use crate::plan::postgres::ConcurrentPlan;
use crate::results::{Params, ResultRecord, Trial};
use anyhow::{Context, Result};
use std::collections::HashMap;

/// One trial of an experiment on one target.
type Work<'w> = dyn Fn(&PgTarget) -> Result<Trial> + 'w;

/// What the experiments run against, and what they learn from each other.
pub struct Suite<'a> {
    pub targets: Vec<PgTarget>,
    /// For the auth experiment on user servers: each method's target.
    pub auth_targets: Vec<(AuthMethod, PgTarget)>,
    /// The throwaway cluster and the methods to compare on it.
    pub cluster: Option<(&'a mut Cluster, Vec<AuthMethod>)>,
    pub budget: PgBudget,
    pub concurrent: ConcurrentPlan,
    pub trials: u32,
    pub progress: &'a Progress,
    /// Time per query from the query experiment, by target label.
    pub per_query_ns: HashMap<String, f64>,
}

impl Suite<'_> {
    /// Runs every trial of `experiment` and returns its ranked records.
    pub fn run(&mut self, experiment: PgExperiment) -> Result<Vec<ResultRecord>> {
        let name = format!("postgres.{experiment}");
        self.progress.begin(&name, self.steps(experiment));
        let mut records = match experiment {
            PgExperiment::Auth => self.auth()?,
            PgExperiment::Concurrent => self.concurrent()?,
            _ => {
                let targets = self.targets.clone();
                let b = self.budget.clone();
                let work = |t: &PgTarget| match experiment {
                    PgExperiment::Query => fitted::query_trial(t, &b.queries),
                    PgExperiment::Rows => fitted::rows_trial(t, &b.rows),
                    _ => connect::trial(t, b.connections, b.connect_time),
                };
                let trials = self.trials_over(experiment, "", &targets, &work)?;
                let params = self.params(experiment);
                let records = targets
                    .iter()
                    .zip(trials)
                    .map(|(t, trials)| build(experiment, &params, t, trials))
                    .collect::<Vec<_>>();
                self.derive(experiment, records)
            }
        };
        rank(&mut records);
        Ok(records)
    }

    /// How many single-target trials `experiment` takes, for the progress bar.
    fn steps(&self, experiment: PgExperiment) -> u64 {
        let per_trial = match (experiment, &self.cluster) {
            (PgExperiment::Auth, Some((_, methods))) => methods
                .iter()
                .map(|m| {
                    let applies = |t: &&PgTarget| !m.local_only() || t.unix_socket;
                    self.targets.iter().filter(applies).count()
                })
                .sum(),
            (PgExperiment::Auth, None) => self.auth_targets.len(),
            (PgExperiment::Concurrent, _) => self.concurrent.clients.len() * self.targets.len(),
            _ => self.targets.len(),
        };
        (per_trial as u64) * u64::from(self.trials)
    }

    fn params(&self, experiment: PgExperiment) -> Params {
        let trust = self
            .cluster
            .is_some()
            .then(|| AuthMethod::Trust.name().to_string());
        match experiment {
            PgExperiment::Query => Params {
                counts: Some(self.budget.queries.clone()),
                ..Params::default()
            },
            PgExperiment::Rows => Params {
                counts: Some(self.budget.rows.clone()),
                ..Params::default()
            },
            PgExperiment::Connect | PgExperiment::Auth | PgExperiment::Concurrent => Params {
                auth_method: trust,
                ..Params::default()
            },
        }
    }

    /// Figures that need another experiment's: time per query for later handshakes.
    fn derive(
        &mut self,
        experiment: PgExperiment,
        mut records: Vec<ResultRecord>,
    ) -> Vec<ResultRecord> {
        for r in &mut records {
            match experiment {
                PgExperiment::Query => {
                    if let Some(q) = r.metrics.per_query_ns {
                        self.per_query_ns.insert(r.transport.clone(), q);
                    }
                }
                PgExperiment::Connect => {
                    let query = self
                        .per_query_ns
                        .get(&r.transport)
                        .copied()
                        .or(r.metrics.phases_ns.map(|p| p.query));
                    r.metrics.handshake_ns =
                        r.metrics.connect_ns.zip(query).map(|(c, q)| c.p50 - q);
                }
                _ => {}
            }
        }
        records
    }

    /// The auth experiment: per method, the connect experiment on every target it
    /// applies to; on the throwaway cluster the method is switched first.
    fn auth(&mut self) -> Result<Vec<ResultRecord>> {
        let plan: Vec<(AuthMethod, Vec<PgTarget>)> = match &self.cluster {
            Some((_, methods)) => methods
                .iter()
                .map(|&m| {
                    let targets = self
                        .targets
                        .iter()
                        .filter(|t| !m.local_only() || t.unix_socket)
                        .cloned()
                        .collect();
                    (m, targets)
                })
                .collect(),
            None => self
                .auth_targets
                .iter()
                .map(|(m, t)| (*m, vec![t.clone()]))
                .collect(),
        };
        // trials[method][target]
        let mut trials: Vec<Vec<Vec<Trial>>> = plan
            .iter()
            .map(|(_, t)| vec![Vec::new(); t.len()])
            .collect();
        for trial in 0..self.trials {
            for (m, (method, targets)) in plan.iter().enumerate() {
                if let Some((cluster, _)) = &mut self.cluster {
                    cluster.set_auth(*method).with_context(|| {
                        format!("cannot switch the throwaway cluster to {method} authentication")
                    })?;
                }
                let b = &self.budget;
                let work = |t: &PgTarget| connect::trial(t, b.auth_connections, b.auth_time);
                let one =
                    self.one_trial(PgExperiment::Auth, method.name(), targets, trial, &work)?;
                for (t, result) in one.into_iter().enumerate() {
                    trials[m][t].push(result);
                }
            }
        }
        if let Some((cluster, _)) = &mut self.cluster {
            cluster.set_auth(AuthMethod::Trust)?;
        }
        let mut records = Vec::new();
        for ((method, targets), trials) in plan.iter().zip(trials) {
            let params = Params {
                auth_method: Some(method.name().to_string()),
                ..Params::default()
            };
            for (target, trials) in targets.iter().zip(trials) {
                let mut r = build(PgExperiment::Auth, &params, target, trials);
                if self.cluster.is_some() {
                    r.password_storage = Some(method.password_storage().to_string());
                }
                records.push(r);
            }
        }
        let trust: HashMap<String, f64> = records
            .iter()
            .filter(|r| r.params.auth_method.as_deref() == Some(AuthMethod::Trust.name()))
            .filter_map(|r| Some((r.transport.clone(), r.metrics.connect_ns?.p50)))
            .collect();
        for r in &mut records {
            r.metrics.auth_ns = r
                .metrics
                .connect_ns
                .zip(trust.get(&r.transport))
                .map(|(c, t)| c.p50 - t);
        }
        Ok(records)
    }

    /// The concurrent experiment: for each client count, every trial on every target.
    fn concurrent(&mut self) -> Result<Vec<ResultRecord>> {
        let targets = self.targets.clone();
        let plan = self.concurrent.clone();
        let mut records = Vec::new();
        for &clients in &plan.clients {
            let load = Load {
                clients,
                threads: plan.threads.min(clients),
                duration: self.budget.concurrent_time,
                warmup: self.budget.concurrent_warmup,
                script: plan.script.clone(),
                connect_per_transaction: plan.connect_per_transaction,
            };
            let case = format!("{clients} client{}", if clients == 1 { "" } else { "s" });
            let trials = self.trials_over(PgExperiment::Concurrent, &case, &targets, &|t| {
                concurrent::trial(t, &load)
            })?;
            let params = Params {
                clients: Some(u64::from(clients)),
                threads: Some(u64::from(load.threads)),
                duration_ms: Some(load.duration.as_millis() as u64),
                connect_per_transaction: load.connect_per_transaction,
                ..self.params(PgExperiment::Concurrent)
            };
            for (target, trials) in targets.iter().zip(trials) {
                records.push(build(PgExperiment::Concurrent, &params, target, trials));
            }
        }
        Ok(records)
    }

    /// All trials of an experiment over `targets`, as `result[target][trial]`.
    fn trials_over(
        &self,
        experiment: PgExperiment,
        case: &str,
        targets: &[PgTarget],
        work: &Work,
    ) -> Result<Vec<Vec<Trial>>> {
        let mut all = vec![Vec::new(); targets.len()];
        for trial in 0..self.trials {
            for (t, result) in self
                .one_trial(experiment, case, targets, trial, work)?
                .into_iter()
                .enumerate()
            {
                all[t].push(result);
            }
        }
        Ok(all)
    }

    /// One trial on every target, starting with a different one each trial; results in
    /// target order.
    fn one_trial(
        &self,
        experiment: PgExperiment,
        case: &str,
        targets: &[PgTarget],
        trial: u32,
        work: &Work,
    ) -> Result<Vec<Trial>> {
        let mut results: Vec<Option<Trial>> = vec![None; targets.len()];
        for k in 0..targets.len() {
            let t = (k + trial as usize) % targets.len();
            let target = &targets[t];
            interrupt::check()?;
            self.progress.step(format!(
                "{case}{}{} trial {}/{}",
                if case.is_empty() { "" } else { " " },
                target.label,
                trial + 1,
                self.trials
            ));
            let result = work(target).with_context(|| {
                format!(
                    "postgres.{experiment}{} over {} failed in trial {}",
                    if case.is_empty() {
                        String::new()
                    } else {
                        format!(" ({case})")
                    },
                    target.label,
                    trial + 1
                )
            })?;
            // A signal during the last trial must not pass for a finished experiment.
            interrupt::check()?;
            results[t] = Some(result);
        }
        Ok(results.into_iter().flatten().collect())
    }
}

fn build(
    experiment: PgExperiment,
    params: &Params,
    target: &PgTarget,
    trials: Vec<Trial>,
) -> ResultRecord {
    let mut r = record(
        &experiment,
        params,
        &target.label,
        trials,
        target.tls.clone(),
    );
    r.server = Some(target.server.clone());
    r
}
