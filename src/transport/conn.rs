//! One connected stream, whatever the transport, and the client side that opens it.
//!
//! [`Conn`] is an enum rather than a boxed trait object so a read or write costs a
//! predictable branch, not an indirect call, inside the timed loops.

use super::tls::{self, TlsInfo, TlsVersion};
use super::Endpoint;
use anyhow::Result;
use openssl::ssl::{SslConnector, SslStream};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixStream};
use std::time::Duration;

/// A connected stream on any transport.
pub enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Conn {
    /// Bounds how long a read may block, so a silent peer cannot hang sockbench.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(timeout),
            Conn::Tcp(s) => s.set_read_timeout(timeout),
            Conn::Tls(s) => s.get_ref().set_read_timeout(timeout),
        }
    }

    /// Switches between blocking and non-blocking reads and writes.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_nonblocking(on),
            Conn::Tcp(s) => s.set_nonblocking(on),
            Conn::Tls(s) => s.get_ref().set_nonblocking(on),
        }
    }

    /// The socket, to wait on.
    pub fn as_raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Conn::Unix(s) => s.as_raw_fd(),
            Conn::Tcp(s) => s.as_raw_fd(),
            Conn::Tls(s) => s.get_ref().as_raw_fd(),
        }
    }

    /// The negotiated TLS version and cipher, for TLS connections.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        match self {
            Conn::Tls(s) => Some(TlsInfo::of(s.ssl())),
            _ => None,
        }
    }
}

impl Read for Conn {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
            Conn::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.write(buf),
            Conn::Tcp(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

/// Everything needed to open connections to one endpoint, prepared once so that
/// `connect` does no parsing or address conversion inside a timed loop.
pub enum Connector {
    Unix(UnixAddr),
    Tcp(SocketAddr),
    Tls(SocketAddr, SslConnector),
}

impl Connector {
    pub fn new(endpoint: &Endpoint, tls_version: TlsVersion) -> Result<Connector> {
        Ok(match endpoint {
            Endpoint::Unix(path) => Connector::Unix(UnixAddr::from_pathname(path)?),
            Endpoint::UnixAbstract(name) => {
                Connector::Unix(UnixAddr::from_abstract_name(name.as_bytes())?)
            }
            Endpoint::Tcp(addr) => Connector::Tcp(*addr),
            Endpoint::Tls(addr) => Connector::Tls(*addr, tls::connector(tls_version)?),
        })
    }

    /// Opens one connection; for TLS this includes the full handshake.
    #[inline]
    pub fn connect(&self) -> io::Result<Conn> {
        match self {
            Connector::Unix(addr) => UnixStream::connect_addr(addr).map(Conn::Unix),
            Connector::Tcp(addr) => {
                let stream = TcpStream::connect(addr)?;
                stream.set_nodelay(true)?;
                Ok(Conn::Tcp(stream))
            }
            Connector::Tls(addr, connector) => {
                let stream = TcpStream::connect(addr)?;
                stream.set_nodelay(true)?;
                // As text: OpenSSL's error stack would otherwise be printed once
                // per level of the error chain.
                connector
                    .connect("localhost", stream)
                    .map(|s| Conn::Tls(Box::new(s)))
                    .map_err(|e| io::Error::other(e.to_string()))
            }
        }
    }
}
