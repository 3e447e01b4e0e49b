//! What the server does for each request once the greeting is sent.

use super::protocol::{Request, END};
use crate::transport::Conn;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Serves one request to its end. Errors mean the client went away, which is how
/// every session ends, so they are not reported. `heard` counts the messages the
/// session received (a datagram session's only sign of life: see `datagram.rs`).
pub fn serve(
    conn: &mut Conn,
    request: Request,
    closed_after_greeting: &AtomicU64,
    heard: &AtomicU64,
) {
    // No receive timeout during a session: it would arm a kernel timer on every
    // blocking read and slow each round trip. A client that goes away closes its
    // socket, which ends the session.
    if conn.set_read_timeout(None).is_err() {
        return;
    }
    if let Request::Messages {
        receive_buffer: bytes @ 1..,
        ..
    } = request
    {
        // A datagram session's was set before its greeting (`datagram.rs`).
        if crate::transport::set_receive_buffer(conn.as_raw_fd(), bytes).is_err() {
            return;
        }
    }
    let _ = match request {
        Request::PingPong { size } => pingpong(conn, size as usize, heard),
        Request::Stream {
            write_size,
            total_bytes,
        } => stream(conn, write_size as usize, total_bytes),
        Request::Count => {
            let count = closed_after_greeting.load(Ordering::SeqCst);
            conn.write_all(&count.to_le_bytes())
        }
        Request::Messages { size, .. } => messages(conn, size as usize, heard),
    };
}

/// Reads one whole message into `buf`; false at the client's end (a closed
/// connection, or an empty datagram).
fn receive(conn: &mut Conn, buf: &mut [u8], heard: &AtomicU64) -> io::Result<bool> {
    match conn.read_message(buf) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
        Ok(()) => {
            heard.fetch_add(1, Ordering::Relaxed);
            Ok(true)
        }
    }
}

fn pingpong(conn: &mut Conn, size: usize, heard: &AtomicU64) -> io::Result<()> {
    let mut buf = vec![0u8; size];
    while receive(conn, &mut buf, heard)? {
        conn.write_all(&buf)?;
    }
    Ok(())
}

/// Counts messages until each end, and answers every end with the count.
fn messages(conn: &mut Conn, size: usize, heard: &AtomicU64) -> io::Result<()> {
    let mut buf = vec![0u8; size];
    let mut received = 0u64;
    while receive(conn, &mut buf, heard)? {
        if buf[0] == END {
            conn.write_all(&received.to_le_bytes())?;
        } else {
            received += 1;
        }
    }
    Ok(())
}

fn stream(conn: &mut Conn, write_size: usize, total_bytes: u64) -> io::Result<()> {
    let buf = vec![0x5au8; write_size];
    let mut left = total_bytes;
    while left > 0 {
        let n = left.min(write_size as u64) as usize;
        conn.write_all(&buf[..n])?;
        left -= n as u64;
    }
    conn.flush()?;
    // Wait for the client to close, so the server never resets a connection whose
    // last bytes are still unread.
    let mut sink = [0u8; 64];
    while conn.read(&mut sink)? > 0 {}
    Ok(())
}
