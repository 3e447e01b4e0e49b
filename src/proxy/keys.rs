//! The parameters and figures of the proxy experiments, declared once as typed
//! keys: the result file stores them by these names.

use crate::results::Key;
use crate::stats::Percentiles;

/// The response body's size, bytes (`GET /?size=N`).
pub const SIZE: Key<u64> = Key::new("size");
/// The path each request asks a user's app server for (`--path`), in place of a
/// size: its answer's body is whatever the app sends.
pub const PATH: Key<String> = Key::new("path");
/// Whether nginx keeps its connections to the app server open between requests
/// (`on`: `keepalive` in its upstream block, HTTP/1.1; `off`: nginx's default, a
/// new upstream connection per request).
pub const UPSTREAM_KEEPALIVE: Key<String> = Key::new("upstream_keepalive");
/// Connections to nginx at once, each with one request out at a time (wrk's
/// `-c`).
pub const CONNECTIONS: Key<u64> = Key::new("connections");
/// The listen backlog of the app server behind the overload experiment's sites:
/// connections that may wait for it to accept them (the kernel lets one more wait).
pub const BACKLOG: Key<u64> = Key::new("backlog");
/// How long nginx waits for a connection to the app server before it answers 504
/// (`proxy_connect_timeout`), milliseconds, where sockbench sets it.
pub const CONNECT_TIMEOUT_MS: Key<u64> = Key::new("connect_timeout_ms");
/// Time budget of each trial's timed loop, milliseconds.
pub const DURATION_MS: Key<u64> = Key::new("duration_ms");
/// The parameters that set how long it measured, not what.
pub const BUDGETS: &[&str] = &[DURATION_MS.name];

/// Time from sending a request until its whole response is read.
pub const RTT_NS: Key<Percentiles> = Key::new("rtt_ns");
/// Time of one whole connection to nginx: connect, one request, its response,
/// the server's close.
pub const CONNECTION_NS: Key<Percentiles> = Key::new("connection_ns");
/// Requests answered per second (of every connection together), whatever their
/// status: the failed ones are counted apart, in [`FAILED`].
pub const REQ_PER_S: Key<f64> = Key::new("requests_per_s");
/// Requests answered with a 2xx status per second (of every connection
/// together): the failed ones are not in it.
pub const OK_PER_S: Key<f64> = Key::new("ok_per_s");
/// Requests answered with anything but a 2xx status: counted, never dropped from
/// the rate silently.
pub const FAILED: Key<u64> = Key::new("failed");
