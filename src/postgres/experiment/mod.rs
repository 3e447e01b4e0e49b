//! The PostgreSQL experiments, one file each, and what they share.
//!
//! Each runs one trial against one [`PgTarget`] (a way to reach a server: transport,
//! connection parameters) and returns a [`Trial`]. As in the socket experiments, the
//! timed loops hold nothing but the work and the clock; connection parameters are C
//! strings prepared before, and sample buffers are sized and touched before.

pub mod concurrent;
pub mod connect;
pub mod fitted;

use crate::experiment::records::Experiment;
use crate::results::{Metrics, ServerInfo};
use crate::transport::TlsInfo;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::libpq::ConnParams;

/// One PostgreSQL experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgExperiment {
    Query,
    Connect,
    Auth,
    Rows,
    Concurrent,
}

impl PgExperiment {
    pub const ALL: [PgExperiment; 5] = [
        PgExperiment::Query,
        PgExperiment::Connect,
        PgExperiment::Auth,
        PgExperiment::Rows,
        PgExperiment::Concurrent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PgExperiment::Query => "query",
            PgExperiment::Connect => "connect",
            PgExperiment::Auth => "auth",
            PgExperiment::Rows => "rows",
            PgExperiment::Concurrent => "concurrent",
        }
    }

    /// What the experiment does, for table titles.
    pub fn what(self) -> &'static str {
        match self {
            PgExperiment::Query => "N sequential SELECT 1 on one connection, fitted on N",
            PgExperiment::Connect => "connect, SELECT 1, close; trust authentication",
            PgExperiment::Auth => "connect, SELECT 1, close under each authentication method",
            PgExperiment::Rows => {
                "SELECT * FROM generate_series(1,N), every value read, fitted on N"
            }
            PgExperiment::Concurrent => "clients running the script at once, like pgbench -c -j -T",
        }
    }
}

impl Experiment for PgExperiment {
    fn experiment(&self) -> &'static str {
        match self {
            PgExperiment::Query => "postgres.query",
            PgExperiment::Connect => "postgres.connect",
            PgExperiment::Auth => "postgres.auth",
            PgExperiment::Rows => "postgres.rows",
            PgExperiment::Concurrent => "postgres.concurrent",
        }
    }

    fn headline(&self) -> (&'static str, bool) {
        match self {
            PgExperiment::Query => ("per_query_ns", false),
            PgExperiment::Connect | PgExperiment::Auth => ("connect_ns.p50", false),
            PgExperiment::Rows => ("per_row_ns", false),
            PgExperiment::Concurrent => ("tps", true),
        }
    }

    fn headline_value(&self, m: &Metrics) -> Option<f64> {
        match self {
            PgExperiment::Query => m.per_query_ns,
            PgExperiment::Connect | PgExperiment::Auth => m.connect_ns.map(|p| p.p50),
            PgExperiment::Rows => m.per_row_ns,
            PgExperiment::Concurrent => m.tps,
        }
    }
}

impl fmt::Display for PgExperiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PgExperiment {
    type Err = String;
    fn from_str(s: &str) -> Result<PgExperiment, String> {
        PgExperiment::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown experiment '{s}' (expected query, connect, auth, rows or concurrent)"
                )
            })
    }
}

/// One way to reach a server, with what was learnt about it when first connecting.
#[derive(Clone)]
pub struct PgTarget {
    /// The transport name, or the name the user gave the URL.
    pub label: String,
    pub params: ConnParams,
    pub tls: Option<TlsInfo>,
    pub server: ServerInfo,
    /// True over a Unix socket (where `peer` authentication applies).
    pub unix_socket: bool,
}

/// How much work each trial does.
#[derive(Debug, Clone)]
pub struct PgBudget {
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

impl PgBudget {
    pub fn full() -> PgBudget {
        PgBudget {
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

    pub fn quick() -> PgBudget {
        PgBudget {
            queries: vec![1_000, 2_000, 4_000],
            rows: vec![100_000, 200_000, 400_000],
            connections: 200,
            connect_time: Duration::from_millis(600),
            auth_connections: 50,
            auth_time: Duration::from_millis(400),
            concurrent_time: Duration::from_secs(2),
            concurrent_warmup: Duration::from_millis(300),
        }
    }
}

/// A timed batch may take at most this long; past it the trial fails rather than
/// hang on a server that has become very slow.
pub const BATCH_LIMIT: Duration = Duration::from_secs(120);
