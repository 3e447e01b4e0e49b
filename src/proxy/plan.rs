//! Turns the raw `proxy` arguments into a validated plan, before anything starts.

use super::args::ProxyArgs;
use super::keys::*;
use super::Experiment;
use crate::cpu::affinity::Placement;
use crate::cpu::{Meter, COUNTING_SHARE};
use crate::error::usage;
use crate::harness::Rounds;
use crate::plan::distinct;
use crate::results::Params;
use crate::transport::{Address, Endpoint, SocketKind, Transport};
use crate::units::{format_size, parse_size};
use anyhow::Result;
use std::net::SocketAddr;
use std::time::Duration;

const DEFAULT_SIZES: [u64; 3] = [0, 4 << 10, 64 << 10];
/// With `--quick`: the small ones, which `sockbench run` measures too.
const QUICK_SIZES: [u64; 2] = [0, 4 << 10];
/// The largest response the app server gives.
pub const MAX_SIZE: u64 = 1 << 20;
const DEFAULT_WORKERS: u32 = 1;
const MAX_WORKERS: u32 = 64;
/// wrk's `-c` when not given, and the Redis family's.
const DEFAULT_CONNECTIONS: u32 = 50;
/// nginx holds two connections per client (its and the upstream's) and every
/// worker may open 4096 (`nginx.rs`).
const MAX_CONNECTIONS: u32 = 1_024;
/// The overrun app server's listen backlog when not given: small enough that 50
/// connections overrun it on a 2-core machine, as php-fpm's 511 is overrun by
/// traffic its few workers cannot keep up with.
const DEFAULT_APP_BACKLOG: u32 = 8;
/// Linux holds a backlog to `net.core.somaxconn`, 4096 by default.
const MAX_APP_BACKLOG: u32 = 4_096;
/// How long nginx's sites in front of the overrun app server wait for a
/// connection to it (`proxy_connect_timeout`): far under the second a dropped SYN
/// waits for its retransmission, so such a request fails within the trial rather
/// than holding it for seconds. (A connection to a backlog with room is made at
/// once, within the connect call, so nothing else waits that long.)
pub const OVERLOAD_CONNECT_TIMEOUT: Duration = Duration::from_millis(50);
/// The hops measured by default: the ones nginx reaches an app server over.
pub const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
/// The hops of an app server that is not sockbench's own: gunicorn's and the
/// user's command's, which sockbench gives no certificate.
pub const PLAIN_TRANSPORTS: [Transport; 2] = [Transport::Unix, Transport::Tcp];
/// What a user's app server is measured by when `--experiments` is not given:
/// every experiment but overload, which needs a small backlog sockbench sets.
const YOURS_EXPERIMENTS: [Experiment; 5] = [
    Experiment::Request,
    Experiment::Keepalive,
    Experiment::Direct,
    Experiment::Connect,
    Experiment::Concurrent,
];
/// gunicorn's sync workers when not given.
const DEFAULT_APP_WORKERS: u32 = 1;
/// What `sockbench run` measures of the family (`family.rs`): the hop one request
/// at a time, kept and renewed, what nginx itself costs, and many clients at
/// once. Left for `sockbench proxy`: connect, whose connection to nginx costs the
/// same in every column and says what keepalive already does, and overload, a
/// trap of one configuration (a small backlog) rather than a cost of the hop.
pub const RUN_EXPERIMENTS: [Experiment; 4] = [
    Experiment::Request,
    Experiment::Keepalive,
    Experiment::Direct,
    Experiment::Concurrent,
];
/// The keepalive experiment's response size: the hop alone.
pub const KEEPALIVE_SIZE: u64 = 0;

/// What a connect trial spends besides its timed loop: 20 untimed connections.
const CONNECT_AROUND: Duration = Duration::from_millis(5);
/// What a concurrent trial spends besides its timed loop: its untimed requests
/// (10 ms at most)…
const CONCURRENT_AROUND: Duration = Duration::from_millis(15);
/// …and opening each connection (nginx's upstream connection with it).
const CONNECTION_START: Duration = Duration::from_micros(200);
/// What an overload trial spends besides its timed loop and its connections: its
/// untimed requests and, at its end, the requests still waiting for a connection
/// to the app server ([`OVERLOAD_CONNECT_TIMEOUT`] at most).
const OVERLOAD_AROUND: Duration = Duration::from_millis(65);

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// One request at a time on one connection (request, keepalive, direct).
    pub requests: Duration,
    /// A new connection per request.
    pub connect: Duration,
    /// Many connections at once.
    pub concurrent: Duration,
    /// Many connections at once, the app server overrun.
    pub overload: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        requests: Duration::from_millis(500),
        connect: Duration::from_millis(500),
        concurrent: Duration::from_millis(1_000),
        overload: Duration::from_millis(1_000),
    };
    pub const QUICK: Budget = Budget {
        requests: Duration::from_millis(60),
        connect: Duration::from_millis(40),
        concurrent: Duration::from_millis(60),
        overload: Duration::from_millis(60),
    };

    /// This budget, or for a counting trial's `meter` its share of it.
    pub fn for_trial(&self, meter: &Meter) -> Budget {
        if !meter.counting() {
            return *self;
        }
        Budget {
            requests: self.requests / COUNTING_SHARE,
            connect: self.connect / COUNTING_SHARE,
            concurrent: self.concurrent / COUNTING_SHARE,
            overload: self.overload / COUNTING_SHARE,
        }
    }
}

crate::named! {
    /// An app server sockbench starts behind nginx.
    pub enum AppServerKind as "app server" {
        /// sockbench's own, on hyper (`app.rs`).
        Sockbench = "sockbench",
        /// Debian's gunicorn, sync workers (`gunicorn.rs`).
        Gunicorn = "gunicorn",
    }
}

/// The app server behind nginx.
#[derive(Debug, Clone, PartialEq)]
pub enum AppSource {
    /// One sockbench starts, listening on every transport of the plan.
    Ours(AppServerKind),
    /// The user's command, started once per transport of the plan.
    Command(String),
    /// The user's app servers that run, a column each.
    Running(Vec<UserUpstream>),
}

/// One `--upstream`: where a user's app server runs, and its column's name.
#[derive(Debug, Clone, PartialEq)]
pub struct UserUpstream {
    pub label: String,
    pub endpoint: Endpoint,
}

/// A validated `proxy` run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyPlan {
    pub app: AppSource,
    /// gunicorn's sync workers.
    pub app_workers: u32,
    /// The path asked of a user's app server; `None`: sizes are asked of ours.
    pub path: Option<String>,
    /// The transports of ours or of the user's command (the user's running app
    /// servers' are their upstreams').
    pub transports: Vec<Transport>,
    pub experiments: Vec<Experiment>,
    pub rounds: Rounds,
    pub placements: Vec<Placement>,
    pub sizes: Vec<u64>,
    pub workers: u32,
    /// Connections at once in the concurrent and overload experiments.
    pub connections: u32,
    /// The overrun app server's listen backlog (overload).
    pub app_backlog: u32,
    pub budget: Budget,
}

impl ProxyPlan {
    pub fn from_args(args: &ProxyArgs) -> Result<ProxyPlan> {
        let app = app_source(args)?;
        let yours = !matches!(app, AppSource::Ours(_));
        let transports =
            match (&args.transports, &app) {
                (Some(_), AppSource::Running(_)) => return Err(usage(
                    "--transports is for an app server sockbench starts; with --upstream, each \
                     --upstream is a column of its own",
                )),
                (Some(list), _) => distinct("--transports", list)?,
                (None, AppSource::Running(ups)) => {
                    let mut reached: Vec<Transport> = Vec::new();
                    for u in ups {
                        if !reached.contains(&u.endpoint.transport) {
                            reached.push(u.endpoint.transport);
                        }
                    }
                    reached
                }
                (None, AppSource::Ours(AppServerKind::Sockbench)) => DEFAULT_TRANSPORTS.to_vec(),
                (None, _) => PLAIN_TRANSPORTS.to_vec(),
            };
        super::FAMILY.check_transports(&transports).map_err(usage)?;
        if let Some(t) = transports.iter().find(|t| t.kind() == SocketKind::Tls) {
            match &app {
                AppSource::Ours(AppServerKind::Gunicorn) => {
                    return Err(usage(format!(
                        "--transports {t}: gunicorn is measured over unix and tcp here; drop {t}"
                    )))
                }
                AppSource::Command(_) => {
                    return Err(usage(format!(
                        "--transports {t}: sockbench starts your --app over unix and tcp; put \
                         a TLS app server that runs behind nginx with --upstream \
                         NAME=tls:127.0.0.1:PORT instead"
                    )))
                }
                _ => {}
            }
        }
        if let AppSource::Command(command) = &app {
            check_command(command, &transports)?;
        }
        let default_experiments: &[Experiment] = if yours {
            &YOURS_EXPERIMENTS
        } else {
            &Experiment::ALL
        };
        let experiments = args.experiments.as_deref().unwrap_or(default_experiments);
        if experiments.is_empty() {
            return Err(usage(
                "--experiments is empty; name at least one experiment",
            ));
        }
        if yours && experiments.contains(&Experiment::Overload) {
            return Err(usage(
                "--experiments overload needs an app server that sockbench starts with a small \
                 listen backlog (--app-server sockbench or gunicorn), not yours; drop overload",
            ));
        }
        let path = match (&args.path, yours) {
            (Some(_), false) => {
                return Err(usage(
                    "--path is for your app server (--upstream, --app); sockbench's own and \
                     gunicorn are asked for --sizes",
                ))
            }
            (Some(path), true) => {
                super::http::check_path(path).map_err(|why| usage(format!("--path: {why}")))?;
                Some(path.clone())
            }
            (None, true) => Some("/".to_string()),
            (None, false) => None,
        };
        if yours && args.app_backlog.is_some() {
            return Err(usage(
                "--app-backlog sets the backlog of the app server sockbench starts for \
                 overload, which is not run on yours; drop it",
            ));
        }
        if yours && args.sizes.is_some() {
            return Err(usage(
                "--sizes is for sockbench's own app server and gunicorn; your app server \
                 answers what --path asks",
            ));
        }
        let app_workers = args.app_workers.unwrap_or(DEFAULT_APP_WORKERS);
        if !(1..=MAX_WORKERS).contains(&app_workers) {
            return Err(usage(format!(
                "--app-workers must be between 1 and {MAX_WORKERS}, not {app_workers}"
            )));
        }
        if args.app_workers.is_some() && app != AppSource::Ours(AppServerKind::Gunicorn) {
            return Err(usage(
                "--app-workers sets gunicorn's workers; add --app-server gunicorn, or set your \
                 app server's workers in its own command",
            ));
        }
        let workers = args.workers.unwrap_or(DEFAULT_WORKERS);
        if !(1..=MAX_WORKERS).contains(&workers) {
            return Err(usage(format!(
                "--proxy-workers must be between 1 and {MAX_WORKERS}, not {workers}"
            )));
        }
        let connections = args.connections.unwrap_or(DEFAULT_CONNECTIONS);
        if !(1..=MAX_CONNECTIONS).contains(&connections) {
            return Err(usage(format!(
                "-c/--connections must be between 1 and {MAX_CONNECTIONS}, not {connections}"
            )));
        }
        if experiments.contains(&Experiment::Concurrent)
            || experiments.contains(&Experiment::Overload)
        {
            crate::plan::check_open_files("-c/--connections", u64::from(connections))?;
        }
        let app_backlog = args.app_backlog.unwrap_or(DEFAULT_APP_BACKLOG);
        if !(1..=MAX_APP_BACKLOG).contains(&app_backlog) {
            return Err(usage(format!(
                "--app-backlog must be between 1 and {MAX_APP_BACKLOG}, not {app_backlog}"
            )));
        }
        // The user's app server that runs serves others: it is not sockbench's to
        // pin, and a placement that pins nginx and the client alone would be
        // named for what it does not do.
        let running = matches!(app, AppSource::Running(_));
        let placements = match running {
            true => crate::plan::placements(&args.measuring.placement, Placement::Free)?,
            false => crate::plan::placements(&args.measuring.placement, Placement::Same)?,
        };
        if running && placements.iter().any(|&p| p != Placement::Free) {
            return Err(usage(
                "--placement same or split pins the servers, and your app server at --upstream \
                 serves others; use --placement free, or --app to have sockbench start it",
            ));
        }
        Ok(ProxyPlan {
            app,
            app_workers,
            path,
            transports,
            experiments: distinct("--experiments", experiments)?,
            rounds: crate::plan::rounds(args.measuring.trials, args.measuring.quick)?,
            placements,
            sizes: match &args.sizes {
                Some(texts) => sizes(texts)?,
                None if args.measuring.quick => QUICK_SIZES.to_vec(),
                None => DEFAULT_SIZES.to_vec(),
            },
            workers,
            connections,
            app_backlog,
            budget: if args.measuring.quick {
                Budget::QUICK
            } else {
                Budget::FULL
            },
        })
    }

    /// The columns of each case: a transport of ours or of the user's command, or
    /// an `--upstream`.
    pub fn columns(&self) -> usize {
        match &self.app {
            AppSource::Running(ups) => ups.len(),
            _ => self.transports.len(),
        }
    }

    /// The rounds of an experiment and how long each of its trials runs.
    pub fn timing(&self, experiment: Experiment) -> crate::harness::estimate::Timing {
        let b = &self.budget;
        let (trial, around) = match experiment {
            Experiment::Request | Experiment::Keepalive | Experiment::Direct => {
                (b.requests, Duration::ZERO)
            }
            Experiment::Connect => (b.connect, CONNECT_AROUND),
            Experiment::Concurrent => (
                b.concurrent,
                CONCURRENT_AROUND + CONNECTION_START * self.connections,
            ),
            Experiment::Overload => (
                b.overload,
                OVERLOAD_AROUND + CONNECTION_START * self.connections,
            ),
        };
        crate::harness::estimate::Timing {
            rounds: self.rounds,
            trial,
            around,
        }
    }

    /// The cases an experiment runs, one table section each.
    pub fn cases(&self, experiment: Experiment) -> Vec<Params> {
        let ms = |d: Duration| d.as_millis() as u64;
        let base = Params::default().with(DURATION_MS, ms(self.budget.requests));
        let smallest = self.sizes.iter().copied().min().unwrap_or(0);
        // What each request asks for: a size of ours, or the user's path.
        let asking = |params: Params, size: u64| match &self.path {
            Some(path) => params.with(PATH, path.clone()),
            None => params.with(SIZE, size),
        };
        let by_size = || match &self.path {
            Some(_) => vec![asking(base.clone(), 0)],
            None => self
                .sizes
                .iter()
                .map(|&size| base.clone().with(SIZE, size))
                .collect(),
        };
        match experiment {
            Experiment::Request | Experiment::Direct => by_size(),
            Experiment::Keepalive => ["on", "off"]
                .into_iter()
                .map(|on| {
                    asking(base.clone(), KEEPALIVE_SIZE).with(UPSTREAM_KEEPALIVE, on.to_string())
                })
                .collect(),
            Experiment::Connect => vec![asking(
                Params::default().with(DURATION_MS, ms(self.budget.connect)),
                smallest,
            )],
            Experiment::Concurrent => vec![asking(
                Params::default()
                    .with(DURATION_MS, ms(self.budget.concurrent))
                    .with(CONNECTIONS, u64::from(self.connections)),
                smallest,
            )],
            Experiment::Overload => vec![Params::default()
                .with(DURATION_MS, ms(self.budget.overload))
                .with(CONNECTIONS, u64::from(self.connections))
                .with(BACKLOG, u64::from(self.app_backlog))
                .with(CONNECT_TIMEOUT_MS, ms(OVERLOAD_CONNECT_TIMEOUT))
                .with(SIZE, smallest)],
        }
    }
}

/// The app server of `args`: ours of `--app-server`, the user's `--app` command,
/// or the user's `--upstream`s; at most one of the three.
fn app_source(args: &ProxyArgs) -> Result<AppSource> {
    let given = [
        args.app_server.is_some(),
        args.app.is_some(),
        !args.upstreams.is_empty(),
    ];
    if given.iter().filter(|&&g| g).count() > 1 {
        return Err(usage(
            "--app-server, --app and --upstream each name the app server behind nginx; give \
             one of them",
        ));
    }
    if let Some(command) = &args.app {
        return Ok(AppSource::Command(command.clone()));
    }
    if args.upstreams.is_empty() {
        return Ok(AppSource::Ours(
            args.app_server.unwrap_or(AppServerKind::Sockbench),
        ));
    }
    let mut ups: Vec<UserUpstream> = Vec::new();
    for text in &args.upstreams {
        let up = upstream(text)?;
        if ups.iter().any(|u| u.label == up.label) {
            return Err(usage(format!(
                "two --upstream are named {}; name them apart with NAME=ADDRESS",
                up.label
            )));
        }
        ups.push(up);
    }
    Ok(AppSource::Running(ups))
}

/// One `--upstream [NAME=]ADDRESS`: `unix:/PATH`, `127.0.0.1:PORT` or
/// `tls:127.0.0.1:PORT` (any address of 127.0.0.0/8); without a NAME, the column
/// is named by what it reaches (`unix`, `tcp`, `tls`).
fn upstream(text: &str) -> Result<UserUpstream> {
    let refuse = |why: String| {
        usage(format!(
            "--upstream {text}: {why}; write [NAME=]unix:/path/to/app.sock, \
             [NAME=]127.0.0.1:PORT or [NAME=]tls:127.0.0.1:PORT"
        ))
    };
    let (name, address) = match text.split_once('=') {
        Some((name, rest)) => (Some(name), rest),
        None => (None, text),
    };
    if let Some(name) = name {
        crate::plan::url_name(name).map_err(refuse)?;
    }
    let endpoint = if let Some(path) = address.strip_prefix("unix:") {
        if !path.starts_with('/') {
            return Err(refuse("the socket's path must be absolute".into()));
        }
        if path.len() >= crate::transport::MAX_UNIX_PATH {
            return Err(refuse(format!(
                "the socket's path is {} bytes long; a Unix socket's path holds at most {}",
                path.len(),
                crate::transport::MAX_UNIX_PATH - 1
            )));
        }
        Endpoint {
            transport: Transport::Unix,
            address: Address::Path(path.into()),
        }
    } else {
        // `tls:` first: an app server that speaks HTTPS, as nginx's `https://`.
        let (transport, address) = match address.strip_prefix("tls:") {
            Some(rest) => (Transport::Tls, rest),
            None => (Transport::Tcp, address),
        };
        let addr: SocketAddr = address
            .parse()
            .map_err(|_| refuse("not a Unix socket's path nor an address with a port".into()))?;
        match addr {
            SocketAddr::V4(v4) if v4.ip().is_loopback() && v4.port() != 0 => Endpoint {
                transport,
                address: Address::Ip(addr),
            },
            SocketAddr::V4(v4) if v4.ip().is_loopback() => {
                return Err(refuse("port 0 is no server's port".into()))
            }
            _ => {
                return Err(refuse(format!(
                    "{} is not on this machine's loopback (127.0.0.0/8); sockbench measures \
                     this machine only",
                    addr.ip()
                )))
            }
        }
    };
    let reached = endpoint.transport;
    let label = match name {
        Some(name) => {
            if let Ok(named) = name.parse::<Transport>() {
                if named != reached {
                    return Err(refuse(format!(
                        "{named} names a transport, and this address is reached over \
                         {reached}; name it otherwise"
                    )));
                }
            }
            name.to_string()
        }
        None => reached.name().to_string(),
    };
    Ok(UserUpstream { label, endpoint })
}

/// Checks that `--app`'s command says where to listen on each of `transports`.
fn check_command(command: &str, transports: &[Transport]) -> Result<()> {
    if command.trim().is_empty() {
        return Err(usage(
            "--app is empty; give your app server's command, e.g. --app 'gunicorn -b \
             unix:{socket} -b {host}:{port} myapp:app'",
        ));
    }
    for &t in transports {
        let needs: &[&str] = match t {
            Transport::Unix => &["{socket}"],
            _ => &["{host}", "{port}"],
        };
        if let Some(needs) = needs.iter().find(|n| !command.contains(**n)) {
            return Err(usage(format!(
                "--app: the command has no {needs}, so it cannot be told where to listen over \
                 {t}; add it (e.g. -b unix:{{socket}} or -b {{host}}:{{port}}), or leave {t} \
                 out with --transports"
            )));
        }
    }
    Ok(())
}

fn sizes(texts: &[String]) -> Result<Vec<u64>> {
    let sizes = texts
        .iter()
        .map(|t| {
            let size = parse_size(t).map_err(|e| usage(format!("--sizes: {e}")))?;
            if size > MAX_SIZE {
                return Err(usage(format!(
                    "--sizes: {} is over the app server's largest response, {}",
                    format_size(size),
                    format_size(MAX_SIZE)
                )));
            }
            Ok(size)
        })
        .collect::<Result<Vec<u64>>>()?;
    distinct("--sizes", &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct TestCli {
        #[command(flatten)]
        args: ProxyArgs,
    }

    fn plan(argv: &[&str]) -> Result<ProxyPlan> {
        let cli = TestCli::try_parse_from(std::iter::once("proxy").chain(argv.iter().copied()))?;
        ProxyPlan::from_args(&cli.args)
    }

    #[test]
    fn defaults_are_unix_tcp_and_tls_every_experiment_and_small_sizes() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.transports, DEFAULT_TRANSPORTS);
        assert_eq!(p.experiments, Experiment::ALL);
        assert_eq!(p.workers, 1);
        let sizes: Vec<_> = p
            .cases(Experiment::Request)
            .iter()
            .map(|c| c.get(SIZE))
            .collect();
        assert_eq!(sizes, [Some(0), Some(4096), Some(65536)]);
        let kept: Vec<_> = p
            .cases(Experiment::Keepalive)
            .iter()
            .map(|c| c.get(UPSTREAM_KEEPALIVE))
            .collect();
        assert_eq!(kept, [Some("on".to_string()), Some("off".to_string())]);
        let many = &p.cases(Experiment::Concurrent)[0];
        assert_eq!((many.get(CONNECTIONS), many.get(SIZE)), (Some(50), Some(0)));
        assert_eq!(p.cases(Experiment::Connect)[0].get(SIZE), Some(0));
    }

    #[test]
    fn the_one_size_of_connect_concurrent_and_overload_is_the_smallest_asked() {
        let p = plan(&["--sizes", "64KiB,4KiB", "-c", "7", "--app-backlog", "2"]).unwrap();
        for e in [
            Experiment::Connect,
            Experiment::Concurrent,
            Experiment::Overload,
        ] {
            let cases = p.cases(e);
            assert_eq!(cases.len(), 1, "{e}");
            assert_eq!(cases[0].get(SIZE), Some(4096), "{e}");
        }
        assert_eq!(p.cases(Experiment::Concurrent)[0].get(CONNECTIONS), Some(7));
        let overload = &p.cases(Experiment::Overload)[0];
        assert_eq!(
            (overload.get(CONNECTIONS), overload.get(BACKLOG)),
            (Some(7), Some(2))
        );
        assert_eq!(overload.get(CONNECT_TIMEOUT_MS), Some(50));
    }

    #[test]
    fn a_users_upstreams_are_columns_asked_for_a_path_without_overload() {
        let p = plan(&[
            "--upstream",
            "web=unix:/run/app.sock",
            "--upstream",
            "127.0.0.2:8000",
            "--path",
            "/health?x=1",
        ])
        .unwrap();
        let AppSource::Running(ups) = &p.app else {
            panic!("{:?}", p.app)
        };
        let labels: Vec<&str> = ups.iter().map(|u| u.label.as_str()).collect();
        assert_eq!(labels, ["web", "tcp"]);
        assert_eq!(ups[1].endpoint.to_string(), "tcp:127.0.0.2:8000");
        assert_eq!(p.columns(), 2);
        let tls = plan(&["--upstream", "tls:127.0.0.1:8443"]).unwrap();
        assert_eq!(tls.transports, [Transport::Tls]);
        assert_eq!(p.transports, [Transport::Unix, Transport::Tcp]);
        assert!(!p.experiments.contains(&Experiment::Overload));
        assert_eq!(p.placements, [Placement::Free]);
        for e in &p.experiments {
            for case in p.cases(*e) {
                assert_eq!(case.get(PATH).as_deref(), Some("/health?x=1"), "{e}");
                assert_eq!(case.get(SIZE), None, "{e}");
            }
        }
    }

    #[test]
    fn an_app_command_runs_on_the_transports_it_names_a_place_for() {
        let p = plan(&["--app", "srv --bind {host}:{port}", "--transports", "tcp"]).unwrap();
        assert_eq!(p.app, AppSource::Command("srv --bind {host}:{port}".into()));
        assert_eq!(p.path.as_deref(), Some("/"));
        assert_eq!(p.transports, [Transport::Tcp]);
        let g = plan(&["--app-server", "gunicorn", "--app-workers", "3"]).unwrap();
        assert_eq!(g.app, AppSource::Ours(AppServerKind::Gunicorn));
        assert_eq!((g.app_workers, g.path.clone()), (3, None));
        assert!(g.experiments.contains(&Experiment::Overload));
    }

    #[test]
    fn bad_input_is_refused_in_one_line() {
        for bad in [
            &["--proxy-workers", "0"][..],
            &["--sizes", "2MiB"],
            &["--sizes", "4KiB,4KiB"],
            &["--transports", "tcp6"],
            &["--sizes", "lots"],
            &["-c", "0"],
            &["-c", "5000"],
            &["--app-backlog", "0"],
            &["--app-backlog", "100000"],
            &["--upstream", "10.0.0.1:80"],
            &["--upstream", "unix:relative.sock"],
            &["--upstream", "127.0.0.1"],
            &["--upstream", "tcp=unix:/run/a.sock"],
            &["--upstream", "a=127.0.0.1:1", "--upstream", "a=127.0.0.1:2"],
            &["--upstream", "127.0.0.1:1", "--transports", "tcp"],
            &["--upstream", "127.0.0.1:1", "--placement", "same"],
            &["--upstream", "127.0.0.1:1", "--experiments", "overload"],
            &["--upstream", "127.0.0.1:1", "--sizes", "0"],
            &["--upstream", "127.0.0.1:1", "--app", "x {port}"],
            &["--app", "srv --bind {host}:{port}"],
            &["--app", "srv -b unix:{socket} -b :{port}"],
            &["--app", "srv {socket} {host} {port}", "--app-backlog", "4"],
            &["--app", " "],
            &["--app", "srv {socket} {port}", "--path", "no-slash"],
            &["--path", "/x"],
            &["--app-workers", "2"],
            &["--app-server", "gunicorn", "--app-workers", "0"],
        ] {
            let e = plan(bad).expect_err(&format!("{bad:?} should be refused"));
            assert_eq!(e.to_string().lines().count(), 1, "{bad:?}: {e}");
        }
    }
}
