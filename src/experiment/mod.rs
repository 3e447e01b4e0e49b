//! The raw socket experiments, one file each, and what they share.
//!
//! Every experiment runs one trial at a time against a [`Target`] (one transport of
//! a running sockbench server) and returns a [`Trial`]. The timed loops follow one
//! pattern: a sample buffer sized before the loop, the clock read once per
//! operation (the end of one operation is the start of the next), and a loop bounded
//! by both a sample count and a deadline. Nothing else happens inside.

pub mod concurrent;
pub mod connect;
pub mod pingpong;
pub mod records;
pub mod stream;

use crate::results::{Params, Trial};
use crate::server::protocol::{Request, GREETING};
use crate::transport::{Conn, Connector, Endpoint, TlsInfo, TlsVersion, Transport};
use anyhow::{bail, Context, Result};
use std::fmt;
use std::io::{Read, Write};
use std::str::FromStr;
use std::time::Duration;

/// Upper bound on operations per second any transport could reach; sizes sample
/// buffers so a timed loop never grows one.
const MAX_OPS_PER_S: f64 = 500_000.0;
/// Largest sample buffer one timed loop may take (8 bytes each).
const MAX_SAMPLES: usize = 4_000_000;

/// One raw socket workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    Connect,
    PingPong,
    Stream,
    Concurrent,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::Connect,
        Workload::PingPong,
        Workload::Stream,
        Workload::Concurrent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Connect => "connect",
            Workload::PingPong => "pingpong",
            Workload::Stream => "stream",
            Workload::Concurrent => "concurrent",
        }
    }

    /// The experiment name in result files.
    pub fn experiment(self) -> &'static str {
        match self {
            Workload::Connect => "sockets.connect",
            Workload::PingPong => "sockets.pingpong",
            Workload::Stream => "sockets.stream",
            Workload::Concurrent => "sockets.concurrent",
        }
    }

    /// The figure tables lead with, and whether more of it is better.
    pub fn headline(self) -> (&'static str, bool) {
        match self {
            Workload::Connect => ("conn_per_s", true),
            Workload::PingPong => ("rtt_ns.p50", false),
            Workload::Stream => ("bytes_per_s", true),
            Workload::Concurrent => ("ops_per_s", true),
        }
    }

    /// The value of the headline figure in one trial's metrics.
    pub fn headline_value(self, m: &crate::results::Metrics) -> Option<f64> {
        match self {
            Workload::Connect => m.conn_per_s,
            Workload::PingPong => m.rtt_ns.map(|p| p.p50),
            Workload::Stream => m.bytes_per_s,
            Workload::Concurrent => m.ops_per_s,
        }
    }

    /// Runs one trial of this workload with `params` against `target`.
    pub fn run(self, target: &Target, params: &Params, budget: &Budget) -> Result<Trial> {
        match self {
            Workload::Connect => connect::trial(target, budget.connect),
            Workload::PingPong => pingpong::trial(target, param(params.size)?, budget.pingpong),
            Workload::Stream => stream::trial(
                target,
                param(params.write_size)?,
                budget.stream_bytes,
                budget.stream,
            ),
            Workload::Concurrent => {
                concurrent::trial(target, param(params.clients)? as usize, budget.concurrent)
            }
        }
    }

    fn names() -> String {
        Workload::ALL.map(Workload::name).join(", ")
    }
}

fn param(value: Option<u64>) -> Result<u64> {
    value.context("experiment parameter missing")
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown workload '{s}'; choose from {}", Workload::names()))
    }
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
    pub const QUICK: Budget = Budget {
        connect: Duration::from_millis(250),
        pingpong: Duration::from_millis(150),
        stream: Duration::from_millis(400),
        stream_bytes: 256 << 20,
        concurrent: Duration::from_millis(300),
    };
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
        _ => e,
    }
}

/// Sample buffer size for a loop of at most `budget` that does operations no faster
/// than [`MAX_OPS_PER_S`].
fn sample_capacity(budget: Duration) -> usize {
    ((budget.as_secs_f64() * MAX_OPS_PER_S) as usize).clamp(1_000, MAX_SAMPLES)
}

/// Clears a connection's receive timeout before a timed loop: with one set, every
/// blocking read arms a kernel timer, which would be measured. The warm-up before
/// has shown the server answers, and a server that dies still ends the loop,
/// because its socket closes.
fn ready_for_timing(conn: &Conn) -> std::io::Result<()> {
    conn.set_read_timeout(None)
}

/// An empty sample buffer able to hold `capacity` samples, its pages already
/// touched so that the timed loop neither allocates nor takes page faults.
pub(crate) fn sample_buffer<T: Copy + Default>(capacity: usize) -> Vec<T> {
    let mut samples = Vec::with_capacity(capacity);
    samples
        .spare_capacity_mut()
        .fill(std::mem::MaybeUninit::new(T::default()));
    std::hint::black_box(&mut samples);
    samples
}

/// Nanoseconds of a duration, saturating.
#[inline]
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Operations per second.
pub(crate) fn rate(count: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / elapsed_ns as f64
    }
}
