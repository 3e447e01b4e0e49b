//! The parameters and figures of the proxy experiments, declared once as typed
//! keys: the result file stores them by these names.

use crate::results::Key;
use crate::stats::Percentiles;

/// The response body's size, bytes (`GET /?size=N`).
pub const SIZE: Key<u64> = Key::new("size");
/// Whether nginx keeps its connections to the app server open between requests
/// (`on`: `keepalive` in its upstream block, HTTP/1.1; `off`: nginx's default, a
/// new upstream connection per request).
pub const UPSTREAM_KEEPALIVE: Key<String> = Key::new("upstream_keepalive");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Key<u64> = Key::new("duration_ms");
/// The parameters that set how long it measured, not what.
pub const BUDGETS: &[&str] = &[DURATION_MS.name];

/// Time from sending a request until its whole response is read.
pub const RTT_NS: Key<Percentiles> = Key::new("rtt_ns");
/// Requests answered per second.
pub const REQ_PER_S: Key<f64> = Key::new("requests_per_s");
/// Requests answered with anything but a 2xx status: counted, never dropped from
/// the rate silently.
pub const FAILED: Key<u64> = Key::new("failed");
