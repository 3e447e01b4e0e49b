//! The start of a datagram session, and its proof that the server asked for
//! answered.
//!
//! Every account can see a client's datagram socket (an autobound name in
//! `/proc/net/unix`, a port in `/proc/net/udp`) and send to it before the server
//! does. So the request carries a nonce only the server reads, and the greeting
//! must give it back; over a Unix socket the client also asks for each datagram's
//! sending process (`SO_PASSCRED`), and a greeting must come from the server's
//! process where that is known. Anything else that reaches the socket before the
//! session talks to the server alone refuses the trial, in one line that names
//! who sent it. Once the client's socket is connected to the server's, the kernel
//! lets no other sender reach it; `udp-unconnected`'s reads keep its peer's
//! datagrams alone (`transport/conn.rs`), and every reply carries the sequence
//! number of its message (`pingpong.rs`).

use super::server::protocol::{
    greeting_for, DatagramRequest, Nonce, Request, Secret, DATAGRAM_GREETING_LEN,
};
use super::IO_TIMEOUT;
use crate::transport::{Datagram, Endpoint, Peer, Received};
use anyhow::{anyhow, bail, Context, Result};
use std::io::ErrorKind;
use std::time::{Duration, Instant};

/// How long a datagram client waits for the greeting before it sends its request
/// again (a datagram may be lost); it gives up after [`IO_TIMEOUT`].
const RESEND: Duration = Duration::from_secs(1);

/// The server a datagram session is asked of.
pub(super) struct Server<'a> {
    pub endpoint: &'a Endpoint,
    pub address: &'a Peer,
    /// What its requests must carry, for a server sockbench started.
    pub secret: Option<Secret>,
    /// Its process, where known: a Unix greeting must come from it.
    pub pid: Option<u32>,
}

/// What a datagram that reached the client's socket is.
enum Heard {
    Greeting(Peer),
    Busy,
    /// Something else, from the server's own address.
    NotSockbench,
    /// Something from another socket: who sent it.
    Intruder(String),
}

/// Sends `request` to `server` (again every [`RESEND`] while no greeting comes,
/// for at most [`IO_TIMEOUT`]); returns the socket the proven greeting came from,
/// the server's own for this session, once `socket` talks to it alone (`connects`)
/// and nothing else waits in its queue. `stopped` says when to give up (Ctrl-C, or
/// the watchdog's wake).
pub(super) fn handshake(
    socket: &Datagram,
    server: &Server,
    request: Request,
    connects: bool,
    stopped: &dyn Fn() -> bool,
) -> Result<Peer> {
    let nonce = Nonce::random();
    let first = DatagramRequest {
        request,
        secret: server.secret.map_or([0; 16], Secret::bytes),
        nonce,
    }
    .encode();
    let endpoint = server.endpoint;
    socket.pass_credentials(true)?;
    socket.set_read_timeout(Some(RESEND))?;
    // One byte more than a greeting: a longer answer is no greeting.
    let mut answer = [0u8; DATAGRAM_GREETING_LEN + 1];
    let deadline = Instant::now() + IO_TIMEOUT;
    let from = loop {
        if stopped() {
            return Err(crate::error::Interrupted::default().into());
        }
        socket
            .send_to(&first, server.address)
            .with_context(|| format!("cannot send to {endpoint}"))?;
        let got = socket.receive(&mut answer, false);
        if stopped() {
            return Err(crate::error::Interrupted::default().into());
        }
        match got {
            Ok(received) => match heard(&received, &answer, nonce, server) {
                Heard::Greeting(from) => break from,
                Heard::Busy => return Err(busy(endpoint)),
                Heard::NotSockbench => {
                    bail!("{endpoint} is not a sockbench server (wrong greeting)")
                }
                Heard::Intruder(who) => return Err(intruder(endpoint, &who)),
            },
            Err(e)
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
                    && Instant::now() < deadline => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                bail!(
                    "no greeting from {endpoint}: nothing came back within {} s (is a \
                     sockbench server listening there?)",
                    IO_TIMEOUT.as_secs()
                )
            }
            Err(e) => return Err(anyhow!(e).context(format!("no greeting from {endpoint}"))),
        }
    };
    socket.talk_to(&from, connects)?;
    // From the connect on, the kernel lets only the server reach the socket; what
    // came before it may still wait in the queue, and must be the server's.
    // The server's session socket sends nothing before it is asked, so the first
    // datagram waiting, if any, tells.
    socket.set_nonblocking(true)?;
    let waiting = socket.receive(&mut answer, true);
    socket.set_nonblocking(false)?;
    match waiting {
        Ok(received) if !same(received.from.as_ref(), &from) => {
            return Err(intruder(endpoint, &sender(&received)))
        }
        Err(e) if e.kind() != ErrorKind::WouldBlock => return Err(e.into()),
        _ => {}
    }
    // Asking for every sender costs the server work on every send: not measured.
    socket.pass_credentials(false)?;
    socket.set_read_timeout(Some(IO_TIMEOUT))?;
    socket.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(from)
}

/// The one line for a server that answered `Server busy!`.
pub(super) fn busy(endpoint: &Endpoint) -> anyhow::Error {
    anyhow!(
        "the sockbench server at {endpoint} keeps as many sessions as it may; another \
         program holds them: stop it, or try again later"
    )
}

/// What `received` (its bytes in `answer`) is, for a client that sent `nonce`.
fn heard(received: &Received, answer: &[u8], nonce: Nonce, server: &Server) -> Heard {
    let bytes = &answer[..received.len.min(answer.len())];
    let from_server = same(received.from.as_ref(), server.address);
    let from_process = match (received.sender, server.pid) {
        (Some(sender), Some(pid)) => sender.pid == pid,
        _ => true,
    };
    match (&received.from, from_process) {
        (Some(from), true) if bytes == greeting_for(nonce, false) => Heard::Greeting(from.clone()),
        (Some(_), true) if bytes == greeting_for(nonce, true) => Heard::Busy,
        _ if from_server && from_process => Heard::NotSockbench,
        _ => Heard::Intruder(sender(received)),
    }
}

/// Whether `a` is `b`'s address.
fn same(a: Option<&Peer>, b: &Peer) -> bool {
    a.and_then(Peer::name).is_some_and(|a| Some(a) == b.name())
}

/// Who sent `received`, in words: its process and account over a Unix socket,
/// its address and account over UDP.
fn sender(received: &Received) -> String {
    let account = |uid: u32| {
        crate::system::account::user_name(uid)
            .map_or(format!("uid {uid}"), |n| format!("account {n}"))
    };
    match (&received.sender, &received.from) {
        // A process in a PID namespace this one cannot see shows as 0.
        (Some(p), _) if p.pid == 0 => format!("a process of {}", account(p.uid)),
        (Some(p), _) => format!("process {} ({})", p.pid, account(p.uid)),
        (None, Some(Peer::Ip(addr))) => match crate::system::peers::udp_owner(*addr) {
            Some(uid) => format!("{addr} ({})", account(uid)),
            None => addr.to_string(),
        },
        (None, Some(peer)) => peer
            .name()
            .map_or("an unnamed socket".into(), |n| n.to_string()),
        (None, None) => "an unnamed socket".into(),
    }
}

/// A session refused because something other than the server reached its socket:
/// a server is there, and the line says who else is.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct Intruded(String);

/// The one line for a datagram that did not come from the server.
fn intruder(endpoint: &Endpoint, who: &str) -> anyhow::Error {
    Intruded(format!(
        "a datagram from {who}, not from the sockbench server at {endpoint}, reached \
         sockbench's client socket before its session began; another program on this \
         machine is sending to sockbench's sockets, so the trial is refused rather than \
         measured"
    ))
    .into()
}
