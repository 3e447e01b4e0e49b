//! The result model: what one run measured, as written to the JSON result file.
//!
//! The shape is described by `schema/result.schema.json`; `schema_version` changes
//! whenever a reader of an older file could misread a newer one.

pub mod file;
mod load;
pub mod metric;
pub mod paired;

pub use load::load;

use crate::cpu::load::Load;
use crate::cpu::{Cost, Counts};
use crate::stats::{median, Interval, Percentiles, Spread};
use crate::system::System;
use crate::transport::TlsInfo;
use serde::{Deserialize, Serialize};

/// Version of the result file format.
pub const SCHEMA_VERSION: u32 = 3;

/// A whole result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema_version: u32,
    pub sockbench_version: String,
    /// The git commit sockbench was built from (`-modified` when the checkout had
    /// uncommitted changes), or `unknown`.
    pub sockbench_commit: String,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// The command line that produced the file, without the program name.
    pub command: Vec<String>,
    /// How the intervals in this file were computed.
    #[serde(default)]
    pub intervals: String,
    pub system: System,
    pub results: Vec<ResultRecord>,
}

/// One experiment on one transport with one set of parameters, over all its trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultRecord {
    /// The experiment's id, `family.name` (e.g. `sockets.pingpong`); the report
    /// reads it through its catalog of experiments.
    pub experiment: String,
    /// A transport name, or for a user's PostgreSQL server the name given to `--url`.
    pub transport: String,
    pub params: Params,
    /// The median over trials of each per-trial figure.
    pub metrics: Metrics,
    /// Which metric the tables lead with, and its range over trials.
    pub headline: Headline,
    /// Extra time per operation compared with the fastest transport for the same
    /// experiment and parameters: 0.47 means 47% more time (0 for the fastest).
    pub vs_fastest: f64,
    /// The negotiated TLS parameters, for TLS results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsInfo>,
    /// The kernel's counts per operation from the counting trial: CPU time,
    /// context switches, migrations and, where the hardware counts them,
    /// instructions. Absent where counters are not permitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Cost>,
    /// The PostgreSQL server measured (PostgreSQL experiments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerInfo>,
    /// How the role's password was stored on the server (`md5`, `scram-sha-256`) when
    /// sockbench set it; the cost of `password` and `md5` depends on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_storage: Option<String>,
    pub trials: Vec<Trial>,
}

/// The database server behind a PostgreSQL result.
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
}

/// The headline metric of a result and its spread over trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Headline {
    pub metric: String,
    pub higher_is_better: bool,
    pub spread: Spread,
    /// True when the range over trials exceeds 10% of the median.
    pub noisy: bool,
    /// The headline's 95% interval over trials (geometric mean), with two or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// The time per operation against the reference transport, round by round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_reference: Option<Versus>,
    /// Whether the interval that decides (`vs_reference`'s; on the reference, all
    /// those compared with it; alone, the headline's own) is narrower than ±5%.
    #[serde(default)]
    pub settled: bool,
}

/// One transport against the reference transport of the same case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Versus {
    /// The reference transport: `unix` when measured, else the first.
    pub reference: String,
    /// This transport's time per operation over the reference's, paired by round:
    /// 1.28 is 28% more time. `low`–`high` is its 95% interval.
    pub ratio: Interval,
}

/// What an experiment was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Pingpong message size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Stream write (and read) size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<u64>,
    /// Concurrent clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u64>,
    /// Connections streaming at once (sockets stream, iperf3's `-P`), when more
    /// than one; the throughput is their total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
    /// Client threads driving them (PostgreSQL concurrent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// A new connection for every transaction, like `pgbench -C`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub connect_per_transaction: bool,
    /// Time budget of each trial's timed loop, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The N of each timed batch whose totals are fitted (queries or rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<u64>>,
    /// How queries were sent (PostgreSQL query and concurrent, pgbench's `-M`):
    /// `extended` or `prepared`; absent for the simple protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The file name of the concurrent clients' script (pgbench's `-f`); absent for
    /// the default `SELECT 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The fixed transaction rate of all clients, per second (pgbench's `-R`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<u64>,
    /// The latency limit transactions were counted against, microseconds
    /// (pgbench's `-L`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_us: Option<u64>,
    /// The authentication method in force (PostgreSQL connect and auth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<String>,
    /// Where client and server were placed, when `--placement` chose: `same` (one
    /// CPU), `split` (two), `free` (as the OS schedules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

/// Figures of one trial, or their medians over trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_per_s: Option<f64>,
    /// Time for one whole connection (sockets connect: connect, greeting, close), or
    /// for one transaction (PostgreSQL concurrent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<Percentiles>,
    /// Round-trip time of one request/response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ns: Option<Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_s: Option<f64>,
    /// Time per query: the slope of total time on the number of queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_query_ns: Option<f64>,
    /// Queries per second from the fit (1 / slope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<f64>,
    /// Time per row: the slope of total time on the number of rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_row_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_s: Option<f64>,
    /// The fit's fixed cost (time at N = 0) and its coefficient of determination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r2: Option<f64>,
    /// Time for one whole PostgreSQL connection: connect, `SELECT 1`, close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ns: Option<Percentiles>,
    /// Median connection time minus the time of one query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_ns: Option<f64>,
    /// Median time of each phase of a connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases_ns: Option<Phases>,
    /// Median connection time minus that under `trust` on the same transport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_ns: Option<f64>,
    /// Transactions per second of many clients at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// Transactions the server answered with an error (over all trials in a record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    /// Transactions that took longer than the latency limit (over all trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// Transactions of a fixed-rate run skipped because they were already later than
    /// the latency limit when due to start (over all trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// With a fixed rate: how long after its scheduled start each transaction was
    /// sent (a client was still busy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ns: Option<Percentiles>,
    /// Mean time of each SQL command of the script, in order (pgbench's `-r`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_command_ns: Option<Vec<f64>>,
    /// CPU cost per operation of the timed loop, client and server apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cost>,
}

/// Where the time of one PostgreSQL connection goes, as libpq's non-blocking connect
/// shows it. A phase libpq passed without stopping counts as zero.
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

impl Metrics {
    /// Each figure's median over the trials that have it.
    pub fn median_of(trials: &[Metrics]) -> Metrics {
        let scalar = |get: fn(&Metrics) -> Option<f64>| {
            let values: Vec<f64> = trials.iter().filter_map(get).collect();
            (!values.is_empty()).then(|| median(&values))
        };
        let percentiles = |get: fn(&Metrics) -> Option<Percentiles>| {
            let all: Vec<Percentiles> = trials.iter().filter_map(get).collect();
            let of = |f: fn(&Percentiles) -> f64| median(&all.iter().map(f).collect::<Vec<_>>());
            (!all.is_empty()).then(|| Percentiles {
                mean: of(|p| p.mean),
                p50: of(|p| p.p50),
                p99: of(|p| p.p99),
                p999: of(|p| p.p999),
            })
        };
        let phases: Vec<Phases> = trials.iter().filter_map(|m| m.phases_ns).collect();
        let phase = |f: fn(&Phases) -> f64| median(&phases.iter().map(f).collect::<Vec<_>>());
        Metrics {
            conn_per_s: scalar(|m| m.conn_per_s),
            latency_ns: percentiles(|m| m.latency_ns),
            rtt_ns: percentiles(|m| m.rtt_ns),
            ops_per_s: scalar(|m| m.ops_per_s),
            bytes_per_s: scalar(|m| m.bytes_per_s),
            per_query_ns: scalar(|m| m.per_query_ns),
            qps: scalar(|m| m.qps),
            per_row_ns: scalar(|m| m.per_row_ns),
            rows_per_s: scalar(|m| m.rows_per_s),
            intercept_ns: scalar(|m| m.intercept_ns),
            r2: scalar(|m| m.r2),
            connect_ns: percentiles(|m| m.connect_ns),
            handshake_ns: scalar(|m| m.handshake_ns),
            phases_ns: (!phases.is_empty()).then(|| Phases {
                socket: phase(|p| p.socket),
                tls: phase(|p| p.tls),
                auth: phase(|p| p.auth),
                ready: phase(|p| p.ready),
                query: phase(|p| p.query),
                close: phase(|p| p.close),
            }),
            auth_ns: scalar(|m| m.auth_ns),
            tps: scalar(|m| m.tps),
            failed: trials.iter().filter_map(|m| m.failed).reduce(|a, b| a + b),
            late: trials.iter().filter_map(|m| m.late).reduce(|a, b| a + b),
            skipped: trials.iter().filter_map(|m| m.skipped).reduce(|a, b| a + b),
            lag_ns: percentiles(|m| m.lag_ns),
            per_command_ns: median_each(trials.iter().filter_map(|m| m.per_command_ns.as_deref())),
            cpu: median_cost(trials),
        }
    }
}

/// The median of each position over lists of one length (per-command times).
fn median_each<'a>(lists: impl Iterator<Item = &'a [f64]>) -> Option<Vec<f64>> {
    let lists: Vec<&[f64]> = lists.collect();
    let len = lists.first()?.len();
    Some(
        (0..len)
            .map(|i| {
                median(
                    &lists
                        .iter()
                        .filter_map(|l| l.get(i).copied())
                        .collect::<Vec<_>>(),
                )
            })
            .collect(),
    )
}

/// The median CPU cost over the trials that have one; where each side ran stays
/// with the trials.
fn median_cost(trials: &[Metrics]) -> Option<Cost> {
    let all: Vec<&Cost> = trials.iter().filter_map(|m| m.cpu.as_ref()).collect();
    let first = all.first()?;
    let clients: Vec<Counts> = all.iter().map(|c| c.client).collect();
    let servers: Vec<Counts> = all.iter().filter_map(|c| c.server).collect();
    Some(Cost {
        source: first.source.clone(),
        client: Counts::median_of(&clients),
        server: (!servers.is_empty()).then(|| Counts::median_of(&servers)),
        client_cpu: None,
        server_cpus: Vec::new(),
    })
}

/// One trial: its figures plus the counts behind them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Operations completed in the timed loop (connections, round trips, bytes).
    pub count: u64,
    /// Wall time of the timed loop.
    pub elapsed_ns: u64,
    /// Connections the server saw close right after the greeting (connect only);
    /// equal to `count` when nothing was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_count: Option<u64>,
    /// Sockets in TIME_WAIT on this machine before and after the trial (TCP connect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_wait_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_wait_after: Option<u64>,
    /// Set when the trial stopped early to keep ephemeral ports from running out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub port_limited: bool,
    /// Connections opened in the trial (PostgreSQL concurrent clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// Total time of each timed batch of N operations, the points of the fit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<Point>,
    /// What the rest of the machine did meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
    /// Set when the trial ran under outside load even after it was run again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// How many times the trial was run again because of outside load.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u32,
    /// A counting trial: run once after the rounds with kernel counters on, for
    /// its counts only (its wall time pays for the counting and is not used). Never
    /// written: its counts become the record's `counters`.
    #[serde(skip)]
    pub counting: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One timed batch: N operations took `total_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub n: u64,
    pub total_ns: u64,
}

impl ResultFile {
    /// A file with no results yet, for a run started now with `command`.
    pub fn new(command: Vec<String>) -> ResultFile {
        ResultFile {
            schema_version: SCHEMA_VERSION,
            sockbench_version: env!("CARGO_PKG_VERSION").to_string(),
            sockbench_commit: env!("SOCKBENCH_COMMIT").to_string(),
            started_at: crate::timestamp::now_rfc3339(),
            command,
            intervals: crate::stats::INTERVAL_METHOD.to_string(),
            system: System::read(),
            results: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_trials_takes_each_figure_apart() {
        let p = |x: f64| Percentiles {
            mean: x,
            p50: x,
            p99: 2.0 * x,
            p999: 3.0 * x,
        };
        let trials = [1.0, 5.0, 3.0].map(|x| Metrics {
            conn_per_s: Some(x * 10.0),
            latency_ns: Some(p(x)),
            ..Metrics::default()
        });
        let m = Metrics::median_of(&trials);
        assert_eq!(m.conn_per_s, Some(30.0));
        assert_eq!(m.latency_ns, Some(p(3.0)));
        assert_eq!(m.bytes_per_s, None);
    }
}
