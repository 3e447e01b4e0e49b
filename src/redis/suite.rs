//! The Redis suite: starts a throwaway `redis-server` (or takes the user's), then
//! runs each experiment through the harness, every case on every transport once per
//! round, the transport that goes first rotating from round to round.

use super::plan::{RedisPlan, Source};
use super::resp::{Encoded, Reply};
use super::target::Target;
use super::{Experiment, RedisServer};
use crate::cpu::affinity::Placement;
use crate::cpu::{Meter, ServerRole};
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
            Source::User(urls) => (urls.len(), Duration::ZERO),
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
    let theirs = match &server {
        Some(_) => None,
        None => Some(user_server(plan, &targets, progress)?),
    };
    let places_server = theirs.as_ref().is_none_or(|t| t.restore.is_some());
    let server_pid = match (&server, &theirs) {
        (Some((s, _)), _) => s.pid(),
        (None, Some(t)) => t.pid,
        (None, None) => None,
    };
    for &experiment in &plan.experiments {
        let mut runner = RedisRunner {
            plan,
            experiment,
            cases: harness::placed(plan.cases(experiment), &plan.placements, |p| p),
            targets: &targets,
            server: server_pid,
            places_server,
            throwaway: server.is_some(),
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

/// The user's Redis server as this run treats it: its process when found on this
/// machine (its CPU counted as the server's), and, when `--placement` pins it, the
/// CPUs its threads had, put back however the run ends.
struct UserServer {
    pid: Option<u32>,
    restore: Option<crate::cpu::affinity::Restore>,
}

/// Finds the user's server process; with a pinned placement, one must be found
/// (else the plan is refused in one line) and its CPUs are kept to be restored.
fn user_server(
    plan: &RedisPlan,
    targets: &[Target],
    progress: &dyn Progress,
) -> Result<UserServer> {
    let pinned = plan.placements.iter().any(|&p| p != Placement::Free);
    match super::process::behind_all(targets) {
        Ok(pid) if pinned => {
            let restore = crate::cpu::affinity::Restore::of_process(pid).map_err(|e| {
                usage(format!(
                    "--placement pins your Redis server (process {pid}), but its CPUs cannot \
                     be read ({e}); use --placement free"
                ))
            })?;
            // On stderr to stay: sockbench touches a server the user runs.
            eprintln!(
                "redis: your server (process {pid}) is pinned as --placement says during the \
                 run and put back on its CPUs after"
            );
            Ok(UserServer {
                pid: Some(pid),
                restore: Some(restore),
            })
        }
        Ok(pid) => Ok(UserServer {
            pid: Some(pid),
            restore: None,
        }),
        Err(why) if pinned => Err(usage(format!(
            "--placement same or split pins your Redis server, but {why}; use --placement free"
        ))),
        Err(why) => {
            progress.note(&format!(
                "redis: {why}, so its CPU cannot be told apart from outside load; outside load \
                 is not recorded"
            ));
            Ok(UserServer {
                pid: None,
                restore: None,
            })
        }
    }
}

/// The servers a run reaches.
struct Reached {
    /// The throwaway server with its version, or none for the user's.
    server: Option<(RedisServer, String)>,
    targets: Vec<Target>,
}

/// Starts the throwaway server, or takes the user's, and the targets to measure.
fn reach(plan: &RedisPlan, progress: &dyn Progress) -> Result<Reached> {
    match &plan.source {
        Source::User(urls) => {
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
            let server = RedisServer::start(&program)?;
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
        behind: Vec::new(),
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
    client.send(&Encoded::new(&[b"INFO", b"server"]))?;
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
struct RedisRunner<'a> {
    plan: &'a RedisPlan,
    experiment: Experiment,
    cases: Vec<Params>,
    targets: &'a [Target],
    /// The server's process: the throwaway one, or the user's found on this
    /// machine; counted as the server.
    server: Option<u32>,
    /// Whether it is placed as `--placement` says: the throwaway one always, the
    /// user's only when a placement pins it.
    places_server: bool,
    /// Whether it is sockbench's own, which must still run before anything is sent.
    throwaway: bool,
}

impl Runner for RedisRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].label.clone()
    }

    fn server_roles(&self, _target: usize) -> Vec<ServerRole> {
        let role = |pid| match self.throwaway {
            true => ServerRole::server(pid),
            false => ServerRole::found(pid),
        };
        self.server.map(role).into_iter().collect()
    }

    fn outside_load_known(&self) -> bool {
        self.server.is_some()
    }

    fn places_server(&self) -> bool {
        self.places_server
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let (target, params) = (&self.targets[target], &self.cases[case]);
        // A port of a server that is gone may be someone else's by now: nothing,
        // the password least, goes there.
        let own = self.server.filter(|_| self.throwaway);
        if let Some(pid) = own.filter(|&pid| !super::running(pid, None)) {
            anyhow::bail!(
                "the throwaway redis-server (process {pid}) is no longer running (it exited or \
                 was killed); nothing more was sent to its ports"
            );
        }
        self.experiment.run(target, params, self.plan, meter)
    }
}
