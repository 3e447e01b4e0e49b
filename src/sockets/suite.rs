//! The sockets suite: starts (or finds) sockbench's server, then runs each experiment
//! through the harness. Every case (message size, write size, client count) of an
//! experiment runs on every transport once per round, the transport that goes first
//! rotating from round to round.

use super::plan::{SocketsPlan, Source};
use super::server::child::ServerProcess;
use super::server::container::Contained;
use super::server::owner;
use super::server::protocol::Secret;
use super::watchdog::{self, Watched};
use super::{first_contact, Experiment, Target};
use crate::cpu::affinity::{self, Placement};
use crate::cpu::{Meter, ServerRole};
use crate::error::usage;
use crate::harness::estimate::Estimate;
use crate::harness::{self, Progress, Runner, Sink};
use crate::plan::measure_experiment;
use crate::report::experiment::Plan;
use crate::results::{Params, Trial};
use crate::transport::{Endpoint, Transport};
use anyhow::{Context, Result};
use std::time::Duration;

impl Plan for SocketsPlan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
        measure(self, progress, sink)
    }

    fn experiments(&self) -> usize {
        self.experiments.len()
    }

    fn estimate(&self) -> Estimate {
        let transports = self.server.transports();
        Estimate {
            setup: match self.server {
                Source::Throwaway(_) => SERVER_START,
                Source::User(_) => Duration::ZERO,
            },
            works: self
                .experiments
                .iter()
                .map(|&w| {
                    let targets = transports.iter().filter(|&&t| w.applies_to(t).is_ok());
                    let trials = self.cases(w).len() * self.placements.len() * targets.count();
                    self.timing(w).work(trials as u64)
                })
                .collect(),
        }
    }
}

/// Starting sockbench's own server child and checking each transport.
const SERVER_START: Duration = Duration::from_millis(300);

/// Runs every experiment of the plan, handing each to `sink` as it finishes.
pub fn measure(plan: &SocketsPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
    progress.note("sockets: starting the server");
    let servers = match &plan.server {
        Source::Throwaway(transports) => Servers::start(transports)?,
        Source::User(endpoints) => Servers {
            host: None,
            contained: None,
            endpoints: endpoints.clone(),
        },
    };
    let (server_pid, load_known) = match (&servers.host, &servers.contained) {
        (Some(child), _) => (Some(child.pid()), true),
        (None, Some(contained)) => (Some(contained.pid()), true),
        (None, None) => running_server(plan, &servers.endpoints, progress)?,
    };
    let own = servers.host.is_some() || servers.contained.is_some();
    // Every placement, free included, pins the server: a user's server gets its
    // own CPUs back when the run ends, however it ends.
    let _restore = match (own, server_pid) {
        (false, Some(pid)) => Some(affinity::Restore::of_process(pid).with_context(|| {
            format!("cannot read which CPUs the server (process {pid}) may use")
        })?),
        _ => None,
    };
    let targets = servers
        .endpoints
        .iter()
        .map(|e| {
            let target = Target::new(e.clone(), plan.tls_version)?;
            let (pid, secret) = match servers.child(e.transport) {
                Some(pid) => (Some(pid), servers.secret(e.transport)),
                None => (server_pid, None),
            };
            Ok(target.of_server(pid, secret))
        })
        .collect::<Result<Vec<_>>>()?;
    if !own {
        for target in &targets {
            first_contact::check(target)?;
        }
    }
    let tls: Vec<_> = targets
        .iter()
        .map(Target::tls_info)
        .collect::<Result<_>>()?;

    for &experiment in &plan.experiments {
        let Some((targets, tls)) = applying(experiment, &targets, &tls) else {
            continue;
        };
        let mut runner = SocketsRunner {
            plan,
            experiment,
            cases: harness::placed(plan.cases(experiment), &plan.placements, |p| p),
            targets: &targets,
            servers: &servers,
            user_server: server_pid.filter(|_| !own),
            load_known,
        };
        let labels: Vec<&str> = targets.iter().map(|t| t.transport.name()).collect();
        let cases = runner.cases.clone();
        let records = measure_experiment(
            experiment.describe(),
            &cases,
            &labels,
            &tls,
            plan.timing(experiment),
            &mut runner,
            progress,
        );
        sink.keep(records)?;
    }
    Ok(())
}

/// The targets `experiment` means something on, with their TLS facts (the plan
/// said which it leaves out, and why: `plan::left_out`); `None` when there are none.
fn applying<'t, T: Clone>(
    experiment: Experiment,
    targets: &'t [Target],
    tls: &[T],
) -> Option<(Vec<&'t Target>, Vec<T>)> {
    let kept: (Vec<&Target>, Vec<T>) = targets
        .iter()
        .zip(tls)
        .filter(|(target, _)| experiment.applies_to(target.transport).is_ok())
        .map(|(target, tls)| (target, tls.clone()))
        .unzip();
    (!kept.0.is_empty()).then_some(kept)
}

/// The servers sockbench started: on the host, in a container, or both, and the
/// address of each transport asked for, in the order asked.
struct Servers {
    host: Option<ServerProcess>,
    contained: Option<Contained>,
    endpoints: Vec<Endpoint>,
}

impl Servers {
    /// Starts a server on the host for the host's transports, and one in a
    /// container for the transports into one.
    fn start(transports: &[Transport]) -> Result<Servers> {
        let (host, inside): (Vec<Transport>, Vec<Transport>) =
            transports.iter().partition(|t| t.crossing().is_none());
        let host = (!host.is_empty())
            .then(|| ServerProcess::start(&host))
            .transpose()?;
        let contained = (!inside.is_empty())
            .then(|| Contained::start(&inside))
            .transpose()?;
        let endpoints = transports
            .iter()
            .map(|&t| match (t.crossing(), &host, &contained) {
                (None, Some(host), _) => host.endpoints().iter().find(|e| e.transport == t),
                (Some(_), _, Some(contained)) => contained.reached(t).map(|r| &r.endpoint),
                _ => None,
            })
            .map(|e| {
                e.cloned()
                    .context("a transport the servers do not listen on")
            })
            .collect::<Result<_>>()?;
        Ok(Servers {
            host,
            contained,
            endpoints,
        })
    }

    /// The server that answers on `transport`, and a process in between.
    fn roles(&self, transport: Transport) -> Vec<ServerRole> {
        match (transport.crossing(), &self.host, &self.contained) {
            (None, Some(host), _) => vec![ServerRole::server(host.pid())],
            (Some(_), _, Some(contained)) => {
                let between = contained.reached(transport).and_then(|r| r.between);
                std::iter::once(ServerRole::server(contained.pid()))
                    .chain(between.map(|pid| ServerRole::started("proxy", pid)))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// What datagram requests to sockbench's own server child behind `transport`
    /// carry (a container's paths are streams).
    fn secret(&self, transport: Transport) -> Option<Secret> {
        match transport.crossing() {
            None => self.host.as_ref().map(ServerProcess::secret),
            Some(_) => None,
        }
    }

    /// sockbench's own server child behind `transport`, the only one the
    /// watchdog may stop.
    fn child(&self, transport: Transport) -> Option<u32> {
        match transport.crossing() {
            None => self.host.as_ref().map(ServerProcess::pid),
            Some(_) => self.contained.as_ref().map(Contained::pid),
        }
    }
}

/// The process of a server the user started (`--server`), when it runs on this
/// machine and can be identified: its CPU is then counted and placed as the server's.
/// Placement needs such a process; without one, a server on this machine makes its
/// CPU indistinguishable from outside load, which is then not recorded.
fn running_server(
    plan: &SocketsPlan,
    endpoints: &[Endpoint],
    progress: &dyn Progress,
) -> Result<(Option<u32>, bool)> {
    let found = owner::server_process(endpoints);
    if plan.placements.iter().any(|&p| p != Placement::Free) && !matches!(found, Ok(Some(_))) {
        let why = found
            .err()
            .unwrap_or_else(|| "the server does not run on this machine".into());
        return Err(usage(format!(
            "--placement same or split pins the server, but {why}; use --placement free, or \
             leave out --server so that sockbench starts its own"
        )));
    }
    Ok(match found {
        Ok(pid) => (pid, true),
        Err(why) => {
            progress.note(&format!(
                "sockets: {why}, so its CPU cannot be told apart from outside load; outside \
                 load is not recorded"
            ));
            (None, false)
        }
    })
}

/// One experiment's trials, as the harness runs them.
struct SocketsRunner<'a> {
    plan: &'a SocketsPlan,
    experiment: Experiment,
    cases: Vec<Params>,
    targets: &'a [&'a Target],
    servers: &'a Servers,
    /// The user's server process, found on this machine.
    user_server: Option<u32>,
    load_known: bool,
}

impl Runner for SocketsRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].transport.to_string()
    }

    fn server_roles(&self, target: usize) -> Vec<ServerRole> {
        match self.user_server {
            Some(pid) => vec![ServerRole::found(pid)],
            None => self.servers.roles(self.targets[target].transport),
        }
    }

    fn outside_load_known(&self) -> bool {
        self.load_known
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let (target, params) = (self.targets[target], &self.cases[case]);
        let budget = &self.plan.budget;
        // Over the bridge, the client is in a container of its own.
        let network = self.servers.contained.as_ref().map(Contained::network);
        let _client = match (target.transport, network) {
            (Transport::Bridge, Some(network)) => Some(network.client_side()?),
            _ => None,
        };
        let server = match self.servers.child(target.transport) {
            Some(pid) => Watched::Own(pid),
            None => Watched::Theirs(self.user_server),
        };
        let run = || self.experiment.run(target, params, budget, meter);
        match watchdog::watched(server, &target.blocking, run) {
            (_, Some(fired)) => Err(watchdog::error(fired, server)),
            (trial, None) => trial,
        }
    }
}
