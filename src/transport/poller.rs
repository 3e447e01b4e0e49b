//! A minimal safe wrapper over Linux `epoll`: for sockbench's server's accept stage,
//! and for clients that drive many connections from one thread.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Readable (or closed), for the listener: level-triggered.
pub const READABLE: u32 = libc::EPOLLIN as u32;
/// New data or a close on a connection, reported once per change (edge-triggered):
/// the owner drives it until it would block.
pub const INPUT: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
/// The same, and room to write: for a connection that has something left to send
/// (a TLS handshake, a greeting that did not fit).
pub const ANY_CHANGE: u32 = INPUT | libc::EPOLLOUT as u32;

pub struct Poller {
    epoll: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: a plain syscall; the result is checked before it is owned.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Poller {
            // SAFETY: `fd` is a new descriptor nothing else owns.
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
        })
    }

    /// Watches `fd` for `interest`; its events carry `fd` as their token.
    pub fn add(&self, fd: RawFd, interest: u32) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_ADD, fd, interest)
    }

    /// Watches `fd` for `interest`; its events carry `token` (e.g. an index).
    pub fn add_token(&self, fd: RawFd, interest: u32, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: `event` outlives the call; the kernel checks both descriptors.
        let rc =
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout` and returns the tokens of what is ready, read from the
    /// buffer made in [`Poller::new`]: nothing is allocated (for a timed loop). An
    /// interrupted wait returns nothing.
    pub fn ready(&mut self, timeout: Duration) -> io::Result<impl Iterator<Item = u64> + '_> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: the buffer holds `len` events and outlives the call.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                ms,
            )
        };
        let n = if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
            0
        } else {
            n as usize
        };
        Ok(self.events[..n].iter().map(|e| e.u64))
    }

    /// Stops watching `fd` (needed before handing it on without closing it).
    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_DEL, fd, 0)
    }

    fn control(&self, op: libc::c_int, fd: RawFd, interest: u32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest,
            u64: fd as u64,
        };
        // SAFETY: `event` outlives the call; the kernel checks both descriptors.
        let rc = unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout` and returns the descriptors that are ready.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<Vec<RawFd>> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: the buffer holds `len` events and outlives the call.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(Vec::new())
            } else {
                Err(e)
            };
        }
        Ok(self.events[..n as usize]
            .iter()
            .map(|e| e.u64 as RawFd)
            .collect())
    }
}
