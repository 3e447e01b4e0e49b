//! The sockets family: sockbench's own server (`server/`), reached over every
//! transport, and the raw socket experiments against it, one file each.
//!
//! Every experiment runs one trial at a time against a [`Target`] (one transport of
//! a running sockbench server) and returns a [`Trial`]; `suite.rs` schedules them
//! through the harness and `describe.rs` says how each is reported.

pub(crate) mod args;
pub(crate) mod concurrent;
pub(crate) mod connect;
pub(crate) mod describe;
pub(crate) mod family;
mod first_contact;
pub(crate) mod keys;
pub(crate) mod pingpong;
pub(crate) mod plan;
pub(crate) mod server;
pub(crate) mod stream;
pub(crate) mod suite;
mod watchdog;

use crate::cpu::{Meter, COUNTING_SHARE};
use crate::report::experiment::{Description, Family};
use crate::report::family::RunPart;
use crate::results::{Params, Trial};
use crate::sockets::keys::*;
use crate::transport::{Conn, Connector, Endpoint, TlsInfo, TlsVersion, Transport};
use anyhow::{bail, Context, Result};
use clap::{Args, FromArgMatches};
use server::protocol::{Request, GREETING};
use std::io::{Read, Write};
use std::time::Duration;

/// The family as `families.rs` registers it.
pub static FAMILY: Family = Family {
    name: "sockets",
    transports: &Transport::ALL,
    server: None,
    experiments: &[
        &describe::CONNECT,
        &describe::PINGPONG,
        &describe::STREAM,
        &describe::CONCURRENT,
    ],
    command: || {
        let about = "Raw transport experiments against sockbench's own server process";
        let command = args::SocketsArgs::augment_args(clap::Command::new("sockets"));
        crate::plan::Measuring::with_defaults(command).about(about)
    },
    plan: |matches| {
        let args = args::SocketsArgs::from_arg_matches(matches)?;
        Ok(Box::new(plan::SocketsPlan::from_args(&args)?))
    },
    run: Some(RunPart {
        suite: "sockets",
        says: "`sockets --quick` (connect, pingpong, stream over unix, tcp and tls)",
        options: |run| run,
        plan: family::quick,
    }),
    leftovers: &[family::SERVER],
    // Its arguments are addresses and sizes: nothing secret.
    redaction: None,
};

crate::named! {
    /// One raw socket workload.
    pub enum Experiment as "workload" {
        /// Connect, read the greeting, close: the cost of a new connection.
        Connect = "connect",
        /// Request and response of one size on one connection.
        PingPong = "pingpong",
        /// Bulk bytes one way.
        Stream = "stream",
        /// Many clients doing round trips at once.
        Concurrent = "concurrent",
    }
}

impl Experiment {
    /// How the experiment describes itself (also listed, in report order, in
    /// [`FAMILY`]).
    pub fn describe(self) -> &'static Description {
        match self {
            Experiment::Connect => &describe::CONNECT,
            Experiment::PingPong => &describe::PINGPONG,
            Experiment::Stream => &describe::STREAM,
            Experiment::Concurrent => &describe::CONCURRENT,
        }
    }

    /// Runs one trial of this workload with `params` against `target`.
    pub fn run(
        self,
        target: &Target,
        params: &Params,
        budget: &Budget,
        meter: &mut Meter,
    ) -> Result<Trial> {
        let budget = &budget.for_trial(meter);
        match self {
            Experiment::Connect => connect::trial(target, budget.connect, meter),
            Experiment::PingPong => {
                pingpong::trial(target, param(params.get(SIZE))?, budget.pingpong, meter)
            }
            Experiment::Stream => stream::trial(
                target,
                param(params.get(WRITE_SIZE))?,
                params.get(STREAMS).unwrap_or(1) as usize,
                budget.stream_bytes,
                budget.stream,
                meter,
            ),
            Experiment::Concurrent => {
                let clients = param(params.get(CLIENTS))? as usize;
                concurrent::trial(target, clients, budget.concurrent, meter)
            }
        }
    }
}

fn param(value: Option<u64>) -> Result<u64> {
    value.context("experiment parameter missing")
}

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub connect: Duration,
    pub pingpong: Duration,
    pub stream: Duration,
    pub stream_bytes: u64,
    pub concurrent: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        connect: Duration::from_millis(1000),
        pingpong: Duration::from_millis(500),
        stream: Duration::from_millis(2000),
        stream_bytes: 1 << 30,
        concurrent: Duration::from_millis(1000),
    };
    /// Half of what it was with 3 rounds: `--quick` (and `run`) runs twice the
    /// rounds, shorter, as more rounds narrow an interval faster than longer ones.
    pub const QUICK: Budget = Budget {
        connect: Duration::from_millis(125),
        pingpong: Duration::from_millis(75),
        stream: Duration::from_millis(150),
        stream_bytes: 96 << 20,
        concurrent: Duration::from_millis(150),
    };

    /// This budget, or for a counting trial's `meter` its share of it.
    pub fn for_trial(&self, meter: &Meter) -> Budget {
        if !meter.counting() {
            return *self;
        }
        Budget {
            connect: self.connect / COUNTING_SHARE,
            pingpong: self.pingpong / COUNTING_SHARE,
            stream: self.stream / COUNTING_SHARE,
            stream_bytes: self.stream_bytes / u64::from(COUNTING_SHARE),
            concurrent: self.concurrent / COUNTING_SHARE,
        }
    }
}

/// One transport of a running server, ready to connect to.
pub struct Target {
    pub transport: Transport,
    pub endpoint: Endpoint,
    pub connector: Connector,
}

impl Target {
    pub fn new(endpoint: Endpoint, tls_version: TlsVersion) -> Result<Target> {
        Ok(Target {
            transport: endpoint.transport(),
            connector: Connector::new(&endpoint, tls_version)?,
            endpoint,
        })
    }

    /// Connects and checks the greeting: the start of every session.
    pub fn open(&self) -> Result<Conn> {
        let mut conn = self
            .connector
            .connect()
            .with_context(|| format!("cannot connect to {}", self.endpoint))?;
        conn.set_read_timeout(Some(IO_TIMEOUT))?;
        let mut greeting = [0u8; GREETING.len()];
        conn.read_exact(&mut greeting)
            .map_err(named_timeout)
            .with_context(|| format!("no greeting from {}", self.endpoint))?;
        if &greeting != GREETING {
            bail!(
                "{} is not a sockbench server (wrong greeting)",
                self.endpoint
            );
        }
        Ok(conn)
    }

    /// Opens a session for `request`.
    pub fn session(&self, request: Request) -> Result<Conn> {
        let mut conn = self.open()?;
        conn.write_all(&request.encode())?;
        Ok(conn)
    }

    /// Connections the server saw close right after the greeting so far.
    pub fn server_count(&self) -> Result<u64> {
        let mut conn = self.session(Request::Count)?;
        let mut count = [0u8; 8];
        conn.read_exact(&mut count)
            .map_err(named_timeout)
            .with_context(|| format!("{} did not report its count", self.endpoint))?;
        Ok(u64::from_le_bytes(count))
    }

    /// The TLS version and cipher this target negotiates, for TLS targets.
    pub fn tls_info(&self) -> Result<Option<TlsInfo>> {
        if self.transport != Transport::Tls {
            return Ok(None);
        }
        Ok(self.open()?.tls_info())
    }
}

/// A read on a benchmark connection that takes longer than this means the server
/// is gone or stuck; it fails the trial instead of hanging it.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A read that ran into the receive timeout says so, instead of the "Resource
/// temporarily unavailable" the system reports for it.
fn named_timeout(e: std::io::Error) -> std::io::Error {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("timed out after {} s", IO_TIMEOUT.as_secs()),
        ),
        // Nothing at all, then the end: a sockbench server that exited, or one that
        // serves TLS there and waited in vain for a TLS hello.
        std::io::ErrorKind::UnexpectedEof => std::io::Error::new(
            e.kind(),
            "the server closed the connection before its greeting (it exited or was killed, \
             or it serves TLS there: use the tls transport)",
        ),
        _ => e,
    }
}

/// Clears a connection's receive timeout before a timed loop: with one set, every
/// blocking read arms a kernel timer, which would be measured. The warm-up before
/// has shown the server answers, and a server that dies still ends the loop,
/// because its socket closes.
fn ready_for_timing(conn: &Conn) -> std::io::Result<()> {
    conn.set_read_timeout(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_is_described_by_its_own_entry_in_the_family() {
        for w in Experiment::ALL {
            assert_eq!(w.describe().id, format!("sockets.{w}"));
            assert!(FAMILY.experiments.contains(&w.describe()), "{w}");
        }
    }
}
