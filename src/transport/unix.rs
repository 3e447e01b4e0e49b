//! Unix domain stream sockets, at a path in the file system or a name in Linux's
//! abstract namespace.

use super::conn::BindError;
use super::{Address, Endpoint};
use std::io;
use std::os::fd::OwnedFd;
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

/// Binds and listens. A stale socket file (one nobody listens on) is replaced; a
/// file that is not a socket is refused.
pub fn bind(
    endpoint: &Endpoint,
    wrap: impl Fn(io::Error) -> BindError,
) -> Result<UnixListener, BindError> {
    if let Address::Path(path) = &endpoint.address {
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_socket()) {
            return Err(BindError::NotSocket(endpoint.clone()));
        }
        remove_stale_socket(path);
    }
    let addr = address(&endpoint.address).map_err(&wrap)?;
    UnixListener::bind_addr(&addr).map_err(wrap)
}

/// A connection just accepted.
pub fn accepted(fd: OwnedFd) -> UnixStream {
    UnixStream::from(fd)
}

/// Removes a socket file left behind by a server that died, but never a file that is
/// not a socket or a socket somebody still listens on. The directory is held open
/// and the socket is tried and removed through it (`/proc/self/fd/N/NAME`), so a
/// directory swapped for a link meanwhile cannot turn this into a removal elsewhere.
fn remove_stale_socket(path: &Path) {
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
    if UnixStream::connect(&through).is_ok() {
        return; // somebody listens there
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
