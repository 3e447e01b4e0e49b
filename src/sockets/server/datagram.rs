//! The server's datagram sockets (`unix-dgram`, `udp`): a datagram socket has no
//! connection to accept, so one thread per socket receives each new client's request
//! header and answers it from a socket of its own for that client, connected to it
//! ([`Datagram::answer`]), on a session thread of its own, as an accepted
//! connection gets (`session.rs` serves both).
//!
//! A datagram client that goes away says nothing, unless its goodbye (an empty
//! datagram) arrives. So every session counts what it hears, and one that has heard
//! nothing for [`IDLE`] is ended from here: its socket is shut down, which wakes its
//! blocked receive. No timer runs in a session's own loop.

use super::protocol::{Request, GREETING, HEADER_LEN};
use super::session;
use crate::transport::{set_receive_buffer, Datagram, Peer};
use std::io::Write;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a session may hear nothing before it is ended.
const IDLE: Duration = Duration::from_secs(60);
/// How often the sessions are looked at.
const LOOK: Duration = Duration::from_secs(1);

/// A session's socket and what it has heard, for ending an idle one.
struct Live {
    fd: RawFd,
    heard: Arc<AtomicU64>,
    seen: u64,
    since: Instant,
}

type Sessions = Arc<Mutex<Vec<Live>>>;

/// Serves `socket` until the process exits.
/// `connects`: whether each session's socket connects to its client.
pub fn serve_loop(socket: Datagram, connects: bool) {
    if socket.set_read_timeout(Some(LOOK)).is_err() {
        return;
    }
    let sessions: Sessions = Arc::default();
    // One byte more than a header: a longer datagram is no header.
    let mut header = [0u8; HEADER_LEN + 1];
    let mut looked = Instant::now();
    loop {
        match socket.recv_from(&mut header) {
            Ok((HEADER_LEN, peer)) => {
                let fixed: &[u8; HEADER_LEN] = header[..HEADER_LEN].try_into().expect("16 bytes");
                if let Ok(request) = Request::decode(fixed) {
                    start(&socket, &peer, connects, request, &sessions);
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
fn start(socket: &Datagram, peer: &Peer, connects: bool, request: Request, sessions: &Sessions) {
    let Ok(mut answer) = socket.answer(peer, connects) else {
        return;
    };
    if let Request::Messages {
        receive_buffer: bytes @ 1..,
        ..
    } = request
    {
        // Before the greeting: the client sends nothing until it has it.
        if set_receive_buffer(answer.as_raw_fd(), bytes).is_err() {
            return;
        }
    }
    if answer.write(GREETING).is_err() {
        return;
    }
    let heard = Arc::new(AtomicU64::new(0));
    let fd = answer.as_raw_fd();
    lock(sessions).push(Live {
        fd,
        heard: Arc::clone(&heard),
        seen: 0,
        since: Instant::now(),
    });
    let listed = Arc::clone(sessions);
    let spawned = std::thread::Builder::new()
        .name("session".into())
        .spawn(move || {
            let mut conn = answer;
            // A connect count means nothing without connections.
            session::serve(&mut conn, request, &AtomicU64::new(0), &heard);
            // Forgotten before its socket closes: an end from `end_idle` never
            // reaches a descriptor number used again.
            lock(&listed).retain(|l| l.fd != fd);
            drop(conn);
        });
    if spawned.is_err() {
        lock(sessions).retain(|l| l.fd != fd);
    }
}

/// Ends each session that has heard nothing for [`IDLE`].
fn end_idle(sessions: &Sessions, now: Instant) {
    for live in lock(sessions).iter_mut() {
        let heard = live.heard.load(Ordering::Relaxed);
        if heard != live.seen {
            live.seen = heard;
            live.since = now;
        } else if now.duration_since(live.since) >= IDLE {
            // SAFETY: shutdown on a descriptor its session holds open until it
            // has left the list, which this lock keeps it from doing meanwhile.
            unsafe { libc::shutdown(live.fd, libc::SHUT_RDWR) };
        }
    }
}

fn lock(sessions: &Sessions) -> std::sync::MutexGuard<'_, Vec<Live>> {
    sessions.lock().unwrap_or_else(|e| e.into_inner())
}
