//! The Redis suite: starts a throwaway `redis-server` (or takes the user's), then
//! runs each experiment through the harness, every case on every transport once per
//! round, the transport that goes first rotating from round to round. The
//! transports into a container reach a second throwaway server, started in one
//! (`container.rs`); the host's keep theirs, and both run side by side.

use super::container::RedisContainer;
use super::plan::{RedisPlan, Source};
use super::resp::{Encoded, Reply};
use super::target::Target;
use super::{Experiment, RedisServer};
use crate::container::Network;
use crate::cpu::affinity::Placement;
use crate::cpu::{Meter, ServerRole};
use crate::error::usage;
use crate::harness::estimate::Estimate;
use crate::harness::{self, Progress, Runner, Sink};
use crate::plan::measure_experiment;
use crate::report::family::Plan;
use crate::results::{Params, Server as ServerFacts, Trial};
use crate::transport::{TlsInfo, Transport};
use anyhow::{bail, Context, Result};
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
            Source::Throwaway(transports) => {
                let (host, inside) = split(transports);
                let starts = |t: &[Transport], time| match t.is_empty() {
                    true => Duration::ZERO,
                    false => time,
                };
                let setup = starts(&host, SERVER_START) + starts(&inside, CONTAINER_START);
                (transports.len(), setup)
            }
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
/// Building a container's network and starting the server in it.
const CONTAINER_START: Duration = Duration::from_millis(600);

/// Runs every experiment of the plan, handing each to `sink` as it finishes; the
/// throwaway server stops and its directory goes whichever way it ends.
pub fn measure(plan: &RedisPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
    let Reached { server, targets } = reach(plan, progress)?;
    let facts: Vec<ServerFacts> = targets
        .iter()
        .map(|t| facts(t, server.as_ref().map(|s| s.version.as_str())))
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
    for &experiment in &plan.experiments {
        let mut runner = RedisRunner {
            plan,
            experiment,
            cases: harness::placed(plan.cases(experiment), &plan.placements, |p| p),
            targets: &targets,
            throwaway: server.as_ref(),
            users: theirs.as_ref().and_then(|t| t.pid),
            places_server,
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
    /// The throwaway servers, or none for the user's.
    server: Option<Throwaways>,
    targets: Vec<Target>,
}

/// The throwaway servers of a run: one on the host for its transports, one in a
/// container for the transports into one, and the version of their program.
struct Throwaways {
    host: Option<RedisServer>,
    contained: Option<RedisContainer>,
    version: String,
}

impl Throwaways {
    /// The server that answers on `transport`.
    fn serving(&self, transport: Transport) -> Option<&RedisServer> {
        match transport.crossing() {
            None => self.host.as_ref(),
            Some(_) => self.contained.as_ref().map(RedisContainer::server),
        }
    }

    /// The server behind `transport`, and the `docker-proxy` in between.
    fn roles(&self, transport: Transport) -> Vec<ServerRole> {
        let server = self.serving(transport).and_then(RedisServer::pid);
        let proxy = self.contained.as_ref().and_then(|c| c.proxy(transport));
        server
            .map(ServerRole::server)
            .into_iter()
            .chain(proxy.map(|pid| ServerRole::started("proxy", pid)))
            .collect()
    }

    /// The container's network, for a client that crosses the bridge.
    fn network(&self) -> Option<&Network> {
        self.contained.as_ref().map(RedisContainer::network)
    }

    /// An error when a process behind `transport` is gone: a port it left may be
    /// someone else's by now, so nothing, the password least, goes there.
    fn check_running(&self, transport: Transport) -> Result<()> {
        let pid = self
            .serving(transport)
            .and_then(RedisServer::pid)
            .context("the throwaway redis-server is not running")?;
        if !super::running(pid, None) {
            bail!(
                "the throwaway redis-server (process {pid}) is no longer running (it exited or \
                 was killed); nothing more was sent to its ports"
            );
        }
        let proxy = self.contained.as_ref().and_then(|c| c.proxy(transport));
        if let Some(pid) = proxy.filter(|&pid| !crate::cpu::proc::runs(pid)) {
            bail!(
                "docker-proxy (process {pid}) in front of the throwaway redis-server is no \
                 longer running; nothing more was sent to its port"
            );
        }
        Ok(())
    }
}

/// The host's transports, and those into a container.
fn split(transports: &[Transport]) -> (Vec<Transport>, Vec<Transport>) {
    transports.iter().partition(|t| t.crossing().is_none())
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
            let (host, inside) = split(transports);
            let mut servers = Throwaways {
                host: None,
                contained: None,
                version,
            };
            if !host.is_empty() {
                progress.note("redis: starting a throwaway redis-server");
                servers.host = Some(RedisServer::start(&program)?);
            }
            if !inside.is_empty() {
                progress.note("redis: starting a throwaway redis-server in a container");
                servers.contained = Some(RedisContainer::start(&program, &inside)?);
            }
            let mut targets = Vec::new();
            for &t in transports {
                let server = servers
                    .serving(t)
                    .context("no throwaway server for a transport asked for")?;
                let endpoint = match &servers.contained {
                    Some(c) if t.crossing().is_some() => c.endpoint(t).cloned(),
                    _ => server.endpoint(t),
                };
                let Some(endpoint) = endpoint else {
                    progress.note(&format!(
                        "redis: {t} skipped: {}",
                        server
                            .tls_missing()
                            .unwrap_or("the server does not listen there")
                    ));
                    continue;
                };
                // Each server has its own password and process.
                let (user, password) = server.credentials();
                targets.push(Target::throwaway(
                    endpoint,
                    user,
                    password,
                    server.holder()?,
                )?);
            }
            Ok(Reached {
                server: Some(servers),
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
    /// sockbench's own servers, each of which must still run before anything is
    /// sent to it.
    throwaway: Option<&'a Throwaways>,
    /// The user's server process, found on this machine; counted as the server.
    users: Option<u32>,
    /// Whether the server is placed as `--placement` says: the throwaway ones
    /// always, the user's only when a placement pins it.
    places_server: bool,
}

impl Runner for RedisRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].label.clone()
    }

    fn server_roles(&self, target: usize) -> Vec<ServerRole> {
        match self.throwaway {
            Some(servers) => servers.roles(self.targets[target].transport()),
            None => self.users.map(ServerRole::found).into_iter().collect(),
        }
    }

    fn outside_load_known(&self) -> bool {
        self.throwaway.is_some() || self.users.is_some()
    }

    fn places_server(&self) -> bool {
        self.places_server
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let (target, params) = (&self.targets[target], &self.cases[case]);
        let Some(servers) = self.throwaway else {
            return self.experiment.run(target, params, self.plan, meter);
        };
        servers.check_running(target.transport())?;
        // Over the bridge, the client is in a container of its own.
        let _client = match (target.transport(), servers.network()) {
            (Transport::Bridge, Some(network)) => Some(network.client_side()?),
            _ => None,
        };
        self.experiment.run(target, params, self.plan, meter)
    }
}
