//! A throwaway `redis-server`: started in a private temporary directory as the
//! server account, listening on a Unix socket there, on 127.0.0.1 and (when the
//! build has TLS) on a TLS port, keeping nothing on disk; stopped by its PID and
//! removed on every way out (success, error, Ctrl-C, or a panic in a test).
//!
//! The directory is sockbench's own (0711 when the server runs as another
//! account, with the owner file and the server's log); `srv/` inside is the server
//! account's (0700): its configuration, certificate and key, socket and pid file.
//! Root writes there only through the held descriptor of `srv/` (see `crate::dir`).
//! The configuration (`config.rs`) is a file, not arguments: it holds the ACL
//! user's password hash, and a command line is readable by every local account.
//!
//! Other local accounts can reach the loopback ports while it runs; without the
//! password they can run no command (the `default` user is off). Before sending the
//! password sockbench checks who answers (`listeners.rs`). The server runs in its
//! own process group (a Ctrl-C meant for sockbench must not reach it) and gets
//! SIGKILL if sockbench dies without cleaning up; the leftover sweep then knows its
//! directory by [`super::DIR_PREFIX`], and that its server is gone by the owner
//! file, where the server's process is recorded when it starts.
//!
//! The same server runs in a container for the transports into one
//! ([`RedisServer::start_inside`], `container.rs`): started from the container's
//! thread, it is in the container's network and mounts, listens by TCP on the
//! container's addresses only (no TLS), and its directory is shared into the
//! container as a volume, so its socket is reached from the host by the same path.

use super::account::{self, Account};
use super::config::{self, Settings, Tls, SOCKET, USER};
use super::listeners;
use super::resp::{Encoded, Expect, RedisConn, Reply};
use crate::dir::Dir;
use crate::leftovers::PrivateDir;
use crate::system::peers;
use crate::transport::{Address, Conn, Connector, Endpoint, TlsVersion, Transport, MAX_UNIX_PATH};
use crate::wait::{Patience, LIMIT, SLICE};
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to answer its first PING.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long it may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the first PING may wait for its answer before the server's process is
/// looked at again.
const READY_POLL: Duration = Duration::from_millis(100);
/// The server account's directory inside the private one, and the log beside it.
pub(super) const SERVER_DIR: &str = "srv";
const LOG: &str = "redis.log";
const CONFIG: &str = "redis.conf";

/// Where a throwaway server listens by TCP.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Listen {
    /// 127.0.0.1, on free ports: one for TCP and one for TLS.
    Loopback,
    /// A container's addresses on `port` of its network, which is sockbench's alone;
    /// no TLS (no transport into a container is TLS).
    Container { addresses: Vec<IpAddr>, port: u16 },
}

/// A running throwaway server.
pub struct RedisServer {
    child: Option<Child>,
    program: PathBuf,
    listen: Listen,
    port: u16,
    tls_port: Option<u16>,
    /// Why there is no TLS port, in one line, when the build has no TLS.
    tls_missing: Option<String>,
    password: String,
    account: Option<Account>,
    /// The server account's directory, held open.
    srv: Dir,
    // Last, so the directory goes after the server has stopped.
    dir: Option<PrivateDir>,
}

impl RedisServer {
    /// Starts `program` (a `redis-server`) and waits until it answers.
    pub fn start(program: &Path) -> Result<RedisServer> {
        RedisServer::begin(program, Listen::Loopback)
    }

    /// Starts `program` in a container, on the calling thread, which must be the
    /// container's (`crate::container::Network::inside`): listening on `addresses`
    /// (the container's) at `port`, its directory shared into the container.
    pub fn start_inside(program: &Path, addresses: Vec<IpAddr>, port: u16) -> Result<RedisServer> {
        RedisServer::begin(program, Listen::Container { addresses, port })
    }

    fn begin(program: &Path, listen: Listen) -> Result<RedisServer> {
        let account = account::server_account()?;
        let socket = format!("{SERVER_DIR}/{SOCKET}");
        let dir = crate::system::account::server_dir(
            account.as_ref(),
            super::DIR_PREFIX,
            "redis-server",
            &socket,
            MAX_UNIX_PATH,
        )?;
        if let Listen::Container { .. } = listen {
            // A volume: the server reaches its directory through the container's
            // mount, the host by the same path.
            crate::container::share_here(dir.path())?;
        }
        let srv = dir
            .dir()
            .make_dir(SERVER_DIR, 0o700, account.as_ref().map(Account::owner))?;
        let mut server = RedisServer {
            child: None,
            program: program.to_path_buf(),
            listen,
            port: 0,
            tls_port: None,
            tls_missing: None,
            password: config::random_password(),
            account,
            srv,
            dir: Some(dir),
        };
        if server.listen == Listen::Loopback {
            server.write_certificate()?;
        }
        server.launch()?;
        // The password works, and the user may run what the experiments send.
        let mut client = server.connect(Transport::Unix, 0)?;
        client
            .exchange(&Encoded::new(&[b"PING"]), Expect::Status("PONG"))
            .context("the throwaway Redis server does not answer PING after AUTH")?;
        Ok(server)
    }

    /// A fresh ECDSA P-256 certificate and its key, readable by the server only.
    fn write_certificate(&self) -> Result<()> {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .context("cannot make the server certificate")?;
        self.write_private("server.crt", made.cert.pem().as_bytes())?;
        self.write_private("server.key", made.signing_key.serialize_pem().as_bytes())
    }

    /// Writes a file of `srv/` only the server account can read: through the
    /// directory's descriptor, replacing whatever is at `name` (a link the server
    /// account planted there included) rather than writing through it.
    fn write_private(&self, name: &str, contents: &[u8]) -> Result<()> {
        self.srv
            .replace_file(
                name,
                contents,
                0o600,
                self.account.as_ref().map(Account::owner),
            )
            .with_context(|| format!("cannot write {}", self.srv.join(name).display()))
    }

    /// Starts the server on free ports (a few tries, in case another program takes
    /// one first; once more without TLS if the build has none), or in a container
    /// on its port, and waits until it answers.
    fn launch(&mut self) -> Result<()> {
        let mut with_tls = self.listen == Listen::Loopback;
        let mut tries = 0;
        loop {
            tries += 1;
            let (port, tls_port) = match &self.listen {
                Listen::Loopback => listeners::free_ports()?,
                Listen::Container { port, .. } => (*port, 0),
            };
            self.port = port;
            self.tls_port = with_tls.then_some(tls_port);
            self.write_config()?;
            self.spawn()?;
            let error = match self.wait_ready() {
                Ok(()) => return self.check_ports(),
                Err(e) => e,
            };
            self.stop();
            if crate::interrupt::interrupted() {
                return Err(error);
            }
            let said = self.log_tail();
            if said.contains("Address already in use") && tries < 3 {
                continue;
            }
            // Only a build that refuses the TLS directives (one without TLS) runs
            // without it; any other failure, a bad certificate included, is an error.
            let refused = said.contains("Bad directive") || said.contains("not supported");
            if with_tls && refused && said.contains("tls-") {
                with_tls = false;
                self.tls_missing = Some(format!("redis-server did not start with TLS: {said}"));
                continue;
            }
            return Err(error);
        }
    }

    fn write_config(&self) -> Result<()> {
        let (cert, key) = (self.srv.join("server.crt"), self.srv.join("server.key"));
        let hash = config::sha256_hex(&self.password);
        let loopback = [IpAddr::V4(Ipv4Addr::LOCALHOST)];
        let text = config::text(&Settings {
            bind: match &self.listen {
                Listen::Loopback => &loopback,
                Listen::Container { addresses, .. } => addresses,
            },
            port: self.port,
            tls: self.tls_port.map(|port| Tls {
                port,
                cert: &cert,
                key: &key,
            }),
            dir: self.srv.path(),
            password_sha256: &hash,
        })?;
        self.write_private(CONFIG, text.as_bytes())
    }

    /// Starts the program as the server account with its output in the log, tied to
    /// sockbench's life, in its own process group, with an empty environment.
    fn spawn(&mut self) -> Result<()> {
        let top = self.private().dir();
        let _ = top.remove_file(LOG);
        let log = top
            .create_new(LOG, 0o600)
            .context("cannot create the server log")?;
        let mut command = Command::new(&self.program);
        command
            .arg(self.srv.join(CONFIG))
            .env_clear()
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .current_dir("/");
        if let Some(a) = &self.account {
            command.uid(a.uid).gid(a.gid); // std drops root's supplementary groups
        }
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {} {}", self.program.display(), CONFIG))?;
        let pid = child.id();
        self.child = Some(child);
        self.private().record_server(pid)
    }

    /// Waits until the server answers an unauthenticated PING with NOAUTH on its
    /// socket (the socket's peer checked first): it serves, and without the
    /// password it serves nobody.
    fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut asked: Option<RedisConn> = None;
        loop {
            crate::interrupt::check()?;
            self.check_running()?;
            if asked.is_none() {
                if let Ok(stream) = std::os::unix::net::UnixStream::connect(self.socket()) {
                    self.check_peer(&stream)?;
                    // Short waits, so Ctrl-C, the process and the deadline are seen
                    // between them.
                    stream.set_read_timeout(Some(READY_POLL))?;
                    stream.set_write_timeout(Some(READY_POLL))?;
                    let at = self.endpoint(Transport::Unix).context("no socket")?;
                    let mut client = RedisConn::new(Conn::Unix(stream), 0, &at, READY_POLL);
                    client.send(&Encoded::new(&[b"PING"]))?;
                    asked = Some(client);
                }
            }
            if let Some(client) = &mut asked {
                match client.reply() {
                    Ok(Reply::Error(text)) if text.starts_with(b"NOAUTH") => return Ok(()),
                    Ok(other) => bail!(
                        "the throwaway Redis server answered an unauthenticated PING with \
                         {other:?}, not NOAUTH: its ACL is not in effect"
                    ),
                    Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "redis-server did not answer within {} s; log: {}",
                    READY_TIMEOUT.as_secs(),
                    self.log_tail()
                );
            }
            if asked.is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    fn check_peer(&self, stream: &std::os::unix::net::UnixStream) -> Result<()> {
        let peer = peers::unix_peer(stream).context("cannot read the Redis socket's peer")?;
        let pid = self.pid().context("redis-server is not running")?;
        listeners::check_peer(peer, pid, account::uid_of(self.account.as_ref()))
    }

    fn check_ports(&self) -> Result<()> {
        let pid = self.pid().context("redis-server is not running")?;
        let uid = account::uid_of(self.account.as_ref());
        if let Listen::Container { addresses, port } = &self.listen {
            return listeners::check_inside(pid, uid, *port, addresses);
        }
        for port in std::iter::once(self.port).chain(self.tls_port) {
            listeners::check_port(pid, uid, port)?;
        }
        Ok(())
    }

    /// Where the server listens for `transport`; `None` for a transport it does not
    /// serve (tls when the build has none). A server in a container answers here
    /// only for its socket: where each transport into the container reaches it is
    /// the container's (`container.rs`).
    pub fn endpoint(&self, transport: Transport) -> Option<Endpoint> {
        let localhost = |port| Address::Ip(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
        let on_host = self.listen == Listen::Loopback;
        let address = match transport {
            Transport::Unix => Address::Path(self.socket()),
            Transport::Tcp if on_host => localhost(self.port),
            Transport::Tls if on_host => localhost(self.tls_port?),
            Transport::Tcp
            | Transport::Tls
            | Transport::UnixAbstract
            | Transport::Tcp6
            | Transport::Veth
            | Transport::Bridge
            | Transport::Published
            | Transport::DockerProxy
            | Transport::UnixShared
            | Transport::UnixSeqpacket
            | Transport::UnixDgram
            | Transport::UnixDgramAbstract
            | Transport::Udp
            | Transport::Udp6
            | Transport::UdpUnconnected => return None,
        };
        Some(Endpoint { transport, address })
    }

    /// Why the server has no TLS port (one line), when it has none.
    pub fn tls_missing(&self) -> Option<&str> {
        self.tls_missing.as_deref()
    }

    /// Opens an authenticated connection over `transport` (TLS 1.3 for tls), the
    /// socket's peer checked first, whose buffer holds a reply of `reply_bytes`.
    pub fn connect(&self, transport: Transport, reply_bytes: usize) -> Result<RedisConn> {
        let endpoint = self.endpoint(transport).with_context(|| {
            format!(
                "the throwaway Redis server does not listen on {}",
                transport.name()
            )
        })?;
        let mut patience = Patience::new(LIMIT);
        let mut waited = || patience.check(|| "the TLS handshake was not complete".into());
        let conn = Connector::new(&endpoint, TlsVersion::V1_3)?
            .connect_sliced(SLICE, Some(LIMIT), &mut waited)
            .with_context(|| format!("cannot connect to the Redis server at {endpoint}"))?;
        if let Conn::Unix(stream) = &conn {
            self.check_peer(stream)?;
        }
        let mut client = RedisConn::new(conn, reply_bytes, &endpoint, LIMIT);
        client.auth(USER, &self.password)?;
        Ok(client)
    }

    /// The ACL user and its password, for clients sockbench does not make itself.
    pub fn credentials(&self) -> (&'static str, &str) {
        (USER, &self.password)
    }

    /// Who must hold the other end of its Unix socket: the server process, as the
    /// server account.
    pub fn holder(&self) -> Result<super::target::SocketHolder> {
        Ok(super::target::SocketHolder {
            pid: self.pid().context("redis-server is not running")?,
            uid: account::uid_of(self.account.as_ref()),
        })
    }

    /// The process ID of the server, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// An error naming the program and its last words if it has exited.
    pub fn check_running(&mut self) -> Result<()> {
        let Some(child) = &mut self.child else {
            bail!("redis-server is not running");
        };
        match child.try_wait()? {
            None => Ok(()),
            Some(status) => bail!(
                "{} exited ({status}): {}",
                self.program.display(),
                self.log_tail()
            ),
        }
    }

    /// Stops the server: SIGCONT (a stopped process cannot act on SIGTERM), SIGTERM,
    /// then SIGKILL.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if matches!(child.try_wait(), Ok(None)) {
                // SAFETY: a plain syscall on the PID of our child, not yet reaped.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGCONT) };
            }
            crate::subprocess::stop(&mut child, &[(libc::SIGTERM, STOP_TIMEOUT)]);
        }
    }

    /// The path of its Unix socket.
    pub fn socket(&self) -> PathBuf {
        self.srv.join(SOCKET)
    }

    fn private(&self) -> &PrivateDir {
        self.dir
            .as_ref()
            .expect("the directory lives as long as the server")
    }

    /// The last few lines of the server's log, on one line.
    fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(file) = self.private().dir().open_read(LOG) {
            let _ = file.take(1 << 20).read_to_string(&mut text);
        }
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        match &lines[lines.len().saturating_sub(5)..] {
            [] => "(no output)".into(),
            last => last.join(" | "),
        }
    }

    /// The private directory and the server's own, for tests.
    #[cfg(test)]
    pub(super) fn dirs(&self) -> (&Dir, &Dir) {
        (self.private().dir(), &self.srv)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        // After the server has stopped: the directory goes, its owner file last.
        self.dir.take();
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
