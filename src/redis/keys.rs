//! The parameters and figures of the Redis experiments, declared once as typed
//! keys: the result file stores them by these names.

use crate::results::Key;
use crate::stats::Percentiles;

/// The value's size of a GET, bytes (redis-benchmark's `-d`).
pub const SIZE: Key<u64> = Key::new("size");
/// Commands sent together before their replies are read (redis-benchmark's `-P`).
pub const DEPTH: Key<u64> = Key::new("depth");
/// Clients at once, each on its own connection (redis-benchmark's `-c`).
pub const CLIENTS: Key<u64> = Key::new("clients");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Key<u64> = Key::new("duration_ms");
/// The parameters that set how long it measured, not what.
pub const BUDGETS: &[&str] = &[DURATION_MS.name];

/// Time from sending a request (one command, or a pipeline of them) until its
/// last reply is read.
pub const RTT_NS: Key<Percentiles> = Key::new("rtt_ns");
/// Commands answered per second (of all clients together).
pub const OPS_PER_S: Key<f64> = Key::new("ops_per_s");
/// A pipeline's time per command: its round trip over its depth (median).
pub const PER_COMMAND_NS: Key<f64> = Key::new("per_command_ns");
/// New connections per second: connect, AUTH, PING, close.
pub const CONN_PER_S: Key<f64> = Key::new("conn_per_s");
/// Time of one whole connection: connect, AUTH, PING, close.
pub const LATENCY_NS: Key<Percentiles> = Key::new("latency_ns");
