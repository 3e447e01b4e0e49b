//! What the registry composes from the proxy family: its part of the default
//! `sockbench run` and the temporary directories it leaves for the sweep.

use super::args::ProxyArgs;
use super::plan::ProxyPlan;
use crate::leftovers::DirKind;
use crate::plan::Measuring;
use crate::report::family::Plan;
use anyhow::Result;

/// The quick proxy suite (sockbench's own app server behind nginx, empty
/// responses alone, to keep `run` within its two minutes), or `None` (and one
/// line) when nginx is not installed or cannot be run as sockbench runs it (no
/// PID namespace may be made here).
///
/// Every hop of `proxy`'s default, tls included, as every family of `run`
/// measures tls, for the one figure of what encrypting the hop behind a proxy
/// costs.
pub fn quick(_run: &clap::ArgMatches) -> Result<Option<Box<dyn Plan>>> {
    if super::nginx::find_program().is_none() {
        eprintln!(
            "proxy: skipped, nginx was not found; install it (Debian/Ubuntu: apt-get install \
             nginx) to measure a proxy in front of an app server too"
        );
        return Ok(None);
    }
    if let Some(why) = crate::subprocess::pid_namespace::refused() {
        eprintln!(
            "proxy: skipped, nginx runs in a PID namespace of its own (so no worker outlives \
             its master), and {why}"
        );
        return Ok(None);
    }
    let plan = ProxyPlan::from_args(&ProxyArgs {
        measuring: Measuring::quick(),
        sizes: Some(vec!["0".into()]),
        experiments: Some(super::plan::RUN_EXPERIMENTS.to_vec()),
        ..ProxyArgs::default()
    })?;
    Ok(Some(Box::new(plan)))
}

/// The private directories of nginx and of the app server; each records its
/// server's process in its owner file, so the sweep keeps it while that runs.
pub const SERVERS: DirKind = DirKind {
    prefix: super::DIR_PREFIX,
};
