//! Endpoint addresses as users write them: `unix:/path`, `unix-abstract:name`,
//! `tcp:127.0.0.1:PORT`, `tcp:[::1]:PORT`, `tls:127.0.0.1:PORT`, `udp:127.0.0.1:PORT`,
//! `unix-dgram:/path`, `unix-seqpacket:/path`, ...: a transport's
//! scheme, then an address in its place.
//!
//! Parsing checks everything the kernel would otherwise reject later with a vaguer
//! error, such as a socket path longer than `sun_path` can hold.

use super::{Place, Transport};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

/// Longest Unix socket path (or abstract name) Linux accepts: `sun_path` is 108 bytes,
/// one of which is the terminating (or, for abstract names, leading) NUL.
pub const MAX_UNIX_PATH: usize = 107;

/// Where a socket is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A socket file.
    Path(PathBuf),
    /// A name in Linux's abstract namespace.
    Abstract(String),
    /// An IP address and port.
    Ip(SocketAddr),
}

impl Address {
    /// The place this address is in.
    pub fn place(&self) -> Place {
        match self {
            Address::Path(_) => Place::Path,
            Address::Abstract(_) => Place::Abstract,
            Address::Ip(a) if a.is_ipv6() => Place::Ipv6,
            Address::Ip(_) => Place::Ipv4,
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Path(path) => write!(f, "{}", path.display()),
            Address::Abstract(name) => f.write_str(name),
            Address::Ip(addr) => write!(f, "{addr}"),
        }
    }
}

/// A concrete address a sockbench server listens on or a client connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub transport: Transport,
    pub address: Address,
}

impl Endpoint {
    /// The transport this address belongs to.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The socket file, for a transport whose sockets are files.
    pub fn path(&self) -> Option<&PathBuf> {
        match &self.address {
            Address::Path(path) => Some(path),
            _ => None,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.transport.socket().scheme, self.address)
    }
}

impl FromStr for Endpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hint = "write unix:/path, unix-abstract:name, tcp:127.0.0.1:PORT, \
                    tcp:[::1]:PORT, tls:127.0.0.1:PORT, unix-seqpacket:/path, \
                    unix-dgram:/path, unix-dgram-abstract:name, udp:127.0.0.1:PORT, \
                    udp:[::1]:PORT or udp-unconnected:127.0.0.1:PORT";
        let no_prefix = || format!("address '{s}' has no transport prefix; {hint}");
        let (scheme, rest) = s.split_once(':').ok_or_else(no_prefix)?;
        if scheme.starts_with('[') || scheme.parse::<std::net::IpAddr>().is_ok() {
            return Err(no_prefix());
        }
        let mut candidates = Transport::ALL
            .into_iter()
            .filter(|t| t.socket().scheme == scheme)
            .peekable();
        let first = candidates
            .peek()
            .copied()
            .ok_or_else(|| format!("address '{s}' has unknown transport '{scheme}'; {hint}"))?;
        let address = match first.place() {
            Place::Container(_) => {
                return Err(format!(
                    "address '{s}': {scheme} is a path into a container's network, which \
                     sockbench builds itself; measure it with --transports {scheme}, or give \
                     the address your container publishes as tcp: or unix:"
                ))
            }
            Place::Path => unix_path(rest).map(Address::Path)?,
            Place::Abstract => abstract_name(rest).map(Address::Abstract)?,
            Place::Ipv4 | Place::Ipv6 => socket_addr(s, rest).map(Address::Ip)?,
        };
        let transport = candidates
            .find(|t| t.place() == address.place())
            .ok_or_else(|| {
                format!(
                    "address '{s}': sockbench measures {scheme} only on {}",
                    first.place().describe()
                )
            })?;
        Ok(Endpoint { transport, address })
    }
}

impl Place {
    /// The place in words, for messages.
    fn describe(self) -> &'static str {
        match self {
            Place::Path => "a socket file",
            Place::Abstract => "an abstract name",
            Place::Ipv4 => "IPv4 (127.0.0.1)",
            Place::Ipv6 => "IPv6 (::1)",
            Place::Container(_) => "a container's network",
        }
    }
}

fn unix_path(rest: &str) -> Result<PathBuf, String> {
    if rest.is_empty() {
        return Err("unix address has an empty path; write unix:/path/to/socket".into());
    }
    if rest.len() > MAX_UNIX_PATH {
        return Err(format!(
            "unix socket path is {} bytes, over the {MAX_UNIX_PATH}-byte limit of sun_path; \
             choose a shorter path",
            rest.len()
        ));
    }
    Ok(PathBuf::from(rest))
}

fn abstract_name(rest: &str) -> Result<String, String> {
    if rest.is_empty() {
        return Err("unix-abstract address has an empty name; write unix-abstract:NAME".into());
    }
    if rest.len() > MAX_UNIX_PATH {
        return Err(format!(
            "abstract socket name is {} bytes, over the {MAX_UNIX_PATH}-byte limit; \
             choose a shorter name",
            rest.len()
        ));
    }
    Ok(rest.to_string())
}

fn socket_addr(whole: &str, rest: &str) -> Result<SocketAddr, String> {
    rest.parse().map_err(|_| {
        format!(
            "address '{whole}' is not IP:PORT; write it as 127.0.0.1:7000 or [::1]:7000 \
             (port 0 picks a free port)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let cases = [
            ("unix:/tmp/s.sock", Transport::Unix),
            ("unix-abstract:bench", Transport::UnixAbstract),
            ("tcp:127.0.0.1:7000", Transport::Tcp),
            ("tcp:[::1]:7000", Transport::Tcp6),
            ("tls:127.0.0.1:0", Transport::Tls),
            ("unix-seqpacket:/tmp/q.sock", Transport::UnixSeqpacket),
            ("unix-dgram:/tmp/d.sock", Transport::UnixDgram),
            ("unix-dgram-abstract:bench", Transport::UnixDgramAbstract),
            ("udp:127.0.0.1:7000", Transport::Udp),
            ("udp:[::1]:7000", Transport::Udp6),
            ("udp-unconnected:127.0.0.1:7000", Transport::UdpUnconnected),
        ];
        for (text, transport) in cases {
            let endpoint: Endpoint = text.parse().unwrap();
            assert_eq!(endpoint.transport(), transport, "{text}");
            assert_eq!(endpoint.to_string(), text);
        }
    }

    #[test]
    fn rejects_malformed_addresses() {
        for bad in [
            "tcp:localhost",
            "tcp:127.0.0.1",
            "udp:localhost:5",
            "sctp:127.0.0.1:5",
            "nothing",
            "unix:",
        ] {
            assert!(bad.parse::<Endpoint>().is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn rejects_paths_longer_than_sun_path() {
        let ok = format!("unix:/{}", "a".repeat(MAX_UNIX_PATH - 1));
        assert!(ok.parse::<Endpoint>().is_ok());
        let long = format!("unix:/{}", "a".repeat(MAX_UNIX_PATH));
        let err = long.parse::<Endpoint>().unwrap_err();
        assert!(err.contains("108") || err.contains("107"), "{err}");
    }
}
