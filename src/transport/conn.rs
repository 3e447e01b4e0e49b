//! The sockets of every kind behind one type each: a connected stream ([`Conn`]),
//! the client side that opens one ([`Connector`]) and the server side that accepts
//! them ([`Listener`], [`Accepted`]). Each arm hands over to its kind's file.
//!
//! These are enums rather than boxed trait objects so a read or write costs a
//! predictable branch, not an indirect call, inside the timed loops.

use super::datagram::{Datagram, Peer};
use super::tls::{self, TlsInfo, TlsVersion};
use super::{tcp, unix, Address, Endpoint, SocketKind};
use anyhow::{bail, Result};
use openssl::ssl::{MidHandshakeSslStream, SslAcceptor, SslConnector, SslStream};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{SocketAddr as UnixAddr, UnixDatagram, UnixListener, UnixStream};
use std::time::Duration;

/// A connected socket on any transport: a stream (a Unix SOCK_SEQPACKET socket
/// too, in `Unix`), or a connected datagram socket, whose reads and writes are
/// whole datagrams.
pub enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
    UnixDgram(UnixDatagram),
    Udp(UdpSocket),
    /// An unconnected UDP socket and the peer every write goes to.
    UdpTo(UdpSocket, SocketAddr),
}

impl Conn {
    /// Bounds how long a read may block, so a silent peer cannot hang sockbench.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(timeout),
            Conn::Tcp(s) => s.set_read_timeout(timeout),
            Conn::Tls(s) => s.get_ref().set_read_timeout(timeout),
            Conn::UnixDgram(s) => s.set_read_timeout(timeout),
            Conn::Udp(s) | Conn::UdpTo(s, _) => s.set_read_timeout(timeout),
        }
    }

    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_write_timeout(timeout),
            Conn::Tcp(s) => s.set_write_timeout(timeout),
            Conn::Tls(s) => s.get_ref().set_write_timeout(timeout),
            Conn::UnixDgram(s) => s.set_write_timeout(timeout),
            Conn::Udp(s) | Conn::UdpTo(s, _) => s.set_write_timeout(timeout),
        }
    }

    /// Switches between blocking and non-blocking reads and writes.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_nonblocking(on),
            Conn::Tcp(s) => s.set_nonblocking(on),
            Conn::Tls(s) => s.get_ref().set_nonblocking(on),
            Conn::UnixDgram(s) => s.set_nonblocking(on),
            Conn::Udp(s) | Conn::UdpTo(s, _) => s.set_nonblocking(on),
        }
    }

    /// The socket, to wait on.
    pub fn as_raw_fd(&self) -> RawFd {
        match self {
            Conn::Unix(s) => s.as_raw_fd(),
            Conn::Tcp(s) => s.as_raw_fd(),
            Conn::Tls(s) => s.get_ref().as_raw_fd(),
            Conn::UnixDgram(s) => s.as_raw_fd(),
            Conn::Udp(s) | Conn::UdpTo(s, _) => s.as_raw_fd(),
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
            Conn::UnixDgram(s) => s.recv(buf),
            Conn::Udp(s) => s.recv(buf),
            // An unconnected socket hears from anyone: only its peer's datagrams
            // are read (the same one system call as `recv`).
            Conn::UdpTo(s, peer) => loop {
                let (n, from) = s.recv_from(buf)?;
                if from == *peer {
                    return Ok(n);
                }
            },
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
            Conn::UnixDgram(s) => s.send(buf),
            Conn::Udp(s) => s.send(buf),
            Conn::UdpTo(s, peer) => s.send_to(buf, *peer),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
            Conn::UnixDgram(_) | Conn::Udp(_) | Conn::UdpTo(..) => Ok(()),
        }
    }
}

impl Conn {
    /// Reads one whole message into `buf`: over a stream, `buf.len()` bytes; over
    /// a datagram socket, one datagram, which must be exactly that long (a shorter
    /// or longer one is an error that says so, not a wait for more).
    #[inline]
    pub fn read_message(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let n = match self {
            Conn::UnixDgram(s) => receive_whole(s.as_raw_fd(), buf)?,
            Conn::Udp(s) => receive_whole(s.as_raw_fd(), buf)?,
            // Its peer's datagrams alone; a longer one is cut to `buf`.
            Conn::UdpTo(..) => self.read(buf)?,
            _ => return self.read_exact(buf),
        };
        if n == buf.len() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "a datagram of {n} B came where one of {} B was expected",
                buf.len()
            ),
        ))
    }
}

/// One datagram into `buf`; its whole length, even where that is more than `buf`.
#[inline]
fn receive_whole(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of its length; `fd` is a socket the caller holds.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Says what a read or write that found the connection closed means, instead of
/// `read_exact`'s "failed to fill whole buffer" or a bare "connection reset".
pub fn closed_by_peer(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe => io::Error::new(
            e.kind(),
            "the socket server closed the connection (it exited or was killed)",
        ),
        _ => e,
    }
}

/// Everything needed to open connections to one endpoint, prepared once so that
/// `connect` does no parsing or address conversion inside a timed loop. A
/// datagram socket has no connection to open: its clients start from
/// [`Connector::datagram`].
pub enum Connector {
    Unix(UnixAddr),
    UnixSeqpacket(unix::Sockaddr),
    Tcp(SocketAddr),
    Tls(SocketAddr, SslConnector),
    /// A datagram server's address, and whether the client's socket connects to
    /// the server's.
    Datagram(Peer, bool),
}

impl Connector {
    pub fn new(endpoint: &Endpoint, tls_version: TlsVersion) -> Result<Connector> {
        Ok(match (endpoint.transport.kind(), &endpoint.address) {
            (SocketKind::Unix, address) => Connector::Unix(unix::address(address)?),
            (SocketKind::UnixSeqpacket, address) => {
                Connector::UnixSeqpacket(unix::Sockaddr::of(address)?)
            }
            (SocketKind::UnixDgram, Address::Ip(_)) => bail!("an IP address is no Unix address"),
            (
                kind @ (SocketKind::UnixDgram | SocketKind::Udp | SocketKind::UdpUnconnected),
                address,
            ) => Connector::Datagram(Peer::of(address)?, kind != SocketKind::UdpUnconnected),
            (SocketKind::Tcp, Address::Ip(addr)) => Connector::Tcp(*addr),
            (SocketKind::Tls, Address::Ip(addr)) => {
                Connector::Tls(*addr, tls::connector(tls_version)?)
            }
            (_, address) => bail!("{address} is no IP address"),
        })
    }

    /// A datagram server's address, a client socket of its own to reach it from,
    /// and whether it connects; `None` for a transport with connections.
    pub fn datagram(&self) -> Option<io::Result<(Datagram, &Peer, bool)>> {
        match self {
            Connector::Datagram(peer, connects) => {
                Some(Datagram::client_for(peer).map(|d| (d, peer, *connects)))
            }
            _ => None,
        }
    }

    /// Opens one connection; for TLS this includes the full handshake.
    #[inline]
    pub fn connect(&self) -> io::Result<Conn> {
        match self {
            Connector::Unix(addr) => unix::connect(addr).map(Conn::Unix),
            Connector::UnixSeqpacket(addr) => unix::connect_seqpacket(addr).map(Conn::Unix),
            Connector::Datagram(..) => Err(no_connection()),
            Connector::Tcp(addr) => tcp::connect(addr).map(Conn::Tcp),
            Connector::Tls(addr, connector) => {
                tls::connect(addr, connector).map(|s| Conn::Tls(Box::new(s)))
            }
        }
    }
}

impl Connector {
    /// Opens one connection as [`Connector::connect`] does, but a TCP connection not
    /// made within `wait` fails with `NotConnected`, and a TLS handshake that gets
    /// no answer within `wait` with `TimedOut`.
    pub fn connect_within(&self, wait: Duration) -> io::Result<Conn> {
        match self {
            Connector::Tls(addr, connector) => {
                tls::connect_within(addr, connector, wait).map(|s| Conn::Tls(Box::new(s)))
            }
            Connector::Tcp(addr) => tcp::connect_timeout(addr, wait).map(Conn::Tcp),
            other => other.connect(),
        }
    }
}

impl Connector {
    /// Opens one connection whose reads and writes each block at most `slice`, and
    /// stay so, for a client that bounds whole operations itself; a TLS handshake
    /// runs in slices too, asking `waited` whether to go on (see
    /// [`tls::connect_sliced`]). The TCP connect waits at most `connect` when given;
    /// without it, it is the plain blocking one (timed loops of new connections: two
    /// more system calls per connection than [`Connector::connect`], six for TLS).
    #[inline]
    pub fn connect_sliced(
        &self,
        slice: Duration,
        connect: Option<Duration>,
        waited: &mut dyn FnMut() -> io::Result<()>,
    ) -> io::Result<Conn> {
        let sliced = |conn: Conn| -> io::Result<Conn> {
            conn.set_read_timeout(Some(slice))?;
            conn.set_write_timeout(Some(slice))?;
            Ok(conn)
        };
        match (self, connect) {
            (Connector::Unix(addr), _) => sliced(Conn::Unix(unix::connect(addr)?)),
            (Connector::UnixSeqpacket(addr), _) => {
                sliced(Conn::Unix(unix::connect_seqpacket(addr)?))
            }
            (Connector::Datagram(..), _) => Err(no_connection()),
            (Connector::Tcp(addr), None) => sliced(Conn::Tcp(tcp::connect(addr)?)),
            (Connector::Tcp(addr), Some(wait)) => {
                sliced(Conn::Tcp(tcp::connect_timeout(addr, wait)?))
            }
            (Connector::Tls(addr, connector), _) => {
                tls::connect_sliced(addr, connector, slice, connect, waited)
                    .map(|s| Conn::Tls(Box::new(s)))
            }
        }
    }
}

/// What a datagram socket says when asked for a connection.
fn no_connection() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "a datagram socket has no connection to open",
    )
}

/// A bound socket: listening (a SOCK_SEQPACKET one in `Unix`), or a datagram
/// socket, which receives from every client on the one socket.
pub enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
    Tls(TcpListener, Box<SslAcceptor>),
    /// A datagram socket, and whether the server's socket for each client connects
    /// to it.
    Datagram(Datagram, bool),
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
    /// Binds and listens, letting as many connections wait to be accepted as the
    /// kernel allows. A stale socket file (one nobody listens on) is replaced; a
    /// live one is reported as in use.
    pub fn bind(endpoint: &Endpoint) -> Result<Listener, BindError> {
        Listener::bind_backlog(endpoint, None)
    }

    /// Binds and listens as [`Listener::bind`] does, with at most `backlog`
    /// connections waiting to be accepted (`None`: as many as the kernel allows).
    /// A small backlog is for a server meant to be overrun (the proxy family's
    /// overload experiment): the kernel lets one more than `backlog` wait.
    pub fn bind_backlog(endpoint: &Endpoint, backlog: Option<u32>) -> Result<Listener, BindError> {
        let wrap = |e: io::Error| match e.kind() {
            io::ErrorKind::AddrInUse => BindError::InUse(endpoint.clone()),
            _ => BindError::Other(endpoint.clone(), e),
        };
        let ip = || match &endpoint.address {
            Address::Ip(addr) => Ok(*addr),
            other => Err(wrap(io::Error::other(format!("{other} is no IP address")))),
        };
        let listener = match endpoint.transport.kind() {
            SocketKind::Unix => Listener::Unix(unix::bind(endpoint, wrap)?),
            SocketKind::UnixSeqpacket => Listener::Unix(unix::bind_seqpacket(endpoint, wrap)?),
            kind @ (SocketKind::UnixDgram | SocketKind::Udp | SocketKind::UdpUnconnected) => {
                let connects = kind != SocketKind::UdpUnconnected;
                return Ok(Listener::Datagram(
                    Datagram::bind(endpoint, wrap)?,
                    connects,
                ));
            }
            SocketKind::Tcp => Listener::Tcp(tcp::bind(&ip()?).map_err(wrap)?),
            SocketKind::Tls => {
                let acceptor = tls::acceptor().map_err(|e| BindError::Tls(endpoint.clone(), e))?;
                Listener::Tls(tcp::bind(&ip()?).map_err(wrap)?, Box::new(acceptor))
            }
        };
        listener.set_backlog(backlog).map_err(wrap)?;
        Ok(listener)
    }

    /// Sets how many connections may wait to be accepted: by default as many as
    /// the kernel allows (`net.core.somaxconn`) instead of the standard library's
    /// 128, since with a thousand clients connecting at once a full TCP accept
    /// queue drops their handshakes, and they wait for retransmissions seconds
    /// apart.
    fn set_backlog(&self, backlog: Option<u32>) -> io::Result<()> {
        let backlog = backlog.map_or(libc::c_int::MAX, |b| {
            libc::c_int::try_from(b).unwrap_or(libc::c_int::MAX)
        });
        // SAFETY: listen on a socket this listener owns; calling it again on a
        // listening socket only changes the backlog (capped by somaxconn).
        if unsafe { libc::listen(self.as_raw_fd(), backlog) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The address actually bound, with the real port when port 0 was asked for.
    pub fn local_endpoint(&self, asked: &Endpoint) -> Endpoint {
        let bound = match self {
            Listener::Tcp(l) | Listener::Tls(l, _) => l.local_addr().ok().map(Address::Ip),
            Listener::Datagram(d, _) => d.local_ip().map(Address::Ip),
            Listener::Unix(_) => None,
        };
        Endpoint {
            transport: asked.transport,
            address: bound.unwrap_or_else(|| asked.address.clone()),
        }
    }

    /// Makes `accept` return `WouldBlock` instead of waiting for a client.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Listener::Unix(l) => l.set_nonblocking(true),
            Listener::Tcp(l) | Listener::Tls(l, _) => l.set_nonblocking(true),
            Listener::Datagram(d, _) => d.set_nonblocking(true),
        }
    }

    /// The listening socket, to wait on.
    pub fn as_raw_fd(&self) -> RawFd {
        match self {
            Listener::Unix(l) => l.as_raw_fd(),
            Listener::Tcp(l) | Listener::Tls(l, _) => l.as_raw_fd(),
            Listener::Datagram(d, _) => d.as_raw_fd(),
        }
    }

    /// Accepts one connection, non-blocking, with `TCP_NODELAY` on TCP. A TLS
    /// connection comes back with its handshake started, to be driven by
    /// [`Accepted::advance`] whenever its socket is ready.
    pub fn accept(&self) -> io::Result<Accepted> {
        let fd = accept_nonblocking(self.as_raw_fd())?;
        match self {
            Listener::Unix(_) => Ok(Accepted::Open(Conn::Unix(unix::accepted(fd)))),
            Listener::Tcp(_) => Ok(Accepted::Open(Conn::Tcp(tcp::accepted(fd)?))),
            Listener::Tls(_, acceptor) => tls::handshake(acceptor.accept(tcp::accepted(fd)?)),
            Listener::Datagram(..) => Err(no_connection()),
        }
    }
}

/// `accept4` with the new socket non-blocking from the start (one system call
/// fewer per connection than accepting and then switching).
fn accept_nonblocking(listener: RawFd) -> io::Result<OwnedFd> {
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
    // SAFETY: `fd` is a new connected socket that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
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
            Accepted::Handshake(mid) => tls::handshake(mid.handshake()),
            open => Ok(open),
        }
    }
}
