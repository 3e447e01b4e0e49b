//! The server side of every transport: bind an [`Endpoint`], accept [`Conn`]s.

use super::tls;
use super::{Conn, Endpoint};
use anyhow::Result;
use openssl::ssl::{HandshakeError, MidHandshakeSslStream, SslAcceptor, SslStream};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::FileTypeExt;
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
    #[error("{0} is a file that is not a socket; choose another path (sockbench replaces only a socket nobody listens on)")]
    NotSocket(Endpoint),
    // The OS error is part of the message and not a `source`, so `{:#}` says it once.
    #[error("cannot listen on {0}: {1}")]
    Other(Endpoint, io::Error),
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
        let listener = match endpoint {
            Endpoint::Unix(path) => {
                if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_socket()) {
                    return Err(BindError::NotSocket(endpoint.clone()));
                }
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
        };
        listener.widen_backlog().map_err(wrap)?;
        Ok(listener)
    }

    /// Lets as many connections wait to be accepted as the kernel allows
    /// (`net.core.somaxconn`) instead of the standard library's 128: with a
    /// thousand clients connecting at once, a full TCP accept queue drops their
    /// handshakes, and they wait for retransmissions seconds apart.
    fn widen_backlog(&self) -> io::Result<()> {
        // SAFETY: listen on a socket this listener owns; calling it again on a
        // listening socket only changes the backlog (capped by somaxconn).
        if unsafe { libc::listen(self.as_raw_fd(), libc::c_int::MAX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
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

    /// Makes `accept` return `WouldBlock` instead of waiting for a client.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Listener::Unix(l) => l.set_nonblocking(true),
            Listener::Tcp(l) | Listener::Tls(l, _) => l.set_nonblocking(true),
        }
    }

    /// The listening socket, to wait on.
    pub fn as_raw_fd(&self) -> RawFd {
        match self {
            Listener::Unix(l) => l.as_raw_fd(),
            Listener::Tcp(l) | Listener::Tls(l, _) => l.as_raw_fd(),
        }
    }

    /// Accepts one connection, non-blocking, with `TCP_NODELAY` on TCP. A TLS
    /// connection comes back with its handshake started, to be driven by
    /// [`Accepted::advance`] whenever its socket is ready.
    pub fn accept(&self) -> io::Result<Accepted> {
        let fd = accept_nonblocking(self.as_raw_fd())?;
        match self {
            // SAFETY: `fd` is a new connected socket that nothing else owns.
            Listener::Unix(_) => Ok(Accepted::Open(Conn::Unix(unsafe {
                UnixStream::from_raw_fd(fd)
            }))),
            Listener::Tcp(_) => {
                // SAFETY: as above.
                let stream = unsafe { TcpStream::from_raw_fd(fd) };
                stream.set_nodelay(true)?;
                Ok(Accepted::Open(Conn::Tcp(stream)))
            }
            Listener::Tls(_, acceptor) => {
                // SAFETY: as above.
                let stream = unsafe { TcpStream::from_raw_fd(fd) };
                stream.set_nodelay(true)?;
                Accepted::handshake(acceptor.accept(stream))
            }
        }
    }
}

/// `accept4` with the new socket non-blocking from the start (one system call
/// fewer per connection than accepting and then switching).
fn accept_nonblocking(listener: RawFd) -> io::Result<RawFd> {
    // SAFETY: null address pointers are allowed; the kernel checks the descriptor.
    let fd = unsafe {
        libc::accept4(
            listener,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// A connection just accepted: open, or still in its TLS handshake.
pub enum Accepted {
    Open(Conn),
    Handshake(MidHandshakeSslStream<TcpStream>),
}

impl Accepted {
    /// The socket, to wait on.
    pub fn as_raw_fd(&self) -> RawFd {
        match self {
            Accepted::Open(conn) => conn.as_raw_fd(),
            Accepted::Handshake(mid) => mid.get_ref().as_raw_fd(),
        }
    }

    /// Drives a TLS handshake as far as the socket allows; an open connection is
    /// returned as it is. An error means the client is gone or spoke no TLS.
    pub fn advance(self) -> io::Result<Accepted> {
        match self {
            Accepted::Handshake(mid) => Accepted::handshake(mid.handshake()),
            open => Ok(open),
        }
    }

    fn handshake(
        step: Result<SslStream<TcpStream>, HandshakeError<TcpStream>>,
    ) -> io::Result<Accepted> {
        match step {
            Ok(stream) => Ok(Accepted::Open(Conn::Tls(Box::new(stream)))),
            Err(HandshakeError::WouldBlock(mid)) => Ok(Accepted::Handshake(mid)),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }
}

/// Removes a socket file left behind by a server that died, but never a file that is
/// not a socket or a socket somebody still listens on.
fn remove_stale_socket(path: &Path) {
    let is_socket = std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_socket())
        .unwrap_or(false);
    if is_socket && UnixStream::connect(path).is_err() {
        let _ = std::fs::remove_file(path);
    }
}
