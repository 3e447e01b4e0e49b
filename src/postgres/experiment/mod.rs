//! The PostgreSQL experiments, one file each, and what they share.
//!
//! Each runs one trial against one [`Target`] (a way to reach a server: transport,
//! connection parameters) and returns a [`Trial`]. As in the socket experiments, the
//! timed loops hold nothing but the work and the clock; connection parameters are C
//! strings prepared before, and sample buffers are sized and touched before.

pub(crate) mod concurrent;
pub(crate) mod connect;
pub(crate) mod fitted;

use crate::postgres::keys::ServerInfo;
use crate::report::experiment::Description;
use crate::transport::{TlsInfo, Transport};
use std::time::Duration;

use super::libpq::{ConnParams, PgConn, Protocol};
use crate::cpu::placed::ServerSide;
use crate::cpu::{Meter, COUNTING_SHARE};

crate::named! {
    /// One PostgreSQL experiment.
    pub enum Experiment as "experiment" {
        /// Sequential `SELECT 1` on one connection, time per query by fit.
        Query = "query",
        /// Connect, `SELECT 1`, close, phase by phase.
        Connect = "connect",
        /// The same under each authentication method.
        Auth = "auth",
        /// A large result, time per row by fit.
        Rows = "rows",
        /// Many clients running a script at once.
        Concurrent = "concurrent",
    }
}

impl Experiment {
    /// How the experiment describes itself (also listed, in report order, in the
    /// family's `FAMILY`).
    pub fn describe(self) -> &'static Description {
        use super::describe;
        match self {
            Experiment::Query => &describe::QUERY,
            Experiment::Connect => &describe::CONNECT,
            Experiment::Auth => &describe::AUTH,
            Experiment::Rows => &describe::ROWS,
            Experiment::Concurrent => &describe::CONCURRENT,
        }
    }
}

/// One way to reach a server, with what was learnt about it when first connecting.
#[derive(Clone)]
pub struct Target {
    /// The transport name, or the name the user gave the URL.
    pub label: String,
    pub params: ConnParams,
    pub tls: Option<TlsInfo>,
    pub server: ServerInfo,
    /// True over a Unix socket (where `peer` authentication applies).
    pub unix_socket: bool,
    /// The throwaway cluster's transport this is; `None` for a user's server.
    pub transport: Option<Transport>,
}

/// How much work each trial does, and how its queries are sent.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The query protocol of the query and concurrent experiments (pgbench's `-M`).
    pub protocol: Protocol,
    /// N for the query experiment.
    pub queries: Vec<u64>,
    /// N for the rows experiment.
    pub rows: Vec<u64>,
    /// Most connections per trial of the connect experiment, and its time limit.
    pub connections: u64,
    pub connect_time: Duration,
    /// The same for each method of the auth experiment.
    pub auth_connections: u64,
    pub auth_time: Duration,
    /// Measured time and warm-up of each concurrent run.
    pub concurrent_time: Duration,
    pub concurrent_warmup: Duration,
}

impl Budget {
    pub fn full() -> Budget {
        Budget {
            protocol: Protocol::Simple,
            queries: vec![5_000, 10_000, 20_000],
            rows: vec![500_000, 1_000_000, 2_000_000],
            connections: 1_000,
            connect_time: Duration::from_secs(3),
            auth_connections: 300,
            auth_time: Duration::from_secs(2),
            concurrent_time: Duration::from_secs(10),
            concurrent_warmup: Duration::from_secs(1),
        }
    }

    pub fn quick() -> Budget {
        Budget {
            protocol: Protocol::Simple,
            queries: vec![500, 1_000, 2_000],
            rows: vec![50_000, 100_000, 200_000],
            connections: 60,
            connect_time: Duration::from_millis(200),
            auth_connections: 15,
            auth_time: Duration::from_millis(120),
            concurrent_time: Duration::from_millis(300),
            concurrent_warmup: Duration::from_millis(50),
        }
    }

    /// This budget, or for a counting trial's `meter` its share of it: each
    /// count, connection limit and time (a counting trial needs as many
    /// operations of each N as a count per operation needs, not the fit's).
    pub fn for_trial(&self, meter: &Meter) -> Budget {
        if !meter.counting() {
            return self.clone();
        }
        let share = |counts: &[u64]| {
            let n = u64::from(COUNTING_SHARE);
            counts.iter().map(|c| (c / n).max(1)).collect()
        };
        Budget {
            protocol: self.protocol,
            queries: share(&self.queries),
            rows: share(&self.rows),
            connections: (self.connections / u64::from(COUNTING_SHARE)).max(1),
            connect_time: self.connect_time / COUNTING_SHARE,
            auth_connections: (self.auth_connections / u64::from(COUNTING_SHARE)).max(1),
            auth_time: self.auth_time / COUNTING_SHARE,
            concurrent_time: self.concurrent_time / COUNTING_SHARE,
            concurrent_warmup: self.concurrent_warmup,
        }
    }
}

/// What one `SELECT 1` is expected to take, to foresee a query trial's time: 9 µs
/// with client and server on one CPU, 30–70 µs with a wakeup across CPUs.
const EXPECTED_QUERY: Duration = Duration::from_micros(50);
/// What one row of `generate_series` is expected to take, read and parsed.
const EXPECTED_ROW: Duration = Duration::from_nanos(500);
/// Opening the connections of a concurrent trial, besides its warm-up and time.
const EXPECTED_CONNECTING: Duration = Duration::from_millis(100);

impl Budget {
    /// How long one trial of `experiment` is expected to take: its time limit, or
    /// for a trial bounded by a count of operations, the count at the expected
    /// time of one.
    pub fn trial(&self, experiment: Experiment) -> Duration {
        let counted = |counts: &[u64], each: Duration| {
            each * counts.iter().sum::<u64>().min(u64::from(u32::MAX)) as u32
        };
        match experiment {
            Experiment::Query => counted(&self.queries, EXPECTED_QUERY),
            Experiment::Rows => counted(&self.rows, EXPECTED_ROW),
            Experiment::Connect => self.connect_time,
            Experiment::Auth => self.auth_time,
            Experiment::Concurrent => self.concurrent_time,
        }
    }

    /// What each trial of `experiment` spends besides its timed loop: the
    /// concurrent experiment's warm-up and connecting its clients.
    pub fn around(&self, experiment: Experiment) -> Duration {
        match experiment {
            Experiment::Concurrent => self.concurrent_warmup + EXPECTED_CONNECTING,
            _ => Duration::ZERO,
        }
    }
}

/// A timed batch may take at most this long; past it the trial fails rather than
/// hang on a server that has become very slow.
pub const BATCH_LIMIT: Duration = Duration::from_secs(120);

impl Target {
    /// On a user's server (not the throwaway cluster, whose postmaster the
    /// harness places and counts with every backend), the backend serving `conn`,
    /// when it runs on this machine, becomes the trial's server side: placed where
    /// the server runs and its CPU counted. It serves sockbench's connection alone,
    /// so placing it touches nothing of the user's.
    pub fn adopt_backend(&self, conn: &PgConn, side: &ServerSide) -> anyhow::Result<()> {
        if self.transport.is_some() {
            return Ok(());
        }
        if let Some(pid) = conn.serving_process() {
            side.adopt(pid).map_err(|e| {
                anyhow::anyhow!(
                    "cannot place the backend (process {pid}) serving {}: {e}",
                    self.label
                )
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_is_described_by_its_own_entry_in_the_family() {
        for e in Experiment::ALL {
            assert_eq!(e.describe().id, format!("postgres.{e}"));
            assert!(
                super::super::FAMILY.experiments.contains(&e.describe()),
                "{e}"
            );
        }
    }
}
