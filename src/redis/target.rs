//! One way to reach a Redis server (a transport of the throwaway server, or a
//! user's `--url`): where it listens, how to log in, and, for the throwaway
//! server's socket, who must answer before the password goes.

use super::resp::{Encoded, Expect, RedisConn};
use super::url::UserUrl;
use crate::system::peers;
use crate::transport::{Conn, Connector, Endpoint, TlsInfo, TlsVersion, Transport};
use crate::wait::{Patience, LIMIT, SLICE};
use anyhow::Result;
use std::io;
use std::time::Duration;

/// The process and account that must hold the other end of a Unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketHolder {
    pub pid: u32,
    pub uid: u32,
}

/// One way to reach a server.
pub struct Target {
    /// The transport name, or the name the user gave the URL.
    pub label: String,
    pub endpoint: Endpoint,
    connector: Connector,
    /// `AUTH …`, encoded once, when the server needs a password.
    login: Option<Encoded>,
    /// `SELECT DB`, when the user's URL names a database.
    select: Option<Encoded>,
    /// For the throwaway server's socket: checked on every connection.
    holder: Option<SocketHolder>,
    /// How long a connection, a TLS handshake and a request may each wait for the
    /// server (`wait.rs`); the timed loops keep it too, so a server that stops
    /// answering, or answers a byte at a time, ends a trial within it.
    limit: Duration,
    /// True for the throwaway server sockbench started.
    pub throwaway: bool,
}

impl Target {
    /// A transport of the throwaway server, logging in as `user` with `password`.
    pub fn throwaway(
        endpoint: Endpoint,
        user: &str,
        password: &str,
        holder: SocketHolder,
    ) -> Result<Target> {
        Ok(Target {
            label: endpoint.transport.name().to_string(),
            connector: Connector::new(&endpoint, TlsVersion::V1_3)?,
            endpoint,
            login: Some(auth(Some(user), password)),
            select: None,
            holder: Some(holder),
            limit: LIMIT,
            throwaway: true,
        })
    }

    /// A user's server.
    pub fn user(url: &UserUrl) -> Result<Target> {
        Ok(Target {
            label: url.label.clone(),
            connector: Connector::new(&url.endpoint, TlsVersion::V1_3)?,
            endpoint: url.endpoint.clone(),
            login: url
                .password
                .as_deref()
                .map(|p| auth(url.user.as_deref(), p)),
            select: url
                .db
                .map(|db| Encoded::new(&[b"SELECT", db.to_string().as_bytes()])),
            holder: None,
            limit: LIMIT,
            throwaway: false,
        })
    }

    pub fn transport(&self) -> Transport {
        self.endpoint.transport
    }

    /// How long a connection, a handshake and a request may each wait.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// The same target with another limit, for tests of servers that never finish.
    #[cfg(test)]
    pub(super) fn limited(self, limit: Duration) -> Target {
        Target { limit, ..self }
    }

    /// A new connection, its socket's holder checked (the throwaway server's
    /// socket): nothing is sent before. Made to be timed: no allocation, no clock
    /// read unless the TLS handshake waits more than once.
    pub fn connect(&self) -> io::Result<Conn> {
        self.check(self.connection(None)?)
    }

    /// A connection whose reads and writes block a slice at a time; the TCP connect
    /// bounded by `connect` when given.
    #[inline]
    fn connection(&self, connect: Option<Duration>) -> io::Result<Conn> {
        let mut patience = Patience::new(self.limit);
        let mut waited = || patience.check(|| "the TLS handshake was not complete".into());
        self.connector
            .connect_sliced(SLICE, connect, &mut waited)
            .map_err(|e| self.unreachable(e))
    }

    /// `e`, a failed connection, with the server named.
    #[cold]
    fn unreachable(&self, e: io::Error) -> io::Error {
        match e.kind() {
            io::ErrorKind::Interrupted => e,
            kind => io::Error::new(
                kind,
                format!(
                    "cannot connect to the Redis server at {}: {e}",
                    self.endpoint
                ),
            ),
        }
    }

    /// Logs in on `client`'s connection and selects the URL's database. Made to be
    /// timed: the requests are encoded already.
    pub fn log_in(&self, client: &mut RedisConn) -> io::Result<()> {
        if let Some(login) = &self.login {
            client.exchange(login, Expect::Status("OK"))?;
        }
        if let Some(select) = &self.select {
            client.exchange(select, Expect::Status("OK"))?;
        }
        Ok(())
    }

    /// A connection logged in, whose buffer holds a reply of `reply_bytes`.
    pub fn open(&self, reply_bytes: usize) -> Result<RedisConn> {
        let conn = self.connection(Some(self.limit))?;
        let conn = self.check(conn)?;
        let mut client = RedisConn::new(conn, reply_bytes, &self.endpoint, self.limit);
        self.log_in(&mut client).map_err(|e| match e.kind() {
            // An answer other than OK (`WRONGPASS`, `NOAUTH`, …); a server that
            // closed or stalled says so itself.
            io::ErrorKind::Other | io::ErrorKind::InvalidData => {
                anyhow::Error::new(e).context("the login was refused")
            }
            _ => e.into(),
        })?;
        Ok(client)
    }

    /// `conn`, once its holder is the throwaway server (on its socket).
    fn check(&self, conn: Conn) -> io::Result<Conn> {
        if let (Some(holder), Conn::Unix(stream)) = (self.holder, &conn) {
            let peer = peers::unix_peer(stream)?;
            if peer.pid != holder.pid || peer.uid != holder.uid {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "the Redis socket is held by process {} (uid {}), not sockbench's \
                         redis-server (process {}); nothing was sent to it",
                        peer.pid, peer.uid, holder.pid
                    ),
                ));
            }
        }
        Ok(conn)
    }

    /// The TLS version and cipher this target negotiates, for TLS targets.
    pub fn tls_info(&self) -> Result<Option<TlsInfo>> {
        if self.transport() != Transport::Tls {
            return Ok(None);
        }
        Ok(self.open(0)?.conn().tls_info())
    }
}

/// `AUTH [USER] PASSWORD`.
fn auth(user: Option<&str>, password: &str) -> Encoded {
    match user {
        Some(user) => Encoded::new(&[b"AUTH", user.as_bytes(), password.as_bytes()]),
        None => Encoded::new(&[b"AUTH", password.as_bytes()]),
    }
}
