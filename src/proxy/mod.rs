//! The proxy family: a throwaway nginx (`nginx.rs`) in front of sockbench's own
//! small HTTP/1.1 app server (`app.rs`, run as `sockbench serve --http` and
//! started by `app_process.rs`), the hop between them over a Unix socket or TCP.
//! The client in the timed loops is a minimal HTTP/1.1 client (`http.rs`: the
//! request encoded once, each response read into one reusable buffer). Its
//! experiments: requests through nginx by response size, with nginx's upstream
//! keepalive on and off, and straight to the app server (`request.rs`).
//! `describe.rs` says how each is reported, `suite.rs` runs them through the
//! harness, `family.rs` is what the registry composes.

pub(crate) mod app;
mod app_process;
pub(crate) mod args;
pub(crate) mod describe;
pub(crate) mod family;
pub(crate) mod http;
pub(crate) mod keys;
pub(crate) mod nginx;
pub(crate) mod plan;
mod request;
pub(crate) mod suite;

use crate::cpu::Meter;
use crate::report::experiment::Description;
use crate::report::family::{Family, RunPart};
use crate::results::{Params, Trial};
use crate::transport::Transport;
use anyhow::{Context, Result};
use clap::{Args, FromArgMatches};
use plan::ProxyPlan;
use suite::Target;

/// The family as `families.rs` registers it.
pub static FAMILY: Family = Family {
    name: "proxy",
    transports: &[Transport::Unix, Transport::Tcp],
    server: Some("nginx"),
    experiments: &[&describe::REQUEST, &describe::KEEPALIVE, &describe::DIRECT],
    command: || {
        let about = "nginx in front of an app server: the hop between them over a Unix \
                     socket or TCP, with upstream keepalive on and off, and without nginx";
        let command = args::ProxyArgs::augment_args(clap::Command::new("proxy"));
        crate::plan::Measuring::with_defaults(command).about(about)
    },
    plan: |matches| {
        let args = args::ProxyArgs::from_arg_matches(matches)?;
        Ok(Box::new(ProxyPlan::from_args(&args)?))
    },
    run: Some(RunPart {
        suite: "nginx in front of an app server",
        says: "when nginx is found, `proxy --quick`: a throwaway nginx in front of sockbench's \
               own app server, over unix and tcp (request, keepalive, direct)",
        options: |run| run,
        plan: family::quick,
    }),
    leftovers: &[family::SERVERS],
    redaction: None,
};

crate::named! {
    /// One proxy experiment.
    pub enum Experiment as "experiment" {
        /// Requests through nginx, upstream keepalive on, by response size.
        Request = "request",
        /// Requests through nginx, upstream keepalive on and off.
        Keepalive = "keepalive",
        /// Requests straight to the app server, no nginx.
        Direct = "direct",
    }
}

impl Experiment {
    /// How the experiment describes itself (also listed, in report order, in
    /// [`FAMILY`]).
    pub fn describe(self) -> &'static Description {
        match self {
            Experiment::Request => &describe::REQUEST,
            Experiment::Keepalive => &describe::KEEPALIVE,
            Experiment::Direct => &describe::DIRECT,
        }
    }

    /// Whether nginx is in the path, so its CPU is the server side's too.
    pub fn through_nginx(self) -> bool {
        match self {
            Experiment::Request | Experiment::Keepalive => true,
            Experiment::Direct => false,
        }
    }

    /// Runs one trial of this experiment with `params` against `target`.
    pub fn run(
        self,
        target: &Target,
        params: &Params,
        plan: &ProxyPlan,
        meter: &mut Meter,
    ) -> Result<Trial> {
        let size = params
            .get(keys::SIZE)
            .context("experiment parameter missing")?;
        let endpoint = match self {
            Experiment::Request => &target.kept,
            Experiment::Keepalive => match params.get(keys::UPSTREAM_KEEPALIVE).as_deref() {
                Some("off") => &target.renewed,
                _ => &target.kept,
            },
            Experiment::Direct => &target.app,
        };
        request::trial(endpoint, size, plan.budget.requests, meter)
    }
}

/// The prefix of the private directories of a throwaway nginx and app server, for
/// the leftover sweep.
pub const DIR_PREFIX: &str = "sockbench-proxy-";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_is_described_by_its_own_entry_in_the_family() {
        for e in Experiment::ALL {
            assert_eq!(e.describe().id, format!("proxy.{e}"));
            assert!(FAMILY.experiments.contains(&e.describe()), "{e}");
        }
    }
}
