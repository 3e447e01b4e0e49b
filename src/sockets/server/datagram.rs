//! The server's datagram sockets (`unix-dgram`, `udp`): a datagram socket has no
//! connection to accept, so one thread per socket receives each new client's
//! request and answers it from a socket of its own for that client, connected to
//! it ([`Datagram::answer`]), on a session thread of its own, as an accepted
//! connection gets (`session.rs` serves both).
//!
//! Any local account can send to the server's socket, so what a request can make
//! the server allocate is bounded: a server with a secret starts nothing for a
//! request without it; a client's address has one session at a time (a request
//! sent again, with the same nonce, starts none; a new nonce ends the earlier
//! session, whose client is gone, since its address is another socket's now); and
//! the process keeps at most `MAX_SESSIONS` ([`super::Slot`]), answering more with
//! `BUSY` (`protocol.rs`). The greeting is sent without waiting: a client that does not read
//! holds up nobody, and gets no session.
//!
//! A datagram client that goes away says nothing, unless its goodbye (an empty
//! datagram) arrives. So every session counts what it hears, and one that has heard
//! nothing for [`IDLE`] (nothing at all for [`UNHEARD`]) is ended from here: its
//! socket is shut down, which wakes its blocked receive. No timer runs in a
//! session's own loop.

use super::protocol::{greeting_for, DatagramRequest, Nonce, Secret, DATAGRAM_REQUEST_LEN};
use super::{session, Slot};
use crate::transport::{set_receive_buffer, Datagram, Peer, PeerName};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a session may hear nothing before it is ended.
const IDLE: Duration = Duration::from_secs(60);
/// How long a session that has heard nothing since its greeting is kept: as long
/// as a client waits for an answer.
const UNHEARD: Duration = Duration::from_secs(10);
/// How often the sessions are looked at.
const LOOK: Duration = Duration::from_secs(1);

/// A session: its client's nonce, a descriptor of its socket (to end it), and
/// what it has heard.
struct Live {
    id: u64,
    nonce: Nonce,
    socket: Datagram,
    heard: Arc<AtomicU64>,
    seen: u64,
    since: Instant,
}

/// The live sessions, one per client address.
type Sessions = Arc<Mutex<HashMap<PeerName, Live>>>;

/// Serves `socket` until the process exits. `connects`: whether each session's
/// socket connects to its client; `secret`: what every request must carry.
pub fn serve_loop(socket: Datagram, connects: bool, secret: Option<Secret>) {
    if socket.set_read_timeout(Some(LOOK)).is_err() {
        return;
    }
    let sessions: Sessions = Arc::default();
    // One byte more than a request: a longer datagram is no request.
    let mut first = [0u8; DATAGRAM_REQUEST_LEN + 1];
    let mut looked = Instant::now();
    let mut started = 0u64;
    loop {
        match socket.recv_from(&mut first) {
            Ok((DATAGRAM_REQUEST_LEN, peer)) => {
                let fixed = first[..DATAGRAM_REQUEST_LEN].try_into().expect("48 bytes");
                match DatagramRequest::decode(fixed) {
                    Ok(asked) if asked.admitted_by(secret) => {
                        started += 1;
                        start(&socket, &peer, connects, asked, &sessions, started);
                    }
                    _ => {}
                }
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
        if looked.elapsed() >= LOOK {
            looked = Instant::now();
            end_idle(&sessions, looked);
        }
    }
}

/// Answers `peer`'s request from a socket of its own, and serves it on a thread.
fn start(
    socket: &Datagram,
    peer: &Peer,
    connects: bool,
    asked: DatagramRequest,
    sessions: &Sessions,
    id: u64,
) {
    // An unnamed socket cannot be answered.
    let Some(name) = peer.name() else {
        return;
    };
    if let Some(earlier) = lock(sessions).get(&name) {
        if earlier.nonce == asked.nonce {
            // Sent again while its greeting was on its way.
            return;
        }
        earlier.socket.shut_down();
    }
    let Some(slot) = Slot::take() else {
        // From a socket of its own, without waiting, as a greeting goes.
        if let Ok(busy) = socket.answer(peer, connects) {
            let _ = send_now(&busy, peer, connects, &greeting_for(asked.nonce, true));
        }
        return;
    };
    let Ok(answer) = socket.answer(peer, connects) else {
        return;
    };
    if let DatagramRequest {
        request:
            super::protocol::Request::Messages {
                receive_buffer: bytes @ 1..,
                ..
            },
        ..
    } = asked
    {
        // Before the greeting: the client sends nothing until it has it.
        if set_receive_buffer(answer.as_raw_fd(), bytes).is_err() {
            return;
        }
    }
    let greeted = send_now(&answer, peer, connects, &greeting_for(asked.nonce, false));
    let Ok(handle) = answer.try_clone() else {
        return;
    };
    if greeted.is_err() {
        return;
    }
    let heard = Arc::new(AtomicU64::new(0));
    lock(sessions).insert(
        name.clone(),
        Live {
            id,
            nonce: asked.nonce,
            socket: handle,
            heard: Arc::clone(&heard),
            seen: 0,
            since: Instant::now(),
        },
    );
    let listed = Arc::clone(sessions);
    let mut conn = answer.into_conn(peer, connects);
    let spawned = std::thread::Builder::new()
        .name("session".into())
        .spawn(move || {
            // A connect count means nothing without connections.
            session::serve(&mut conn, asked.request, &AtomicU64::new(0), &heard);
            let mut live = lock(&listed);
            if live.get(&name).is_some_and(|l| l.id == id) {
                live.remove(&name);
            }
            drop(slot);
        });
    if spawned.is_err() {
        lock(sessions).retain(|_, l| l.id != id);
    }
}

/// Sends `greeting` from `socket` to `peer` without waiting for room: a client
/// that does not read gets nothing, and holds up no other.
fn send_now(
    socket: &Datagram,
    peer: &Peer,
    connects: bool,
    greeting: &[u8],
) -> std::io::Result<()> {
    // The clone shares the socket's blocking mode, set back once sent.
    let mut conn = socket.try_clone()?.into_conn(peer, connects);
    socket.set_nonblocking(true)?;
    let sent = conn.write(greeting);
    socket.set_nonblocking(false)?;
    match sent? {
        n if n == greeting.len() => Ok(()),
        _ => Err(std::io::ErrorKind::WriteZero.into()),
    }
}

/// Ends each session that has heard nothing for [`IDLE`], or nothing at all for
/// [`UNHEARD`].
fn end_idle(sessions: &Sessions, now: Instant) {
    for live in lock(sessions).values_mut() {
        let heard = live.heard.load(Ordering::Relaxed);
        let patience = if heard == 0 { UNHEARD } else { IDLE };
        if heard != live.seen {
            live.seen = heard;
            live.since = now;
        } else if now.duration_since(live.since) >= patience {
            live.socket.shut_down();
        }
    }
}

fn lock(sessions: &Sessions) -> std::sync::MutexGuard<'_, HashMap<PeerName, Live>> {
    sessions.lock().unwrap_or_else(|e| e.into_inner())
}
