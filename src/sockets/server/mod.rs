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
/// socket); they run until the process exits.
pub fn spawn_all(bound: Vec<Bound>) -> std::io::Result<()> {
    for Bound { endpoint, listener } in bound {
        std::thread::Builder::new()
            .name(format!("accept {endpoint}"))
            .spawn(move || match listener {
                Listener::Datagram(socket, connects) => datagram::serve_loop(socket, connects),
                listener => opening::accept_loop(listener),
            })?;
    }
    Ok(())
}
