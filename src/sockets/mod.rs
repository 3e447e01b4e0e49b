//! The sockets family: sockbench's own server (`server/`), reached over every
//! transport, and the raw socket experiments against it, one file each.
//!
//! Every experiment runs one trial at a time against a [`Target`] (one transport of
//! a running sockbench server) and returns a [`Trial`]; `suite.rs` schedules them
//! through the harness and `describe.rs` says how each is reported.

pub(crate) mod args;
pub(crate) mod concurrent;
pub(crate) mod connect;
pub(crate) mod describe;
pub(crate) mod family;
mod first_contact;
mod handshake;
pub(crate) mod keys;
pub(crate) mod messages;
pub(crate) mod pingpong;
pub(crate) mod plan;
pub(crate) mod server;
pub(crate) mod stream;
pub(crate) mod suite;
mod watchdog;

use crate::cpu::{Meter, COUNTING_SHARE};
use crate::report::experiment::{Description, Family};
use crate::report::family::RunPart;
use crate::results::{Params, Trial};
use crate::sockets::keys::*;
use crate::transport::{Carries, Conn, Connector, Endpoint, TlsInfo, TlsVersion, Transport};
use anyhow::{bail, Context, Result};
use clap::{Args, FromArgMatches};
use server::protocol::{Request, Secret, BUSY, BYE, GREETING};
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::Duration;

/// The family as `families.rs` registers it.
pub static FAMILY: Family = Family {
    name: "sockets",
    transports: &Transport::ALL,
    server: None,
    experiments: &[
        &describe::CONNECT,
        &describe::PINGPONG,
        &describe::STREAM,
        &describe::CONCURRENT,
        &describe::MESSAGES,
    ],
    command: || {
        let about = "Raw transport experiments against sockbench's own server process";
        let command = args::SocketsArgs::augment_args(clap::Command::new("sockets"));
        crate::plan::Measuring::with_defaults(command).about(about)
    },
    plan: |matches| {
        let args = args::SocketsArgs::from_arg_matches(matches)?;
        Ok(Box::new(plan::SocketsPlan::from_args(&args)?))
    },
    run: Some(RunPart {
        suite: "sockets",
        says: "`sockets --quick` (connect, pingpong, stream over unix, tcp and tls)",
        options: |run| run,
        plan: family::quick,
    }),
    leftovers: &[family::SERVER],
    // Its arguments are addresses and sizes: nothing secret.
    redaction: None,
};

crate::named! {
    /// One raw socket workload.
    pub enum Experiment as "workload" {
        /// Connect, read the greeting, close: the cost of a new connection.
        Connect = "connect",
        /// Request and response of one size on one connection.
        PingPong = "pingpong",
        /// Bulk bytes one way.
        Stream = "stream",
        /// Many clients doing round trips at once.
        Concurrent = "concurrent",
        /// Messages one way as fast as the sender can: how many arrive, how many
        /// are lost.
        Messages = "messages",
    }
}

impl Experiment {
    /// How the experiment describes itself (also listed, in report order, in
    /// [`FAMILY`]).
    pub fn describe(self) -> &'static Description {
        match self {
            Experiment::Connect => &describe::CONNECT,
            Experiment::PingPong => &describe::PINGPONG,
            Experiment::Stream => &describe::STREAM,
            Experiment::Concurrent => &describe::CONCURRENT,
            Experiment::Messages => &describe::MESSAGES,
        }
    }

    /// Whether this workload means something on `transport`; if not, why, in
    /// words that finish "leaves out unix-dgram and udp: …".
    pub fn applies_to(self, transport: Transport) -> Result<(), &'static str> {
        let carries = transport.kind().carries();
        match self {
            Experiment::Connect if carries == Carries::Datagrams => {
                Err("a datagram socket has no connection to open")
            }
            Experiment::Stream if carries != Carries::Bytes => Err(
                "a stream of bytes needs a stream socket; one that keeps messages whole \
                     has the messages workload",
            ),
            Experiment::Messages if transport.kind() == crate::transport::SocketKind::Tls => {
                Err("it compares kinds of socket, not encryption")
            }
            _ => Ok(()),
        }
    }

    /// Runs one trial of this workload with `params` against `target`.
    pub fn run(
        self,
        target: &Target,
        params: &Params,
        budget: &Budget,
        meter: &mut Meter,
    ) -> Result<Trial> {
        let budget = &budget.for_trial(meter);
        match self {
            Experiment::Connect => connect::trial(target, budget.connect, meter),
            Experiment::PingPong => {
                pingpong::trial(target, param(params.get(SIZE))?, budget.pingpong, meter)
            }
            Experiment::Stream => stream::trial(
                target,
                param(params.get(WRITE_SIZE))?,
                params.get(STREAMS).unwrap_or(1) as usize,
                budget.stream_bytes,
                budget.stream,
                meter,
            ),
            Experiment::Concurrent => {
                let clients = param(params.get(CLIENTS))? as usize;
                concurrent::trial(target, clients, budget.concurrent, meter)
            }
            Experiment::Messages => messages::trial(
                target,
                param(params.get(SIZE))?,
                params.get(RECEIVE_BUFFER),
                budget.messages,
                meter,
            ),
        }
    }
}

fn param(value: Option<u64>) -> Result<u64> {
    value.context("experiment parameter missing")
}

/// How long each trial's timed loop may run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub connect: Duration,
    pub pingpong: Duration,
    pub stream: Duration,
    pub stream_bytes: u64,
    pub concurrent: Duration,
    pub messages: Duration,
}

impl Budget {
    pub const FULL: Budget = Budget {
        connect: Duration::from_millis(1000),
        pingpong: Duration::from_millis(500),
        stream: Duration::from_millis(2000),
        stream_bytes: 1 << 30,
        concurrent: Duration::from_millis(1000),
        messages: Duration::from_millis(500),
    };
    /// Half of what it was with 3 rounds: `--quick` (and `run`) runs twice the
    /// rounds, shorter, as more rounds narrow an interval faster than longer ones.
    pub const QUICK: Budget = Budget {
        connect: Duration::from_millis(125),
        pingpong: Duration::from_millis(75),
        stream: Duration::from_millis(150),
        stream_bytes: 96 << 20,
        concurrent: Duration::from_millis(150),
        messages: Duration::from_millis(75),
    };

    /// This budget, or for a counting trial's `meter` its share of it.
    pub fn for_trial(&self, meter: &Meter) -> Budget {
        if !meter.counting() {
            return *self;
        }
        Budget {
            connect: self.connect / COUNTING_SHARE,
            pingpong: self.pingpong / COUNTING_SHARE,
            stream: self.stream / COUNTING_SHARE,
            stream_bytes: self.stream_bytes / u64::from(COUNTING_SHARE),
            concurrent: self.concurrent / COUNTING_SHARE,
            messages: self.messages / COUNTING_SHARE,
        }
    }
}

/// One transport of a running server, ready to connect to.
pub struct Target {
    pub transport: Transport,
    pub endpoint: Endpoint,
    pub connector: Connector,
    /// The sockets its sessions block on, for the watchdog to wake.
    pub blocking: Blocking,
    /// What a datagram request must carry, for a server sockbench started.
    pub secret: Option<Secret>,
    /// The server's process, where known: a datagram greeting over a Unix socket
    /// must come from it.
    pub server_pid: Option<u32>,
}

/// The sockets a target's sessions block on. When the watchdog stops a stalled
/// server (or on Ctrl-C), a connection's blocked read returns as its socket closes,
/// but nothing tells a datagram socket its server is gone: the watchdog shuts these
/// down ([`Blocking::wake`]), which wakes their reads. A datagram session's socket
/// is held from its first request on, so a handshake waiting for a greeting wakes
/// too, and a session begun after the wake is shut down as it starts. No timer is
/// armed in the timed loops for it.
#[derive(Default)]
pub struct Blocking(Mutex<Held>);

#[derive(Default)]
struct Held {
    fds: Vec<RawFd>,
    woken: bool,
}

impl Blocking {
    /// Holds `fd` until the guard drops; once woken, shuts it down at once.
    fn hold(&self, fd: RawFd) -> Hold<'_> {
        let mut held = self.lock();
        held.fds.push(fd);
        if held.woken {
            shut_down(fd);
        }
        Hold { blocking: self, fd }
    }

    /// Shuts down every socket held, and every one held from now on, waking
    /// their blocked reads and writes.
    pub fn wake(&self) {
        let mut held = self.lock();
        held.woken = true;
        held.fds.iter().copied().for_each(shut_down);
    }

    fn woken(&self) -> bool {
        self.lock().woken
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Shuts down a socket held in [`Blocking`].
fn shut_down(fd: RawFd) {
    // SAFETY: a socket its session holds open until its guard has released it,
    // which the lock around every call keeps it from doing meanwhile.
    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
}

/// A socket held in [`Blocking`] until this drops, before the socket closes (a
/// closed descriptor's number may name another file next).
struct Hold<'a> {
    blocking: &'a Blocking,
    fd: RawFd,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.blocking.lock().fds.retain(|&f| f != self.fd);
    }
}

/// A session with the server: its socket, held where the watchdog can wake it,
/// and for a datagram socket a goodbye when it ends (an empty datagram; a server
/// that misses it ends the session once it has heard nothing for a minute).
pub struct Session<'a> {
    // Released before the socket closes: fields drop in this order.
    _held: Hold<'a>,
    conn: Conn,
    datagrams: bool,
}

impl std::ops::Deref for Session<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.conn
    }
}

impl std::ops::DerefMut for Session<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.datagrams && self.conn.set_nonblocking(true).is_ok() {
            let _ = self.conn.write(BYE);
        }
    }
}

impl Target {
    pub fn new(endpoint: Endpoint, tls_version: TlsVersion) -> Result<Target> {
        Ok(Target {
            transport: endpoint.transport(),
            connector: Connector::new(&endpoint, tls_version)?,
            endpoint,
            blocking: Blocking::default(),
            secret: None,
            server_pid: None,
        })
    }

    /// This target of a server known to run as process `pid`, whose datagram
    /// requests carry `secret` (a server sockbench started).
    pub fn of_server(mut self, pid: Option<u32>, secret: Option<Secret>) -> Target {
        self.server_pid = pid;
        self.secret = secret;
        self
    }

    /// Connects and checks the greeting: the start of every session.
    pub fn open(&self) -> Result<Conn> {
        let mut conn = self
            .connector
            .connect()
            .with_context(|| format!("cannot connect to {}", self.endpoint))?;
        conn.set_read_timeout(Some(IO_TIMEOUT))?;
        let mut greeting = [0u8; GREETING.len()];
        conn.read_exact(&mut greeting)
            .map_err(named_timeout)
            .with_context(|| format!("no greeting from {}", self.endpoint))?;
        if &greeting == BUSY {
            return Err(handshake::busy(&self.endpoint));
        }
        if &greeting != GREETING {
            bail!(
                "{} is not a sockbench server (wrong greeting)",
                self.endpoint
            );
        }
        Ok(conn)
    }

    /// Opens a session for `request`.
    pub fn session(&self, request: Request) -> Result<Session<'_>> {
        let Some(client) = self.connector.datagram() else {
            let mut conn = self.open()?;
            let held = self.blocking.hold(conn.as_raw_fd());
            conn.write_all(&request.encode())?;
            return Ok(Session {
                conn,
                _held: held,
                datagrams: false,
            });
        };
        let (socket, server, connects) =
            client.with_context(|| format!("cannot open a socket to reach {}", self.endpoint))?;
        // Held from the first request on, so that the wait for a greeting wakes too.
        let held = self.blocking.hold(socket.as_raw_fd());
        let server = handshake::Server {
            endpoint: &self.endpoint,
            address: server,
            secret: self.secret,
            pid: self.server_pid,
        };
        // Woken by the watchdog (its socket shut down), or Ctrl-C while a server
        // sockbench does not watch keeps silent.
        let stopped = || self.blocking.woken() || crate::interrupt::interrupted();
        let from = handshake::handshake(&socket, &server, request, connects, &stopped)?;
        Ok(Session {
            conn: socket.into_conn(&from, connects),
            _held: held,
            datagrams: true,
        })
    }

    /// Connections the server saw close right after the greeting so far.
    pub fn server_count(&self) -> Result<u64> {
        let mut conn = self.session(Request::Count)?;
        let mut count = [0u8; 8];
        conn.read_exact(&mut count)
            .map_err(named_timeout)
            .with_context(|| format!("{} did not report its count", self.endpoint))?;
        Ok(u64::from_le_bytes(count))
    }

    /// The TLS version and cipher this target negotiates, for TLS targets.
    pub fn tls_info(&self) -> Result<Option<TlsInfo>> {
        if self.transport != Transport::Tls {
            return Ok(None);
        }
        Ok(self.open()?.tls_info())
    }
}

/// A read on a benchmark connection that takes longer than this means the server
/// is gone or stuck; it fails the trial instead of hanging it.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A read that ran into the receive timeout says so, instead of the "Resource
/// temporarily unavailable" the system reports for it.
pub(super) fn named_timeout(e: std::io::Error) -> std::io::Error {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("timed out after {} s", IO_TIMEOUT.as_secs()),
        ),
        // Nothing at all, then the end: a sockbench server that exited, or one that
        // serves TLS there and waited in vain for a TLS hello.
        std::io::ErrorKind::UnexpectedEof => std::io::Error::new(
            e.kind(),
            "the server closed the connection before its greeting (it exited or was killed, \
             or it serves TLS there: use the tls transport)",
        ),
        _ => e,
    }
}

/// Clears a connection's receive timeout before a timed loop: with one set, every
/// blocking read arms a kernel timer, which would be measured. The warm-up before
/// has shown the server answers, and a server that dies still ends the loop,
/// because its socket closes.
fn ready_for_timing(conn: &Conn) -> std::io::Result<()> {
    conn.set_read_timeout(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn each_workload_is_described_by_its_own_entry_in_the_family() {
        for w in Experiment::ALL {
            assert_eq!(w.describe().id, format!("sockets.{w}"));
            assert!(FAMILY.experiments.contains(&w.describe()), "{w}");
        }
    }

    /// A datagram server that has stopped answering holds a session's handshake
    /// (its request goes again every second, for 10 s): the watchdog's wake ends
    /// it at once, and a session begun after the wake ends as it starts.
    #[test]
    fn a_wake_ends_a_datagram_handshake_and_every_later_session() {
        let dir = tempfile::tempdir().unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let unix_path = dir.path().join("silent.sock");
        let _unix = std::os::unix::net::UnixDatagram::bind(&unix_path).unwrap();
        let silent = [
            format!("udp:{}", udp.local_addr().unwrap()),
            format!("udp-unconnected:{}", udp.local_addr().unwrap()),
            format!("unix-dgram:{}", unix_path.display()),
        ];
        for endpoint in silent {
            let target = Target::new(endpoint.parse().unwrap(), TlsVersion::V1_3).unwrap();
            let started = Instant::now();
            let handshake = std::thread::scope(|scope| {
                scope.spawn(|| {
                    std::thread::sleep(Duration::from_millis(300));
                    target.blocking.wake();
                });
                target.session(Request::Count).map(|_| ())
            });
            let took = started.elapsed();
            let e = handshake.expect_err(&endpoint);
            assert!(e.is::<crate::error::Interrupted>(), "{endpoint}: {e:#}");
            assert!(took < Duration::from_millis(900), "{endpoint}: {took:?}");
            let started = Instant::now();
            let later = target.session(Request::Count).map(|_| ());
            assert!(later.is_err(), "{endpoint}");
            assert!(started.elapsed() < Duration::from_millis(100), "{endpoint}");
            assert!(target.blocking.lock().fds.is_empty(), "{endpoint}");
        }
    }
}
