//! A throwaway PostgreSQL cluster: created in a private temporary directory, started
//! as a child process, switched between authentication methods, and stopped and
//! removed on every way out (success, error, Ctrl-C, or a panic in a test).
//!
//! The server listens on 127.0.0.1 (and ::1 when asked) on a free port, on a Unix
//! socket in a 0700 directory, and on an abstract socket only when `unix-abstract` is
//! measured; `ssl = on` with a fresh ECDSA P-256 certificate. Role and database `foo`,
//! with a random password, are the experiments' setup.
//!
//! Its directory is sockbench's own (0711, with the owner file and the programs'
//! logs); `data/` and `sock/` inside belong to the server account, so root writes
//! there only through the held descriptor of `data/` (see `crate::dir`).
//!
//! Other local users can reach the loopback port and the abstract socket while it
//! runs, so the superuser is admitted only by peer authentication on the private
//! socket directory, for the OS account sockbench runs as, and the unprivileged role
//! `foo` only by its password, by peer, or (trust) through that directory alone (see
//! `hba.rs`): no other account reaches either. What `foo` could change that alters
//! the measured work is read right after the cluster is made (`tamper.rs`), and
//! every experiment is checked against that clean state. The postmaster runs in its own
//! process group (a Ctrl-C meant for sockbench must not reach it) and gets SIGQUIT if
//! sockbench dies without cleaning up.
//!
//! Transports into a container (`crate::container`) get a cluster of their own,
//! started inside a container's network and mounts ([`Cluster::start_all`]): its
//! postmaster listens on the container's addresses (the veth pair's and the
//! bridge's, port 5432 as in the postgres image) and on its socket directory, shared
//! into the container as a volume, which the host's client opens by its own path
//! (`unix-shared`, `requirepeer` as on the host). Its data directory is a copy of
//! the host cluster's, made by the server account right after `initdb`, so a run
//! pays for one `initdb`. The container's network is removed once the server has
//! stopped, and the directory after it.

use super::account::{self, Account};
use super::bindir::Binaries;
use super::hba::{self, AuthMethod, ProbeAddr, ADMIN_ROLE, ROLE, STANDING};
use super::libpq::{ConnParams, PgConn};
use super::process::{self, Spawned};
use super::tamper::Facts;
use crate::container::{ClientSide, Crossing, Network};
use crate::cpu::ServerRole;
use crate::dir::Dir;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::transport::{Place, SocketKind, Transport, MAX_UNIX_PATH};
use anyhow::{bail, Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Connections beyond the clients: the administrator's, the startup probes', and
/// the superuser reserve.
const CONNECTION_MARGIN: u32 = 20;
/// The port the cluster in a container listens on: the container's network is
/// sockbench's own, so PostgreSQL's usual port is free there.
const CONTAINER_PORT: u16 = 5432;

/// A running throwaway cluster.
pub struct Cluster {
    server: Option<Spawned>,
    port: u16,
    base: PathBuf,
    socket_dir: PathBuf,
    abstract_name: Option<String>,
    password: String,
    account: Option<Account>,
    /// What role `foo` could change, as it was right after the cluster was made.
    baseline: Option<Facts>,
    /// The data directory, held open: it belongs to the server account, so files
    /// root writes there are written through this descriptor, never by path.
    data: Dir,
    /// The container the cluster runs in, `None` on the host; removed after the
    /// server has stopped.
    container: Option<Container>,
    // Last, so the directory goes after the server has stopped.
    dir: Option<PrivateDir>,
}

/// A cluster's container: its network, and where each transport into it reaches
/// the server.
struct Container {
    network: Network,
    ways: Vec<Way>,
}

/// Where one transport's client connects to the cluster in a container over TCP,
/// and the `docker-proxy` in between, if any.
struct Way {
    transport: Transport,
    address: SocketAddr,
    proxy: Option<u32>,
}

impl Cluster {
    /// Creates and starts a cluster listening for the `transports` to be measured,
    /// with room for `clients` connections at once besides sockbench's own.
    pub fn start(binaries: &Binaries, transports: &[Transport], clients: u32) -> Result<Cluster> {
        let mut cluster = Cluster::make(transports, None)?;
        cluster.init(binaries)?;
        cluster.run(binaries, transports, clients)?;
        Ok(cluster)
    }

    /// The clusters `transports` need, each started as [`Cluster::start`] does: one
    /// on the host for the host's transports, and one in a container's network for
    /// the transports into one, whose data directory is a copy of the first's,
    /// fresh from `initdb`. The host's comes first.
    pub fn start_all(
        binaries: &Binaries,
        transports: &[Transport],
        clients: u32,
    ) -> Result<Vec<Cluster>> {
        let (host, inside): (Vec<Transport>, Vec<Transport>) =
            transports.iter().partition(|t| t.crossing().is_none());
        let mut made: Vec<(Cluster, Vec<Transport>)> = Vec::new();
        for on in [host, inside].into_iter().filter(|on| !on.is_empty()) {
            let network = match on[0].crossing() {
                Some(_) => Some(Network::build().context("cannot build a container's network")?),
                None => None,
            };
            let cluster = Cluster::make(&on, network)?;
            match made.first() {
                Some((first, _)) => cluster.copy_data(first)?,
                None => cluster.init(binaries)?,
            }
            made.push((cluster, on));
        }
        let mut started = Vec::new();
        for (mut cluster, on) in made {
            cluster.run(binaries, &on, clients)?;
            started.push(cluster);
        }
        Ok(started)
    }

    /// A cluster's directories, in `network`'s container when there is one: its
    /// `data` and `sock`, the server account's, not yet made by `initdb`.
    fn make(transports: &[Transport], network: Option<Network>) -> Result<Cluster> {
        // PostgreSQL's unix_socket_directories and libpq's host are comma-separated
        // lists: the socket directory under TMPDIR would be split in two.
        let tmp = std::env::temp_dir();
        if tmp.as_os_str().as_encoded_bytes().contains(&b',') {
            return Err(usage(format!(
                "TMPDIR ({}) holds a comma, which PostgreSQL's unix_socket_directories and \
                 libpq's host cannot take; set TMPDIR to a directory without one, such as /tmp",
                crate::units::shown(&tmp.display().to_string())
            )));
        }
        let account = account::server_account()?;
        // The server account gets its own `data` and `sock` inside.
        let dir = crate::system::account::server_dir(
            account.as_ref(),
            super::family::CLUSTER.prefix,
            "PostgreSQL",
            "sock/.s.PGSQL.65535",
            MAX_UNIX_PATH,
        )?;
        let base = dir.path().to_path_buf();
        let owner = account.as_ref().map(Account::owner);
        let data = dir.dir().make_dir("data", 0o700, owner)?;
        dir.dir().make_dir("sock", 0o700, owner)?;
        Ok(Cluster {
            server: None,
            port: 0,
            socket_dir: base.join("sock"),
            abstract_name: transports
                .iter()
                .any(|t| t.place() == Place::Abstract)
                .then(|| format!("sockbench-{}", random_hex(8))),
            password: random_hex(24),
            account,
            baseline: None,
            base,
            data,
            container: network.map(|network| Container {
                network,
                ways: Vec::new(),
            }),
            dir: Some(dir),
        })
    }

    /// Starts the server made by `init` or `copy_data` for `transports`, with room
    /// for `clients`, and makes role `foo`.
    fn run(&mut self, binaries: &Binaries, transports: &[Transport], clients: u32) -> Result<()> {
        if let Some(container) = &self.container {
            // The socket directory as a volume of the container's.
            let dir = self.socket_dir.clone();
            container
                .network
                .inside(move || crate::container::share_here(&dir))??;
        }
        let max_connections = clients.saturating_add(CONNECTION_MARGIN).max(200);
        self.launch(
            binaries,
            transports.iter().any(|t| t.place() == Place::Ipv6),
            max_connections,
        )?;
        self.open_ways(transports)?;
        self.create_role()?;
        self.baseline = Some(Facts::read(self)?);
        Ok(())
    }

    /// For each transport into the container, where its client connects: the
    /// container's address, or the host's port published to it (by a DNAT rule or
    /// through `docker-proxy`).
    fn open_ways(&mut self, transports: &[Transport]) -> Result<()> {
        let port = self.port;
        let Some(container) = &mut self.container else {
            return Ok(());
        };
        for &transport in transports {
            let Some(crossing) = transport.crossing() else {
                continue;
            };
            // The shared socket is a path, which the cluster listens on already.
            let Some(way) = container.network.way_in(crossing, port)? else {
                continue;
            };
            container.ways.push(Way {
                transport,
                address: way.address,
                proxy: way.proxy,
            });
        }
        Ok(())
    }

    /// Fills the data directory with a copy of `first`'s, fresh from `init` (its
    /// certificate and `pg_ident.conf` too), and writes this cluster's own
    /// `pg_hba.conf`. The server account copies: both directories are its own, and
    /// root never acts by path inside them.
    fn copy_data(&self, first: &Cluster) -> Result<()> {
        let args = [
            "-a".to_string(),
            format!("{}/.", first.base.join("data").display()),
            self.base.join("data").display().to_string(),
        ];
        process::run_to_end(
            Path::new(COPY),
            &args,
            self.account.as_ref(),
            &self.base.join("copy.log"),
            Duration::from_secs(60),
        )?;
        self.write_private("pg_hba.conf", self.hba_conf(STANDING).as_bytes())
    }

    /// `pg_hba.conf` for `method`, role `foo` coming over TCP from loopback on the
    /// host, or from sockbench's networks into a container.
    fn hba_conf(&self, method: AuthMethod) -> String {
        let clients = match self.container {
            Some(_) => hba::CONTAINER_NETWORKS,
            None => hba::LOOPBACK,
        };
        hba::hba_conf(method, clients)
    }

    fn init(&self, binaries: &Binaries) -> Result<()> {
        let data = self.base.join("data");
        let args = [
            "-D".into(),
            data.display().to_string(),
            "-U".into(),
            ADMIN_ROLE.into(),
            "--auth-local=peer".into(),
            "--auth-host=reject".into(),
            "-E".into(),
            "UTF8".into(),
            // The C locale, whatever the caller's (the server gets no environment).
            "--no-locale".into(),
            "--no-sync".into(),
        ];
        process::run_to_end(
            &binaries.initdb(),
            &args,
            self.account.as_ref(),
            &self.base.join("initdb.log"),
            Duration::from_secs(120),
        )?;
        let certified =
            rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
                .context("cannot make the server certificate")?;
        self.write_private("server.crt", certified.cert.pem().as_bytes())?;
        self.write_private(
            "server.key",
            certified.signing_key.serialize_pem().as_bytes(),
        )?;
        self.write_private(
            "pg_ident.conf",
            hba::ident_conf(&account::current_user_name()).as_bytes(),
        )?;
        self.write_private("pg_hba.conf", self.hba_conf(STANDING).as_bytes())
    }

    /// Writes a file of the data directory that only the server account can read:
    /// through the directory's descriptor, replacing whatever is at `name` (a link
    /// the server account planted there included) rather than writing through it.
    fn write_private(&self, name: &str, contents: &[u8]) -> Result<()> {
        let owner = self.account.as_ref().map(Account::owner);
        self.data
            .replace_file(name, contents, 0o600, owner)
            .with_context(|| format!("cannot write {}", self.data.join(name).display()))
    }

    /// Starts the postmaster on a free port (a few tries, in case another program
    /// takes the port first), or in a container on its addresses, and waits until
    /// it accepts connections.
    fn launch(&mut self, binaries: &Binaries, tcp6: bool, max_connections: u32) -> Result<()> {
        let mut last_error = None;
        for _ in 0..3 {
            let listen = match &self.container {
                Some(c) => {
                    self.port = CONTAINER_PORT;
                    [Crossing::Veth, Crossing::Bridge]
                        .map(|x| c.network.server_address(x, CONTAINER_PORT).ip().to_string())
                        .join(",")
                }
                None => {
                    self.port = free_port()?;
                    if tcp6 { "127.0.0.1,::1" } else { "127.0.0.1" }.to_string()
                }
            };
            let settings = [
                format!("listen_addresses={listen}"),
                format!("port={}", self.port),
                format!("unix_socket_directories={}", self.socket_directories()),
                "ssl=on".into(),
                format!("max_connections={max_connections}"),
                "fsync=off".into(),
            ];
            let mut args = vec![
                "-D".to_string(),
                self.base.join("data").display().to_string(),
            ];
            for s in settings {
                args.push("-c".into());
                args.push(s);
            }
            let log = self.base.join("postgres.log");
            let server = self.spawn(binaries.postgres(), args, log.clone())?;
            let pid = server.pid();
            self.server = Some(server);
            if let Some(dir) = &self.dir {
                dir.record_server(pid)?;
            }
            match self.wait_ready() {
                // Nothing but sockbench's own processes is in the container's
                // network, and its socket directory is private: no other account
                // can answer there.
                Ok(()) if self.container.is_some() => return Ok(()),
                Ok(()) => {
                    let name = self.abstract_name.as_deref();
                    let account = self.account.as_ref();
                    return super::listeners::check(self.pid(), account, self.port, tcp6, name);
                }
                Err(e) => {
                    self.stop();
                    let port_taken = process::tail(&log).contains("Address already in use");
                    if !port_taken || self.container.is_some() {
                        return Err(e);
                    }
                    last_error = Some(e);
                }
            }
        }
        Err(last_error.unwrap_or_else(|| anyhow::anyhow!("the server did not start")))
    }

    /// Starts the postmaster, in the container when the cluster has one (where it
    /// and its backends stay, and from whose thread it gets its death signal).
    fn spawn(&self, program: PathBuf, args: Vec<String>, log: PathBuf) -> Result<Spawned> {
        let account = self.account.clone();
        // SIGQUIT if sockbench dies: the postmaster's immediate shutdown, which
        // also ends its backends.
        let start = move || Spawned::start(&program, &args, account.as_ref(), &log, libc::SIGQUIT);
        match &self.container {
            Some(c) => c.network.inside(start)?,
            None => start(),
        }
    }

    fn wait_ready(&mut self) -> Result<()> {
        let admin = self.admin_params();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            crate::interrupt::check()?;
            if let Some(server) = &mut self.server {
                server.check_running()?;
            }
            if admin.ping() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "the PostgreSQL server did not accept connections within 60 s; log: {}",
                    process::tail(&self.base.join("postgres.log"))
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn create_role(&mut self) -> Result<()> {
        let admin = PgConn::connect(&self.admin_params()).context("cannot reach the new server")?;
        admin.query_value(&format!("CREATE ROLE {ROLE} LOGIN"))?;
        self.store_password(&admin, STANDING)?;
        admin.query_value(&format!("CREATE DATABASE {ROLE} OWNER {ROLE}"))?;
        Ok(())
    }

    /// Stores `foo`'s password the way `method` needs it.
    fn store_password(&self, admin: &PgConn, method: AuthMethod) -> Result<()> {
        admin.query_value(&format!(
            "SET password_encryption = '{}'",
            method.password_storage()
        ))?;
        admin.query_value(&format!("ALTER ROLE {ROLE} PASSWORD '{}'", self.password))?;
        Ok(())
    }

    /// What role `foo` could change, as it was right after the cluster was made.
    pub fn baseline(&self) -> Option<&Facts> {
        self.baseline.as_ref()
    }

    /// Takes the objects `foo` owns now into the baseline (after a user's script,
    /// which may make its own, has run).
    pub fn accept_objects(&mut self) -> Result<()> {
        let now = Facts::read(self)?;
        if let Some(baseline) = &mut self.baseline {
            baseline.take_objects(now);
        }
        Ok(())
    }

    /// How the administrator reaches the server: peer authentication on the private
    /// socket directory.
    pub(super) fn admin_params(&self) -> ConnParams {
        ConnParams::new([
            ("host", self.socket_dir.display().to_string()),
            ("port", self.port.to_string()),
            ("user", ADMIN_ROLE.to_string()),
            ("dbname", "postgres".to_string()),
            ("sslmode", "disable".to_string()),
            ("gssencmode", "disable".to_string()),
            ("connect_timeout", "10".to_string()),
            // Only the server account may answer (see `listeners.rs`).
            ("requirepeer", self.server_account_name()),
        ])
    }

    fn server_account_name(&self) -> String {
        self.account
            .as_ref()
            .map_or_else(account::current_user_name, |a| a.name.clone())
    }

    /// Whether the cluster is the one that serves `transport`: the host's serves
    /// the host's transports, the container's those into it.
    pub fn serves(&self, transport: Transport) -> bool {
        transport.crossing().is_some() == self.container.is_some()
    }

    /// How role `foo` reaches the server over `transport`, password included.
    pub fn params(&self, transport: Transport) -> Result<ConnParams> {
        if !self.serves(transport) {
            match self.container {
                Some(_) => bail!("the cluster in a container is not reached over {transport}"),
                None => bail!("the cluster is not in a container"),
            }
        }
        // The place gives the host; the kind of socket whether TLS is asked for.
        let mut port = self.port;
        let host = match transport.place() {
            Place::Path | Place::Container(Crossing::Shared) => {
                self.socket_dir.display().to_string()
            }
            Place::Abstract => match &self.abstract_name {
                Some(name) => format!("@{name}"),
                None => bail!("the cluster was started without unix-abstract"),
            },
            Place::Ipv4 => "127.0.0.1".into(),
            Place::Ipv6 => "::1".into(),
            Place::Container(_) => {
                let way = self
                    .way(transport)
                    .with_context(|| format!("the cluster was started without {transport}"))?;
                port = way.address.port();
                way.address.ip().to_string()
            }
        };
        let sslmode = match transport.kind() {
            SocketKind::Tls => "require",
            _ => "disable",
        };
        let unix = matches!(transport.within().place(), Place::Path | Place::Abstract);
        // libpq checks the peer of a Unix socket before it sends anything: a squatter
        // on the abstract name never gets the password.
        let requirepeer = unix.then(|| ("requirepeer", self.server_account_name()));
        Ok(ConnParams::new(requirepeer.into_iter().chain([
            ("host", host),
            ("port", port.to_string()),
            ("user", ROLE.to_string()),
            ("dbname", ROLE.to_string()),
            ("password", self.password.clone()),
            ("sslmode", sslmode.to_string()),
            ("gssencmode", "disable".to_string()),
            ("connect_timeout", "10".to_string()),
        ])))
    }

    /// Where `transport`'s client connects to the cluster in a container over TCP.
    fn way(&self, transport: Transport) -> Option<&Way> {
        let ways = self.container.as_ref().map_or(&[][..], |c| &c.ways);
        ways.iter().find(|w| w.transport == transport)
    }

    /// The processes that serve `transport`: the postmaster (its backends
    /// below it), and the `docker-proxy` in between as `proxy`.
    pub fn roles(&self, transport: Transport) -> Vec<ServerRole> {
        let proxy = self.way(transport).and_then(|w| w.proxy);
        (self.pid().map(ServerRole::server).into_iter())
            .chain(proxy.map(|pid| ServerRole::started("proxy", pid)))
            .collect()
    }

    /// Over the bridge, the client is in a container of its own: the calling
    /// thread is moved there while the guard lives, and every connection to the
    /// bridge's address is made meanwhile (threads started meanwhile are there too).
    pub fn client_side(&self, transport: Transport) -> Result<Option<ClientSide<'_>>> {
        match (&self.container, transport) {
            (Some(c), Transport::Bridge) => c.network.client_side().map(Some),
            _ => Ok(None),
        }
    }

    /// Switches every connection of role `foo` to `method`: stores the password the
    /// way the method needs, rewrites `pg_hba.conf`, reloads, and waits until the
    /// server really asks for that method. Trust is refused while an abstract socket
    /// listens, which any local account can reach.
    pub fn set_auth(&mut self, method: AuthMethod) -> Result<()> {
        if method.private_only() && self.abstract_name.is_some() {
            bail!(
                "{method} authentication cannot be offered while the cluster listens on an \
                 abstract socket, which any local account can reach; measure it without \
                 unix-abstract"
            );
        }
        let admin = PgConn::connect(&self.admin_params())?;
        self.store_password(&admin, method)?;
        self.write_private("pg_hba.conf", self.hba_conf(method).as_bytes())?;
        admin.query_value("SELECT pg_reload_conf()")?;
        let socket = self.socket_dir.join(format!(".s.PGSQL.{}", self.port));
        // In a container, over the veth pair, which the host reaches.
        let tcp = match &self.container {
            Some(c) => c
                .network
                .server_address(Crossing::Veth, self.port)
                .ip()
                .to_string(),
            None => "127.0.0.1".to_string(),
        };
        hba::wait_until_switched(
            method,
            &ProbeAddr::Unix(&socket),
            &ProbeAddr::Host(&tcp, self.port),
        )?;
        Ok(())
    }

    /// The process ID of the postmaster, while it runs: its CPU counters follow
    /// the backends it forks.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Spawned::pid)
    }

    /// The socket directory, and the abstract socket when it is measured.
    fn socket_directories(&self) -> String {
        match &self.abstract_name {
            Some(name) => format!("{},@{name}", self.socket_dir.display()),
            None => self.socket_dir.display().to_string(),
        }
    }

    /// The name of the abstract socket (without `@`), when there is one.
    #[cfg(test)]
    pub fn abstract_name(&self) -> Option<&str> {
        self.abstract_name.as_deref()
    }

    /// The private directory of the Unix socket.
    #[cfg(test)]
    pub fn socket_dir(&self) -> &std::path::Path {
        &self.socket_dir
    }

    /// The TCP port the server listens on.
    #[cfg(test)]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The first value of a query run as the administrator.
    #[cfg(test)]
    pub fn admin_value(&self, sql: &str) -> String {
        PgConn::connect(&self.admin_params())
            .and_then(|c| c.query_value(sql))
            .expect("admin query")
    }

    /// The password of role `foo`.
    #[cfg(test)]
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The cluster's directory (removed on drop).
    #[cfg(test)]
    pub fn dir(&self) -> &std::path::Path {
        &self.base
    }

    /// Stops the server: fast shutdown, then immediate, then SIGKILL.
    pub fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop(&[
                (libc::SIGINT, Duration::from_secs(10)),
                (libc::SIGQUIT, Duration::from_secs(5)),
            ]);
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        // After the server has stopped: the container's network (its mounts with
        // it), then the directory, its owner file last.
        self.container.take();
        self.dir.take();
    }
}

/// The program that copies a fresh data directory, as the server account.
const COPY: &str = "/bin/cp";

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// `chars` random hexadecimal characters.
fn random_hex(chars: usize) -> String {
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    openssl::rand::rand_bytes(&mut bytes).expect("OpenSSL's random generator works");
    let mut text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    text.truncate(chars);
    text
}
