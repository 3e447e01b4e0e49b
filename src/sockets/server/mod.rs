//! sockbench's own server: the far end of every raw socket experiment.
//!
//! One thread per listener accepts, greets and reads the request header without
//! waiting on any one client ([`opening`]), so a connect-only client costs the
//! server about accept, write, read and close, as in the classic experiment, and an
//! idle client holds up nobody. Longer sessions (pingpong, stream, messages) get a
//! thread each. A datagram socket has no connections: its thread answers each
//! client's first datagram from a socket of its own for it ([`datagram`]). The
//! same code runs as `sockbench serve` and as the child process `sockbench sockets`
//! starts for itself ([`child`]).

pub(crate) mod child;
pub(crate) mod container;
mod datagram;
mod opening;
pub(crate) mod owner;
pub(crate) mod protocol;
mod session;

use crate::transport::{Endpoint, Listener};
use protocol::{Secret, MAX_SESSIONS};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use crate::transport::BindError;

/// How long a new connection may take to finish its TLS handshake and send its
/// request header before the server gives up on it.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound listener with the address it really got.
pub struct Bound {
    pub endpoint: Endpoint,
    listener: Listener,
}

/// Binds every endpoint, or fails on the first that cannot be bound; an address in
/// use, or a path that is not a socket, is the user's to change (exit 2).
pub fn bind_all(endpoints: &[Endpoint]) -> anyhow::Result<Vec<Bound>> {
    endpoints
        .iter()
        .map(|asked| {
            let listener = Listener::bind(asked).map_err(|e| match e {
                BindError::InUse(_) | BindError::NotSocket(_) => crate::error::usage(e.to_string()),
                other => other.into(),
            })?;
            Ok(Bound {
                endpoint: listener.local_endpoint(asked),
                listener,
            })
        })
        .collect()
}

/// Starts one accept thread per listener (one receiving thread per datagram
/// socket); they run until the process exits. With a `secret`, a datagram
/// request that does not carry it starts nothing.
pub fn spawn_all(bound: Vec<Bound>, secret: Option<Secret>) -> std::io::Result<()> {
    for Bound { endpoint, listener } in bound {
        std::thread::Builder::new()
            .name(format!("accept {endpoint}"))
            .spawn(move || match listener {
                Listener::Datagram(socket, connects) => {
                    datagram::serve_loop(socket, connects, secret)
                }
                listener => opening::accept_loop(listener),
            })?;
    }
    Ok(())
}

/// The sessions this process keeps, over all its sockets.
static SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// One of the [`MAX_SESSIONS`] a server process keeps at once, held by a session
/// until it ends: whatever other accounts make the server start, its threads and
/// sockets stay bounded.
pub(crate) struct Slot(());

impl Slot {
    /// A slot, or `None` when all are taken.
    fn take() -> Option<Slot> {
        SESSIONS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_SESSIONS).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(()))
    }

    /// Whether every slot is taken now.
    fn all_taken() -> bool {
        SESSIONS.load(Ordering::SeqCst) >= MAX_SESSIONS
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        SESSIONS.fetch_sub(1, Ordering::SeqCst);
    }
}
