//! The parameters and figures of the Redis experiments, declared once as typed
//! keys: the result file stores them by these names.

use crate::results::figures::Key as Figure;
use crate::results::params::Key as Param;
use crate::stats::Percentiles;

/// The value's size of a GET, bytes (redis-benchmark's `-d`).
pub const SIZE: Param<u64> = Param::new("size");
/// Commands sent together before their replies are read (redis-benchmark's `-P`).
pub const DEPTH: Param<u64> = Param::new("depth");
/// Clients at once, each on its own connection (redis-benchmark's `-c`).
pub const CLIENTS: Param<u64> = Param::new("clients");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Param<u64> = Param::new("duration_ms");
/// The parameters that set how long it measured, not what.
pub const BUDGETS: &[&str] = &[DURATION_MS.name];

/// Time from sending a request (one command, or a pipeline of them) until its
/// last reply is read.
pub const RTT_NS: Figure<Percentiles> = Figure::new("rtt_ns");
/// Commands answered per second (of all clients together).
pub const OPS_PER_S: Figure<f64> = Figure::new("ops_per_s");
/// A pipeline's time per command: its round trip over its depth (median).
pub const PER_COMMAND_NS: Figure<f64> = Figure::new("per_command_ns");
/// New connections per second: connect, AUTH, PING, close.
pub const CONN_PER_S: Figure<f64> = Figure::new("conn_per_s");
/// Time of one whole connection: connect, AUTH, PING, close.
pub const LATENCY_NS: Figure<Percentiles> = Figure::new("latency_ns");
