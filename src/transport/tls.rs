//! TLS on both ends through OpenSSL, with a certificate made fresh at start.
//!
//! The server signs a self-signed ECDSA P-256 certificate with `rcgen` in memory, so
//! no key ever touches the disk. The client encrypts but does not verify the
//! certificate, like libpq's `sslmode=require`, so the TLS figures here compare with
//! the PostgreSQL ones. Session tickets are off: every connection pays a full
//! handshake, which is what an application without session reuse pays. (The proxy
//! family's app server turns them back on for its connections, for nginx to resume
//! with: `proxy/app.rs` says why.)

use super::conn::Accepted;
use super::{tcp, Conn};
use anyhow::{Context, Result};
use openssl::pkey::PKey;
use openssl::ssl::{
    ErrorCode, HandshakeError, SslAcceptor, SslConnector, SslMethod, SslOptions, SslRef, SslStream,
    SslVerifyMode, SslVersion,
};
use openssl::x509::X509;
use serde::{Deserialize, Serialize};
use std::io;
use std::net::{SocketAddr, TcpStream};

/// The certificate type the server presents, recorded with every TLS result because
/// it changes the handshake cost.
pub const CERTIFICATE_KIND: &str = "ECDSA P-256 (self-signed)";

crate::named! {
    /// The TLS protocol version the client asks for.
    pub enum TlsVersion as "TLS version" {
        V1_2 = "1.2",
        V1_3 = "1.3",
    }
}

impl TlsVersion {
    fn openssl(self) -> SslVersion {
        match self {
            TlsVersion::V1_2 => SslVersion::TLS1_2,
            TlsVersion::V1_3 => SslVersion::TLS1_3,
        }
    }
}

/// What a TLS connection really negotiated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsInfo {
    pub version: String,
    pub cipher: String,
    pub certificate: String,
}

impl TlsInfo {
    pub fn of(ssl: &SslRef) -> TlsInfo {
        TlsInfo {
            version: ssl.version_str().to_string(),
            cipher: ssl
                .current_cipher()
                .map(|c| c.name().to_string())
                .unwrap_or_else(|| "unknown".into()),
            certificate: CERTIFICATE_KIND.to_string(),
        }
    }
}

/// A server-side TLS context with a fresh self-signed certificate, accepting TLS 1.2
/// and 1.3.
pub fn acceptor() -> Result<SslAcceptor> {
    let names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    let made =
        rcgen::generate_simple_self_signed(names).context("cannot generate the TLS certificate")?;
    let cert = X509::from_pem(made.cert.pem().as_bytes())?;
    let key = PKey::private_key_from_pem(made.signing_key.serialize_pem().as_bytes())?;
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_certificate(&cert)?;
    builder.set_private_key(&key)?;
    builder.check_private_key()?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    builder.set_num_tickets(0)?;
    // A client that closes without close_notify ends the session; it is no error.
    builder.set_options(SslOptions::IGNORE_UNEXPECTED_EOF);
    Ok(builder.build())
}

/// A client-side TLS context pinned to one protocol version.
pub fn connector(version: TlsVersion) -> Result<SslConnector> {
    let mut builder = SslConnector::builder(SslMethod::tls_client())?;
    builder.set_verify(SslVerifyMode::NONE);
    builder.set_min_proto_version(Some(version.openssl()))?;
    builder.set_max_proto_version(Some(version.openssl()))?;
    Ok(builder.build())
}

/// Opens a TCP connection and runs the whole TLS handshake on it.
#[inline]
pub fn connect(addr: &SocketAddr, connector: &SslConnector) -> io::Result<SslStream<TcpStream>> {
    let stream = tcp::connect(addr)?;
    // As text: OpenSSL's error stack would otherwise be printed once per level of
    // the error chain.
    connector
        .connect("localhost", stream)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// [`connect`] for a client that bounds whole operations: every read and write
/// blocks at most `slice`, and stays so; the TCP connect waits at most `connect`
/// when given (else it is the plain blocking one, as in timed loops of new
/// connections). The handshake runs on the socket made non-blocking, waiting in
/// `poll` for at most `slice` at a time: after a slice that ends empty, and before
/// every wait after the first (a server that sends its part in pieces), `waited`
/// says whether to go on, so a server that drips its handshake cannot hold the
/// client longer than `waited` allows. A handshake whose answer comes whole costs
/// four system calls more than a blocking one (the switches to non-blocking and
/// back, the read that finds nothing yet, the `poll`), and no call of `waited`.
pub fn connect_sliced(
    addr: &SocketAddr,
    connector: &SslConnector,
    slice: std::time::Duration,
    connect: Option<std::time::Duration>,
    waited: &mut dyn FnMut() -> io::Result<()>,
) -> io::Result<SslStream<TcpStream>> {
    let stream = match connect {
        Some(wait) => tcp::connect_timeout(addr, wait)?,
        None => tcp::connect(addr)?,
    };
    stream.set_nonblocking(true)?;
    let mut step = connector.connect("localhost", stream);
    let mut waits = 0u32;
    loop {
        match step {
            Ok(stream) => {
                let socket = stream.get_ref();
                socket.set_nonblocking(false)?;
                socket.set_read_timeout(Some(slice))?;
                socket.set_write_timeout(Some(slice))?;
                return Ok(stream);
            }
            Err(HandshakeError::WouldBlock(mid)) => {
                if waits > 0 {
                    waited()?;
                }
                waits += 1;
                let events = match mid.error().code() {
                    ErrorCode::WANT_WRITE => libc::POLLOUT,
                    _ => libc::POLLIN,
                };
                if !ready(mid.get_ref(), events, slice)? {
                    waited()?;
                }
                step = mid.handshake();
            }
            Err(HandshakeError::Failure(mid)) => {
                return Err(io::Error::other(handshake_failure(mid.error())))
            }
            Err(e) => return Err(io::Error::other(e.to_string())),
        }
    }
}

/// Waits at most `wait` until `socket` is ready for `events`; false when the wait
/// ended without it (its time, or a signal).
fn ready(socket: &TcpStream, events: libc::c_short, wait: std::time::Duration) -> io::Result<bool> {
    let mut fd = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(socket),
        events,
        revents: 0,
    };
    let ms = wait.as_millis().min(libc::c_int::MAX as u128) as libc::c_int;
    // SAFETY: `fd` is a valid pollfd on the stack and 1 is the number of entries
    // behind the pointer.
    match unsafe { libc::poll(&mut fd, 1, ms) } {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => match io::Error::last_os_error() {
            e if e.kind() == io::ErrorKind::Interrupted => Ok(false),
            e => Err(e),
        },
    }
}

/// [`connect`] with the handshake bounded by `wait`, for a first contact with a
/// server that may not speak TLS at all: one that stays silent makes it fail with
/// `TimedOut` instead of waiting for ever. The bound is lifted once connected.
pub fn connect_within(
    addr: &SocketAddr,
    connector: &SslConnector,
    wait: std::time::Duration,
) -> io::Result<SslStream<TcpStream>> {
    let stream = tcp::connect_timeout(addr, wait)?;
    stream.set_read_timeout(Some(wait))?;
    stream.set_write_timeout(Some(wait))?;
    let stream = connector
        .connect("localhost", stream)
        .map_err(|e| match e {
            HandshakeError::WouldBlock(_) => io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer to the TLS hello within {} s", wait.as_secs_f64()),
            ),
            HandshakeError::Failure(mid) => io::Error::other(handshake_failure(mid.error())),
            e => io::Error::other(e.to_string()),
        })?;
    stream.get_ref().set_read_timeout(None)?;
    stream.get_ref().set_write_timeout(None)?;
    Ok(stream)
}

/// Why a handshake failed, in OpenSSL's words without its codes and source lines:
/// "wrong version number", or the peer closing the connection.
fn handshake_failure(error: &openssl::ssl::Error) -> String {
    let reason = error
        .ssl_error()
        .and_then(|stack| stack.errors().first())
        .and_then(|e| e.reason())
        .map(str::to_string);
    match (reason, error.io_error()) {
        (Some(reason), _) => reason,
        (None, Some(io)) => io.to_string(),
        (None, None) => "the peer closed the connection".into(),
    }
}

/// A TLS handshake as far as it got: done, waiting for the socket, or failed.
pub fn handshake(
    step: Result<SslStream<TcpStream>, HandshakeError<TcpStream>>,
) -> io::Result<Accepted> {
    match step {
        Ok(stream) => Ok(Accepted::Open(Conn::Tls(Box::new(stream)))),
        Err(HandshakeError::WouldBlock(mid)) => Ok(Accepted::Handshake(mid)),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}
