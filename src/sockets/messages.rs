//! `messages`: one way, as fast as the sender can. The client sends `size`-byte
//! messages for the trial's time; the server receives and counts them; then the
//! client sends the end and the server answers with its count. The figures are the
//! messages received per second, from the first send until the count came back, and
//! what the sender sent that never arrived: a UDP message that finds the receiver's
//! buffer full is dropped, where a Unix datagram's sender (and a stream's) waits for
//! room instead, which the share of sends that waited says.
//!
//! Every send is tried without waiting first (`MSG_DONTWAIT`); only one that finds
//! no room waits, in `poll`, a slice at a time ([`crate::wait`]): Ctrl-C is seen
//! within a slice, and a receiver that takes nothing for [`crate::wait::LIMIT`] (a
//! stopped server sockbench does not watch) ends the trial in one line; the
//! watchdog wakes a wait on sockbench's own server at once ([`super::Blocking`]).

use super::keys::*;
use super::Target;
use crate::cpu::Meter;
use crate::harness::measure::rate;
use crate::results::{Metrics, Trial};
use crate::sockets::server::protocol::{Request, DATA, END};
use crate::transport::{closed_by_peer, Carries, Conn};
use crate::wait::{Patience, LIMIT, SLICE};
use anyhow::{bail, Context, Result};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Sends between two looks at the clock.
const SENDS_PER_CLOCK: u32 = 64;
/// How long a datagram client waits for the count before it sends the end again
/// (the end can be lost as any datagram can), and how often at most.
const END_WAIT: Duration = Duration::from_millis(100);
const END_TRIES: u32 = 100;

pub fn trial(
    target: &Target,
    size: u64,
    receive_buffer: Option<u64>,
    budget: Duration,
    meter: &mut Meter,
) -> Result<Trial> {
    let size = usize::try_from(size)?;
    let mut conn = target.session(Request::Messages {
        size: u32::try_from(size)?,
        receive_buffer: receive_buffer.map_or(Ok(0), u32::try_from)?,
    })?;
    let mut message = vec![0x6du8; size];
    message[0] = DATA;
    let datagrams = target.transport.kind().carries() == Carries::Datagrams;

    meter.start();
    let start = Instant::now();
    let to = To::of(&conn);
    let sent = send_for(conn.as_raw_fd(), &to, &message, budget)
        .map_err(|e| interrupted_or(closed_by_peer(e)))
        .with_context(|| format!("{} stopped taking messages", target.endpoint))?;
    message[0] = END;
    let received = count(&mut conn, &message, datagrams)
        .map_err(interrupted_or)
        .with_context(|| format!("{} did not say how many messages came", target.endpoint))?;
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    meter.stop(received);

    if received > sent.messages {
        bail!(
            "{} counted {received} messages of the {} sent: another client's?",
            target.endpoint,
            sent.messages
        );
    }
    let waited = sent.waited as f64 / sent.messages.max(1) as f64;
    Ok(Trial {
        metrics: Metrics::default()
            .with(MSGS_PER_S, Some(rate(received, elapsed_ns)))
            .with(SENT, Some(sent.messages))
            .with(RECEIVED, Some(received))
            .with(LOST, Some(sent.messages - received))
            .with(WAITED_SHARE, Some(waited)),
        // The operations a share of lost messages is of.
        count: sent.messages,
        elapsed_ns,
        ..Trial::default()
    })
}

/// A wait that Ctrl-C cut short as [`crate::error::Interrupted`], which ends the
/// run with what it kept; any other error as it is.
fn interrupted_or(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e = e.into();
    match e.downcast_ref::<io::Error>() {
        Some(io) if io.kind() == io::ErrorKind::Interrupted => {
            crate::error::Interrupted::default().into()
        }
        _ => e,
    }
}

/// What the sender did.
struct Sent {
    messages: u64,
    /// Sends that found no room and waited for it.
    waited: u64,
}

/// Where each send goes: to the socket's peer, or (an unconnected UDP socket) to
/// an address named in every send, converted once.
enum To {
    Peer,
    Address(libc::sockaddr_storage, libc::socklen_t),
}

impl To {
    fn of(conn: &Conn) -> To {
        let Conn::UdpTo(_, addr) = conn else {
            return To::Peer;
        };
        // SAFETY: an all-zero sockaddr_storage is valid; each arm fills the part
        // its family uses, which fits in it.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let len = match addr {
            SocketAddr::V4(a) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: a sockaddr_in fits in a sockaddr_storage.
                unsafe {
                    std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin)
                };
                std::mem::size_of::<libc::sockaddr_in>()
            }
            SocketAddr::V6(a) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    sin6_flowinfo: a.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                };
                // SAFETY: a sockaddr_in6 fits in a sockaddr_storage.
                unsafe {
                    std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6)
                };
                std::mem::size_of::<libc::sockaddr_in6>()
            }
        };
        To::Address(storage, len as libc::socklen_t)
    }
}

/// Sends `message` on socket `fd` over and over until `budget` has passed.
fn send_for(fd: RawFd, to: &To, message: &[u8], budget: Duration) -> io::Result<Sent> {
    let end = Instant::now() + budget;
    let mut sent = Sent {
        messages: 0,
        waited: 0,
    };
    let mut patience = Patience::new(LIMIT);
    loop {
        for _ in 0..SENDS_PER_CLOCK {
            send_whole(fd, to, message, &mut sent.waited, &mut patience)?;
            sent.messages += 1;
        }
        if Instant::now() >= end {
            return Ok(sent);
        }
    }
}

/// Sends all of `message`: a datagram or record goes whole or not at all; a stream
/// may take part of it. Each send that finds no room waits for it, counted in
/// `waited`.
#[inline]
fn send_whole(
    fd: RawFd,
    to: &To,
    message: &[u8],
    waited: &mut u64,
    patience: &mut Patience,
) -> io::Result<()> {
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    let mut at = 0;
    while at < message.len() {
        let rest = &message[at..];
        // SAFETY: `rest` is valid for reads of its length, an address for its
        // length; `fd` is the session's socket, open for the whole trial.
        let n = unsafe {
            match to {
                To::Peer => libc::send(fd, rest.as_ptr().cast(), rest.len(), flags),
                To::Address(addr, len) => libc::sendto(
                    fd,
                    rest.as_ptr().cast(),
                    rest.len(),
                    flags,
                    (addr as *const libc::sockaddr_storage).cast(),
                    *len,
                ),
            }
        };
        if n >= 0 {
            at += n as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => {
                *waited += 1;
                wait_for_room(fd, patience)?;
            }
            io::ErrorKind::Interrupted => {}
            _ => return Err(e),
        }
    }
    Ok(())
}

/// Waits until socket `fd` takes more, or is shut down, a slice at a time, for at
/// most `patience`'s limit.
fn wait_for_room(fd: RawFd, patience: &mut Patience) -> io::Result<()> {
    patience.restart();
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let slice = SLICE.as_millis() as libc::c_int;
    loop {
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut p, 1, slice) } {
            0 => {}
            n if n > 0 => return Ok(()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
        patience.check(|| "the receiver took no message".into())?;
    }
}

/// Sends the end (`end`, a message that starts with [`END`]) and reads the count
/// the server answers with; over datagrams, the end goes again every [`END_WAIT`]
/// while no count comes.
fn count(conn: &mut Conn, end: &[u8], datagrams: bool) -> Result<u64> {
    let tries = if datagrams {
        conn.set_read_timeout(Some(END_WAIT))?;
        END_TRIES
    } else {
        conn.set_read_timeout(Some(super::IO_TIMEOUT))?;
        1
    };
    let mut answer = [0u8; 8];
    for _ in 0..tries {
        conn.write_all(end).map_err(closed_by_peer)?;
        match conn.read_message(&mut answer) {
            Ok(()) => return Ok(u64::from_le_bytes(answer)),
            Err(e)
                if datagrams
                    && matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
            {
                if crate::interrupt::interrupted() {
                    return Err(io::Error::from(io::ErrorKind::Interrupted).into());
                }
            }
            Err(e) => return Err(super::named_timeout(closed_by_peer(e)).into()),
        }
    }
    bail!("no count within {} s", (END_WAIT * tries).as_secs_f64())
}
