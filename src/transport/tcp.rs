//! TCP connections, with Nagle's algorithm off on both ends (`TCP_NODELAY`), as
//! database clients and servers run them.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::OwnedFd;

#[inline]
pub fn connect(addr: &SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Connects as [`connect`] does, failing with `TimedOut` when the connection is not
/// made within `wait` (a filtered port would hold a plain connect for minutes).
pub fn connect_timeout(addr: &SocketAddr, wait: std::time::Duration) -> io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(addr, wait).map_err(|e| match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => io::Error::new(
            io::ErrorKind::NotConnected,
            format!("no connection within {} s", wait.as_secs_f64()),
        ),
        _ => e,
    })?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

pub fn bind(addr: &SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
}

/// A connection just accepted.
pub fn accepted(fd: OwnedFd) -> io::Result<TcpStream> {
    let stream = TcpStream::from(fd);
    stream.set_nodelay(true)?;
    Ok(stream)
}
