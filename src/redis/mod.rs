//! The Redis family: a throwaway `redis-server` (`server.rs`, its configuration in
//! `config.rs`, its account in `account.rs`, the checks of who answers in
//! `listeners.rs`, finding the program in `program.rs`) or the user's (`url.rs`),
//! reached over unix, tcp and tls (`target.rs`), and a second throwaway server in
//! a container for the transports into one (`container.rs`: veth, bridge,
//! published, docker-proxy, unix-shared), by a minimal RESP client for the
//! timed loops (`resp.rs`) whose every wait is bounded and interruptible
//! (`crate::wait`), and its experiments: round trips of PING, GET and
//! pipelined GETs (`roundtrip.rs`), a connection per command (`connect.rs`) and
//! many clients at once (`concurrent.rs`). `describe.rs` says how each is reported,
//! `suite.rs` runs them through the harness, `family.rs` is what the registry
//! composes (the quick plan for `run`, the leftover sweep, hiding passwords).

pub(crate) mod account;
pub(crate) mod args;
mod concurrent;
pub(crate) mod config;
mod connect;
mod container;
pub(crate) mod describe;
pub(crate) mod family;
pub(crate) mod keys;
mod listeners;
pub(crate) mod plan;
mod process;
pub(crate) mod program;
pub(crate) mod resp;
mod roundtrip;
pub(crate) mod server;
pub(crate) mod suite;
pub(crate) mod target;
pub(crate) mod url;

pub use program::{find_program, version};
pub use server::RedisServer;

use crate::cpu::Meter;
use crate::report::experiment::Description;
use crate::report::family::{Family, RunPart};
use crate::results::{Params, Trial};
use crate::transport::Transport;
use anyhow::{Context, Result};
use clap::{Args, FromArgMatches};
use keys::*;
use plan::RedisPlan;
use roundtrip::Exchange;
use target::Target;

/// The family as `families.rs` registers it.
pub static FAMILY: Family = Family {
    name: "redis",
    transports: &[
        Transport::Unix,
        Transport::Tcp,
        Transport::Tls,
        Transport::Veth,
        Transport::Bridge,
        Transport::Published,
        Transport::DockerProxy,
        Transport::UnixShared,
    ],
    server: Some("Redis"),
    experiments: &[
        &describe::PING,
        &describe::GET,
        &describe::PIPELINE,
        &describe::CONNECT,
        &describe::CONCURRENT,
    ],
    command: || {
        let about = "Redis experiments: PING, GET by value size, pipelined GETs, a connection \
                     per command, many clients; on a throwaway redis-server or yours (--url)";
        let command = args::RedisArgs::augment_args(clap::Command::new("redis"));
        crate::plan::Measuring::with_defaults(command).about(about)
    },
    plan: |matches| {
        let args = args::RedisArgs::from_arg_matches(matches)?;
        Ok(Box::new(RedisPlan::from_args(&args)?))
    },
    run: Some(RunPart {
        suite: "Redis",
        says: "when redis-server is found, `redis --quick` on a throwaway server (ping, get, \
               pipeline, connect, concurrent)",
        options: |run| run,
        plan: family::quick,
    }),
    leftovers: &[family::SERVER],
    redaction: Some(family::REDACTION),
};

crate::named! {
    /// One Redis experiment.
    pub enum Experiment as "experiment" {
        /// PING round trips on one connection.
        Ping = "ping",
        /// GET round trips on one connection, by value size.
        Get = "get",
        /// GETs sent -P at a time, their replies read together.
        Pipeline = "pipeline",
        /// Connect, AUTH, PING, close.
        Connect = "connect",
        /// Many clients doing GETs at once.
        Concurrent = "concurrent",
    }
}

impl Experiment {
    /// How the experiment describes itself (also listed, in report order, in
    /// [`FAMILY`]).
    pub fn describe(self) -> &'static Description {
        match self {
            Experiment::Ping => &describe::PING,
            Experiment::Get => &describe::GET,
            Experiment::Pipeline => &describe::PIPELINE,
            Experiment::Connect => &describe::CONNECT,
            Experiment::Concurrent => &describe::CONCURRENT,
        }
    }

    /// Runs one trial of this experiment with `params` against `target`.
    pub fn run(
        self,
        target: &Target,
        params: &Params,
        plan: &RedisPlan,
        meter: &mut Meter,
    ) -> Result<Trial> {
        let budget = &plan.budget.for_trial(meter);
        let param = |value: Option<u64>| value.context("experiment parameter missing");
        match self {
            Experiment::Ping => {
                roundtrip::trial(target, &Exchange::ping(), None, budget.round_trips, meter)
            }
            Experiment::Get => {
                let size = param(params.get(SIZE))?;
                let work = Exchange::get(size);
                roundtrip::trial(target, &work, Some(size), budget.round_trips, meter)
            }
            Experiment::Pipeline => {
                let size = concurrent::VALUE_SIZE;
                let work = Exchange::pipeline(size, param(params.get(DEPTH))?, true);
                roundtrip::trial(target, &work, Some(size), budget.round_trips, meter)
            }
            Experiment::Connect => connect::trial(target, budget.connect, meter),
            Experiment::Concurrent => {
                let clients = param(params.get(CLIENTS))? as usize;
                concurrent::trial(target, clients, budget.concurrent, meter)
            }
        }
    }
}

/// The prefix of a throwaway server's private directory, for the leftover sweep.
pub const DIR_PREFIX: &str = "sockbench-redis-";

/// True when process `pid` is a running (not exited, not a zombie) `redis`
/// process, of the account `uid` when given.
pub fn running(pid: u32, uid: Option<u32>) -> bool {
    use std::os::unix::fs::MetadataExt;
    // `/proc/PID/stat`: `PID (comm) STATE …`.
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some((comm, rest)) = stat.rsplit_once(") ") else {
        return false;
    };
    let live = !matches!(rest.chars().next(), Some('Z' | 'X') | None);
    let ours = uid
        .is_none_or(|uid| std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid));
    live && ours && comm.contains("(redis")
}

#[cfg(test)]
#[path = "hostile_tests.rs"]
mod hostile_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_is_described_by_its_own_entry_in_the_family() {
        for e in Experiment::ALL {
            assert_eq!(e.describe().id, format!("redis.{e}"));
            assert!(FAMILY.experiments.contains(&e.describe()), "{e}");
        }
    }
}
