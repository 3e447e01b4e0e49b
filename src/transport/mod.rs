//! The transports sockbench compares, and the addresses they are reached at.
//!
//! [`Transport`] names every transport; it is the one place a new transport is added.
//! [`Endpoint`] is a concrete address (`unix:/run/x.sock`, `tcp:127.0.0.1:7000`, ...);
//! binding it gives a [`Listener`] for the server side, and preparing it gives a
//! [`Connector`] for the client side. Both hand out a [`Conn`], so the experiments and
//! the server never branch on the transport themselves.

mod address;
mod conn;
mod listen;
mod tls;

pub use address::{Endpoint, MAX_UNIX_PATH};
pub use conn::{Conn, Connector};
pub use listen::{Accepted, BindError, Listener};
pub use tls::{TlsInfo, TlsVersion, CERTIFICATE_KIND};

crate::named! {
    /// Every transport sockbench can measure.
    pub enum Transport as "transport" {
        /// Unix domain stream socket bound to a file system path.
        Unix = "unix",
        /// Unix domain stream socket in Linux's abstract namespace (no file).
        UnixAbstract = "unix-abstract",
        /// TCP over IPv4 loopback, 127.0.0.1.
        Tcp = "tcp",
        /// TCP over IPv6 loopback, ::1.
        Tcp6 = "tcp6",
        /// TLS over TCP on 127.0.0.1.
        Tls = "tls",
    }
}

impl Transport {
    /// Whether connections on this transport use TCP ports (and so leave TIME_WAIT
    /// sockets behind when the client closes first).
    pub fn uses_tcp(self) -> bool {
        matches!(self, Transport::Tcp | Transport::Tcp6 | Transport::Tls)
    }

    /// The address a server started by sockbench itself listens on: a socket file in
    /// the private directory `dir`, a unique abstract name, or a free loopback port.
    pub fn local_endpoint(self, dir: &std::path::Path, unique: &str) -> Endpoint {
        use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
        match self {
            Transport::Unix => Endpoint::Unix(dir.join("sockbench.sock")),
            Transport::UnixAbstract => Endpoint::UnixAbstract(format!("sockbench-{unique}")),
            Transport::Tcp => Endpoint::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
            Transport::Tcp6 => Endpoint::Tcp(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))),
            Transport::Tls => Endpoint::Tls(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
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
        let err = "udp".parse::<Transport>().unwrap_err();
        assert!(err.contains("'udp'"), "{err}");
        assert!(err.contains("unix-abstract"), "{err}");
    }
}
