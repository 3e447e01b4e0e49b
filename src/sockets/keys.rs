//! The parameters and figures of the sockets experiments, declared once as typed
//! keys: the result file stores them by these names.

use crate::results::Key;
use crate::stats::Percentiles;

/// Pingpong message size, bytes.
pub const SIZE: Key<u64> = Key::new("size");
/// Stream write (and read) size, bytes.
pub const WRITE_SIZE: Key<u64> = Key::new("write_size");
/// Connections streaming at once (iperf3's `-P`), when more than one; the
/// throughput is their total.
pub const STREAMS: Key<u64> = Key::new("streams");
/// The receive buffer the messages workload's receiver asks for (`SO_RCVBUF`),
/// bytes; absent: the system's default.
pub const RECEIVE_BUFFER: Key<u64> = Key::new("receive_buffer");
/// Concurrent clients.
pub const CLIENTS: Key<u64> = Key::new("clients");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Key<u64> = Key::new("duration_ms");
/// The parameters that set how long it measured, not what.
pub const BUDGETS: &[&str] = &[DURATION_MS.name];

/// New connections per second.
pub const CONN_PER_S: Key<f64> = Key::new("conn_per_s");
/// Time for one whole connection: connect, greeting, close.
pub const LATENCY_NS: Key<Percentiles> = Key::new("latency_ns");
/// Round-trip time of one request/response.
pub const RTT_NS: Key<Percentiles> = Key::new("rtt_ns");
/// Round trips per second.
pub const OPS_PER_S: Key<f64> = Key::new("ops_per_s");
/// Bytes per second, of all streams together.
pub const BYTES_PER_S: Key<f64> = Key::new("bytes_per_s");
/// Connections the server saw close right after the greeting (connect): equal to
/// the trial's count when nothing was lost; summed over trials.
pub const SERVER_COUNT: Key<u64> = Key::new("server_count");
/// Sockets in TIME_WAIT on this machine before and after a trial (TCP connect).
pub const TIME_WAIT_BEFORE: Key<f64> = Key::new("time_wait_before");
pub const TIME_WAIT_AFTER: Key<f64> = Key::new("time_wait_after");
/// 1 for a trial that stopped early to keep ephemeral ports from running out;
/// summed over trials, how many did.
pub const PORT_LIMITED: Key<u64> = Key::new("port_limited");
/// Messages received per second, one way (messages).
pub const MSGS_PER_S: Key<f64> = Key::new("msgs_per_s");
/// Messages sent and received in a trial (messages); summed over trials.
pub const SENT: Key<u64> = Key::new("sent");
pub const RECEIVED: Key<u64> = Key::new("received");
/// Messages the receiver never got (`sent` less `received`); summed over trials.
pub const LOST: Key<u64> = Key::new("lost");
/// The share of sends that found no room and waited for it (messages).
pub const WAITED_SHARE: Key<f64> = Key::new("waited_share");
