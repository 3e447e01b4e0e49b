//! The parameters and figures of the PostgreSQL experiments, declared once as
//! typed keys: the result file stores them by these names.

use crate::results::figures::{AsFigure, Figure};
use crate::results::{Key, Point};
use crate::stats::Percentiles;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Concurrent clients.
pub const CLIENTS: Key<u64> = Key::new("clients");
/// Client threads driving them (pgbench's `-j`).
pub const THREADS: Key<u64> = Key::new("threads");
/// A new connection for every transaction, like `pgbench -C`.
pub const CONNECT_PER_TRANSACTION: Key<bool> = Key::new("connect_per_transaction");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Key<u64> = Key::new("duration_ms");
/// The N of each timed batch whose totals are fitted (queries or rows).
pub const COUNTS: Key<Vec<u64>> = Key::new("counts");
/// How queries were sent (pgbench's `-M`): `extended` or `prepared`; absent for
/// the simple protocol.
pub const PROTOCOL: Key<String> = Key::new("protocol");
/// The file name of the clients' script (pgbench's `-f`); absent for `SELECT 1`.
pub const SCRIPT: Key<String> = Key::new("script");
/// The fixed transaction rate of all clients, per second (pgbench's `-R`).
pub const RATE_PER_S: Key<u64> = Key::new("rate_per_s");
/// The latency limit transactions were counted against, microseconds (`-L`).
pub const LATENCY_LIMIT_US: Key<u64> = Key::new("latency_limit_us");
/// The authentication method in force (connect and auth).
pub const AUTH_METHOD: Key<String> = Key::new("auth_method");
/// The parameters that set how long or how much was measured, not what: two runs
/// that chose them differently still measured the same case.
pub const BUDGETS: &[&str] = &[DURATION_MS.name, COUNTS.name, THREADS.name];

/// Time per query: the slope of total time on the number of queries.
pub const PER_QUERY_NS: Key<f64> = Key::new("per_query_ns");
/// Queries per second from the fit (1 / slope).
pub const QPS: Key<f64> = Key::new("qps");
/// Time per row: the slope of total time on the number of rows.
pub const PER_ROW_NS: Key<f64> = Key::new("per_row_ns");
pub const ROWS_PER_S: Key<f64> = Key::new("rows_per_s");
/// The fit's fixed cost (time at N = 0) and its coefficient of determination.
pub const INTERCEPT_NS: Key<f64> = Key::new("intercept_ns");
pub const R2: Key<f64> = Key::new("r2");
/// Connections per second (connect).
pub const CONN_PER_S: Key<f64> = Key::new("conn_per_s");
/// Time for one whole connection: connect, `SELECT 1`, close.
pub const CONNECT_NS: Key<Percentiles> = Key::new("connect_ns");
/// Median connection time minus the time of one query.
pub const HANDSHAKE_NS: Key<f64> = Key::new("handshake_ns");
/// Median time of each phase of a connection.
pub const PHASES_NS: Key<Phases> = Key::new("phases_ns");
/// Median connection time minus that under `trust` on the same transport.
pub const AUTH_NS: Key<f64> = Key::new("auth_ns");
/// Transactions per second of many clients at once.
pub const TPS: Key<f64> = Key::new("tps");
/// Time of one transaction (concurrent clients).
pub const LATENCY_NS: Key<Percentiles> = Key::new("latency_ns");
/// Transactions the server answered with an error (over all trials).
pub const FAILED: Key<u64> = Key::new("failed");
/// Transactions that took longer than the latency limit (over all trials).
pub const LATE: Key<u64> = Key::new("late");
/// Transactions of a fixed-rate run skipped because they were already later than
/// the latency limit when due to start (over all trials).
pub const SKIPPED: Key<u64> = Key::new("skipped");
/// With a fixed rate: how long after its scheduled start each transaction was sent.
pub const LAG_NS: Key<Percentiles> = Key::new("lag_ns");
/// Mean time of each SQL command of the script, in order (pgbench's `-r`).
pub const PER_COMMAND_NS: Key<Vec<f64>> = Key::new("per_command_ns");
/// Connections the concurrent clients opened (summed over trials).
pub const CONNECTIONS: Key<u64> = Key::new("connections");
/// Total time of each timed batch of N operations of a trial, the points of its
/// fit (query, rows).
pub const POINTS: Key<Vec<Point>> = Key::new("points");

/// Where the time of one PostgreSQL connection goes, as libpq's non-blocking connect
/// shows it. A phase libpq passed without stopping counts as zero. Stored as the
/// named parts of one figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Until the socket is connected.
    pub socket: f64,
    /// The TLS handshake.
    pub tls: f64,
    /// Startup message and authentication exchange, until the server accepts.
    pub auth: f64,
    /// From acceptance until the backend is ready for a query.
    pub ready: f64,
    /// `SELECT 1`.
    pub query: f64,
    /// Closing the connection.
    pub close: f64,
}

impl Phases {
    const NAMES: [&'static str; 6] = ["socket", "tls", "auth", "ready", "query", "close"];

    fn values(&self) -> [f64; 6] {
        [
            self.socket,
            self.tls,
            self.auth,
            self.ready,
            self.query,
            self.close,
        ]
    }
}

impl AsFigure for Phases {
    fn into_figure(self) -> Figure {
        let parts = Phases::NAMES
            .iter()
            .map(|n| n.to_string())
            .zip(self.values());
        Figure::Parts(parts.collect::<BTreeMap<_, _>>())
    }

    fn from_figure(figure: &Figure) -> Option<Phases> {
        let Figure::Parts(parts) = figure else {
            return None;
        };
        let [socket, tls, auth, ready, query, close] = Phases::NAMES.map(|n| parts.get(n).copied());
        Some(Phases {
            socket: socket?,
            tls: tls?,
            auth: auth?,
            ready: ready?,
            query: query?,
            close: close?,
        })
    }
}

/// The database server behind a PostgreSQL result, as the record's `server` holds
/// it: the fields every family has, then PostgreSQL's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `postgresql`, `cockroachdb`, `pgbouncer`, `pooler` or `other` (see
    /// `postgres::targets::Kind`).
    pub kind: String,
    /// What `SELECT version()` returned.
    pub version: String,
    /// True for a throwaway cluster sockbench started itself.
    pub throwaway: bool,
    /// Where libpq went: the socket directory (or `@name`) over a Unix socket, else
    /// the host (absent in files of earlier builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The port libpq went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// A pooler's own version when one stands in between (`PgBouncer 1.18.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<String>,
    /// How the role's password was stored on the server (`md5`, `scram-sha-256`)
    /// when sockbench set it; the cost of `password` and `md5` depends on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_storage: Option<String>,
}

impl ServerInfo {
    /// As the record's `server` stores it.
    pub fn record(&self) -> crate::results::Server {
        serde_json::from_value(serde_json::json!(self)).expect("the fields of a server")
    }

    /// The PostgreSQL fields of a record's `server`.
    pub fn of(server: &crate::results::Server) -> Option<ServerInfo> {
        serde_json::from_value(serde_json::json!(server)).ok()
    }
}
