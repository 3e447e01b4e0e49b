//! Turns the raw `postgres` arguments into a validated plan.

use super::{dedup, DEFAULT_TRANSPORTS};
use crate::cli::PostgresArgs;
use crate::error::usage;
use crate::postgres::experiment::{PgBudget, PgExperiment};
use crate::postgres::hba::AuthMethod;
use crate::postgres::targets::NamedUrl;
use crate::transport::Transport;
use crate::units::parse_count;
use anyhow::Result;
use std::path::PathBuf;

/// Where the servers under test come from.
#[derive(Debug, Clone)]
pub enum PgSource {
    /// A throwaway cluster reached over these transports.
    Cluster {
        bindir: Option<PathBuf>,
        transports: Vec<Transport>,
        methods: Vec<AuthMethod>,
    },
    /// The user's servers: named URLs, and URLs per authentication method.
    Urls {
        urls: Vec<NamedUrl>,
        auth_urls: Vec<(AuthMethod, String)>,
    },
}

/// A validated `postgres` run.
#[derive(Debug, Clone)]
pub struct PostgresPlan {
    pub source: PgSource,
    pub experiments: Vec<PgExperiment>,
    pub trials: u32,
    pub budget: PgBudget,
    pub json: Option<PathBuf>,
}

impl PostgresPlan {
    pub fn from_args(args: &PostgresArgs) -> Result<PostgresPlan> {
        let trials = super::trials(args.trials, args.quick)?;
        let mut budget = if args.quick {
            PgBudget::quick()
        } else {
            PgBudget::full()
        };
        if let Some(list) = &args.queries {
            budget.queries = counts("--queries", list)?;
        }
        if let Some(list) = &args.rows {
            budget.rows = counts("--rows", list)?;
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
        let user_mode = !args.urls.is_empty() || !args.auth_urls.is_empty();
        let source = if user_mode {
            user_source(args)?
        } else {
            PgSource::Cluster {
                bindir: args.pg_bindir.clone(),
                transports: dedup(args.transports.as_deref().unwrap_or(&DEFAULT_TRANSPORTS)),
                methods: dedup(args.auth_methods.as_deref().unwrap_or(&AuthMethod::ALL)),
            }
        };
        let experiments = match (&args.experiments, &source) {
            (Some(list), _) => dedup(list),
            (None, PgSource::Urls { urls, auth_urls }) => PgExperiment::ALL
                .into_iter()
                .filter(|e| match e {
                    PgExperiment::Auth => !auth_urls.is_empty(),
                    _ => !urls.is_empty(),
                })
                .collect(),
            (None, PgSource::Cluster { .. }) => PgExperiment::ALL.to_vec(),
        };
        if experiments.is_empty() {
            return Err(usage(
                "--experiments needs at least one of query, connect, auth, rows",
            ));
        }
        if let PgSource::Urls { urls, auth_urls } = &source {
            for e in &experiments {
                if *e == PgExperiment::Auth && auth_urls.is_empty() {
                    return Err(usage(
                        "auth on your own servers needs --auth-url METHOD=URI for each method to \
                         compare (sockbench never changes a server it did not start)",
                    ));
                }
                if *e != PgExperiment::Auth && urls.is_empty() {
                    return Err(usage(format!("the {e} experiment needs --url NAME=URI")));
                }
            }
        }
        Ok(PostgresPlan {
            source,
            experiments,
            trials,
            budget,
            json: args.json.clone(),
        })
    }
}

fn user_source(args: &PostgresArgs) -> Result<PgSource> {
    for (given, flag) in [
        (args.transports.is_some(), "--transports"),
        (args.pg_bindir.is_some(), "--pg-bindir"),
        (args.auth_methods.is_some(), "--auth-methods"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} applies to the throwaway cluster and does not go with --url or --auth-url"
            )));
        }
    }
    let names: Vec<&str> = args.urls.iter().map(|u| u.name.as_str()).collect();
    if dedup(&names).len() != names.len() {
        return Err(usage("each --url needs its own NAME"));
    }
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
    Ok(PgSource::Urls {
        urls: args.urls.clone(),
        auth_urls,
    })
}

/// At least two different counts, so a line can be fitted.
fn counts(flag: &str, list: &[String]) -> Result<Vec<u64>> {
    let mut counts = list
        .iter()
        .map(|c| parse_count(c).map_err(|e| usage(format!("{flag}: {e}"))))
        .collect::<Result<Vec<u64>>>()?;
    counts.sort_unstable();
    counts.dedup();
    if counts.len() < 2 {
        return Err(usage(format!(
            "{flag} needs at least two different counts to fit a line, e.g. 1k,2k,4k"
        )));
    }
    Ok(counts)
}
