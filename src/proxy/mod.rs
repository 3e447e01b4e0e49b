//! The proxy family: a throwaway nginx (`nginx.rs`) in front of sockbench's own
//! small HTTP/1.1 app server (`app.rs`, run as `sockbench serve --http` and
//! started by `app_process.rs`), the hop between them over a Unix socket, TCP or
//! TLS.
//! The client in the timed loops is a minimal HTTP/1.1 client (`http.rs`: the
//! request encoded once, each response read into one reusable buffer). Its
//! experiments: requests through nginx by response size, with nginx's upstream
//! keepalive on and off, and straight to the app server (`request.rs`); a new
//! connection to nginx per request (`connect.rs`); many connections at once
//! (`concurrent.rs`, one thread driving them all); and more connections at once
//! than an app server's listen backlog, the failed requests counted
//! (`overload.rs`).
//! `describe.rs` says how each is reported, `suite.rs` runs them through the
//! harness, `family.rs` is what the registry composes.

pub(crate) mod app;
mod app_process;
mod apps;
pub(crate) mod args;
mod concurrent;
mod connect;
pub(crate) mod describe;
pub(crate) mod family;
pub(crate) mod gunicorn;
pub(crate) mod http;
pub(crate) mod keys;
pub(crate) mod nginx;
mod overload;
pub(crate) mod plan;
mod request;
pub(crate) mod suite;
mod user_app;

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
    transports: &[Transport::Unix, Transport::Tcp, Transport::Tls],
    server: Some("nginx"),
    experiments: &[
        &describe::REQUEST,
        &describe::KEEPALIVE,
        &describe::DIRECT,
        &describe::CONNECT,
        &describe::CONCURRENT,
        &describe::OVERLOAD,
    ],
    command: || {
        let about = "nginx in front of an app server: the hop between them over a Unix \
                     socket, TCP or TLS, with upstream keepalive on and off, without nginx, a \
                     connection per request, many clients, and past the app's backlog";
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
               own app server, over unix, tcp and tls (request, keepalive, direct, concurrent)",
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
        /// A new connection to nginx per request, upstream keepalive on.
        Connect = "connect",
        /// Many keep-alive connections to nginx at once, upstream keepalive on.
        Concurrent = "concurrent",
        /// More connections at once than the app server's listen backlog, upstream
        /// keepalive off: the failed requests.
        Overload = "overload",
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
            Experiment::Connect => &describe::CONNECT,
            Experiment::Concurrent => &describe::CONCURRENT,
            Experiment::Overload => &describe::OVERLOAD,
        }
    }

    /// Whether nginx is in the path, so its CPU is the server side's too.
    pub fn through_nginx(self) -> bool {
        match self {
            Experiment::Request
            | Experiment::Keepalive
            | Experiment::Connect
            | Experiment::Concurrent
            | Experiment::Overload => true,
            Experiment::Direct => false,
        }
    }

    /// Runs one trial of this experiment with `params` against `target`; a
    /// connection straight to the app server is made only to a peer that passes
    /// `peer`.
    pub fn run(
        self,
        target: &Target,
        params: &Params,
        plan: &ProxyPlan,
        meter: &mut Meter,
        peer: request::PeerCheck,
    ) -> Result<Trial> {
        let ask = http::Ask::of(params)?;
        let budget = &plan.budget.for_trial(meter);
        let connections = || -> Result<usize> {
            let n = params
                .get(keys::CONNECTIONS)
                .context("experiment parameter missing")?;
            Ok(n as usize)
        };
        let through = |endpoint, meter: &mut Meter| {
            request::trial(endpoint, &ask, budget.requests, meter, &request::anyone)
        };
        match self {
            Experiment::Request => through(&target.kept, meter),
            Experiment::Keepalive => match params.get(keys::UPSTREAM_KEEPALIVE).as_deref() {
                Some("off") => through(&target.renewed, meter),
                _ => through(&target.kept, meter),
            },
            Experiment::Direct => request::trial(&target.app, &ask, budget.requests, meter, peer),
            Experiment::Connect => connect::trial(&target.kept, &ask, budget.connect, meter),
            Experiment::Concurrent => {
                let n = connections()?;
                concurrent::trial(&target.kept, n, &ask, budget.concurrent, meter)
            }
            Experiment::Overload => {
                let endpoint = target
                    .overrun
                    .as_ref()
                    .context("nginx has no site in front of an overrun app server")?;
                overload::trial(endpoint, connections()?, &ask, budget.overload, meter)
            }
        }
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
