//! Authentication on the throwaway cluster: the methods, the `pg_hba.conf` that
//! selects one, and a probe that asks the server which one it really uses.
//!
//! A reload is asynchronous and a bad `pg_hba.conf` is ignored with only a log line,
//! so after every switch sockbench sends a bare startup message and reads which
//! authentication request comes back (trust: none; password: cleartext; md5; SASL for
//! scram-sha-256). Only when the answer matches the method is the switch done.

use anyhow::{bail, Result};
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// The superuser sockbench administers its cluster with. Only peer authentication
/// admits it, and only for the OS account sockbench runs as: no password, TCP line or
/// trust line ever names it, so another local user cannot become it.
pub const ADMIN_ROLE: &str = "sockbench";
/// The role and database of the experiments: not a superuser, with no way to run
/// programs or read server files. Only sockbench reaches it: by its password on
/// every transport, by peer authentication, or, for `trust`, through the private
/// socket directory alone (see [`AuthMethod::private_only`]).
pub const ROLE: &str = "foo";
/// How role `foo` logs in outside the auth experiment, on every transport alike (so
/// that no transport pays for a different check): `md5` with an md5-stored password,
/// the cheapest check that needs the password (one more round trip, an MD5 on each
/// side; a new connection took the same time as under trust, within this machine's
/// resolution). Another local account can reach the loopback port and the abstract
/// socket, so nothing but a secret or the socket's permissions may stand between it
/// and the role.
pub const STANDING: AuthMethod = AuthMethod::Md5;
/// The pg_ident.conf map the `peer` experiment uses (OS account to `foo`).
const PEER_MAP: &str = "sockbench";
/// The pg_ident.conf map that admits the administrator (OS account to `sockbench`).
const ADMIN_MAP: &str = "sockbench-admin";

crate::named! {
    /// How a client proves who it is.
    pub enum AuthMethod as "authentication method" {
        Trust = "trust",
        Password = "password",
        Md5 = "md5",
        Scram = "scram-sha-256" | "scram",
        Peer = "peer",
    }
}

impl AuthMethod {
    /// Peer authentication exists only on Unix sockets.
    pub fn local_only(self) -> bool {
        self == AuthMethod::Peer
    }

    /// Trust lets in whoever connects, so the throwaway cluster offers it only on
    /// the Unix socket in its private directory, which no other account can open
    /// (0700, the server account's), and only while no abstract socket listens: a
    /// `local` line of `pg_hba.conf` admits both, and anyone can reach an abstract
    /// socket. Loopback TCP, reachable by every local account, never trusts.
    pub fn private_only(self) -> bool {
        self == AuthMethod::Trust
    }

    /// How the role's password is stored for this method. `md5` needs an md5 hash:
    /// with a SCRAM verifier the server silently runs SCRAM instead.
    pub fn password_storage(self) -> &'static str {
        match self {
            AuthMethod::Md5 => "md5",
            _ => "scram-sha-256",
        }
    }
}

/// Where role `foo` connects from over TCP to a cluster on the host: loopback.
pub const LOOPBACK: &[&str] = &["127.0.0.1/32", "::1/128"];
/// Where it connects from to a cluster in a container (`crate::container`): the
/// host's end of the veth pair and the client container, in RFC 2544's
/// benchmarking range that sockbench's networks take their addresses from (a
/// connection published on the host's 127.0.0.1 arrives masqueraded from the
/// host's end).
pub const CONTAINER_NETWORKS: &[&str] = &["198.18.0.0/15"];

/// The whole `pg_hba.conf` for a method, role `foo` connecting over TCP from
/// `clients` ([`LOOPBACK`] or [`CONTAINER_NETWORKS`]). Every line names its role and
/// database: the administrator on the Unix socket by peer only, the benchmark role
/// by `method` on the Unix sockets, and over TCP only by a method that needs its
/// password (peer is invalid on host lines, and trust is never offered there).
pub fn hba_conf(method: AuthMethod, clients: &[&str]) -> String {
    let local = match method {
        AuthMethod::Peer => format!("peer map={PEER_MAP}"),
        m => m.name().to_string(),
    };
    let host = if method.local_only() || method.private_only() {
        "reject"
    } else {
        method.name()
    };
    let mut text = format!(
        "# Written by sockbench for a throwaway cluster.\n\
         local all {ADMIN_ROLE} peer map={ADMIN_MAP}\n\
         local {ROLE} {ROLE} {local}\n"
    );
    for from in clients {
        text += &format!("host {ROLE} {ROLE} {from} {host}\n");
    }
    text
}

/// The `pg_ident.conf` that lets the OS account sockbench runs as, and no other, log
/// in as the administrator, and as `foo` under peer authentication.
pub fn ident_conf(os_user: &str) -> String {
    format!(
        "# Written by sockbench.\n{ADMIN_MAP} {os_user} {ADMIN_ROLE}\n{PEER_MAP} {os_user} {ROLE}\n"
    )
}

/// What the server answered to a bare startup message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupReply {
    /// An authentication request with this code (0: no authentication needed).
    Request(i32),
    /// An error: the connection is refused.
    Refused,
}

impl AuthMethod {
    /// The answer a correctly switched server gives on a Unix socket and over TCP.
    pub fn expected(self) -> (StartupReply, StartupReply) {
        let both = |code| (StartupReply::Request(code), StartupReply::Request(code));
        match self {
            AuthMethod::Password => both(3),
            AuthMethod::Md5 => both(5),
            AuthMethod::Scram => both(10),
            AuthMethod::Trust | AuthMethod::Peer => {
                (StartupReply::Request(0), StartupReply::Refused)
            }
        }
    }
}

/// Where to send a probe.
pub enum ProbeAddr<'a> {
    Unix(&'a std::path::Path),
    /// A host name or address and port.
    Host(&'a str, u16),
}

/// Sends a startup message for role `foo` and reads the first answer.
pub fn probe(addr: &ProbeAddr) -> Result<StartupReply> {
    probe_as(addr, ROLE, ROLE)
}

/// How long a probe waits for the server's answer; Ctrl-C is checked every
/// [`PROBE_SLICE`].
const PROBE_LIMIT: Duration = Duration::from_secs(10);
const PROBE_SLICE: Duration = Duration::from_millis(100);

/// Sends a startup message for `user` and `database` and reads the first answer.
pub fn probe_as(addr: &ProbeAddr, user: &str, database: &str) -> Result<StartupReply> {
    let timeout = Some(PROBE_SLICE);
    let mut stream: Box<dyn ReadWrite> = match addr {
        ProbeAddr::Unix(path) => {
            let s = std::os::unix::net::UnixStream::connect(path)?;
            s.set_read_timeout(timeout)?;
            Box::new(s)
        }
        ProbeAddr::Host(host, port) => {
            let s = std::net::TcpStream::connect((*host, *port))?;
            s.set_read_timeout(timeout)?;
            Box::new(s)
        }
    };
    let mut body = 196_608i32.to_be_bytes().to_vec(); // protocol 3.0
    for field in ["user", user, "database", database] {
        body.extend_from_slice(field.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut message = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    message.extend_from_slice(&body);
    stream.write_all(&message)?;
    let mut head = [0u8; 9];
    let deadline = Instant::now() + PROBE_LIMIT;
    read_before(&mut stream, &mut head[..1], deadline, addr)?;
    match head[0] {
        b'R' => {
            read_before(&mut stream, &mut head[1..9], deadline, addr)?;
            Ok(StartupReply::Request(i32::from_be_bytes([
                head[5], head[6], head[7], head[8],
            ])))
        }
        b'E' => Ok(StartupReply::Refused),
        other => bail!("unexpected answer {other:#04x} to a startup message"),
    }
}

/// Fills `buf` from a stream whose reads time out every [`PROBE_SLICE`], checking
/// Ctrl-C between them, until `deadline`.
fn read_before(
    stream: &mut dyn ReadWrite,
    mut buf: &mut [u8],
    deadline: Instant,
    addr: &ProbeAddr,
) -> Result<()> {
    while !buf.is_empty() {
        match stream.read(buf) {
            Ok(0) => bail!("{addr} closed the connection before answering a startup message"),
            Ok(n) => buf = &mut buf[n..],
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                crate::interrupt::check()?;
                if Instant::now() > deadline {
                    bail!(
                        "the PostgreSQL server at {addr} did not answer a startup message within \
                         {} s (stopped or stalled)",
                        PROBE_LIMIT.as_secs()
                    );
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl std::fmt::Display for ProbeAddr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeAddr::Unix(path) => write!(f, "{}", path.display()),
            ProbeAddr::Host(host, port) => write!(f, "{host} port {port}"),
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Probes until the server answers as `method` should, for at most 10 s.
pub fn wait_until_switched(method: AuthMethod, unix: &ProbeAddr, tcp: &ProbeAddr) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let expected = method.expected();
    loop {
        crate::interrupt::check()?;
        let seen = (probe(unix)?, probe(tcp)?);
        if seen == expected {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "the server did not switch to {method} authentication within 10 s \
                 (answers {seen:?}, expected {expected:?}); see its log"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hba_never_uses_peer_or_trust_on_host_lines() {
        let text = hba_conf(AuthMethod::Peer, LOOPBACK);
        assert!(text.contains("local foo foo peer map=sockbench\n"));
        assert!(text.contains("host foo foo 127.0.0.1/32 reject"));
        let text = hba_conf(AuthMethod::Trust, LOOPBACK);
        assert!(text.contains("local foo foo trust\n"), "{text}");
        assert!(
            text.contains("host foo foo 127.0.0.1/32 reject\n"),
            "{text}"
        );
        assert!(text.contains("host foo foo ::1/128 reject\n"), "{text}");
        assert!(hba_conf(AuthMethod::Md5, LOOPBACK).contains("host foo foo 127.0.0.1/32 md5"));
        // In a container: the same rule from sockbench's networks, and nothing else.
        let text = hba_conf(AuthMethod::Md5, CONTAINER_NETWORKS);
        assert!(text.contains("host foo foo 198.18.0.0/15 md5\n"), "{text}");
        assert!(!text.contains("127.0.0.1"), "{text}");
        let text = hba_conf(AuthMethod::Trust, CONTAINER_NETWORKS);
        assert!(
            text.contains("host foo foo 198.18.0.0/15 reject\n"),
            "{text}"
        );
        for (method, clients) in AuthMethod::ALL
            .into_iter()
            .flat_map(|m| [(m, LOOPBACK), (m, CONTAINER_NETWORKS)])
        {
            let text = hba_conf(method, clients);
            let trusting: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("host") && l.ends_with(" trust"))
                .collect();
            assert_eq!(trusting, Vec::<&str>::new(), "{method}");
        }
        assert!(!STANDING.private_only() && !STANDING.local_only());
    }

    #[test]
    fn the_administrator_is_admitted_by_peer_only_and_never_over_tcp() {
        for (method, clients) in AuthMethod::ALL
            .into_iter()
            .flat_map(|m| [(m, LOOPBACK), (m, CONTAINER_NETWORKS)])
        {
            let text = hba_conf(method, clients);
            let admin: Vec<&str> = text
                .lines()
                .filter(|l| l.split_whitespace().nth(2) == Some(ADMIN_ROLE))
                .collect();
            assert_eq!(
                admin,
                ["local all sockbench peer map=sockbench-admin"],
                "{method}"
            );
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                assert_ne!(fields[2], "all", "{method}: a line for every role: {line}");
            }
        }
        assert_eq!(
            ident_conf("alice"),
            "# Written by sockbench.\nsockbench-admin alice sockbench\nsockbench alice foo\n"
        );
    }

    #[test]
    fn method_names_round_trip() {
        for m in AuthMethod::ALL {
            assert_eq!(m.name().parse::<AuthMethod>(), Ok(m));
        }
        assert!("kerberos".parse::<AuthMethod>().is_err());
    }
}
