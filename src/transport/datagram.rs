//! Datagram sockets, Unix (SOCK_DGRAM) and UDP: no connection, and so no accept.
//!
//! A client's socket is bound to an address of its own (an autobound abstract name,
//! or a free port) so the server can answer it. The server answers each new client
//! from a socket of its own, connected to that client ([`Datagram::answer`]), and
//! the client connects to that socket in turn ([`Datagram::connect`]): from then on
//! both ends send and receive on connected sockets, as a client of a datagram
//! service that keeps talking to one server does, and the kernel looks up no peer
//! per message.

use super::conn::BindError;
use super::{unix, Address, Conn, Endpoint};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{SocketAddr as UnixAddr, UnixDatagram};
use std::time::Duration;

/// A datagram socket of either kind, bound, connected or not.
pub enum Datagram {
    Unix(UnixDatagram),
    Udp(UdpSocket),
}

/// Where a datagram came from, or goes.
#[derive(Debug, Clone)]
pub enum Peer {
    Unix(UnixAddr),
    Ip(SocketAddr),
}

impl Peer {
    /// The address of `endpoint`, converted once.
    pub fn of(address: &Address) -> io::Result<Peer> {
        Ok(match address {
            Address::Ip(ip) => Peer::Ip(*ip),
            unix => Peer::Unix(unix::address(unix)?),
        })
    }
}

impl Datagram {
    /// The server's socket at `endpoint`. A stale socket file is replaced; a live
    /// one, or a file that is not a socket, is refused.
    pub fn bind(
        endpoint: &Endpoint,
        wrap: impl Fn(io::Error) -> BindError,
    ) -> Result<Datagram, BindError> {
        match &endpoint.address {
            Address::Ip(addr) => UdpSocket::bind(addr).map(Datagram::Udp).map_err(wrap),
            _ => {
                let fd = unix::bind_kind(endpoint, libc::SOCK_DGRAM, &wrap)?;
                Ok(Datagram::Unix(UnixDatagram::from(fd)))
            }
        }
    }

    /// A client's socket for a server at `server`, bound to an address of its own:
    /// a free port on the server's loopback address (so that it hears nothing from
    /// another machine), or an autobound abstract name.
    pub fn client_for(server: &Peer) -> io::Result<Datagram> {
        match server {
            Peer::Ip(addr) => {
                let local: IpAddr = match addr {
                    _ if addr.ip().is_loopback() => addr.ip(),
                    SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
                    SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
                };
                UdpSocket::bind((local, 0)).map(Datagram::Udp)
            }
            Peer::Unix(_) => autobound().map(Datagram::Unix),
        }
    }

    /// A new socket for answering `peer` alone: on the address `self` is bound to,
    /// with a free port (UDP) or an autobound name (Unix), connected to `peer`, or
    /// (without `connects`) naming it in every send.
    pub fn answer(&self, peer: &Peer, connects: bool) -> io::Result<Conn> {
        let socket = match self {
            Datagram::Udp(s) => Datagram::Udp(UdpSocket::bind((s.local_addr()?.ip(), 0))?),
            Datagram::Unix(_) => Datagram::Unix(autobound()?),
        };
        socket.talk_to(peer, connects)?;
        Ok(socket.into_conn(peer, connects))
    }

    /// Talks to `peer` alone from now on: connects to it, or (without `connects`,
    /// UDP) leaves every send to name it.
    pub fn talk_to(&self, peer: &Peer, connects: bool) -> io::Result<()> {
        match (self, peer, connects) {
            (Datagram::Udp(_), Peer::Ip(_), false) => Ok(()),
            _ => self.connect(peer),
        }
    }

    /// This socket, once it talks to `peer` ([`Datagram::talk_to`]), as a [`Conn`]
    /// whose reads and writes are whole datagrams.
    pub fn into_conn(self, peer: &Peer, connects: bool) -> Conn {
        match (self, peer, connects) {
            (Datagram::Udp(s), Peer::Ip(addr), false) => Conn::UdpTo(s, *addr),
            (Datagram::Udp(s), ..) => Conn::Udp(s),
            (Datagram::Unix(s), ..) => Conn::UnixDgram(s),
        }
    }

    /// Sends to `peer` and receives from it alone from now on.
    pub fn connect(&self, peer: &Peer) -> io::Result<()> {
        match (self, peer) {
            (Datagram::Udp(s), Peer::Ip(addr)) => s.connect(addr),
            (Datagram::Unix(s), Peer::Unix(addr)) => s.connect_addr(addr),
            _ => Err(io::Error::other("a peer of another kind of socket")),
        }
    }

    pub fn send_to(&self, buf: &[u8], peer: &Peer) -> io::Result<usize> {
        match (self, peer) {
            (Datagram::Udp(s), Peer::Ip(addr)) => s.send_to(buf, addr),
            (Datagram::Unix(s), Peer::Unix(addr)) => s.send_to_addr(buf, addr),
            _ => Err(io::Error::other("a peer of another kind of socket")),
        }
    }

    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, Peer)> {
        match self {
            Datagram::Udp(s) => s.recv_from(buf).map(|(n, a)| (n, Peer::Ip(a))),
            Datagram::Unix(s) => s.recv_from(buf).map(|(n, a)| (n, Peer::Unix(a))),
        }
    }

    #[inline]
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Datagram::Udp(s) => s.send(buf),
            Datagram::Unix(s) => s.send(buf),
        }
    }

    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Datagram::Udp(s) => s.recv(buf),
            Datagram::Unix(s) => s.recv(buf),
        }
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Datagram::Udp(s) => s.set_read_timeout(timeout),
            Datagram::Unix(s) => s.set_read_timeout(timeout),
        }
    }

    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Datagram::Udp(s) => s.set_write_timeout(timeout),
            Datagram::Unix(s) => s.set_write_timeout(timeout),
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Datagram::Udp(s) => s.set_nonblocking(on),
            Datagram::Unix(s) => s.set_nonblocking(on),
        }
    }

    /// The address a UDP socket is bound to (its port, when 0 was asked for).
    pub fn local_ip(&self) -> Option<SocketAddr> {
        match self {
            Datagram::Udp(s) => s.local_addr().ok(),
            Datagram::Unix(_) => None,
        }
    }

    pub fn as_raw_fd(&self) -> RawFd {
        match self {
            Datagram::Udp(s) => s.as_raw_fd(),
            Datagram::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// A Unix datagram socket bound to a name the kernel chooses in the abstract
/// namespace (binding with the address family alone), so that it can be answered.
fn autobound() -> io::Result<UnixDatagram> {
    let owned = unix::socket(libc::SOCK_DGRAM)?;
    // SAFETY: an all-zero sockaddr_un is valid; only its family is set.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let len = std::mem::size_of::<libc::sa_family_t>() as libc::socklen_t;
    // SAFETY: `addr` is a valid sockaddr_un of at least `len` bytes.
    let r = unsafe {
        libc::bind(
            owned.as_raw_fd(),
            (&addr as *const libc::sockaddr_un).cast(),
            len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UnixDatagram::from(owned))
}

/// Sets socket `fd`'s receive buffer (`SO_RCVBUF`; the kernel doubles what it is
/// given, and keeps it at least its own minimum, about 2 KiB).
pub fn set_receive_buffer(fd: RawFd, bytes: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: a c_int option value of the right size, on a socket the caller holds.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
