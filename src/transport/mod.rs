//! The transports sockbench compares, and the addresses they are reached at.
//!
//! A transport is a kind of socket ([`SocketKind`]: how it connects, listens and carries
//! bytes, one file each: `unix.rs` (streams and records), `tcp.rs`, `tls.rs`,
//! `datagram.rs` (Unix datagrams and UDP)) at a place ([`Place`]: which
//! address family or namespace its addresses are in). [`Transport::socket`] is the
//! one table of transports. [`Endpoint`] is a concrete address
//! (`unix:/run/x.sock`, `tcp:127.0.0.1:7000`, ...); binding it gives a [`Listener`]
//! for the server side, and preparing it gives a [`Connector`] for the client side.
//! Both hand out a [`Conn`] (`conn.rs` dispatches to the kind files), so the
//! experiments and the server never branch on the transport themselves.

mod conn;
mod datagram;
mod endpoint;
pub(crate) mod poller;
mod tcp;
mod tls;
mod unix;

pub use conn::{closed_by_peer, Accepted, BindError, Conn, Connector, Listener};
pub use datagram::{set_receive_buffer, Datagram, Peer, PeerName, Received};
pub use endpoint::{Address, Endpoint, MAX_UNIX_PATH};
pub use tls::{TlsInfo, TlsVersion, CERTIFICATE_KIND};

pub use crate::container::Crossing;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

crate::named! {
    /// Every transport sockbench can measure.
    pub enum Transport as "transport" {
        /// Unix domain stream socket bound to a file system path.
        Unix = "unix",
        /// Unix domain stream socket in Linux's abstract namespace (no file).
        UnixAbstract = "unix-abstract",
        /// Unix domain socket of records on a connection (SOCK_SEQPACKET), at a path.
        UnixSeqpacket = "unix-seqpacket",
        /// Unix domain datagram socket (SOCK_DGRAM) bound to a path.
        UnixDgram = "unix-dgram",
        /// Unix domain datagram socket in Linux's abstract namespace.
        UnixDgramAbstract = "unix-dgram-abstract",
        /// UDP over IPv4 loopback, 127.0.0.1, on a connected socket.
        Udp = "udp",
        /// UDP over IPv6 loopback, ::1, on a connected socket.
        Udp6 = "udp6",
        /// UDP over IPv4 loopback on sockets that name their peer in every send
        /// (`sendto`), as a client of many servers does.
        UdpUnconnected = "udp-unconnected",
        /// TCP over IPv4 loopback, 127.0.0.1.
        Tcp = "tcp",
        /// TCP over IPv6 loopback, ::1.
        Tcp6 = "tcp6",
        /// TLS over TCP on 127.0.0.1.
        Tls = "tls",
        /// TCP to a server in a container, by its address over a veth pair.
        Veth = "veth",
        /// TCP from one container to another over a Linux bridge.
        Bridge = "bridge",
        /// TCP to 127.0.0.1, forwarded into a container by a DNAT rule (`-p`).
        Published = "published",
        /// TCP to 127.0.0.1, copied into a container by Docker's `docker-proxy`.
        DockerProxy = "docker-proxy",
        /// A Unix socket in a directory the host shares into a container.
        UnixShared = "unix-shared",
    }
}

/// What kind of socket a transport uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SocketKind {
    /// A Unix domain stream socket.
    Unix,
    /// A Unix domain SOCK_SEQPACKET socket: a connection that keeps each message
    /// whole, as a datagram does.
    UnixSeqpacket,
    /// A Unix domain datagram socket: no connection, each message whole; a sender
    /// waits while the receiver's queue is full, so nothing is lost.
    UnixDgram,
    /// A TCP connection.
    Tcp,
    /// TLS over a TCP connection.
    Tls,
    /// UDP: no connection, each message whole; a message that finds the
    /// receiver's buffer full is dropped. Both ends' sockets are connected to each
    /// other, so a send names no address.
    Udp,
    /// UDP with sockets that are not connected: every send names its peer, and
    /// the kernel looks up its route each time.
    UdpUnconnected,
}

/// How a kind of socket carries what is written to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carries {
    /// Bytes, in order, with no boundaries: `unix`, `tcp`, `tls`.
    Bytes,
    /// Whole messages on a connection: `unix-seqpacket`.
    Records,
    /// Whole messages with no connection: `unix-dgram`, `udp`.
    Datagrams,
}

impl SocketKind {
    pub fn carries(self) -> Carries {
        match self {
            SocketKind::Unix | SocketKind::Tcp | SocketKind::Tls => Carries::Bytes,
            SocketKind::UnixSeqpacket => Carries::Records,
            SocketKind::UnixDgram | SocketKind::Udp | SocketKind::UdpUnconnected => {
                Carries::Datagrams
            }
        }
    }

    /// Whether it has connections to open (and accept).
    pub fn connects(self) -> bool {
        self.carries() != Carries::Datagrams
    }
}

/// Where a transport's sockets are: the address family (and, for Unix sockets,
/// the file system or the abstract namespace), or a container's network, which
/// sockbench builds itself and a user cannot name (`crate::container`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    Path,
    Abstract,
    Ipv4,
    Ipv6,
    Container(Crossing),
}

/// A transport's row in the table: its kind of socket, its place, and the scheme
/// its addresses are written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    pub kind: SocketKind,
    pub place: Place,
    pub scheme: &'static str,
}

impl Transport {
    /// The table of transports: a new transport of a known kind is one row here.
    pub const fn socket(self) -> Socket {
        let (kind, place, scheme) = match self {
            Transport::Unix => (SocketKind::Unix, Place::Path, "unix"),
            Transport::UnixAbstract => (SocketKind::Unix, Place::Abstract, "unix-abstract"),
            Transport::UnixSeqpacket => (SocketKind::UnixSeqpacket, Place::Path, "unix-seqpacket"),
            Transport::UnixDgram => (SocketKind::UnixDgram, Place::Path, "unix-dgram"),
            Transport::UnixDgramAbstract => (
                SocketKind::UnixDgram,
                Place::Abstract,
                "unix-dgram-abstract",
            ),
            Transport::Udp => (SocketKind::Udp, Place::Ipv4, "udp"),
            Transport::Udp6 => (SocketKind::Udp, Place::Ipv6, "udp"),
            Transport::UdpUnconnected => {
                (SocketKind::UdpUnconnected, Place::Ipv4, "udp-unconnected")
            }
            Transport::Tcp => (SocketKind::Tcp, Place::Ipv4, "tcp"),
            Transport::Tcp6 => (SocketKind::Tcp, Place::Ipv6, "tcp"),
            Transport::Tls => (SocketKind::Tls, Place::Ipv4, "tls"),
            Transport::Veth => (SocketKind::Tcp, Place::Container(Crossing::Veth), "veth"),
            Transport::Bridge => (
                SocketKind::Tcp,
                Place::Container(Crossing::Bridge),
                "bridge",
            ),
            Transport::Published => (
                SocketKind::Tcp,
                Place::Container(Crossing::Published),
                "published",
            ),
            Transport::DockerProxy => (
                SocketKind::Tcp,
                Place::Container(Crossing::DockerProxy),
                "docker-proxy",
            ),
            Transport::UnixShared => (
                SocketKind::Unix,
                Place::Container(Crossing::Shared),
                "unix-shared",
            ),
        };
        Socket {
            kind,
            place,
            scheme,
        }
    }

    pub fn kind(self) -> SocketKind {
        self.socket().kind
    }

    pub fn place(self) -> Place {
        self.socket().place
    }

    /// How a client reaches the container, for a transport into one.
    pub fn crossing(self) -> Option<Crossing> {
        match self.place() {
            Place::Container(crossing) => Some(crossing),
            _ => None,
        }
    }

    /// What the server listens on inside the container: TCP on the container's
    /// addresses, or a Unix socket in the shared directory; the transport itself
    /// for any other.
    pub fn within(self) -> Transport {
        match self.crossing() {
            None => self,
            Some(Crossing::Shared) => Transport::Unix,
            Some(_) => Transport::Tcp,
        }
    }

    /// Whether a record's `label` is this transport's name: records name a
    /// transport by it, and a user's server by the name given to `--url`.
    pub fn is_named(self, label: &str) -> bool {
        label == self.name()
    }

    /// Whether connections on this transport use TCP ports (and so leave TIME_WAIT
    /// sockets behind when the client closes first).
    pub fn uses_tcp(self) -> bool {
        matches!(self.kind(), SocketKind::Tcp | SocketKind::Tls)
    }

    /// The largest message one datagram or record of this transport carries, bytes,
    /// where there is such a limit: UDP's 65,535-byte datagram less its headers (IP's
    /// 20 bytes and UDP's 8 over IPv4; over IPv6 the IP header is not counted), a Unix
    /// datagram's or record's the sending socket's buffer less 32 bytes
    /// (`net.core.wmem_default`).
    pub fn largest_message(self) -> Option<u64> {
        match (self.kind(), self.place()) {
            (SocketKind::Udp | SocketKind::UdpUnconnected, Place::Ipv6) => Some(65_527),
            (SocketKind::Udp | SocketKind::UdpUnconnected, _) => Some(65_507),
            (SocketKind::UnixDgram | SocketKind::UnixSeqpacket, _) => {
                let wmem = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .unwrap_or(212_992);
                Some(wmem.saturating_sub(32))
            }
            _ => None,
        }
    }

    /// The address a server started by sockbench itself listens on: a socket file in
    /// the private directory `dir`, a unique abstract name, or a free loopback port.
    /// A transport into a container gets the address its server has there.
    pub fn local_endpoint(self, dir: &Path, unique: &str) -> Endpoint {
        let within = self.within();
        // One file or name per kind of socket: a server may listen on several.
        let kind = match within.kind() {
            SocketKind::UnixSeqpacket => "-seqpacket",
            SocketKind::UnixDgram => "-dgram",
            _ => "",
        };
        let address = match within.place() {
            Place::Path => Address::Path(dir.join(format!("sockbench{kind}.sock"))),
            Place::Abstract => Address::Abstract(format!("sockbench{kind}-{unique}")),
            Place::Ipv4 => Address::Ip(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
            Place::Ipv6 => Address::Ip(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))),
            Place::Container(_) => unreachable!("within() is a transport of the host"),
        };
        Endpoint {
            transport: self.within(),
            address,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Transport::ALL {
            assert_eq!(t.name().parse::<Transport>(), Ok(t));
        }
    }

    #[test]
    fn unknown_name_lists_the_choices() {
        let err = "sctp".parse::<Transport>().unwrap_err();
        assert!(err.contains("'sctp'"), "{err}");
        assert!(err.contains("unix-abstract"), "{err}");
    }

    #[test]
    fn each_transport_is_its_own_kind_at_its_own_place() {
        for t in Transport::ALL
            .into_iter()
            .filter(|t| t.crossing().is_none())
        {
            let same = Transport::ALL
                .into_iter()
                .filter(|u| (u.kind(), u.place()) == (t.kind(), t.place()));
            assert_eq!(same.collect::<Vec<_>>(), [t]);
            let e = t.local_endpoint(std::path::Path::new("/tmp/x"), "u");
            assert_eq!(e.address.place(), t.place());
            assert_eq!(
                e.to_string().parse::<Endpoint>().map(|e| e.transport),
                Ok(t)
            );
        }
    }

    #[test]
    fn a_transport_into_a_container_listens_there_on_one_of_the_host() {
        for t in Transport::ALL
            .into_iter()
            .filter(|t| t.crossing().is_some())
        {
            let within = t.within();
            assert!(within.crossing().is_none(), "{t}");
            assert_eq!(within.kind(), t.kind(), "{t}");
            let e = t.local_endpoint(std::path::Path::new("/tmp/x"), "u");
            assert_eq!(e.transport, within, "{t}");
            let err = format!("{t}:127.0.0.1:1").parse::<Endpoint>().unwrap_err();
            assert!(err.contains("builds itself"), "{err}");
        }
    }

    #[test]
    fn an_address_in_a_place_the_scheme_does_not_measure_is_refused() {
        let err = "tls:[::1]:7000".parse::<Endpoint>().unwrap_err();
        assert!(err.contains("tls only on IPv4"), "{err}");
    }
}
