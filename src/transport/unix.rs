//! Unix domain sockets, at a path in the file system or a name in Linux's abstract
//! namespace: streams, and the SOCK_SEQPACKET connections that keep each message
//! whole (read and written as streams are, one message per call); the datagram
//! sockets' own part is in `datagram.rs`.

use super::conn::BindError;
use super::{Address, Endpoint};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};
use std::path::Path;

/// The socket address to connect to, converted once before any timed loop.
pub fn address(address: &Address) -> io::Result<UnixAddr> {
    match address {
        Address::Path(path) => UnixAddr::from_pathname(path),
        Address::Abstract(name) => UnixAddr::from_abstract_name(name.as_bytes()),
        Address::Ip(ip) => Err(io::Error::other(format!("{ip} is no Unix socket address"))),
    }
}

#[inline]
pub fn connect(addr: &UnixAddr) -> io::Result<UnixStream> {
    UnixStream::connect_addr(addr)
}

/// A socket address as the kernel takes it, converted once before any timed loop
/// (for the kinds the standard library has no type for).
#[derive(Clone, Copy)]
pub struct Sockaddr {
    addr: libc::sockaddr_un,
    len: libc::socklen_t,
}

impl Sockaddr {
    pub fn of(address: &Address) -> io::Result<Sockaddr> {
        let (bytes, lead): (&[u8], usize) = match address {
            Address::Path(path) => (path.as_os_str().as_encoded_bytes(), 0),
            Address::Abstract(name) => (name.as_bytes(), 1),
            Address::Ip(ip) => {
                return Err(io::Error::other(format!("{ip} is no Unix socket address")))
            }
        };
        // SAFETY: an all-zero sockaddr_un is valid.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        if lead + bytes.len() >= addr.sun_path.len() {
            return Err(io::Error::other(
                "a Unix socket address longer than sun_path",
            ));
        }
        for (slot, &b) in addr.sun_path[lead..].iter_mut().zip(bytes) {
            *slot = b as libc::c_char;
        }
        // A path ends with its NUL; an abstract name is exactly as long as it is.
        let tail = usize::from(lead == 0);
        let len = std::mem::size_of::<libc::sa_family_t>() + lead + bytes.len() + tail;
        Ok(Sockaddr {
            addr,
            len: len as libc::socklen_t,
        })
    }

    /// Connects socket `fd` here.
    fn connect(&self, fd: &OwnedFd) -> io::Result<()> {
        self.call(libc::connect, fd)
    }

    /// Binds socket `fd` here.
    fn bind(&self, fd: &OwnedFd) -> io::Result<()> {
        self.call(libc::bind, fd)
    }

    /// `connect` or `bind` of socket `fd` to this address.
    fn call(
        &self,
        call: unsafe extern "C" fn(
            libc::c_int,
            *const libc::sockaddr,
            libc::socklen_t,
        ) -> libc::c_int,
        fd: &OwnedFd,
    ) -> io::Result<()> {
        // SAFETY: `self.addr` is a valid sockaddr_un of at least `self.len` bytes,
        // and `fd` an open socket.
        let r = unsafe {
            call(
                fd.as_raw_fd(),
                (&self.addr as *const libc::sockaddr_un).cast(),
                self.len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// A new Unix socket of type `ty` (`SOCK_STREAM`, `SOCK_SEQPACKET`, `SOCK_DGRAM`).
pub(super) fn socket(ty: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket() with constant arguments; the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_UNIX, ty | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new socket nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Connects a SOCK_SEQPACKET socket to `addr`; it reads and writes as a stream
/// does, one whole message per call.
#[inline]
pub fn connect_seqpacket(addr: &Sockaddr) -> io::Result<UnixStream> {
    let fd = socket(libc::SOCK_SEQPACKET)?;
    addr.connect(&fd)?;
    Ok(UnixStream::from(fd))
}

/// Binds and listens. A stale socket file (one nobody listens on) is replaced; a
/// file that is not a socket is refused.
pub fn bind(
    endpoint: &Endpoint,
    wrap: impl Fn(io::Error) -> BindError,
) -> Result<UnixListener, BindError> {
    bind_kind(endpoint, libc::SOCK_STREAM, &wrap).map(UnixListener::from)
}

/// Binds a SOCK_SEQPACKET socket and listens, as [`bind`] does.
pub fn bind_seqpacket(
    endpoint: &Endpoint,
    wrap: impl Fn(io::Error) -> BindError,
) -> Result<UnixListener, BindError> {
    let fd = bind_kind(endpoint, libc::SOCK_SEQPACKET, &wrap)?;
    // SAFETY: listen on a socket this owns.
    if unsafe { libc::listen(fd.as_raw_fd(), 128) } != 0 {
        return Err(wrap(io::Error::last_os_error()));
    }
    Ok(UnixListener::from(fd))
}

/// A Unix socket of type `ty` bound to `endpoint` (and listening, for a stream):
/// a stale socket file is replaced first, a file that is not a socket refused.
pub(super) fn bind_kind(
    endpoint: &Endpoint,
    ty: libc::c_int,
    wrap: &impl Fn(io::Error) -> BindError,
) -> Result<OwnedFd, BindError> {
    if let Address::Path(path) = &endpoint.address {
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_socket()) {
            return Err(BindError::NotSocket(endpoint.clone()));
        }
        remove_stale_socket(path, ty);
    }
    if ty == libc::SOCK_STREAM {
        let addr = address(&endpoint.address).map_err(wrap)?;
        return UnixListener::bind_addr(&addr)
            .map(OwnedFd::from)
            .map_err(wrap);
    }
    let addr = Sockaddr::of(&endpoint.address).map_err(wrap)?;
    let fd = socket(ty).map_err(wrap)?;
    addr.bind(&fd).map_err(wrap)?;
    Ok(fd)
}

/// A connection just accepted.
pub fn accepted(fd: OwnedFd) -> UnixStream {
    UnixStream::from(fd)
}

/// Removes a socket file left behind by a server that died, but never a file that is
/// not a socket or a socket somebody still listens on: only one that refuses a
/// socket of type `ty` (a socket of another type alive there answers otherwise,
/// and is kept). The directory is held open and the socket is tried and removed
/// through it (`/proc/self/fd/N/NAME`), so a directory swapped for a link meanwhile
/// cannot turn this into a removal elsewhere.
fn remove_stale_socket(path: &Path, ty: libc::c_int) {
    let Ok((dir, name)) = crate::dir::Dir::open_parent(path) else {
        return;
    };
    let Ok(Some(before)) = dir.entry_at(&name) else {
        return;
    };
    if before.file_type != rustix::fs::FileType::Socket {
        return;
    }
    let through = Path::new("/proc/self/fd")
        .join(dir.raw_fd().to_string())
        .join(&name);
    let refused = Sockaddr::of(&Address::Path(through)).and_then(|addr| {
        let tried = addr.connect(&socket(ty)?);
        Ok(tried.is_err_and(|e| e.raw_os_error() == Some(libc::ECONNREFUSED)))
    });
    if !refused.unwrap_or(false) {
        return; // somebody listens there, or it cannot be told
    }
    let same = dir
        .entry_at(&name)
        .is_ok_and(|now| now.is_some_and(|n| n.ino == before.ino && n.dev == before.dev));
    if same {
        let _ = dir.remove_file(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Transport;

    fn at(path: &Path) -> Endpoint {
        Endpoint {
            transport: Transport::Unix,
            address: Address::Path(path.to_path_buf()),
        }
    }

    #[test]
    fn a_stale_socket_is_replaced_and_a_live_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        drop(UnixListener::bind(&path).unwrap()); // leaves its file, nobody listening
        let live = bind(&at(&path), |e| BindError::Other(at(&path), e)).expect("stale replaced");
        let again = bind(&at(&path), |e| BindError::Other(at(&path), e));
        assert!(again.is_err(), "a live socket is not replaced");
        assert!(
            UnixStream::connect(&path).is_ok(),
            "the live one still answers"
        );
        drop(live);
    }
}
