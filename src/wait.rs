//! Every wait on a server sockbench talks to (Redis, nginx, an app server), bounded
//! as a whole and interruptible.
//!
//! A per-read timeout alone does not bound a request: a server that sends a byte of
//! its reply every few seconds resets it on every byte and holds the run for ever.
//! So each connection blocks at most [`SLICE`] in one read or write (the kernel's
//! receive and send timeouts), and a request as a whole may wait [`LIMIT`]: when a
//! slice ends with nothing, or a reply (or a TLS handshake) needs a further read,
//! the client looks at Ctrl-C and at the clock ([`Patience::check`]), and only then.
//!
//! Why this and not a clock read per read or a watchdog thread: a reply that comes
//! whole in one read, as every reply of a timed loop does from a server that keeps
//! up, costs no clock read and no shared-memory write, only the kernel timer every
//! transport's figure already holds alike. The clock starts at the first look, so a
//! wait ends at most one slice after the limit.
//!
//! What is left unbounded: inside OpenSSL, one TLS record whose bytes come slowly is
//! read by OpenSSL's own loop, below the client, and each byte resets the slice.

use std::io;
use std::time::{Duration, Instant};

/// The longest one read or write blocks before Ctrl-C and the clock are looked at.
pub const SLICE: Duration = Duration::from_millis(250);
/// How long one request (its writes and every reply), one connection and one TLS
/// handshake may wait for the server.
pub const LIMIT: Duration = Duration::from_secs(10);

/// The wait of one request, started on its first look.
#[derive(Debug, Clone, Copy)]
pub struct Patience {
    limit: Duration,
    since: Option<Instant>,
}

impl Patience {
    pub const fn new(limit: Duration) -> Patience {
        Patience { limit, since: None }
    }

    /// A new request: its wait starts at its own first look.
    #[inline]
    pub fn restart(&mut self) {
        self.since = None;
    }

    /// Whether the wait may go on: an error of kind `Interrupted` once a signal has
    /// come, or of kind `TimedOut`, "WHAT within N s", once the limit has passed
    /// since the first look. Either error restarts the wait.
    #[cold]
    pub fn check(&mut self, what: impl FnOnce() -> String) -> io::Result<()> {
        if crate::interrupt::interrupted() {
            self.since = None;
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        if now.duration_since(since) < self.limit {
            return Ok(());
        }
        self.since = None;
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{} within {}", what(), seconds(self.limit)),
        ))
    }
}

/// `10 s`, `0.5 s`.
pub fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// True for the errors a read or write gives when its slice ends (or a signal cuts
/// it short): the wait goes on if [`Patience::check`] lets it.
#[inline]
pub fn slice_ended(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_starts_at_the_first_look_and_ends_after_the_limit() {
        let mut p = Patience::new(Duration::from_millis(200));
        let started = Instant::now();
        let mut looks = 0;
        let e = loop {
            looks += 1;
            assert!(looks < 1_000, "never over");
            if let Err(e) = p.check(|| "nothing came".into()) {
                break e;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(e.to_string(), "nothing came within 0.2 s");
        // The error restarted it; so does a new request.
        assert!(p.check(String::new).is_ok());
        p.restart();
        assert!(p.check(String::new).is_ok());
        assert_eq!(seconds(LIMIT), "10 s");
    }
}
