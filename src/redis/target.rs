//! One way to reach a Redis server (a transport of the throwaway server, or a
//! user's `--url`): where it listens, how to log in, and, for the throwaway
//! server's socket, who must answer before the password goes.

use super::resp::{Client, Expect, Request};
use super::url::UserUrl;
use crate::system::peers;
use crate::transport::{Conn, Connector, Endpoint, TlsInfo, TlsVersion, Transport};
use anyhow::{Context, Result};
use std::io;
use std::time::Duration;

/// How long a connection, a TLS handshake, a write and a reply may each take. The
/// timed loops keep these timeouts too, so a server that stops answering (stopped,
/// not killed) ends a trial within them, and Ctrl-C is seen then at the latest;
/// their kernel timer is part of every transport's figure alike.
pub const WAIT: Duration = Duration::from_secs(10);

/// The process and account that must hold the other end of a Unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
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
    login: Option<Request>,
    /// `SELECT DB`, when the user's URL names a database.
    select: Option<Request>,
    /// For the throwaway server's socket: checked on every connection.
    holder: Option<Holder>,
    /// True for the throwaway server sockbench started.
    pub throwaway: bool,
}

impl Target {
    /// A transport of the throwaway server, logging in as `user` with `password`.
    pub fn throwaway(
        endpoint: Endpoint,
        user: &str,
        password: &str,
        holder: Holder,
    ) -> Result<Target> {
        Ok(Target {
            label: endpoint.transport.name().to_string(),
            connector: Connector::new(&endpoint, TlsVersion::V1_3)?,
            endpoint,
            login: Some(auth(Some(user), password)),
            select: None,
            holder: Some(holder),
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
                .map(|db| Request::new(&[b"SELECT", db.to_string().as_bytes()])),
            holder: None,
            throwaway: false,
        })
    }

    pub fn transport(&self) -> Transport {
        self.endpoint.transport
    }

    /// A new connection, its socket's holder checked (the throwaway server's
    /// socket): nothing is sent before. Made to be timed: no allocation.
    pub fn connect(&self) -> io::Result<Conn> {
        self.check(self.connector.connect_bounded(WAIT)?)
    }

    /// Logs in on `client`'s connection and selects the URL's database. Made to be
    /// timed: the requests are encoded already.
    pub fn log_in(&self, client: &mut Client) -> io::Result<()> {
        if let Some(login) = &self.login {
            client.exchange(login, Expect::Status("OK"))?;
        }
        if let Some(select) = &self.select {
            client.exchange(select, Expect::Status("OK"))?;
        }
        Ok(())
    }

    /// A connection logged in, whose buffer holds a reply of `reply_bytes`.
    pub fn open(&self, reply_bytes: usize) -> Result<Client> {
        let conn = self
            .connector
            .connect_within(WAIT)
            .and_then(|c| {
                c.set_read_timeout(Some(WAIT))?;
                c.set_write_timeout(Some(WAIT))?;
                self.check(c)
            })
            .with_context(|| format!("cannot connect to Redis at {}", self.endpoint))?;
        let mut client = Client::new(conn, reply_bytes);
        self.log_in(&mut client)
            .with_context(|| format!("Redis at {} refused the login", self.endpoint))?;
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
fn auth(user: Option<&str>, password: &str) -> Request {
    match user {
        Some(user) => Request::new(&[b"AUTH", user.as_bytes(), password.as_bytes()]),
        None => Request::new(&[b"AUTH", password.as_bytes()]),
    }
}
