//! What the server does for each request once the greeting is sent.

use super::protocol::Request;
use crate::transport::Conn;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Serves one request to its end. Errors mean the client went away, which is how
/// every session ends, so they are not reported.
pub fn serve(mut conn: Conn, request: Request, closed_after_greeting: &AtomicU64) {
    // No receive timeout during a session: it would arm a kernel timer on every
    // blocking read and slow each round trip. A client that goes away closes its
    // socket, which ends the session.
    if conn.set_read_timeout(None).is_err() {
        return;
    }
    let _ = match request {
        Request::PingPong { size } => pingpong(&mut conn, size as usize),
        Request::Stream {
            write_size,
            total_bytes,
        } => stream(&mut conn, write_size as usize, total_bytes),
        Request::Count => {
            let count = closed_after_greeting.load(Ordering::SeqCst);
            conn.write_all(&count.to_le_bytes())
        }
    };
}

fn pingpong(conn: &mut Conn, size: usize) -> io::Result<()> {
    let mut buf = vec![0u8; size];
    loop {
        match conn.read_exact(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            other => other?,
        }
        conn.write_all(&buf)?;
    }
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
