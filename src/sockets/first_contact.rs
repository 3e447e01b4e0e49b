//! The first contact with a server named by `--server`: is it sockbench's?
//!
//! A sockbench server sends its 12-byte greeting as soon as it accepts (`server/
//! protocol.rs`), so anything else is known within a second, before any trial: a
//! peer that sends other bytes is shown them; a silent one is probed, each probe on
//! a connection of its own, because most servers answer only once asked: an HTTP
//! request (HTTP servers, and a PostgreSQL server, which closes on it), then
//! PostgreSQL's SSLRequest (8 bytes, answered with one byte, `S` or `N`), then a TLS
//! hello (a sockbench TLS server named with `tcp:`). A TLS handshake that fails is
//! told apart from a sockbench server without TLS there.
//!
//! The answers are shown sanitised and cut: they come from a program sockbench
//! knows nothing of.

use super::server::protocol::GREETING;
use super::Target;
use crate::transport::{Connector, Endpoint, SocketKind, Transport};
use anyhow::{anyhow, Result};
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// How long a sockbench server may take to greet (it greets at once on accept).
pub const GREETING_WAIT: Duration = Duration::from_secs(1);
/// How long each probe waits for an answer.
const PROBE_WAIT: Duration = Duration::from_millis(250);
/// Bytes of an answer kept to be shown.
const KEPT: usize = 64;
/// Characters of an answer shown.
const SHOWN: usize = 40;

/// The probes, in order: what is sent, and what an answer to it is called.
const PROBES: [(&[u8], &str); 2] = [
    (b"HEAD / HTTP/1.0\r\n\r\n", "an HTTP request"),
    // Length 8, then the SSLRequest code 80877103.
    (
        &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f],
        "PostgreSQL's SSLRequest",
    ),
];

/// What a peer did in the time it was given.
#[derive(Debug, PartialEq)]
enum Behaviour {
    /// Bytes, at most [`KEPT`] of them.
    Bytes(Vec<u8>),
    /// The connection closed without a byte.
    Closed,
    /// Nothing within the wait.
    Silent,
}

/// Ok when `target` greets like a sockbench server; otherwise one line saying what
/// answered there instead, and how to start a sockbench server.
pub fn check(target: &Target) -> Result<()> {
    let endpoint = &target.endpoint;
    if target.connector.datagram().is_some() {
        // No connection to look at: a session either starts or says why not.
        let request = crate::sockets::server::protocol::Request::PingPong { size: 1 };
        return target.session(request).map(drop).map_err(|e| {
            if e.is::<super::handshake::Intruded>() {
                return e;
            }
            e.context(format!(
                "no sockbench server answers at {endpoint}; start one with `sockbench serve \
                 --listen {endpoint}`"
            ))
        });
    }
    let conn = target.connector.connect_within(GREETING_WAIT);
    let mut conn = match conn {
        Ok(conn) => conn,
        Err(e) if e.kind() == io::ErrorKind::TimedOut => {
            return Err(not_ours(
                endpoint,
                &format!(
                    "sent nothing within {} s in answer to a TLS hello",
                    GREETING_WAIT.as_secs()
                ),
            ))
        }
        Err(e) if endpoint.transport.kind() == SocketKind::Tls && is_handshake(&e) => {
            return Err(tls_failed(endpoint, &e));
        }
        Err(e) => {
            return Err(match crate::error::Unreachable::why(&e) {
                Some(why) => crate::error::Unreachable {
                    server: "sockbench",
                    address: endpoint.to_string(),
                    why: why.to_string(),
                    start: Some(format!("sockbench serve --listen {endpoint}")),
                    option: "--server",
                }
                .into(),
                None => anyhow!("cannot connect to {endpoint}: {e}"),
            })
        }
    };
    match listen(&mut conn, GREETING_WAIT)? {
        Behaviour::Bytes(bytes) if bytes == GREETING => return Ok(()),
        Behaviour::Bytes(bytes) => {
            let what = format!("answered with {}", described(&bytes, endpoint.transport));
            return Err(not_ours(endpoint, &what));
        }
        Behaviour::Closed => {
            return Err(not_ours(endpoint, "closed the connection without a word"))
        }
        Behaviour::Silent => {}
    }
    drop(conn);
    let silent = format!("sent nothing within {} s", GREETING_WAIT.as_secs());
    // A TLS server closes on a probe that is not a TLS hello; a silent one of
    // another kind does not, and is not asked for a TLS handshake too.
    let mut closed = false;
    for (probe, name) in PROBES {
        let Ok(mut conn) = target.connector.connect_within(PROBE_WAIT) else {
            break;
        };
        if conn.write_all(probe).is_err() {
            closed = true;
            continue;
        }
        let answer = listen(&mut conn, PROBE_WAIT)?;
        closed |= answer == Behaviour::Closed;
        if let Behaviour::Bytes(bytes) = answer {
            let what = format!(
                "{silent}, then answered {name} with {}",
                described(&bytes, endpoint.transport)
            );
            if probe == PROBES[1].0 && matches!(&bytes[..], b"S" | b"N") {
                return Err(anyhow!(
                    "{endpoint} {what}: it is a PostgreSQL server, not a sockbench server; \
                     measure it with `sockbench postgres`, or start a sockbench server with \
                     `sockbench serve --listen {}`",
                    example(endpoint.transport)
                ));
            }
            return Err(not_ours(endpoint, &what));
        }
    }
    if closed && endpoint.transport == Transport::Tcp && speaks_tls(endpoint) {
        let tls = Endpoint {
            transport: Transport::Tls,
            address: endpoint.address.clone(),
        };
        return Err(anyhow!(
            "{endpoint} {silent}, then completed a TLS handshake: it serves TLS there; \
             measure it as --server {tls}"
        ));
    }
    Err(not_ours(endpoint, &silent))
}

/// Whether a TLS handshake with `endpoint` (plain TCP on IPv4) succeeds.
fn speaks_tls(endpoint: &Endpoint) -> bool {
    let tls = Endpoint {
        transport: Transport::Tls,
        address: endpoint.address.clone(),
    };
    Connector::new(&tls, crate::transport::TlsVersion::V1_2)
        .is_ok_and(|c| c.connect_within(PROBE_WAIT).is_ok())
}

/// "`endpoint` `what`: it is not a sockbench server", and how to start one.
fn not_ours(endpoint: &Endpoint, what: &str) -> anyhow::Error {
    anyhow!(
        "{endpoint} {what}: it is not a sockbench server; start one with `sockbench serve \
         --listen {example}` and give that address to --server, or leave out --server to \
         have sockbench start its own",
        example = example(endpoint.transport)
    )
}

/// Whether a failed TLS connect failed in the handshake (rather than in the TCP
/// connect, such as a refused connection).
fn is_handshake(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Other
}

/// A TLS handshake failed: a sockbench server without TLS there, or something
/// else, shown by what it says over plain TCP.
fn tls_failed(endpoint: &Endpoint, e: &io::Error) -> anyhow::Error {
    let plain = Endpoint {
        transport: Transport::Tcp,
        address: endpoint.address.clone(),
    };
    let answer = Connector::new(&plain, crate::transport::TlsVersion::V1_3)
        .ok()
        .and_then(|c| c.connect().ok())
        .and_then(|mut conn| listen(&mut conn, GREETING_WAIT).ok());
    let failed = format!(
        "failed the TLS handshake ({})",
        crate::units::shown(&e.to_string())
    );
    match answer {
        Some(Behaviour::Bytes(bytes)) if bytes == GREETING => anyhow!(
            "{endpoint} {failed}, and a plain connection was greeted: it is a sockbench \
             server without TLS there; measure it as --server {plain}"
        ),
        Some(Behaviour::Bytes(bytes)) => not_ours(
            endpoint,
            &format!(
                "{failed}, and over plain TCP answered with {}",
                described(&bytes, Transport::Tcp)
            ),
        ),
        _ => not_ours(endpoint, &failed),
    }
}

/// Reads what the peer sends within `wait`: up to [`KEPT`] bytes, stopping early
/// once a greeting's worth has come.
fn listen(conn: &mut crate::transport::Conn, wait: Duration) -> Result<Behaviour> {
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; KEPT];
    let mut got = 0;
    while got < GREETING.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        conn.set_read_timeout(Some(left))?;
        match conn.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A timeout, or a reset: what came so far is the answer.
            Err(_) => break,
        }
    }
    Ok(match got {
        0 if Instant::now() < deadline => Behaviour::Closed,
        0 => Behaviour::Silent,
        n => Behaviour::Bytes(buf[..n].to_vec()),
    })
}

/// An answer as a message shows it: its first line in quotes, bytes that are not
/// printable ASCII as `\xNN`, cut to [`SHOWN`] characters; a TLS record is named.
fn described(bytes: &[u8], transport: Transport) -> String {
    let line = bytes
        .split(|&b| b == b'\r' || b == b'\n')
        .find(|l| !l.is_empty())
        .unwrap_or(bytes);
    let mut text = String::new();
    for &b in line {
        match b {
            b'\'' | b'\\' => text.push_str(&format!("\\{}", b as char)),
            0x20..=0x7e => text.push(b as char),
            _ => text.push_str(&format!("\\x{b:02x}")),
        }
    }
    if let Some((cut, _)) = text.char_indices().nth(SHOWN) {
        text.truncate(cut);
        text.push('…');
    }
    // A TLS record: content type 20 to 23, then major version 3.
    let tls = matches!(bytes, [20..=23, 3, ..]) && transport == Transport::Tcp;
    match tls {
        true => format!("'{text}' (TLS: it serves TLS there; try tls: instead)"),
        false => format!("'{text}'"),
    }
}

/// An address of the same transport for the message's `sockbench serve` example.
fn example(transport: Transport) -> &'static str {
    match transport {
        Transport::Unix => "unix:/tmp/sockbench.sock",
        Transport::UnixAbstract => "unix-abstract:sockbench",
        Transport::Tcp => "tcp:127.0.0.1:7000",
        Transport::Tcp6 => "tcp:[::1]:7000",
        Transport::Tls => "tls:127.0.0.1:7443",
        Transport::UnixSeqpacket => "unix-seqpacket:/tmp/sockbench-seqpacket.sock",
        Transport::UnixDgram => "unix-dgram:/tmp/sockbench-dgram.sock",
        Transport::UnixDgramAbstract => "unix-dgram-abstract:sockbench",
        Transport::Udp => "udp:127.0.0.1:7000",
        Transport::Udp6 => "udp:[::1]:7000",
        Transport::UdpUnconnected => "udp-unconnected:127.0.0.1:7000",
        Transport::Veth
        | Transport::Bridge
        | Transport::Published
        | Transport::DockerProxy
        | Transport::UnixShared => example(transport.within()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_shown_as_its_first_line_escaped_and_cut() {
        let http = b"HTTP/1.1 400 Bad Request\r\nServer: x\r\n\r\n";
        assert_eq!(
            described(http, Transport::Tcp),
            "'HTTP/1.1 400 Bad Request'"
        );
        assert_eq!(described(b"N", Transport::Tcp), "'N'");
        assert_eq!(
            described(b"\x1b[2Jit's\x00", Transport::Unix),
            "'\\x1b[2Jit\\'s\\x00'"
        );
        let long = described(&[b'a'; 64], Transport::Tcp);
        assert_eq!(long.chars().count(), SHOWN + 3, "{long}");
        assert!(described(&[0x15, 3, 1, 0, 2, 2, 0x46], Transport::Tcp).contains("TLS"));
        assert!(!described(&[0x15, 3, 1, 0, 2, 2, 0x46], Transport::Tls).contains("TLS"));
        assert!(!described(&[0x15, 3, 1, 0, 2, 2, 0x46], Transport::Unix).contains("TLS"));
    }

    #[test]
    fn every_example_address_parses_as_its_transport() {
        for t in Transport::ALL
            .into_iter()
            .filter(|t| t.crossing().is_none())
        {
            let e: Endpoint = example(t).parse().unwrap();
            assert_eq!(e.transport, t);
        }
    }
}
