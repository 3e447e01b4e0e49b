//! The result model: what one run measured, as written to the JSON result file.
//!
//! The shape is described by `schema/result.schema.json`; `schema_version` changes
//! whenever a reader of an older file could misread a newer one.

pub(crate) mod figures;
pub(crate) mod file;
mod key;
mod load;
pub(crate) mod metric;
pub(crate) mod outside;
pub mod paired;
pub mod params;

pub use figures::Metrics;
pub use key::Key;
pub use load::load;
pub use params::Params;

use crate::cpu::load::CpuLoad;
use crate::cpu::Cost;
use crate::stats::{Difference, Interval, Spread};
use crate::system::System;
use crate::transport::TlsInfo;
use serde::{Deserialize, Serialize};

/// Version of the result file format.
pub const SCHEMA_VERSION: u32 = 6;

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
    /// The negotiated TLS parameters, for TLS results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsInfo>,
    /// The kernel's counts per operation from the counting trial: CPU time,
    /// context switches, migrations and, where the hardware counts them,
    /// instructions. Absent where counters are not permitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Cost>,
    /// The server measured, for families that measure a server of their own kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Server>,
    pub trials: Vec<Trial>,
}

/// The server behind a record, as its family describes it: what every family says
/// (its kind, version, whether sockbench started it) and the family's own details
/// (PostgreSQL's host, port, pooler and password storage), which only it reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Server {
    /// The kind of server, in the family's words (`postgresql`, `pgbouncer`, `redis`).
    pub kind: String,
    /// The version the server reports.
    pub version: String,
    /// True for a throwaway server sockbench started itself.
    pub throwaway: bool,
    /// Every other product the target's requests go through, by role: the app
    /// server behind a proxy. Empty where the server is the only one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind: Vec<Product>,
    /// The family's own fields.
    #[serde(flatten)]
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// A product behind a target's server, named by the role it has there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Product {
    /// What it does for the target (`app`).
    pub role: String,
    /// What it is (`sockbench`, `gunicorn`).
    pub name: String,
    pub version: String,
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
    /// The time per operation against the transport it is compared with (the
    /// reference; for TLS, tcp), round by round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_reference: Option<Versus>,
    /// Whether the interval that decides (`vs_reference`'s; on the reference, all
    /// those compared with it; alone, the headline's own) is narrower than ±5%.
    #[serde(default)]
    pub settled: bool,
}

/// One transport against the one it is compared with in the same case (see
/// [`paired::against`]): the reference transport, or for TLS tcp.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Versus {
    /// The transport compared with: the reference (`unix` when measured, else the
    /// first), or for TLS tcp when it was measured.
    pub reference: String,
    /// This transport's time per operation over that one's, paired by round: 1.28
    /// is 28% more time. `low`–`high` is its 95% interval.
    pub ratio: Interval,
    /// The extra CPU time per operation, client and server together, over that
    /// one's: the mean of the rounds' differences with its 95% interval. The one
    /// figure of extra CPU everything prints for this comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_cpu_ns: Option<Difference>,
}

/// One trial: its figures (the harness's CPU cost and whatever the family
/// declares: the connections a server saw, the batches of a fit, …) plus the
/// counts behind them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Operations completed in the timed loop (connections, round trips, bytes).
    pub count: u64,
    /// Wall time of the timed loop.
    pub elapsed_ns: u64,
    /// What the rest of the machine did meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<CpuLoad>,
    /// Set when the trial ran under outside load even after it was run again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// How many times the trial was run again because of outside load.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u32,
    /// Set when a disturbed trial was kept before its last try because the
    /// experiment's time allowance had no room to run it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    /// A counting trial: run once after the rounds with kernel counters on, for
    /// its counts only (its wall time pays for the counting and is not used). Never
    /// written: its counts become the record's `counters`.
    #[serde(skip)]
    pub counting: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One timed batch: N operations took `total_ns` (a point of a fit, stored as a
/// figure of its own kind, [`figures::Figure::Points`]).
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

    /// How busy the rest of the machine was over this run's trials.
    pub fn outside_load(&self) -> outside::OutsideLoad {
        outside::OutsideLoad::of(&self.results, self.system.load_at_start)
    }
}
