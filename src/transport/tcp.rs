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

pub fn bind(addr: &SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
}

/// A connection just accepted.
pub fn accepted(fd: OwnedFd) -> io::Result<TcpStream> {
    let stream = TcpStream::from(fd);
    stream.set_nodelay(true)?;
    Ok(stream)
}
