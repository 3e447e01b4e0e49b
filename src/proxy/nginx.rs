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
//! runs as PID 1 of a PID namespace of its own (`subprocess::pid_namespace`), and
//! when it dies, however it dies, the kernel kills everything else in the
//! namespace. As the host sees the tree:
//!
//! ```text
//! sockbench
//!  └─ keeper: sockbench's account, a fork of sockbench    Nginx::pid
//!      └─ nginx master: the server account, PID 1 inside  Nginx::master_pid
//!          └─ nginx workers: the server account           Nginx::worker_pids
//! ```
//!
//! Each dies with the one above it; the owner file records the keeper, which runs
//! exactly as long as the master does.
//!
//! Other local accounts can reach the sites' ports while nginx runs; what they get
//! is what sockbench's app serves. Before declaring nginx ready, sockbench checks
//! that the master, as the account, holds every port on 127.0.0.1, and that nobody
//! else listens there (`system::peers`).

use crate::dir::Dir;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::subprocess::pid_namespace::Kept;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::MAX_UNIX_PATH;
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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
    /// nginx below the keeper of its PID namespace, while it runs.
    kept: Option<Kept>,
    /// The keeper's PID, kept after it is reaped.
    keeper_pid: u32,
    /// Each site's port, in the order of the sites.
    ports: Vec<u16>,
    account: Option<Account>,
    /// The server account's directory, held open.
    srv: Dir,
    // Last, so the directory goes after nginx has stopped.
    dir: Option<PrivateDir>,
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
            kept: None,
            keeper_pid: 0,
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
    /// namespace of its own (`subprocess::pid_namespace`), with its output in the
    /// log, tied to sockbench's life, in its own process group, with an empty
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
        let ids = self.account.as_ref().map(|a| (a.uid, a.gid));
        let kept = Kept::spawn(&mut command, ids).with_context(|| {
            format!(
                "cannot start {} in a PID namespace of its own",
                self.program.display()
            )
        })?;
        self.keeper_pid = kept.pid();
        self.kept = Some(kept);
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
            if let Some(master) = self.kept.as_mut().and_then(Kept::find_server) {
                match self.unready(master, workers) {
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
    /// ([`Nginx::pid`] with its descendants is all of nginx); 0 once stopped.
    pub fn master_pid(&self) -> u32 {
        self.kept.as_ref().and_then(Kept::server_pid).unwrap_or(0)
    }

    /// nginx's worker processes as the host sees them (none once stopped).
    pub fn worker_pids(&self) -> Vec<u32> {
        match self.kept.as_ref().and_then(Kept::server_pid) {
            Some(master) => crate::cpu::proc::children(master)
                .into_iter()
                .filter(|&pid| crate::cpu::proc::parent(pid) == Some(master))
                .filter(|&pid| crate::cpu::proc::runs(pid))
                .collect(),
            None => Vec::new(),
        }
    }

    /// An error naming the program and its last words if nginx has exited.
    pub fn check_running(&mut self) -> Result<()> {
        let Some(kept) = &mut self.kept else {
            bail!("nginx is not running");
        };
        match kept.try_wait()? {
            None => Ok(()),
            Some(status) => bail!(
                "{} exited ({status}): {}",
                self.program.display(),
                self.log_tail()
            ),
        }
    }

    /// Stops nginx: SIGTERM to the master (nginx's fast shutdown: it ends its
    /// workers, then itself, and the keeper follows), then SIGKILL to the keeper,
    /// whose death kills the master and so every worker; waits until the master is
    /// gone (`Kept::stop`).
    pub fn stop(&mut self) {
        if let Some(mut kept) = self.kept.take() {
            kept.stop(STOP_TIMEOUT);
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

#[cfg(test)]
#[path = "nginx_tests.rs"]
mod tests;
