//! Turns the raw `postgres` arguments into a validated plan.

use super::args::PostgresArgs;
use crate::error::usage;
use crate::plan::{distinct, DEFAULT_TRANSPORTS};
use crate::postgres::experiment::{Budget, Experiment};
use crate::postgres::hba::AuthMethod;
use crate::postgres::script::{self, Script};
use crate::postgres::targets::UrlArg;
use crate::system::pg_environment;
use crate::transport::{SocketKind, Transport};
use crate::units::{format_count, parse_count, parse_duration};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// Where the servers under test come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A throwaway cluster reached over these transports.
    Throwaway {
        bindir: Option<PathBuf>,
        transports: Vec<Transport>,
        methods: Vec<AuthMethod>,
    },
    /// The user's servers: URLs (named or not), a `--server` whose transports are
    /// compared (an empty URI for the server the caller's `PG*` variables name),
    /// and URLs per authentication method.
    User {
        urls: Vec<UrlArg>,
        server: Option<String>,
        auth_urls: Vec<(AuthMethod, String)>,
        /// The `PG*` variables that named the server, when they did.
        from_environment: Vec<&'static str>,
    },
}

/// How the concurrent experiment loads the server (pgbench's options).
#[derive(Debug, Clone)]
pub struct ConcurrentPlan {
    /// One run per client count (a sweep when there are several).
    pub clients: Vec<u32>,
    pub threads: u32,
    pub script: Script,
    /// The script's file name, as results and the verdict name it (none for the
    /// default `SELECT 1`).
    pub script_name: Option<String>,
    pub connect_per_transaction: bool,
    /// Transactions per second of all clients together, on a Poisson schedule.
    pub rate: Option<u64>,
    /// Transactions later than this are counted (and with a rate, skipped when late
    /// before they start).
    pub latency_limit: Option<Duration>,
    /// Progress lines on stderr this often during each run.
    pub progress: Option<Duration>,
    /// Time each SQL command of the script.
    pub per_command: bool,
}

/// A validated `postgres` run.
#[derive(Debug, Clone)]
pub struct PostgresPlan {
    pub source: Source,
    pub experiments: Vec<Experiment>,
    pub rounds: crate::harness::Rounds,
    pub placements: Vec<crate::cpu::affinity::Placement>,
    /// Whether `--placement` chose them (else they are the default, which gives
    /// way where a user's server cannot be placed).
    pub placement_asked: bool,
    pub budget: Budget,
    pub concurrent: ConcurrentPlan,
    /// Transports some experiments leave out (`run`'s shorter plan).
    pub left_out: LeftOut,
}

/// Transports some experiments leave out, to keep `sockbench run` short: the ways
/// into a container are measured by the query experiment alone (the container
/// comparison), and authentication over unix alone (the connect experiment
/// compares the transports for a new connection already).
#[derive(Debug, Clone, Default)]
pub struct LeftOut {
    /// Measured by the query experiment alone.
    pub query_only: Vec<Transport>,
    /// Left out of the auth experiment too.
    pub auth: Vec<Transport>,
}

impl LeftOut {
    /// The transports `experiment` leaves out.
    pub fn of(&self, experiment: Experiment) -> Vec<Transport> {
        match experiment {
            Experiment::Query => Vec::new(),
            Experiment::Auth => self.query_only.iter().chain(&self.auth).copied().collect(),
            _ => self.query_only.clone(),
        }
    }
}

/// Concurrent clients when `--clients` is not given.
const DEFAULT_CLIENTS: u32 = 10;

impl PostgresPlan {
    pub fn from_args(args: &PostgresArgs) -> Result<PostgresPlan> {
        let rounds = crate::plan::rounds(args.measuring.trials, args.measuring.quick)?;
        let placements = crate::plan::placements(
            &args.measuring.placement,
            crate::cpu::affinity::Placement::Same,
        )?;
        let budget = budget(args)?;
        let concurrent = concurrent_plan(args)?;
        let given = !args.urls.is_empty() || !args.auth_urls.is_empty() || args.server.is_some();
        let user_mode = given || !pg_environment::naming_a_server().is_empty();
        let source = if user_mode {
            user_source(args)?
        } else {
            throwaway_source(args)?
        };
        let experiments = experiments(args, &source)?;
        if !experiments.contains(&Experiment::Concurrent) {
            check_script_options_apply(args)?;
        }
        if experiments.contains(&Experiment::Rows) {
            check_rows_fit(&budget.rows)?;
        }
        if experiments.contains(&Experiment::Auth) {
            check_auth_applies(&source, args.auth_methods.is_some())?;
        }
        Ok(PostgresPlan {
            source,
            experiments,
            rounds,
            placements,
            placement_asked: !args.measuring.placement.is_empty(),
            budget,
            concurrent,
            left_out: LeftOut::default(),
        })
    }
}

/// The trial budget `args` ask for: the quick or the full one, with the counts,
/// connections, duration and protocol given.
fn budget(args: &PostgresArgs) -> Result<Budget> {
    let mut budget = if args.measuring.quick {
        Budget::quick()
    } else {
        Budget::full()
    };
    if let Some(list) = &args.queries {
        budget.queries = counts("--queries", list, MAX_QUERIES)?;
    }
    if let Some(list) = &args.rows {
        budget.rows = counts("--rows", list, MAX_ROWS)?;
    }
    if let Some(n) = args.connections {
        if !(1..=1_000_000).contains(&n) {
            return Err(usage(format!(
                "--connections must be between 1 and 1000000, not {n}"
            )));
        }
        budget.connections = n;
        budget.auth_connections = n;
    }
    if let Some(text) = &args.duration {
        budget.concurrent_time =
            parse_duration(text).map_err(|e| usage(format!("--duration: {e}")))?;
    }
    if let Some(protocol) = args.protocol {
        budget.protocol = protocol;
    }
    Ok(budget)
}

/// A throwaway cluster on the transports and with the authentication methods
/// `args` ask for.
fn throwaway_source(args: &PostgresArgs) -> Result<Source> {
    let transports = supported(distinct(
        "--transports",
        args.transports.as_deref().unwrap_or(&DEFAULT_TRANSPORTS),
    )?)?;
    // Without --auth-methods, trust only where the cluster can offer it.
    let methods = match args.auth_methods.as_deref() {
        Some(given) => distinct("--auth-methods", given)?,
        None => AuthMethod::ALL
            .into_iter()
            .filter(|m| !m.private_only() || trust_offered(&transports))
            .collect(),
    };
    Ok(Source::Throwaway {
        bindir: args.pg_bindir.clone(),
        transports,
        methods,
    })
}

/// The experiments `args` ask for (by default every one `source` can run), each
/// checked against what it needs of a user's servers.
fn experiments(args: &PostgresArgs, source: &Source) -> Result<Vec<Experiment>> {
    let experiments = match (&args.experiments, source) {
        (Some(list), _) => distinct("--experiments", list)?,
        (None, Source::User { auth_urls, .. }) => Experiment::ALL
            .into_iter()
            .filter(|e| match e {
                Experiment::Auth => !auth_urls.is_empty(),
                _ => source.measures_servers(),
            })
            .collect(),
        (None, Source::Throwaway { .. }) => Experiment::ALL.to_vec(),
    };
    if experiments.is_empty() {
        return Err(usage(
            "--experiments needs at least one of query, connect, auth, rows, concurrent",
        ));
    }
    if let Source::User { auth_urls, .. } = source {
        for e in &experiments {
            if *e == Experiment::Auth && auth_urls.is_empty() {
                return Err(usage(
                    "auth on your own servers needs --auth-url METHOD=URI for each method to \
                         compare (sockbench never changes a server it did not start)",
                ));
            }
            if *e != Experiment::Auth && !source.measures_servers() {
                return Err(usage(format!(
                    "the {e} experiment needs --url URI or --server URI"
                )));
            }
        }
    }
    Ok(experiments)
}

/// The options that only the concurrent experiment's script uses, refused when it
/// is not run (rather than ignored, which would measure something else than asked).
fn check_script_options_apply(args: &PostgresArgs) -> Result<()> {
    let given = [
        (args.script.is_some(), "-f/--script"),
        (!args.defines.is_empty(), "-D/--define"),
        (args.report_per_command, "-r/--report-per-command"),
    ];
    match given.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(usage(format!(
            "{flag} is for the concurrent experiment, which --experiments leaves out; add \
             concurrent to --experiments, or leave out {flag}"
        ))),
        None => Ok(()),
    }
}

impl Source {
    /// True when some user's server is measured beyond `--auth-url`.
    fn measures_servers(&self) -> bool {
        match self {
            Source::Throwaway { .. } => true,
            Source::User { urls, server, .. } => !urls.is_empty() || server.is_some(),
        }
    }
}

fn user_source(args: &PostgresArgs) -> Result<Source> {
    // Only when nothing else names a server do the caller's PG* variables.
    let named = !args.urls.is_empty() || args.server.is_some() || !args.auth_urls.is_empty();
    let from_environment = if named {
        Vec::new()
    } else {
        pg_environment::naming_a_server()
    };
    for (given, flag) in [
        (args.transports.is_some(), "--transports"),
        (args.pg_bindir.is_some(), "--pg-bindir"),
        (args.auth_methods.is_some(), "--auth-methods"),
    ] {
        if given && from_environment.is_empty() {
            return Err(usage(format!(
                "{flag} applies to the throwaway cluster and does not go with --url, --server \
                 or --auth-url"
            )));
        }
        if given {
            return Err(usage(format!(
                "{flag} applies to the throwaway cluster, but {} {} your own server, which is \
                 measured instead; unset {} for a throwaway cluster",
                from_environment.join(", "),
                if from_environment.len() == 1 {
                    "names"
                } else {
                    "name"
                },
                if from_environment.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            )));
        }
    }
    let names: Vec<&str> = args.urls.iter().filter_map(|u| u.name.as_deref()).collect();
    distinct("--url", &names).map_err(|_| usage("each --url needs its own NAME"))?;
    let auth_urls = args
        .auth_urls
        .iter()
        .map(|u| {
            let method: AuthMethod = u
                .name
                .parse()
                .map_err(|e: String| usage(format!("--auth-url: {e}")))?;
            Ok((method, u.uri.clone()))
        })
        .collect::<Result<Vec<_>>>()?;
    let methods: Vec<AuthMethod> = auth_urls.iter().map(|(m, _)| *m).collect();
    distinct("--auth-url", &methods)?;
    // The server the PG* variables name has its transports compared, as --server
    // does: measuring only the one libpq picks would leave nothing to compare.
    let server = match &args.server {
        Some(uri) => Some(uri.clone()),
        None if !from_environment.is_empty() => Some(String::new()),
        None => None,
    };
    Ok(Source::User {
        urls: args.urls.clone(),
        server,
        auth_urls,
        from_environment,
    })
}

/// What holding one row of `generate_series` costs libpq, with room to spare: the
/// peak memory of `--rows 1M,4M` against `100k,200k` gave about 23 B a row here.
const BYTES_PER_ROW: u64 = 40;

/// The largest `--rows` count fits in half the memory free now: libpq holds the
/// whole result before the first row is read.
fn check_rows_fit(rows: &[u64]) -> Result<()> {
    let most = rows.iter().copied().max().unwrap_or(0);
    let Some(free) = crate::system::available_memory_bytes() else {
        return Ok(());
    };
    if most.saturating_mul(BYTES_PER_ROW) > free / 2 {
        let fits = free / 2 / BYTES_PER_ROW;
        return Err(usage(format!(
            "--rows {most}: the result would take about {} in memory, more than half of the \
             {} free now; use at most {fits} rows",
            crate::units::format_size(most.saturating_mul(BYTES_PER_ROW)),
            crate::units::format_size(free)
        )));
    }
    Ok(())
}

/// The transports, if the throwaway cluster can listen on all of them, without
/// those into a container this machine cannot build (each left out in one line).
fn supported(transports: Vec<Transport>) -> Result<Vec<Transport>> {
    super::FAMILY.check_transports(&transports).map_err(usage)?;
    crate::plan::buildable("postgres", transports)
}

/// Whether the throwaway cluster can offer trust over `transports`: only over the
/// Unix socket in its private directory (the host's, or the one shared into the
/// container), and only when no abstract socket, which any local account can
/// reach, listens (see `AuthMethod::private_only`).
fn trust_offered(transports: &[Transport]) -> bool {
    [Transport::Unix, Transport::UnixShared]
        .iter()
        .any(|t| transports.contains(t))
        && !transports.contains(&Transport::UnixAbstract)
}

/// On the throwaway cluster, `auth` has a method that applies to some transport:
/// `peer` needs a Unix socket, and trust the private one without an abstract one.
fn check_auth_applies(source: &Source, methods_given: bool) -> Result<()> {
    let Source::Throwaway {
        transports,
        methods,
        ..
    } = source
    else {
        return Ok(());
    };
    let unix = transports.iter().any(|t| t.kind() == SocketKind::Unix);
    let peer_given = methods_given && methods.contains(&AuthMethod::Peer);
    if !unix && (peer_given || methods.iter().all(|m| m.local_only())) {
        return Err(usage(
            "peer authentication works only over a Unix socket; add unix to --transports or \
             leave peer out of --auth-methods",
        ));
    }
    if methods.iter().any(|m| m.private_only()) && !trust_offered(transports) {
        return Err(usage(
            "trust is offered only over the Unix socket in sockbench's private directory, \
             which no other account can open, and not with unix-abstract, which any account \
             can reach; measure it with unix in --transports and without unix-abstract, or \
             leave trust out of --auth-methods",
        ));
    }
    Ok(())
}

/// Most queries in one batch: a batch must end within `BATCH_LIMIT` (two minutes),
/// and a query over TLS took 114 µs here with the machine busy (25 µs over unix),
/// so 250k take about 30 s, leaving room for a server four times slower.
const MAX_QUERIES: u64 = 250_000;
/// Most rows in one batch: 100M take about 4 GB in libpq and about 30 s to read
/// (a row took 230 to 290 ns here);
/// `check_rows_fit` then holds them to the memory free.
const MAX_ROWS: u64 = 100_000_000;

/// At least two different counts, so a line can be fitted, each at most `most`.
fn counts(flag: &str, list: &[String], most: u64) -> Result<Vec<u64>> {
    let parsed = list
        .iter()
        .map(|c| parse_count(c, most).map_err(|e| usage(format!("{flag}: {e}"))))
        .collect::<Result<Vec<u64>>>()?;
    let shown: Vec<String> = parsed.iter().map(|&n| format_count(n)).collect();
    distinct(flag, &shown)?;
    let mut counts = parsed;
    counts.sort_unstable();
    if counts.len() < 2 {
        return Err(usage(format!(
            "{flag} needs at least two different counts to fit a line, e.g. 1k,2k,4k"
        )));
    }
    Ok(counts)
}

/// A script's file name, printable and short, for results and the verdict.
fn script_name(path: &std::path::Path) -> String {
    let name = path.file_name().unwrap_or(path.as_os_str());
    let name = name.to_string_lossy();
    let printable = name.chars().map(|c| if c.is_control() { '?' } else { c });
    printable.take(64).collect()
}

const MAX_CLIENTS: u32 = 1_000;
/// Far above what one client machine sends; a whole number, as results record it.
const MAX_RATE: u64 = 10_000_000;

fn concurrent_plan(args: &PostgresArgs) -> Result<ConcurrentPlan> {
    let clients = distinct(
        "--clients",
        args.clients.as_deref().unwrap_or(&[DEFAULT_CLIENTS]),
    )?;
    if let Some(bad) = clients.iter().find(|c| !(1..=MAX_CLIENTS).contains(*c)) {
        return Err(usage(format!(
            "--clients must be between 1 and {MAX_CLIENTS}, not {bad}"
        )));
    }
    let most = clients.iter().copied().max().unwrap_or(DEFAULT_CLIENTS);
    crate::plan::check_open_files("--clients", u64::from(most))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let threads = args.threads.unwrap_or(cores);
    if !(1..=256).contains(&threads) {
        return Err(usage(format!(
            "--threads must be between 1 and 256, not {threads}"
        )));
    }
    let defines = args
        .defines
        .iter()
        .map(|d| script::define(d).map_err(usage))
        .collect::<Result<Vec<_>>>()?;
    let script = match &args.script {
        Some(path) => script::load(path, &defines)?,
        None if defines.is_empty() => Script::default_select(),
        None => return Err(usage("--define sets variables of a --script; give one")),
    };
    if let Some(rate) = args.rate {
        if !(1..=MAX_RATE).contains(&rate) {
            return Err(usage(format!(
                "--rate must be between 1 and {MAX_RATE} transactions per second, not {rate}"
            )));
        }
    }
    let latency_limit = match args.latency_limit {
        Some(ms) if !(ms.is_finite() && (0.001..=60_000.0).contains(&ms)) => {
            return Err(usage(format!(
                "--latency-limit must be between 0.001 and 60000 milliseconds, not {ms}"
            )))
        }
        Some(ms) => Some(Duration::from_secs_f64(ms / 1e3)),
        None => None,
    };
    let progress = match args.progress {
        Some(0) => return Err(usage("--progress needs a number of seconds of 1 or more")),
        Some(s) => Some(Duration::from_secs(u64::from(s))),
        None => None,
    };
    Ok(ConcurrentPlan {
        clients,
        threads,
        script,
        script_name: args.script.as_deref().map(script_name),
        connect_per_transaction: args.connect_per_transaction,
        rate: args.rate,
        latency_limit,
        progress,
        per_command: args.report_per_command,
    })
}
