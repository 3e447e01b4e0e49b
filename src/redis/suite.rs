//! The Redis suite: starts a throwaway `redis-server` (or takes the user's), then
//! runs each experiment through the harness, every case on every transport once per
//! round, the transport that goes first rotating from round to round.

use super::plan::{RedisPlan, Source};
use super::resp::{Reply, Request};
use super::target::Target;
use super::{RedisExperiment, Server};
use crate::cpu::Meter;
use crate::error::usage;
use crate::harness::estimate::Estimate;
use crate::harness::{self, Progress, Runner, Sink};
use crate::plan::measure_experiment;
use crate::report::family::Plan;
use crate::results::{Params, Server as ServerFacts, Trial};
use crate::transport::TlsInfo;
use anyhow::Result;
use std::time::Duration;

impl Plan for RedisPlan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
        measure(self, progress, sink)
    }

    fn experiments(&self) -> usize {
        self.experiments.len()
    }

    fn estimate(&self) -> Estimate {
        let (targets, setup) = match &self.source {
            Source::Throwaway(transports) => (transports.len(), SERVER_START),
            Source::Urls(urls) => (urls.len(), Duration::ZERO),
        };
        let placed = self.placements.len() * targets;
        Estimate {
            setup,
            works: self
                .experiments
                .iter()
                .map(|&e| self.timing(e).work((self.cases(e).len() * placed) as u64))
                .collect(),
        }
    }
}

/// Starting the throwaway `redis-server` and waiting until it answers.
const SERVER_START: Duration = Duration::from_millis(300);

/// Runs every experiment of the plan, handing each to `sink` as it finishes; the
/// throwaway server stops and its directory goes whichever way it ends.
pub fn measure(plan: &RedisPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
    let Reached { server, targets } = reach(plan, progress)?;
    let facts: Vec<ServerFacts> = targets
        .iter()
        .map(|t| facts(t, server.as_ref().map(|s| s.1.as_str())))
        .collect::<Result<_>>()?;
    let tls: Vec<Option<TlsInfo>> = targets
        .iter()
        .map(Target::tls_info)
        .collect::<Result<_>>()?;
    let server_pid = server.as_ref().and_then(|(s, _)| s.pid());
    for &experiment in &plan.experiments {
        let mut runner = ExperimentRunner {
            plan,
            experiment,
            cases: harness::placed(plan.cases(experiment), &plan.placements, |p| p),
            targets: &targets,
            server: server_pid,
        };
        let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
        let cases = runner.cases.clone();
        let described = experiment.describe();
        let records = measure_experiment(
            described,
            &cases,
            &labels,
            &tls,
            plan.timing(experiment),
            &mut runner,
            progress,
        );
        let records = records.map(|mut records| {
            for r in &mut records {
                let at = targets.iter().position(|t| t.label == r.transport);
                r.server = at.map(|i| facts[i].clone());
            }
            records
        });
        sink.keep(records)?;
    }
    Ok(())
}

/// The servers a run reaches.
struct Reached {
    /// The throwaway server with its version, or none for the user's.
    server: Option<(Server, String)>,
    targets: Vec<Target>,
}

/// Starts the throwaway server, or takes the user's, and the targets to measure.
fn reach(plan: &RedisPlan, progress: &dyn Progress) -> Result<Reached> {
    match &plan.source {
        Source::Urls(urls) => {
            progress.note(
                "redis: measuring your server; its CPU cannot be told apart from outside load, \
                 so outside load is not recorded",
            );
            let targets = urls.iter().map(Target::user).collect::<Result<Vec<_>>>()?;
            Ok(Reached {
                server: None,
                targets,
            })
        }
        Source::Throwaway(transports) => {
            let program = super::find_program().ok_or_else(|| {
                usage(
                    "redis-server was not found; install it (Debian/Ubuntu: apt-get install \
                     redis-server), or measure your own server with --url",
                )
            })?;
            let version = super::version(&program)?.unwrap_or_else(|| "unknown".into());
            progress.note("redis: starting a throwaway redis-server");
            let server = Server::start(&program)?;
            let (user, password) = server.credentials();
            let holder = server.holder()?;
            let mut targets = Vec::new();
            for &t in transports {
                match server.endpoint(t) {
                    Some(endpoint) => {
                        targets.push(Target::throwaway(endpoint, user, password, holder)?)
                    }
                    None => progress.note(&format!(
                        "redis: {t} skipped: {}",
                        server
                            .tls_missing()
                            .unwrap_or("the server does not listen there")
                    )),
                }
            }
            Ok(Reached {
                server: Some((server, version)),
                targets,
            })
        }
    }
}

/// What the record says of the server behind `target`.
fn facts(target: &Target, throwaway_version: Option<&str>) -> Result<ServerFacts> {
    let version = match throwaway_version {
        Some(v) => v.to_string(),
        None => reported_version(target)
            .map_err(|e| unreachable(e, target))?
            .unwrap_or_else(|| "unknown".into()),
    };
    Ok(ServerFacts {
        kind: "redis".into(),
        version,
        throwaway: target.throwaway,
        details: serde_json::Map::new(),
    })
}

/// `e`, the first connection to a user's server failing, as the same line every
/// family gives when nothing answers where a server was named.
fn unreachable(e: anyhow::Error, target: &Target) -> anyhow::Error {
    let why = e
        .downcast_ref::<std::io::Error>()
        .and_then(crate::error::Unreachable::why);
    match why {
        Some(why) => crate::error::Unreachable {
            server: "Redis",
            address: target.endpoint.to_string(),
            why: why.to_string(),
            start: None,
            option: "--url",
        }
        .into(),
        None => e,
    }
}

/// The version a user's server reports in `INFO server`; `None` when it does not
/// let the user ask (an error reply) or names none. A server that cannot be
/// reached, closes, or is too slow to answer is an error, as it would be in the
/// first experiment.
pub(super) fn reported_version(target: &Target) -> Result<Option<String>> {
    let mut client = target.open(64 << 10)?;
    client.send(&Request::new(&[b"INFO", b"server"]))?;
    let Reply::Bulk(text) = client.reply()? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(text);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    Ok(field("valkey_version:")
        .map(|v| format!("Valkey {v}"))
        .or_else(|| field("redis_version:")))
}

/// One experiment's trials, as the harness runs them.
struct ExperimentRunner<'a> {
    plan: &'a RedisPlan,
    experiment: RedisExperiment,
    cases: Vec<Params>,
    targets: &'a [Target],
    /// The throwaway server's process, counted and placed as the server.
    server: Option<u32>,
}

impl Runner for ExperimentRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].label.clone()
    }

    fn server_pid(&self) -> Option<u32> {
        self.server
    }

    fn outside_load_known(&self) -> bool {
        self.server.is_some()
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let (target, params) = (&self.targets[target], &self.cases[case]);
        // A port of a server that is gone may be someone else's by now: nothing,
        // the password least, goes there.
        if let Some(pid) = self.server.filter(|&pid| !super::running(pid, None)) {
            anyhow::bail!(
                "the throwaway redis-server (process {pid}) is no longer running (it exited or \
                 was killed); nothing more was sent to its ports"
            );
        }
        self.experiment.run(target, params, self.plan, meter)
    }
}
