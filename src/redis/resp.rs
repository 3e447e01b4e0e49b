//! A minimal RESP2 client for the timed loops: commands encoded once into a byte
//! buffer before the loop ([`Encoded`]), replies read into one reusable buffer and
//! handed out as slices of it ([`Reply`]). Inside the loop a command costs a write,
//! a read or two, and a parse of the reply header: no allocation.
//!
//! Why not the `redis` crate: it builds a `Value` for every reply (a `Vec<u8>` per
//! bulk string, a `Vec<Value>` per array) and a `Cmd` with its own buffers per
//! command, so a GET costs allocations and a copy on the client that
//! redis-benchmark (the anchor) does not pay; at a round trip of about 16 µs over a
//! Unix socket here, the client's own work is a visible part of the figure.
//! Measured on a GET of 64 B over a Unix socket, client and server pinned to one
//! CPU, against redis 1.8.1 in its best case (one prebuilt `Cmd`, the reply into a
//! `Vec<u8>`): 3 allocations and about 9,160 user-mode instructions (callgrind) per
//! GET there, none and about 470 here; 16.2 µs against 15.4 µs per GET (medians
//! of 7 rounds of 50,000). This client speaks only what the experiments need (simple strings, errors, integers,
//! bulk strings, arrays; no RESP3, no pub/sub, no cluster redirections) over any
//! [`Conn`], so unix, tcp and tls go through the same transport code as every
//! other family. Every wait on the server is bounded as a whole and sees Ctrl-C
//! (`wait.rs`): reads and writes block a slice at a time, and the clock is read only
//! when a slice ends empty or a reply needs a further read.

use crate::transport::{Conn, Endpoint};
use crate::wait::{self, Patience};
use std::io::{self, Read, Write};
use std::time::Duration;

/// The largest reply accepted (a server could otherwise make sockbench allocate
/// whatever a length field says); Redis's own bulk limit is 512 MB.
const MAX_REPLY: usize = 64 << 20;
/// The smallest reply buffer: room for any status line and many pipelined replies.
const MIN_BUFFER: usize = 16 << 10;

/// One or more commands, encoded once: a pipeline of `depth` copies of one command
/// is written with one `write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    bytes: Vec<u8>,
    commands: usize,
}

impl Encoded {
    /// One command with its arguments, as a RESP array of bulk strings.
    pub fn new(args: &[&[u8]]) -> Encoded {
        Encoded::pipelined(args, 1)
    }

    /// `depth` copies of one command, sent together; their `depth` replies are read
    /// in order.
    pub fn pipelined(args: &[&[u8]], depth: usize) -> Encoded {
        let mut one = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            one.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            one.extend_from_slice(arg);
            one.extend_from_slice(b"\r\n");
        }
        Encoded {
            bytes: one.repeat(depth),
            commands: depth,
        }
    }

    /// How many replies the request gets.
    pub fn commands(&self) -> usize {
        self.commands
    }

    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// One reply, borrowed from the client's buffer until the next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// `+PONG`, `+OK`.
    Status(&'a [u8]),
    /// `-ERR …`, `-NOAUTH …`, `-WRONGPASS …`.
    Error(&'a [u8]),
    Integer(i64),
    Bulk(&'a [u8]),
    /// `$-1`: no such key.
    Nil,
    /// `*N`: the N elements follow as replies of their own.
    Array(usize),
    /// `*-1`.
    NilArray,
}

/// What each reply to a request must be for the work to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A simple string, e.g. `PONG` or `OK`.
    Status(&'static str),
    /// A bulk string of this many bytes.
    Bulk(usize),
    /// Anything but an error (an array's elements included).
    Any,
}

impl Expect {
    fn check(self, reply: Reply) -> io::Result<()> {
        match (self, reply) {
            (_, Reply::Error(text)) => Err(io::Error::other(format!(
                "answered: {}",
                String::from_utf8_lossy(text)
            ))),
            (Expect::Status(want), Reply::Status(got)) if want.as_bytes() == got => Ok(()),
            (Expect::Bulk(want), Reply::Bulk(got)) if want == got.len() => Ok(()),
            (Expect::Any, _) => Ok(()),
            (want, got) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("answered {got:?} where {want:?} was expected"),
            )),
        }
    }
}

/// A connection to a Redis server with its reply buffer.
pub struct RedisConn {
    conn: Conn,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// How long the request under way may still wait for the server.
    patience: Patience,
    /// `the Redis server at …`, for the errors that say what it did.
    server: String,
}

impl RedisConn {
    /// A client on `conn` to the server at `at`, whose buffer holds a reply of
    /// `reply_bytes` (a bulk string's length) without growing; it is allocated and
    /// touched here. Each request may wait `limit` for the server, provided `conn`
    /// blocks at most a slice (`wait::SLICE`) in one read or write.
    pub fn new(conn: Conn, reply_bytes: usize, at: &Endpoint, limit: Duration) -> RedisConn {
        RedisConn {
            conn,
            buf: vec![0; (reply_bytes + 64).max(MIN_BUFFER)],
            start: 0,
            end: 0,
            patience: Patience::new(limit),
            server: format!("the Redis server at {at}"),
        }
    }

    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// True when every byte read has been parsed into a reply.
    pub fn drained(&self) -> bool {
        self.start == self.end
    }

    /// Puts `conn` in place of the client's connection, keeping the buffer (for a
    /// timed loop of new connections: no allocation), and returns the old one.
    pub fn swap(&mut self, conn: Conn) -> Conn {
        self.start = 0;
        self.end = 0;
        std::mem::replace(&mut self.conn, conn)
    }

    /// Authenticates as an ACL user (`AUTH user password`). Not for a timed loop.
    pub fn auth(&mut self, user: &str, password: &str) -> io::Result<()> {
        let request = Encoded::new(&[b"AUTH", user.as_bytes(), password.as_bytes()]);
        self.exchange(&request, Expect::Status("OK"))
            .map_err(|e| io::Error::new(e.kind(), format!("AUTH as {user} failed: {e}")))
    }

    /// Sends `request` and reads its replies, each checked against `expect`.
    #[inline]
    pub fn exchange(&mut self, request: &Encoded, expect: Expect) -> io::Result<()> {
        self.send(request)?;
        self.receive(request, expect)
    }

    /// Reads the replies of `request`, sent before, each checked against `expect`.
    #[inline]
    pub fn receive(&mut self, request: &Encoded, expect: Expect) -> io::Result<()> {
        for _ in 0..request.commands {
            let mut pending = 1usize;
            let mut top = true;
            while pending > 0 {
                pending -= 1;
                let reply = self.reply()?;
                if let Reply::Array(n) = reply {
                    pending += n;
                }
                let checked = if top {
                    top = false;
                    expect.check(reply)
                } else {
                    Expect::Any.check(reply)
                };
                checked.map_err(|e| self.said(e))?;
            }
        }
        Ok(())
    }

    /// Writes the whole request (in one write, unless the server reads slowly),
    /// and starts its wait for the server.
    #[inline]
    pub fn send(&mut self, request: &Encoded) -> io::Result<()> {
        self.patience.restart();
        let bytes = &request.bytes;
        let mut sent = 0;
        loop {
            match self.conn.write(&bytes[sent..]) {
                Ok(n) if sent + n == bytes.len() => return Ok(()),
                Ok(0) => return Err(self.closed(io::ErrorKind::WriteZero.into())),
                Ok(n) => sent += n,
                Err(e) if wait::slice_ended(&e) => {}
                Err(e) => return Err(self.closed(e)),
            }
            let server = &self.server;
            self.patience
                .check(|| format!("{server} read the request too slowly: not all sent"))?;
        }
    }

    /// Reads the next reply (an array's elements are the replies after it).
    #[inline]
    pub fn reply(&mut self) -> io::Result<Reply<'_>> {
        let mut further = false;
        loop {
            match parse(&self.buf[self.start..self.end]).map_err(|e| self.said(e))? {
                Parsed::Done(frame, used) => {
                    let base = self.start;
                    self.start += used;
                    return Ok(frame.reply(&self.buf[base..]));
                }
                Parsed::Need(total) => {
                    if further {
                        self.look()?;
                    }
                    self.fill(total)?;
                    further = true;
                }
            }
        }
    }

    /// Whether the reply awaited may still be waited for (Ctrl-C, the limit).
    #[cold]
    fn look(&mut self) -> io::Result<()> {
        let (server, partial) = (&self.server, self.end > self.start);
        self.patience.check(|| {
            if partial {
                format!("{server} sent its reply too slowly: not complete")
            } else {
                format!("{server} did not answer")
            }
        })
    }

    /// Reads at least one more byte, making room for a reply of `total` bytes.
    fn fill(&mut self, total: usize) -> io::Result<()> {
        if total > MAX_REPLY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} sent a reply of {total} bytes, over sockbench's limit of {MAX_REPLY}",
                    self.server
                ),
            ));
        }
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.start + total > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if total > self.buf.len() {
                // A reply larger than the client was made for: grows once.
                self.buf
                    .resize(total.max(self.buf.len() * 2).min(MAX_REPLY), 0);
            }
        }
        loop {
            match self.conn.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(self.closed(io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if wait::slice_ended(&e) => self.look()?,
                Err(e) => return Err(self.closed(e)),
            }
        }
    }

    /// Says what a failed read or write means, naming the server.
    #[cold]
    fn closed(&self, e: io::Error) -> io::Error {
        use io::ErrorKind::*;
        match e.kind() {
            UnexpectedEof | ConnectionReset | BrokenPipe | ConnectionAborted | WriteZero => {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} closed the connection (it exited or was killed)",
                        self.server
                    ),
                )
            }
            _ => self.said(e),
        }
    }

    /// `e`, what the server did ("answered: ERR …"), with the server named.
    #[cold]
    fn said(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{} {e}", self.server))
    }
}

/// A reply found in the buffer, as offsets from where parsing began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Status(usize, usize),
    Error(usize, usize),
    Integer(i64),
    Bulk(usize, usize),
    Nil,
    Array(usize),
    NilArray,
}

impl Frame {
    fn reply(self, buf: &[u8]) -> Reply<'_> {
        match self {
            Frame::Status(a, b) => Reply::Status(&buf[a..b]),
            Frame::Error(a, b) => Reply::Error(&buf[a..b]),
            Frame::Integer(n) => Reply::Integer(n),
            Frame::Bulk(a, b) => Reply::Bulk(&buf[a..b]),
            Frame::Nil => Reply::Nil,
            Frame::Array(n) => Reply::Array(n),
            Frame::NilArray => Reply::NilArray,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    /// A whole reply, and how many bytes it took.
    Done(Frame, usize),
    /// Not yet a whole reply: at least this many bytes are needed.
    Need(usize),
}

/// Parses one reply at the start of `buf`.
fn parse(buf: &[u8]) -> io::Result<Parsed> {
    let Some(cr) = buf.iter().skip(1).position(|&b| b == b'\r').map(|i| i + 1) else {
        return Ok(Parsed::Need(buf.len() + 1));
    };
    let Some(&lf) = buf.get(cr + 1) else {
        return Ok(Parsed::Need(cr + 2));
    };
    if lf != b'\n' {
        return Err(not_resp("a line not ended by CRLF"));
    }
    let line = &buf[1..cr];
    let after = cr + 2;
    let frame = match buf[0] {
        b'+' => Frame::Status(1, cr),
        b'-' => Frame::Error(1, cr),
        b':' => Frame::Integer(number(line)?),
        b'$' => match number(line)? {
            -1 => Frame::Nil,
            n if n < 0 => return Err(not_resp("a negative length")),
            n => {
                let len = usize::try_from(n).map_err(|_| not_resp("a length too large"))?;
                let total = after.saturating_add(len).saturating_add(2);
                if buf.len() < total {
                    return Ok(Parsed::Need(total));
                }
                if &buf[total - 2..total] != b"\r\n" {
                    return Err(not_resp("a bulk string not ended by CRLF"));
                }
                return Ok(Parsed::Done(Frame::Bulk(after, after + len), total));
            }
        },
        b'*' => match number(line)? {
            -1 => Frame::NilArray,
            n if n < 0 => return Err(not_resp("a negative array length")),
            n => Frame::Array(usize::try_from(n).map_err(|_| not_resp("an array too large"))?),
        },
        _ => return Err(not_resp("an unknown reply type")),
    };
    Ok(Parsed::Done(frame, after))
}

/// A decimal integer, `-` allowed.
fn number(text: &[u8]) -> io::Result<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(not_resp("a malformed number"));
    }
    let value = digits
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Ok(if negative { -value } else { value })
}

fn not_resp(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("sent {what}, which is not RESP"),
    )
}

#[cfg(test)]
#[path = "resp_tests.rs"]
mod tests;
