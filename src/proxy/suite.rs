//! The proxy suite: starts the app server (`apps.rs`: sockbench's, gunicorn, or
//! the user's) and a throwaway nginx in front of it, then runs each experiment
//! through the harness, every case on every column (a transport of the hop to the
//! app server, or a user's `--upstream`) once per round, the column that goes
//! first rotating from round to round.

use super::apps::AppServer;
use super::nginx::{self, Nginx, NginxConfig, Site, Upstream};
use super::plan::{AppServerKind, AppSource, ProxyPlan, OVERLOAD_CONNECT_TIMEOUT};
use super::Experiment;
use crate::cpu::{Meter, ServerRole};
use crate::error::usage;
use crate::harness::estimate::Estimate;
use crate::harness::{self, Progress, Runner, Sink};
use crate::plan::measure_experiment;
use crate::report::family::Plan;
use crate::results::{Params, Server as ServerFacts, Trial};
use crate::transport::{Address, Endpoint, SocketKind, TlsInfo, Transport};
use anyhow::{bail, Result};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

/// How long a server whose connection broke may take to be seen gone.
const DYING: Duration = Duration::from_millis(500);
/// Starting the app server and nginx and waiting until both answer.
const SERVERS_START: Duration = Duration::from_millis(400);

impl Plan for ProxyPlan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
        measure(self, progress, sink)
    }

    fn experiments(&self) -> usize {
        self.experiments.len()
    }

    fn estimate(&self) -> Estimate {
        let placed = self.placements.len() * self.columns();
        Estimate {
            setup: SERVERS_START,
            works: self
                .experiments
                .iter()
                .map(|&e| self.timing(e).work((self.cases(e).len() * placed) as u64))
                .collect(),
        }
    }
}

/// One column: a transport of the hop from nginx to the app server (or a user's
/// `--upstream`), and where the client goes for each experiment.
pub struct Target {
    /// The column's name: the transport's, or the `--upstream`'s.
    pub label: String,
    /// nginx's port whose upstream connections are kept (`keepalive`).
    pub kept: Endpoint,
    /// nginx's port that opens a new upstream connection per request.
    pub renewed: Endpoint,
    /// The app server itself over this transport.
    pub app: Endpoint,
    /// nginx's port in front of the app server with the small backlog (a new
    /// upstream connection per request, a short wait for it), when the plan has
    /// the overload experiment.
    pub overrun: Option<Endpoint>,
}

/// The servers of one run: nginx stops first, then the app servers.
struct Servers {
    nginx: Nginx,
    app: AppServer,
    /// The app server with the small listen backlog, for the overload experiment.
    /// A process of its own rather than a second listener per transport in the
    /// first: the same `serve --http` with one more flag, whose queue of
    /// connections nothing else shares, and whose CPU is the overload's alone.
    overrun: Option<AppServer>,
    version: String,
}

/// Runs every experiment of the plan, handing each to `sink` as it finishes; nginx
/// and the app server stop and their directories go whichever way it ends.
pub fn measure(plan: &ProxyPlan, progress: &dyn Progress, sink: &mut dyn Sink) -> Result<()> {
    let (mut servers, targets) = start(plan, progress)?;
    let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    let (direct_tls, no_tls) = (tls_facts(plan, &targets)?, vec![None; targets.len()]);
    for &experiment in &plan.experiments {
        let tls = match experiment {
            Experiment::Direct => &direct_tls,
            _ => &no_tls,
        };
        let mut runner = ProxyRunner {
            plan,
            experiment,
            cases: harness::placed(plan.cases(experiment), &plan.placements, |p| p),
            targets: &targets,
            servers: &mut servers,
        };
        let cases = runner.cases.clone();
        let records = measure_experiment(
            experiment.describe(),
            &cases,
            &labels,
            tls,
            plan.timing(experiment),
            &mut runner,
            progress,
        );
        let facts = facts(plan, &servers);
        let records = records.map(|mut records| {
            for r in &mut records {
                r.server = Some(facts.clone());
            }
            records
        });
        sink.keep(records)?;
    }
    Ok(())
}

/// Starts the app server and nginx in front of it, two sites per transport (the
/// upstream kept, with as many idle connections as the concurrent experiment has
/// clients, and renewed), and for the overload experiment a second app server
/// with a small listen backlog and a site per transport in front of it; and the
/// targets.
fn start(plan: &ProxyPlan, progress: &dyn Progress) -> Result<(Servers, Vec<Target>)> {
    let program = nginx::find_program().ok_or_else(|| {
        usage(
            "nginx was not found; install it (Debian/Ubuntu: apt-get install nginx) to measure \
             a proxy in front of an app server",
        )
    })?;
    let version = nginx::version(&program)?.unwrap_or_else(|| "unknown".into());
    let account = nginx::server_account()?;
    progress.note(&match &plan.app {
        AppSource::Ours(AppServerKind::Sockbench) => {
            "proxy: starting sockbench's app server and a throwaway nginx".to_string()
        }
        AppSource::Ours(AppServerKind::Gunicorn) => {
            "proxy: starting gunicorn and a throwaway nginx".to_string()
        }
        AppSource::Command(_) => {
            "proxy: starting your app server and a throwaway nginx".to_string()
        }
        AppSource::Running(_) => {
            "proxy: starting a throwaway nginx in front of your app server".to_string()
        }
    });
    let app = AppServer::start(plan, account.as_ref(), None, progress)?;
    let overrun = if plan.experiments.contains(&Experiment::Overload) {
        let backlog = Some(plan.app_backlog);
        Some(AppServer::start(plan, account.as_ref(), backlog, progress)?)
    } else {
        None
    };
    let columns = app.columns(&plan.transports)?;
    let overrun_columns = match &overrun {
        Some(o) => Some(o.columns(&plan.transports)?),
        None => None,
    };
    // Per column, in this order: kept, renewed, and overrun when planned.
    let mut sites = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let upstream = upstream_of(&column.endpoint)?;
        sites.push(Site::kept(upstream.clone(), plan.connections));
        sites.push(Site::renewed(upstream));
        if let Some(overrun) = &overrun_columns {
            let upstream = upstream_of(&overrun[i].endpoint)?;
            sites.push(Site::overrun(upstream, OVERLOAD_CONNECT_TIMEOUT));
        }
    }
    let per_column = if overrun.is_some() { 3 } else { 2 };
    let config = NginxConfig {
        workers: plan.workers,
        ..NginxConfig::new(&program, sites)
    };
    let nginx = Nginx::start(&config)?;
    let at = |port: u16| Endpoint {
        transport: Transport::Tcp,
        address: Address::Ip(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
    };
    let targets = columns
        .into_iter()
        .enumerate()
        .map(|(i, column)| {
            let first = per_column * i;
            Target {
                label: column.label,
                kept: at(nginx.site_port(first)),
                renewed: at(nginx.site_port(first + 1)),
                app: column.endpoint,
                overrun: overrun.as_ref().map(|_| at(nginx.site_port(first + 2))),
            }
        })
        .collect();
    Ok((
        Servers {
            nginx,
            app,
            overrun,
            version,
        },
        targets,
    ))
}

/// Where nginx reaches an app server at `endpoint`.
fn upstream_of(endpoint: &Endpoint) -> Result<Upstream> {
    Ok(match &endpoint.address {
        Address::Path(path) => Upstream::Unix(path.clone()),
        Address::Ip(addr) if endpoint.transport.kind() == SocketKind::Tls => Upstream::Tls(*addr),
        Address::Ip(addr) => Upstream::Tcp(*addr),
        Address::Abstract(_) => bail!("nginx cannot reach an abstract Unix socket"),
    })
}

/// What sockbench's client negotiates with the app server over each target's
/// transport, for the direct experiment's records: one connection before it, to
/// the tls column's app server. nginx's experiments record none: their TLS is
/// nginx's own to the app (TLS 1.3, as its configuration asks), which nginx does
/// not report.
fn tls_facts(plan: &ProxyPlan, targets: &[Target]) -> Result<Vec<Option<TlsInfo>>> {
    let direct = plan.experiments.contains(&Experiment::Direct);
    targets
        .iter()
        .map(|t| match t.app.transport.kind() {
            SocketKind::Tls if direct => Ok(super::http::connect(&t.app)?.tls_info()),
            _ => Ok(None),
        })
        .collect()
}

/// What every record says of the servers behind it.
fn facts(plan: &ProxyPlan, servers: &Servers) -> ServerFacts {
    let mut details = serde_json::Map::new();
    details.insert("proxy_workers".into(), plan.workers.into());
    if plan.app == AppSource::Ours(AppServerKind::Gunicorn) {
        details.insert("app_workers".into(), plan.app_workers.into());
    }
    if let Some(path) = &plan.path {
        details.insert("path".into(), path.clone().into());
    }
    ServerFacts {
        kind: "nginx".into(),
        version: servers.version.clone(),
        throwaway: true,
        behind: vec![servers.app.product()],
        details,
    }
}

/// One experiment's trials, as the harness runs them.
struct ProxyRunner<'a> {
    plan: &'a ProxyPlan,
    experiment: Experiment,
    cases: Vec<Params>,
    targets: &'a [Target],
    servers: &'a mut Servers,
}

impl ProxyRunner<'_> {
    /// The app server behind this experiment's sites.
    fn app(&self) -> &AppServer {
        match (self.experiment, &self.servers.overrun) {
            (Experiment::Overload, Some(overrun)) => overrun,
            _ => &self.servers.app,
        }
    }
}

impl Runner for ProxyRunner<'_> {
    fn target_label(&self, target: usize) -> String {
        self.targets[target].label.clone()
    }

    fn server_roles(&self, target: usize) -> Vec<ServerRole> {
        let app = self.app().role(target);
        let proxy = ServerRole::started("proxy", self.servers.nginx.pid());
        match self.experiment.through_nginx() {
            true => std::iter::once(proxy).chain(app).collect(),
            false => app.into_iter().collect(),
        }
    }

    fn places_server(&self) -> bool {
        self.servers.app.placeable()
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        // A port of a server that is gone may be someone else's by now: nothing
        // goes there.
        self.servers.check_running()?;
        let (column, params) = (target, &self.cases[case]);
        let target = &self.targets[column];
        let app = self.app();
        let peer = |conn: &crate::transport::Conn| app.check_peer(column, conn);
        let trial = self.experiment.run(target, params, self.plan, meter, &peer);
        // A trial cut short by a server that died says which died, and how: a
        // connection is reset while the dying process is still being torn down,
        // so it is given a moment to be seen gone.
        if trial.is_err() {
            let end = Instant::now() + DYING;
            while Instant::now() < end {
                self.servers.check_running()?;
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        trial
    }
}

impl Servers {
    /// An error naming the server that is no longer running, if one is not.
    fn check_running(&mut self) -> Result<()> {
        self.nginx.check_running()?;
        // The master dies first; the process that keeps it follows a moment later.
        let master = self.nginx.master_pid();
        if !crate::cpu::proc::runs(master) {
            bail!(
                "nginx's master process ({master}) is no longer running (it exited or was \
                 killed, and its workers with it); nothing more was sent to its ports"
            );
        }
        for app in std::iter::once(&mut self.app).chain(self.overrun.as_mut()) {
            app.check_running()?;
        }
        Ok(())
    }
}
