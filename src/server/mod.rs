//! sockbench's own server: the far end of every raw socket experiment.
//!
//! One thread per listener accepts, greets and reads the request header, so a
//! connect-only client costs the server exactly accept, write, read and close, as in
//! the classic experiment. Longer sessions (pingpong, stream) get a thread each. The
//! same code runs as `sockbench serve` and as the child process `sockbench sockets`
//! starts for itself ([`child`]).

pub mod child;
pub mod protocol;
mod session;

use crate::transport::{Endpoint, Listener};
use session::Opening;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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

/// Binds every endpoint, or fails on the first that cannot be bound.
pub fn bind_all(endpoints: &[Endpoint]) -> Result<Vec<Bound>, BindError> {
    endpoints
        .iter()
        .map(|asked| {
            let listener = Listener::bind(asked)?;
            Ok(Bound {
                endpoint: listener.local_endpoint(asked),
                listener,
            })
        })
        .collect()
}

/// Starts one accept thread per listener; they run until the process exits.
pub fn spawn_all(bound: Vec<Bound>) -> std::io::Result<()> {
    for Bound { endpoint, listener } in bound {
        std::thread::Builder::new()
            .name(format!("accept {endpoint}"))
            .spawn(move || accept_loop(listener))?;
    }
    Ok(())
}

fn accept_loop(listener: Listener) {
    let closed_after_greeting = Arc::new(AtomicU64::new(0));
    loop {
        let mut conn = match listener.accept() {
            Ok(conn) => conn,
            Err(_) => {
                // A failed TLS handshake or a transient accept error (EMFILE, ...):
                // back off a little rather than spin.
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        if conn.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
            || conn.write_all(protocol::GREETING).is_err()
        {
            continue;
        }
        match session::read_opening(&mut conn) {
            Ok(Opening::Closed) => {
                closed_after_greeting.fetch_add(1, Ordering::SeqCst);
            }
            Ok(Opening::Request(request)) => {
                let counter = Arc::clone(&closed_after_greeting);
                let _ = std::thread::Builder::new()
                    .name("session".into())
                    .spawn(move || session::serve(conn, request, &counter));
            }
            Err(_) => {}
        }
    }
}
