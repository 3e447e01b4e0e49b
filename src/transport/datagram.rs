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
use crate::system::peers;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
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

    /// The address as a value to compare and look up: an IP address and port, or
    /// a Unix socket's path or abstract name (`None` for an unnamed one).
    pub fn name(&self) -> Option<PeerName> {
        match self {
            Peer::Ip(addr) => Some(PeerName::Ip(*addr)),
            Peer::Unix(addr) => match (addr.as_abstract_name(), addr.as_pathname()) {
                (Some(name), _) => Some(PeerName::Abstract(name.to_vec())),
                (None, Some(path)) => Some(PeerName::Path(path.as_os_str().as_bytes().to_vec())),
                (None, None) => None,
            },
        }
    }
}

/// A datagram peer's address as a value: see [`Peer::name`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PeerName {
    Ip(SocketAddr),
    Abstract(Vec<u8>),
    Path(Vec<u8>),
}

impl std::fmt::Display for PeerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerName::Ip(addr) => write!(f, "{addr}"),
            PeerName::Abstract(name) => write!(f, "@{}", String::from_utf8_lossy(name)),
            PeerName::Path(path) => write!(f, "{}", String::from_utf8_lossy(path)),
        }
    }
}

/// One datagram received ([`Datagram::receive`]).
#[derive(Debug)]
pub struct Received {
    /// Its whole length, even where that is more than the buffer took.
    pub len: usize,
    /// Where it came from; `None` for an unnamed Unix socket, which cannot be
    /// answered.
    pub from: Option<Peer>,
    /// The process that sent it and its account: over a Unix socket that asked
    /// for them ([`Datagram::pass_credentials`]).
    pub sender: Option<peers::Peer>,
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
            Peer::Unix(_) => {
                // Asking for senders before the name exists: a datagram sent to it
                // as soon as it shows in /proc/net/unix names its process too.
                let socket = Datagram::Unix(UnixDatagram::from(unix::socket(libc::SOCK_DGRAM)?));
                socket.pass_credentials(true)?;
                autobind(&socket)?;
                Ok(socket)
            }
        }
    }

    /// A new socket for answering `peer` alone: on the address `self` is bound to,
    /// with a free port (UDP) or an autobound name (Unix), connected to `peer`, or
    /// (without `connects`) to name it in every send ([`Datagram::into_conn`]).
    pub fn answer(&self, peer: &Peer, connects: bool) -> io::Result<Datagram> {
        let socket = match self {
            Datagram::Udp(s) => Datagram::Udp(UdpSocket::bind((s.local_addr()?.ip(), 0))?),
            Datagram::Unix(_) => {
                let socket = Datagram::Unix(UnixDatagram::from(unix::socket(libc::SOCK_DGRAM)?));
                autobind(&socket)?;
                socket
            }
        };
        socket.talk_to(peer, connects)?;
        Ok(socket)
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

    /// Receives one datagram into `buf` with its sender's address and, over a Unix
    /// socket that asked for them, its process and account; with `peek`, leaves
    /// it queued. Not for timed loops: one `recvmsg` with room for credentials.
    pub fn receive(&self, buf: &mut [u8], peek: bool) -> io::Result<Received> {
        // SAFETY: all-zero sockaddr_storage and msghdr are valid values.
        let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        // Room for one SCM_CREDENTIALS message, aligned as a cmsghdr.
        let mut control = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: as above.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut from as *mut libc::sockaddr_storage).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        let flags = libc::MSG_TRUNC | if peek { libc::MSG_PEEK } else { 0 };
        // SAFETY: every pointer in `msg` points at a live buffer of the length given.
        let n = unsafe { libc::recvmsg(self.as_raw_fd(), &mut msg, flags) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut sender = None;
        // SAFETY: the kernel filled `msg`'s control part; CMSG_FIRSTHDR and
        // CMSG_NXTHDR walk it within `msg_controllen`, and a credentials message
        // holds one ucred, read unaligned.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET
                    && (*cmsg).cmsg_type == libc::SCM_CREDENTIALS
                {
                    let cred: libc::ucred = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                    sender = Some(peers::Peer {
                        pid: cred.pid as u32,
                        uid: cred.uid,
                    });
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        Ok(Received {
            len: n as usize,
            from: peer_from(&from, msg.msg_namelen),
            sender,
        })
    }

    /// Asks for the sending process and account of every datagram this Unix socket
    /// receives from now on (`SO_PASSCRED`), or no longer; nothing over UDP. It
    /// costs every sender work: off before a timed loop.
    pub fn pass_credentials(&self, on: bool) -> io::Result<()> {
        let Datagram::Unix(s) = self else {
            return Ok(());
        };
        let value = libc::c_int::from(on);
        // SAFETY: a c_int option value of the right size, on a socket this holds.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PASSCRED,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
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

    /// The same socket, through a descriptor of its own.
    pub fn try_clone(&self) -> io::Result<Datagram> {
        Ok(match self {
            Datagram::Udp(s) => Datagram::Udp(s.try_clone()?),
            Datagram::Unix(s) => Datagram::Unix(s.try_clone()?),
        })
    }

    /// Shuts the socket down both ways, which wakes whoever waits on it.
    pub fn shut_down(&self) {
        // SAFETY: shutdown on a socket this holds open.
        unsafe { libc::shutdown(self.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

/// The address the kernel wrote into `from`, `len` bytes of it.
fn peer_from(from: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<Peer> {
    let len = len as usize;
    let base = (from as *const libc::sockaddr_storage).cast::<u8>();
    match libc::c_int::from(from.ss_family) {
        libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: the kernel wrote a sockaddr_in there, as its family says.
            let sin: libc::sockaddr_in = unsafe { std::ptr::read_unaligned(base.cast()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(Peer::Ip(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            ))))
        }
        libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: the kernel wrote a sockaddr_in6 there, as its family says.
            let sin6: libc::sockaddr_in6 = unsafe { std::ptr::read_unaligned(base.cast()) };
            Some(Peer::Ip(SocketAddr::V6(SocketAddrV6::new(
                sin6.sin6_addr.s6_addr.into(),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            ))))
        }
        libc::AF_UNIX => {
            let offset = std::mem::size_of::<libc::sa_family_t>();
            let len = len.min(std::mem::size_of::<libc::sockaddr_un>());
            // SAFETY: the kernel wrote `len` bytes of a sockaddr_un there, within
            // the storage.
            let path =
                unsafe { std::slice::from_raw_parts(base.add(offset), len.saturating_sub(offset)) };
            match path.split_first() {
                None => None,
                Some((0, name)) => UnixAddr::from_abstract_name(name).ok().map(Peer::Unix),
                Some(_) => {
                    let path = path.split(|&b| b == 0).next().unwrap_or_default();
                    UnixAddr::from_pathname(std::ffi::OsStr::from_bytes(path))
                        .ok()
                        .map(Peer::Unix)
                }
            }
        }
        _ => None,
    }
}

/// Binds a Unix datagram socket to a name the kernel chooses in the abstract
/// namespace (binding with the address family alone), so that it can be answered.
fn autobind(socket: &Datagram) -> io::Result<()> {
    // SAFETY: an all-zero sockaddr_un is valid; only its family is set.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let len = std::mem::size_of::<libc::sa_family_t>() as libc::socklen_t;
    // SAFETY: `addr` is a valid sockaddr_un of at least `len` bytes.
    let r = unsafe {
        libc::bind(
            socket.as_raw_fd(),
            (&addr as *const libc::sockaddr_un).cast(),
            len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
