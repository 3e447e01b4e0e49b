//! The server side of every transport: bind an [`Endpoint`], accept [`Conn`]s.

use super::tls;
use super::{Conn, Endpoint};
use anyhow::Result;
use openssl::ssl::SslAcceptor;
use std::io;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};
use std::path::Path;

/// A bound, listening socket.
pub enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
    Tls(TcpListener, Box<SslAcceptor>),
}

/// Why binding failed, split so callers can tell the user what to do.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("{0} is already in use; choose another address or stop the process using it")]
    InUse(Endpoint),
    #[error("cannot listen on {0}: {1}")]
    Other(Endpoint, #[source] io::Error),
    #[error("cannot set up TLS for {0}: {1:#}")]
    Tls(Endpoint, anyhow::Error),
}

impl Listener {
    /// Binds and listens. A stale socket file (one nobody listens on) is replaced; a
    /// live one is reported as in use.
    pub fn bind(endpoint: &Endpoint) -> Result<Listener, BindError> {
        let wrap = |e: io::Error| match e.kind() {
            io::ErrorKind::AddrInUse => BindError::InUse(endpoint.clone()),
            _ => BindError::Other(endpoint.clone(), e),
        };
        Ok(match endpoint {
            Endpoint::Unix(path) => {
                remove_stale_socket(path);
                Listener::Unix(UnixListener::bind(path).map_err(wrap)?)
            }
            Endpoint::UnixAbstract(name) => {
                let addr = UnixAddr::from_abstract_name(name.as_bytes()).map_err(wrap)?;
                Listener::Unix(UnixListener::bind_addr(&addr).map_err(wrap)?)
            }
            Endpoint::Tcp(addr) => Listener::Tcp(TcpListener::bind(addr).map_err(wrap)?),
            Endpoint::Tls(addr) => {
                let acceptor = tls::acceptor().map_err(|e| BindError::Tls(endpoint.clone(), e))?;
                Listener::Tls(TcpListener::bind(addr).map_err(wrap)?, Box::new(acceptor))
            }
        })
    }

    /// The address actually bound, with the real port when port 0 was asked for.
    pub fn local_endpoint(&self, asked: &Endpoint) -> Endpoint {
        match (self, asked) {
            (Listener::Tcp(l), Endpoint::Tcp(_)) => {
                l.local_addr().map(Endpoint::Tcp).unwrap_or(asked.clone())
            }
            (Listener::Tls(l, _), Endpoint::Tls(_)) => {
                l.local_addr().map(Endpoint::Tls).unwrap_or(asked.clone())
            }
            _ => asked.clone(),
        }
    }

    /// Accepts one connection; for TLS this includes the server's half of the
    /// handshake. TCP connections get `TCP_NODELAY`.
    pub fn accept(&self) -> io::Result<Conn> {
        match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Conn::Unix(s)),
            Listener::Tcp(l) => {
                let (stream, _) = l.accept()?;
                stream.set_nodelay(true)?;
                Ok(Conn::Tcp(stream))
            }
            Listener::Tls(l, acceptor) => {
                let (stream, _) = l.accept()?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(crate::server::HANDSHAKE_TIMEOUT))?;
                acceptor
                    .accept(stream)
                    .map(|s| Conn::Tls(Box::new(s)))
                    .map_err(io::Error::other)
            }
        }
    }
}

/// Removes a socket file left behind by a server that died, but never a file that is
/// not a socket or a socket somebody still listens on.
fn remove_stale_socket(path: &Path) {
    use std::os::unix::fs::FileTypeExt;
    let is_socket = std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_socket())
        .unwrap_or(false);
    if is_socket && UnixStream::connect(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}
