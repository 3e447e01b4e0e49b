//! The result model: what one run measured, as written to the JSON result file.
//!
//! The shape is described by `schema/result.schema.json`; `schema_version` changes
//! whenever a reader of an older file could misread a newer one.

use crate::stats::{median, Percentiles, Spread};
use crate::system::System;
use crate::transport::TlsInfo;
use serde::{Deserialize, Serialize};

/// Version of the result file format.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema_version: u32,
    pub sockbench_version: String,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// The command line that produced the file, without the program name.
    pub command: Vec<String>,
    pub system: System,
    pub results: Vec<ResultRecord>,
}

/// One experiment on one transport with one set of parameters, over all its trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultRecord {
    /// `sockets.connect`, `sockets.pingpong`, `sockets.stream`, `sockets.concurrent`.
    pub experiment: String,
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
    pub trials: Vec<Trial>,
}

/// The headline metric of a result and its spread over trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Headline {
    pub metric: String,
    pub higher_is_better: bool,
    pub spread: Spread,
    /// True when the range over trials exceeds 10% of the median.
    pub noisy: bool,
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
    /// Time budget of each trial's timed loop, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Figures of one trial, or their medians over trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_per_s: Option<f64>,
    /// Time for one whole connection (connect, greeting, close).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<Percentiles>,
    /// Round-trip time of one request/response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ns: Option<Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_s: Option<f64>,
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
        Metrics {
            conn_per_s: scalar(|m| m.conn_per_s),
            latency_ns: percentiles(|m| m.latency_ns),
            rtt_ns: percentiles(|m| m.rtt_ns),
            ops_per_s: scalar(|m| m.ops_per_s),
            bytes_per_s: scalar(|m| m.bytes_per_s),
        }
    }
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
