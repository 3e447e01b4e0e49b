//! The accept stage: accept, greet and read each client's request header without
//! ever waiting on one client.
//!
//! One thread per listener runs an epoll loop over the listener and every
//! connection still in its opening (TLS handshake, greeting, header). A client that
//! connects and then says nothing holds only its own entry, which is dropped after
//! [`HANDSHAKE_TIMEOUT`]; everyone else is served meanwhile. A connect-experiment
//! client costs the server accept, write, a registration, one wait (shared with the
//! next client's accept), read and close: six system calls, where a server that
//! blocks on each client makes five (accept, a receive timeout, write, read, close);
//! one more is the price of never waiting on one (counted with `strace -c`). Once a header is complete the connection leaves the loop,
//! blocking again, for a session thread of its own. Connections in their opening
//! and sessions are bounded ([`MAX_OPENINGS`], [`Slot`]): past either, a new
//! connection is told [`BUSY`] and closed.

use super::protocol::{Request, BUSY, GREETING, HEADER_LEN, MAX_SESSIONS};
use super::{session, Slot, HANDSHAKE_TIMEOUT};
use crate::transport::poller::{Poller, ANY_CHANGE, INPUT, READABLE};
use crate::transport::{Accepted, Conn, Listener};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most connections kept in their opening at once: as many as sessions.
const MAX_OPENINGS: usize = MAX_SESSIONS;

/// A connection in its opening.
struct Opening {
    stage: Option<Accepted>,
    greeted: usize,
    header: [u8; HEADER_LEN],
    got: usize,
    since: Instant,
}

/// What driving an opening came to.
enum Driven {
    /// Waiting for the client.
    Waiting,
    /// The client closed right after the greeting: one connect-experiment connection.
    Closed,
    /// A whole request header.
    Request(Conn, Request),
}

/// Serves `listener` until the process exits.
pub fn accept_loop(listener: Listener) {
    let Ok(mut poller) = Poller::new() else {
        return;
    };
    if listener.set_nonblocking().is_err() || poller.add(listener.as_raw_fd(), READABLE).is_err() {
        return;
    }
    let closed_after_greeting = Arc::new(AtomicU64::new(0));
    let mut open: HashMap<RawFd, Opening> = HashMap::new();
    loop {
        let Ok(ready) = poller.wait(Duration::from_secs(1)) else {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        for fd in ready {
            if fd == listener.as_raw_fd() {
                accept_one(&listener, &poller, &mut open);
            } else {
                drive(fd, &poller, &mut open, &closed_after_greeting);
            }
        }
        let now = Instant::now();
        open.retain(|_, o| now.duration_since(o.since) < HANDSHAKE_TIMEOUT);
    }
}

/// Accepts one waiting client (the listener is reported again while more wait),
/// greets it and watches it for its answer.
fn accept_one(listener: &Listener, poller: &Poller, open: &mut HashMap<RawFd, Opening>) {
    let accepted = match listener.accept() {
        Ok(a) => a,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionAborted
            ) =>
        {
            return
        }
        Err(_) => {
            // Out of descriptors or memory: give closing clients a moment.
            std::thread::sleep(Duration::from_millis(1));
            return;
        }
    };
    if open.len() >= MAX_OPENINGS || Slot::all_taken() {
        // Told at once, without waiting, and closed: whatever other accounts open,
        // the server's sockets and threads stay bounded.
        if let Accepted::Open(mut conn) = accepted {
            let _ = conn.write(BUSY);
        }
        return;
    }
    let fd = accepted.as_raw_fd();
    let mut opening = Opening {
        stage: Some(accepted),
        greeted: 0,
        header: [0; HEADER_LEN],
        got: 0,
        since: Instant::now(),
    };
    // The greeting goes at once (a client sends nothing before it has it, so there
    // is nothing to read yet); registering then looks at the socket, so a reply that
    // comes before the registration is not missed.
    if let Some(Accepted::Open(conn)) = &mut opening.stage {
        if greet(conn, &mut opening.greeted).is_err() {
            return;
        }
    }
    let sending =
        opening.greeted < GREETING.len() || matches!(opening.stage, Some(Accepted::Handshake(_)));
    if poller
        .add(fd, if sending { ANY_CHANGE } else { INPUT })
        .is_ok()
    {
        open.insert(fd, opening);
    }
}

/// Advances the opening on `fd`; a finished one leaves the loop.
fn drive(
    fd: RawFd,
    poller: &Poller,
    open: &mut HashMap<RawFd, Opening>,
    closed_after_greeting: &Arc<AtomicU64>,
) {
    let Some(opening) = open.get_mut(&fd) else {
        return;
    };
    match advance(opening) {
        Ok(Driven::Waiting) => {}
        Ok(Driven::Closed) => {
            open.remove(&fd);
            closed_after_greeting.fetch_add(1, Ordering::SeqCst);
        }
        Ok(Driven::Request(conn, request)) => {
            open.remove(&fd);
            // The session thread reads it from now on, blocking.
            if poller.remove(fd).is_err() || conn.set_nonblocking(false).is_err() {
                return;
            }
            if request == Request::Count {
                // Every connect-experiment client closed before asking for the count;
                // see those closes before answering.
                let fds: Vec<RawFd> = open.keys().copied().collect();
                for other in fds {
                    drive(other, poller, open, closed_after_greeting);
                }
            }
            let Some(slot) = Slot::take() else {
                return;
            };
            let counter = Arc::clone(closed_after_greeting);
            let _ = std::thread::Builder::new()
                .name("session".into())
                .spawn(move || {
                    let mut conn = conn;
                    session::serve(&mut conn, request, &counter, &AtomicU64::new(0));
                    drop(slot);
                });
        }
        Err(_) => {
            open.remove(&fd);
        }
    }
}

/// Goes as far as the socket allows: handshake, greeting, header.
fn advance(opening: &mut Opening) -> io::Result<Driven> {
    let stage = opening.stage.take().ok_or(io::ErrorKind::NotConnected)?;
    let mut conn = match stage.advance()? {
        Accepted::Open(conn) => conn,
        handshaking => {
            opening.stage = Some(handshaking);
            return Ok(Driven::Waiting);
        }
    };
    match greet_and_read(&mut conn, opening)? {
        Advance::Header(request) => Ok(Driven::Request(conn, request)),
        Advance::Closed => Ok(Driven::Closed),
        Advance::Waiting => {
            opening.stage = Some(Accepted::Open(conn));
            Ok(Driven::Waiting)
        }
    }
}

enum Advance {
    Waiting,
    Closed,
    Header(Request),
}

/// Writes what is left of the greeting and reads what has come of the header. A
/// clean close before the header's first byte is [`Advance::Closed`].
fn greet_and_read(conn: &mut Conn, o: &mut Opening) -> io::Result<Advance> {
    if !greet(conn, &mut o.greeted)? {
        return Ok(Advance::Waiting);
    }
    while o.got < HEADER_LEN {
        match conn.read(&mut o.header[o.got..]) {
            Ok(0) if o.got == 0 => return Ok(Advance::Closed),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => o.got += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Advance::Waiting),
            Err(e) => return Err(e),
        }
    }
    Request::decode(&o.header)
        .map(Advance::Header)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes what is left of the greeting; true once all of it is sent.
fn greet(conn: &mut Conn, greeted: &mut usize) -> io::Result<bool> {
    while *greeted < GREETING.len() {
        match conn.write(&GREETING[*greeted..]) {
            Ok(n) => *greeted += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
