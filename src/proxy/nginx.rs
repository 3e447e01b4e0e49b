//! A throwaway nginx in front of sockbench's app server: one 127.0.0.1 port per
//! site, each proxying every request to its upstream (the app over a Unix socket,
//! TCP or TLS), so that the hop between them can be measured over each. Started in a
//! private temporary directory as the server account, stopped by PID on drop, on
//! every way out (success, error, Ctrl-C, or a panic in a test).
//!
//! The directory is sockbench's own (0711, with the owner file and nginx's log,
//! which nginx writes to the standard error it inherits); `srv/` inside is the
//! server account's (0700): the configuration, which root writes only through the
//! held descriptor of `srv/` (see `crate::dir`), the pid file and the temporary
//! directories nginx makes. nginx is told where everything is (`-p`, `-c`,
//! `-e stderr`), so it never reads /etc/nginx or opens /var/log/nginx, and it gets
//! an empty environment.
//!
//! Why a PID namespace: nginx's workers outlive a master killed with SIGKILL (they
//! go on serving, reparented), and nginx asks for no death signal. So the master
//! runs as PID 1 of a PID namespace of its own, and when it dies, however it dies,
//! the kernel kills everything else in the namespace. As the host sees the tree:
//!
//! ```text
//! sockbench
//!  └─ keeper: sockbench's account, a fork of sockbench    Nginx::pid
//!      └─ nginx master: the server account, PID 1 inside  Nginx::master_pid
//!          └─ nginx workers: the server account           Nginx::worker_pids
//! ```
//!
//! Each dies with the one above it: the keeper gets SIGKILL when sockbench dies
//! (`subprocess::tie_to_parent`), the master when the keeper dies (its own death
//! signal, asked for after it took the account, since a change of account clears
//! it), the workers when the master dies (the namespace). The keeper exists because
//! only the children of a process that makes a PID namespace are in it; it waits
//! for the master and exits as it did. util-linux's `unshare --pid --fork
//! --kill-child --setuid` would make the same tree, but asks for the death signal
//! before the change of account, so its child outlives a killed `unshare` (seen
//! with util-linux 2.38). The keeper blocks in `waitpid` and so costs no CPU; its
//! memory is sockbench's, shared until written. The owner file records it
//! (`PrivateDir::record_server`): it runs exactly as long as the master does. When
//! sockbench is not root, a user namespace of its own gives it the right to make
//! the PID namespace (nginx then runs as sockbench's account).
//!
//! Other local accounts can reach the sites' ports while nginx runs; what they get
//! is what sockbench's app serves. Before declaring nginx ready, sockbench checks
//! that the master, as the account, holds every port on 127.0.0.1, and that nobody
//! else listens there (`system::peers`).

use crate::dir::Dir;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::MAX_UNIX_PATH;
use anyhow::{bail, Context, Result};
use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
use std::fmt::Write as _;
use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long nginx may take to serve every site.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long it may take to exit after SIGTERM before it is killed, and how long the
/// killed namespace may take to empty.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the wait for readiness sleeps between looks.
const READY_POLL: Duration = Duration::from_millis(20);
/// How long one connection to a site's port may take while waiting for it.
const CONNECT_LIMIT: Duration = Duration::from_millis(200);
/// Starts tried, each on new ports, when one is taken between being chosen and
/// being bound (nginx then exits, saying "Address already in use").
const TRIES: u32 = 3;

/// The server account's directory inside the private one.
const SERVER_DIR: &str = "srv";
/// nginx's standard error, in the private directory (root's), and the files of
/// `srv/`.
const LOG: &str = "nginx.log";
const CONFIG: &str = "nginx.conf";
const PID_FILE: &str = "nginx.pid";
const LOCK_FILE: &str = "nginx.lock";

/// Connections one worker may hold. A request being proxied holds two (the
/// client's and the one to the upstream), and every listening socket and every
/// idle upstream connection kept for reuse holds one more. The experiments open up
/// to 1024 clients at once (`-c`), and nothing spreads them evenly over the workers,
/// so one worker may hold about 2048 plus a few per site: 4096 leaves room, where
/// nginx's default, 512, would refuse clients past about 250.
const WORKER_CONNECTIONS: u32 = 4096;
/// Files each worker may have open: its connections and a few more (nginx's
/// `worker_rlimit_nofile`, within the hard limit it inherits).
const WORKER_OPEN_FILES: u32 = 8192;
/// Connections queued on a site's port before a worker accepts them: 1024 clients
/// connecting at once overflow nginx's default of 511, and a dropped connection
/// request costs the client a second before it tries again. The kernel holds it to
/// `net.core.somaxconn` (4096 by default since Linux 5.4).
const LISTEN_BACKLOG: u32 = 4096;
/// Requests one keep-alive connection may carry, the client's and the upstream's:
/// at nginx's default of 1000 a long trial would see its connections closed.
const KEEPALIVE_REQUESTS: u32 = 1_000_000;
/// Idle upstream connections each worker keeps for reuse, per site that keeps
/// them, at the least ([`Site::kept`]).
pub const UPSTREAM_IDLE: u32 = 16;
/// The temporary directories nginx makes when it starts: each directive and the
/// name in `srv/` it is given.
const TEMP_PATHS: [(&str, &str); 5] = [
    ("client_body_temp_path", "client_body"),
    ("proxy_temp_path", "proxy"),
    ("fastcgi_temp_path", "fastcgi"),
    ("uwsgi_temp_path", "uwsgi"),
    ("scgi_temp_path", "scgi"),
];

/// Where a site sends every request: sockbench's app server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A Unix socket at this absolute path, which the server account must be able
    /// to reach and connect to (nginx connects as that account).
    Unix(PathBuf),
    Tcp(SocketAddr),
    /// HTTPS at this address (`proxy_pass https://`, TLS 1.3): its certificate is
    /// not verified (sockbench's app makes a new self-signed one at every start),
    /// and sessions are resumed (`proxy_ssl_session_reuse`, nginx's default).
    Tls(SocketAddr),
}

/// One port of nginx's and what it does with each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub upstream: Upstream,
    /// Idle upstream connections each worker keeps open for reuse (`keepalive N`,
    /// HTTP/1.1 to the upstream); `None`: nginx's default, a new connection per
    /// request, HTTP/1.0.
    pub keepalive: Option<u32>,
    /// How long nginx waits for a connection to the upstream before it answers
    /// 504 (`proxy_connect_timeout`); `None`: nginx's default, 60 s.
    pub connect_timeout: Option<Duration>,
    /// Its failures to reach the upstream are not logged (`error_log … crit`
    /// for the site): a site meant to fail would write a line per failed request,
    /// megabytes a trial, into the log.
    pub quiet: bool,
}

impl Site {
    /// `upstream`, its connections kept for reuse: `idle` of them per worker, and
    /// at least [`UPSTREAM_IDLE`].
    pub fn kept(upstream: Upstream, idle: u32) -> Site {
        Site {
            upstream,
            keepalive: Some(idle.max(UPSTREAM_IDLE)),
            connect_timeout: None,
            quiet: false,
        }
    }

    /// `upstream` with nginx's defaults: a new connection per request.
    pub fn renewed(upstream: Upstream) -> Site {
        Site {
            upstream,
            keepalive: None,
            connect_timeout: None,
            quiet: false,
        }
    }

    /// `upstream` meant to be overrun: a new connection per request, which nginx
    /// waits for at most `connect_timeout` before it answers 504, its failures
    /// not logged.
    pub fn overrun(upstream: Upstream, connect_timeout: Duration) -> Site {
        Site {
            connect_timeout: Some(connect_timeout),
            quiet: true,
            ..Site::renewed(upstream)
        }
    }
}

/// What nginx is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxConfig {
    /// The `nginx` binary ([`find_program`]).
    pub program: PathBuf,
    /// Worker processes (`worker_processes`).
    pub workers: u32,
    /// Each gets a port of its own, in this order ([`Nginx::site_port`]).
    pub sites: Vec<Site>,
}

impl NginxConfig {
    /// `sites` served by one worker.
    pub fn new(program: &Path, sites: Vec<Site>) -> NginxConfig {
        NginxConfig {
            program: program.to_path_buf(),
            workers: 1,
            sites,
        }
    }
}

/// The account nginx runs as: `None` when sockbench is not root (it runs as the
/// current user), else `www-data` (the account Debian's package creates for it),
/// else `nobody`. Known before nginx starts, so the app's Unix socket can be made
/// reachable by it.
pub fn server_account() -> Result<Option<Account>> {
    account::server_account(&["www-data", "nobody"], "nginx")
}

/// `nginx` in /usr/sbin, /usr/local/sbin, /usr/local/nginx/sbin (where a build
/// from source goes) or on `PATH`, if installed.
pub fn find_program() -> Option<PathBuf> {
    crate::subprocess::find_program(
        "nginx",
        &["/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"],
    )
}

/// The version `program -v` reports (`1.22.1`), for the server's facts; `None`
/// when it cannot be run or names none. One that hangs is an error within a few
/// seconds (`subprocess::ask`), as is a Ctrl-C meanwhile.
pub fn version(program: &Path) -> Result<Option<String>> {
    let mut command = Command::new(program);
    command.arg("-v").env_clear();
    // SAFETY: dup2 is async-signal-safe and touches no memory. It runs in the
    // child, after std has set up its standard streams: nginx says its version on
    // standard error, which `ask` does not read, so it goes where standard output
    // goes.
    unsafe {
        command.pre_exec(|| {
            if libc::dup2(libc::STDOUT_FILENO, libc::STDERR_FILENO) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let Some(answer) = crate::subprocess::ask(&mut command, crate::subprocess::ASK_LIMIT)? else {
        return Ok(None);
    };
    Ok(parse_version(&String::from_utf8_lossy(&answer.stdout)))
}

/// `1.22.1` from `nginx version: nginx/1.22.1` (or `openresty/1.21.4.1`, or with
/// a distribution's note after it).
fn parse_version(text: &str) -> Option<String> {
    let (_, version) = text
        .lines()
        .find_map(|l| l.strip_prefix("nginx version: "))?
        .split_whitespace()
        .next()?
        .split_once('/')?;
    Some(version.to_string()).filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// A running throwaway nginx.
pub struct Nginx {
    program: PathBuf,
    /// The keeper of nginx's PID namespace, while it runs.
    keeper: Option<Child>,
    /// Its PID, kept after it is reaped.
    keeper_pid: u32,
    /// Found once the keeper has started it.
    master: Option<Master>,
    /// Each site's port, in the order of the sites.
    ports: Vec<u16>,
    account: Option<Account>,
    /// The server account's directory, held open.
    srv: Dir,
    // Last, so the directory goes after nginx has stopped.
    dir: Option<PrivateDir>,
}

/// nginx's master process: its PID as the host sees it, and a descriptor of the
/// process, which a signal goes through so that it reaches the master and never a
/// process that took its PID later.
struct Master {
    pid: u32,
    fd: OwnedFd,
}

impl Nginx {
    /// Starts nginx as `config` says and waits until it serves every site.
    pub fn start(config: &NginxConfig) -> Result<Nginx> {
        Nginx::start_on(config, free_ports)
    }

    /// As [`Nginx::start`], with each try's ports chosen by `choose` (given how
    /// many).
    fn start_on(
        config: &NginxConfig,
        mut choose: impl FnMut(usize) -> Result<Vec<u16>>,
    ) -> Result<Nginx> {
        if config.workers == 0 || config.sites.is_empty() {
            bail!("nginx needs at least one worker and one site");
        }
        for site in &config.sites {
            upstream_text(&site.upstream)?;
        }
        let account = server_account()?;
        // No socket of nginx's own is in it, so no path length to check.
        let dir = account::server_dir(
            account.as_ref(),
            super::DIR_PREFIX,
            "nginx",
            SERVER_DIR,
            usize::MAX,
        )?;
        let srv = dir
            .dir()
            .make_dir(SERVER_DIR, 0o700, account.as_ref().map(Account::owner))?;
        let mut nginx = Nginx {
            program: config.program.clone(),
            keeper: None,
            keeper_pid: 0,
            master: None,
            ports: Vec::new(),
            account,
            srv,
            dir: Some(dir),
        };
        nginx.launch(config, &mut choose)?;
        Ok(nginx)
    }

    /// Starts nginx on free ports (a few tries, in case another program takes one
    /// first) and waits until it serves.
    fn launch(
        &mut self,
        config: &NginxConfig,
        choose: &mut impl FnMut(usize) -> Result<Vec<u16>>,
    ) -> Result<()> {
        let mut tries = 0;
        loop {
            tries += 1;
            self.ports = choose(config.sites.len())?;
            if self.ports.len() != config.sites.len() {
                bail!(
                    "{} ports chosen for {} sites",
                    self.ports.len(),
                    config.sites.len()
                );
            }
            let text = config_text(config, &self.ports, self.srv.path())?;
            self.srv
                .replace_file(
                    CONFIG,
                    text.as_bytes(),
                    0o600,
                    self.account.as_ref().map(Account::owner),
                )
                .with_context(|| format!("cannot write {}", self.srv.join(CONFIG).display()))?;
            self.spawn()?;
            let error = match self.wait_ready(config.workers) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            self.stop();
            if crate::interrupt::interrupted() {
                return Err(error);
            }
            if tries < TRIES && self.log_text().contains("Address already in use") {
                continue;
            }
            return Err(error);
        }
    }

    /// Starts the keeper, which starts nginx as the server account in a PID
    /// namespace of its own (see [`enter_namespace`]), with its output in the log,
    /// tied to sockbench's life, in its own process group, with an empty
    /// environment.
    fn spawn(&mut self) -> Result<()> {
        let top = self.private().dir();
        let _ = top.remove_file(LOG);
        let log = top
            .create_new(LOG, 0o600)
            .context("cannot create nginx's log")?;
        let mut prefix = self.srv.path().as_os_str().to_os_string();
        prefix.push("/");
        let mut command = Command::new(&self.program);
        command
            .arg("-p")
            .arg(prefix)
            .arg("-c")
            .arg(self.srv.join(CONFIG))
            .args(["-e", "stderr"])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .current_dir("/");
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let ids = self.account.as_ref().map(|a| (a.uid, a.gid));
        // SAFETY: `enter_namespace` makes only async-signal-safe calls (raw system
        // calls and glibc's thin wrappers of them) on memory of its own stack, as a
        // child forked from a process with other threads must; see there.
        unsafe {
            command.pre_exec(move || enter_namespace(ids));
        }
        let keeper = command.spawn().with_context(|| {
            format!(
                "cannot start {} in a PID namespace of its own",
                self.program.display()
            )
        })?;
        self.keeper_pid = keeper.id();
        self.keeper = Some(keeper);
        self.master = None;
        self.private().record_server(self.keeper_pid)
    }

    /// Waits until the master and its `workers` run and every site's port accepts
    /// connections and is nginx's alone.
    fn wait_ready(&mut self, workers: u32) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut missing = String::from("its master process has not started");
        loop {
            crate::interrupt::check()?;
            self.check_running()?;
            if self.master.is_none() {
                self.master = self.find_master();
            }
            if let Some(master) = &self.master {
                match self.unready(master.pid, workers) {
                    None => return Ok(()),
                    Some(why) => missing = why,
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "nginx was not ready within {} s: {missing}; log: {}",
                    READY_TIMEOUT.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(READY_POLL);
        }
    }

    /// What nginx still lacks to serve every site; `None` once it serves them.
    fn unready(&self, master: u32, workers: u32) -> Option<String> {
        let running = self.worker_pids().len();
        if running < workers as usize {
            return Some(format!("{running} of its {workers} workers run"));
        }
        let uid = account::uid_of(self.account.as_ref());
        for &port in &self.ports {
            let at = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            if TcpStream::connect_timeout(&at, CONNECT_LIMIT).is_err() {
                return Some(format!("127.0.0.1 port {port} does not accept connections"));
            }
            if let Some(why) = port_not_held(port, master, uid) {
                return Some(why);
            }
        }
        None
    }

    /// The master, once the keeper has started it: the keeper's one child. Its
    /// descriptor is opened before it is checked to be the keeper's child still, so
    /// it cannot name a process that took the PID meanwhile.
    fn find_master(&self) -> Option<Master> {
        let pid = *crate::cpu::proc::children(self.keeper_pid).first()?;
        let fd = pidfd_open(Pid::from_raw(pid as i32)?, PidfdFlags::empty()).ok()?;
        let parent = crate::cpu::proc::parent(pid)?;
        (parent == self.keeper_pid).then_some(Master { pid, fd })
    }

    /// The 127.0.0.1 port of site `site` (its index in [`NginxConfig::sites`]).
    pub fn site_port(&self, site: usize) -> u16 {
        self.ports[site]
    }

    /// The root of nginx's process tree as the host sees it: the keeper of its PID
    /// namespace, whose descendants are the master and the workers. Counting or
    /// placing this process with its descendants covers all of nginx.
    pub fn pid(&self) -> u32 {
        self.keeper_pid
    }

    /// nginx's master process (PID 1 in its namespace), as the host sees it
    /// ([`Nginx::pid`] with its descendants is all of nginx).
    pub fn master_pid(&self) -> u32 {
        self.master.as_ref().map_or(0, |m| m.pid)
    }

    /// nginx's worker processes as the host sees them (none once stopped).
    pub fn worker_pids(&self) -> Vec<u32> {
        match (&self.keeper, &self.master) {
            (Some(_), Some(master)) => crate::cpu::proc::children(master.pid)
                .into_iter()
                .filter(|&pid| crate::cpu::proc::parent(pid) == Some(master.pid))
                .filter(|&pid| crate::cpu::proc::runs(pid))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// An error naming the program and its last words if nginx has exited.
    pub fn check_running(&mut self) -> Result<()> {
        let Some(keeper) = &mut self.keeper else {
            bail!("nginx is not running");
        };
        match keeper.try_wait()? {
            None => Ok(()),
            Some(status) => bail!(
                "{} exited ({}): {}",
                self.program.display(),
                master_status(status),
                self.log_tail()
            ),
        }
    }

    /// Stops nginx: SIGTERM to the master (nginx's fast shutdown: it ends its
    /// workers, then itself, and the keeper follows), then SIGKILL to the keeper,
    /// whose death kills the master and so every worker; waits until the master is
    /// gone.
    pub fn stop(&mut self) {
        let Some(mut keeper) = self.keeper.take() else {
            return;
        };
        if self.master.is_none() {
            self.master = self.find_master();
        }
        if let Some(master) = &self.master {
            if matches!(keeper.try_wait(), Ok(None)) {
                // A stopped master acts on SIGTERM only once continued.
                let _ = pidfd_send_signal(&master.fd, Signal::CONT);
                let _ = pidfd_send_signal(&master.fd, Signal::TERM);
                let deadline = Instant::now() + STOP_TIMEOUT;
                while matches!(keeper.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        crate::subprocess::stop(&mut keeper, &[]);
        if let Some(master) = &self.master {
            // Its descriptor reads as ready once it has exited, which is after the
            // kernel has ended the rest of its namespace.
            let mut exited = libc::pollfd {
                fd: master.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `exited` is a valid pollfd on the stack, and 1 is the number
            // of entries behind the pointer.
            unsafe { libc::poll(&mut exited, 1, STOP_TIMEOUT.as_millis() as libc::c_int) };
        }
    }

    fn private(&self) -> &PrivateDir {
        self.dir
            .as_ref()
            .expect("the directory lives as long as nginx")
    }

    /// The start of nginx's log (what it said on standard error).
    fn log_text(&self) -> String {
        let mut text = String::new();
        if let Ok(file) = self.private().dir().open_read(LOG) {
            let _ = file.take(1 << 20).read_to_string(&mut text);
        }
        text
    }

    /// The last few lines of nginx's log, on one line.
    fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        match &lines[lines.len().saturating_sub(5)..] {
            [] => "(no output)".into(),
            last => last.join(" | "),
        }
    }

    /// The private directory and the server account's, for tests.
    #[cfg(test)]
    fn dirs(&self) -> (&Dir, &Dir) {
        (self.private().dir(), &self.srv)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
        // After nginx has stopped: the directory goes, its owner file last.
        self.dir.take();
    }
}

/// How the master ended, from the keeper's status: the keeper exits with the
/// master's exit status, or with 128 and the signal that killed it.
fn master_status(keeper: ExitStatus) -> String {
    match keeper.code() {
        Some(code @ 129..=192) => ExitStatus::from_raw(code - 128).to_string(),
        _ => keeper.to_string(),
    }
}

/// Why `port` is not nginx's alone, if it is not: the master (running as `uid`)
/// must hold a listener on 127.0.0.1, and no other process one that a connection
/// to loopback reaches.
fn port_not_held(port: u16, master: u32, uid: u32) -> Option<String> {
    match peers::loopback_listeners(port, master, uid) {
        Err(e) => Some(format!("cannot read /proc/net/tcp: {e}")),
        Ok((_, Some(other))) => Some(format!(
            "another program (uid {}) listens on {} port {port}, besides nginx or instead",
            other.uid, other.addr
        )),
        Ok((listeners, None)) => {
            let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
            (!listeners.iter().any(|l| l.addr == localhost))
                .then(|| format!("nginx does not listen on 127.0.0.1 port {port}"))
        }
    }
}

/// `count` different ports on 127.0.0.1 that were free a moment ago.
fn free_ports(count: usize) -> Result<Vec<u16>> {
    let held: Vec<std::net::TcpListener> = (0..count)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()
        .context("cannot find a free port")?;
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

/// The text of `nginx.conf`: nginx's defaults but for what is written here, and
/// nothing included. `srv` is the server account's directory, `ports` each site's
/// port.
fn config_text(config: &NginxConfig, ports: &[u16], srv: &Path) -> Result<String> {
    let in_srv = |name: &str| quoted_path(&srv.join(name));
    let mut out = String::new();
    writeln!(
        out,
        "# Written by sockbench for one run: nothing else is read."
    )?;
    writeln!(out, "daemon off;")?;
    writeln!(out, "master_process on;")?;
    writeln!(out, "worker_processes {};", config.workers)?;
    writeln!(out, "worker_rlimit_nofile {WORKER_OPEN_FILES};")?;
    writeln!(out, "pid {};", in_srv(PID_FILE)?)?;
    writeln!(out, "lock_file {};", in_srv(LOCK_FILE)?)?;
    // Into the log in the private directory, which nginx inherits as standard error.
    writeln!(out, "error_log stderr warn;")?;
    writeln!(out, "events {{")?;
    writeln!(out, "    worker_connections {WORKER_CONNECTIONS};")?;
    writeln!(out, "}}")?;
    writeln!(out, "http {{")?;
    writeln!(out, "    access_log off;")?;
    writeln!(out, "    keepalive_requests {KEEPALIVE_REQUESTS};")?;
    for (directive, name) in TEMP_PATHS {
        writeln!(out, "    {directive} {};", in_srv(name)?)?;
    }
    for (i, (site, port)) in config.sites.iter().zip(ports).enumerate() {
        writeln!(out, "    upstream site_{i} {{")?;
        writeln!(out, "        server {};", upstream_text(&site.upstream)?)?;
        if let Some(idle) = site.keepalive {
            writeln!(out, "        keepalive {idle};")?;
            writeln!(out, "        keepalive_requests {KEEPALIVE_REQUESTS};")?;
        }
        writeln!(out, "    }}")?;
        writeln!(out, "    server {{")?;
        writeln!(
            out,
            "        listen 127.0.0.1:{port} backlog={LISTEN_BACKLOG};"
        )?;
        if site.quiet {
            writeln!(out, "        error_log stderr crit;")?;
        }
        writeln!(out, "        location / {{")?;
        match site.upstream {
            Upstream::Unix(_) | Upstream::Tcp(_) => {
                writeln!(out, "            proxy_pass http://site_{i};")?;
            }
            Upstream::Tls(_) => {
                writeln!(out, "            proxy_pass https://site_{i};")?;
                // TLS 1.3 as sockbench's own client speaks it, and nginx's
                // default since 1.23.4 (before, as in Debian's 1.22, TLS 1.2 at
                // most).
                writeln!(out, "            proxy_ssl_protocols TLSv1.2 TLSv1.3;")?;
                // nginx's defaults, written so that the file says them: the
                // certificate, made afresh by the app at every start, is not
                // verified, as sockbench's own client does not verify it (like
                // libpq's sslmode=require: encrypted, the peer not checked); no
                // name is sent (SNI); and a new upstream connection resumes the
                // TLS session of the last one, as the app server allows.
                writeln!(out, "            proxy_ssl_verify off;")?;
                writeln!(out, "            proxy_ssl_server_name off;")?;
                writeln!(out, "            proxy_ssl_session_reuse on;")?;
            }
        }
        if let Some(wait) = site.connect_timeout {
            // nginx counts its timeouts in milliseconds.
            let ms = wait.as_millis().max(1);
            writeln!(out, "            proxy_connect_timeout {ms}ms;")?;
        }
        if site.keepalive.is_some() {
            // HTTP/1.0, nginx's default, would close each upstream connection.
            writeln!(out, "            proxy_http_version 1.1;")?;
            writeln!(out, "            proxy_set_header Connection \"\";")?;
        }
        writeln!(out, "        }}")?;
        writeln!(out, "    }}")?;
    }
    writeln!(out, "}}")?;
    Ok(out)
}

/// An upstream as the `server` line of an `upstream` block takes it. A Unix
/// socket's path must be absolute and fit `sun_path`.
fn upstream_text(upstream: &Upstream) -> Result<String> {
    match upstream {
        Upstream::Tcp(address) | Upstream::Tls(address) => Ok(address.to_string()),
        Upstream::Unix(path) => {
            if !path.is_absolute() {
                bail!(
                    "the upstream socket {} is not an absolute path",
                    path.display()
                );
            }
            if path.as_os_str().len() > MAX_UNIX_PATH {
                bail!(
                    "the upstream socket {} is {} bytes long, over the {MAX_UNIX_PATH}-byte \
                     limit of a Unix socket's path",
                    path.display(),
                    path.as_os_str().len()
                );
            }
            Ok(quoted(&format!("unix:{}", plain(path)?)))
        }
    }
}

/// A path as one argument of an `nginx.conf` line, in double quotes.
fn quoted_path(path: &Path) -> Result<String> {
    Ok(quoted(plain(path)?))
}

/// `text` in double quotes, with `\` and `"` escaped as nginx reads them.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A path as text nginx reads as written: UTF-8, without control characters.
/// The paths are in TMPDIR: refused as bad input, as every TMPDIR is.
fn plain(path: &Path) -> Result<&str> {
    let Some(text) = path.to_str() else {
        return Err(usage(format!(
            "{} (in TMPDIR) is not UTF-8; set TMPDIR to a plain directory such as /tmp",
            path.display()
        )));
    };
    if text.chars().any(char::is_control) {
        return Err(usage(format!(
            "{text:?} (in TMPDIR) holds a control character; set TMPDIR to a plain directory \
             such as /tmp"
        )));
    }
    Ok(text)
}

/// Why nginx cannot be started in a PID namespace of its own here, if it cannot
/// (a container that forbids making one): a child asks for one as nginx's start
/// does, then runs `sockbench --version`; the answer is whether it could start.
pub fn pid_namespace_refused() -> Option<String> {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(format!("cannot find the sockbench binary ({e})")),
    };
    let mut probe = Command::new(exe);
    probe
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let root = crate::dir::euid() == 0;
    // SAFETY: unshare is async-signal-safe and touches no memory of the parent.
    unsafe {
        probe.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWPID) == 0
                || (!root && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) == 0)
            {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
    // Started is granted: what the program then does is not the question.
    match probe.status() {
        Ok(_) => None,
        Err(e) => Some(format!("a PID namespace cannot be made here ({e})")),
    }
}

/// Runs in the child std forks to start nginx, after `tie_to_parent`'s step and
/// before the exec: makes a PID namespace, forks the process that becomes nginx's
/// master into it (as its PID 1), and stays behind as the keeper, which never
/// returns. Returns in the master-to-be only, which runs as `ids` (uid, gid) when
/// given and has asked for SIGKILL when the keeper dies.
///
/// This is a child forked from a process with other threads, so it makes only
/// async-signal-safe calls and allocates nothing; errors are the system's own
/// numbers, which std hands to `spawn`'s caller.
fn enter_namespace(ids: Option<(u32, u32)>) -> io::Result<()> {
    // SAFETY: system calls on values of this stack frame. The clone is a raw
    // system call, not glibc's fork, which would first run the handlers registered
    // with pthread_atfork; without CLONE_VM it copies this process as fork does,
    // returning 0 in the copy, whose glibc state is this one's: `become_master`
    // and `keep` use only wrappers of single system calls for that reason.
    unsafe {
        if libc::unshare(libc::CLONE_NEWPID) != 0 {
            let refused = io::Error::last_os_error();
            // Not root: a user namespace of its own grants the right to make one.
            if ids.is_some() || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) != 0 {
                return Err(refused);
            }
        }
        let mut alive = [0; 2];
        if libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = libc::SIGCHLD as libc::c_ulong;
        match libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) {
            -1 => Err(io::Error::last_os_error()),
            0 => become_master(alive, ids),
            master => keep(master as libc::pid_t, alive),
        }
    }
}

/// The master-to-be, PID 1 of the new namespace: takes the account, then asks for
/// SIGKILL when the keeper dies (a change of account clears that request, so not
/// before), then makes sure the keeper did not die before it asked (else nothing
/// would ever end it): the keeper holds the write end of `alive` until it exits.
///
/// # Safety
/// Only in the child [`enter_namespace`] forks, with `alive` the pipe it made.
unsafe fn become_master(alive: [libc::c_int; 2], ids: Option<(u32, u32)>) -> io::Result<()> {
    libc::close(alive[1]);
    if let Some((uid, gid)) = ids {
        // Raw system calls: glibc's wrappers would also try to change the account
        // of the threads in its copy of sockbench's list of threads.
        if libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) != 0
            || libc::syscall(libc::SYS_setgid, gid as libc::c_ulong) != 0
            || libc::syscall(libc::SYS_setuid, uid as libc::c_ulong) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
        return Err(io::Error::last_os_error());
    }
    // Nothing is ever written to the pipe: any event on it is the hang-up.
    let mut hang_up = libc::pollfd {
        fd: alive[0],
        events: libc::POLLIN,
        revents: 0,
    };
    if libc::poll(&mut hang_up, 1, 0) != 0 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    // The read end closes at the exec (O_CLOEXEC).
    Ok(())
}

/// The keeper: waits for the master, then exits as it did (with its exit status,
/// or 128 and the signal that killed it). It is a copy of sockbench that never
/// execs, so it first drops what it inherited: sockbench's signal handlers (a
/// SIGTERM must end it, not count as a Ctrl-C) and every descriptor but its end of
/// `alive` (std's pipe among them, whose closing tells the spawning thread that
/// nginx's exec happened).
///
/// # Safety
/// Only in the process [`enter_namespace`] forked from, with `master` its child
/// and `alive` the pipe it made.
unsafe fn keep(master: libc::pid_t, alive: [libc::c_int; 2]) -> ! {
    libc::close(alive[0]);
    let mut default: libc::sigaction = std::mem::zeroed();
    default.sa_sigaction = libc::SIG_DFL;
    for signal in 1..=64 {
        // SIGKILL, SIGSTOP and glibc's own signals refuse; nothing to do there.
        libc::sigaction(signal, &default, std::ptr::null_mut());
    }
    close_others(alive[1]);
    let mut status = 0;
    while libc::waitpid(master, &mut status, 0) == -1 {
        if *libc::__errno_location() != libc::EINTR {
            libc::_exit(1);
        }
    }
    if libc::WIFSIGNALED(status) {
        libc::_exit(128 + libc::WTERMSIG(status));
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// Closes every descriptor above standard error but `kept`.
///
/// # Safety
/// Only in a process whose other descriptors nothing uses any more.
unsafe fn close_others(kept: libc::c_int) {
    let close_range = |first: libc::c_int, last: libc::c_uint| {
        libc::syscall(libc::SYS_close_range, first as libc::c_uint, last, 0u32) == 0
    };
    let below = kept <= 3 || close_range(3, (kept - 1) as libc::c_uint);
    if below && close_range(kept + 1, libc::c_uint::MAX) {
        return;
    }
    // Before Linux 5.9: one by one, up to the limit of open files.
    let mut limit: libc::rlimit = std::mem::zeroed();
    let most = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
        limit.rlim_cur.min(1 << 16) as libc::c_int
    } else {
        1024
    };
    for fd in (3..most).filter(|&fd| fd != kept) {
        libc::close(fd);
    }
}

#[cfg(test)]
#[path = "nginx_tests.rs"]
mod tests;
