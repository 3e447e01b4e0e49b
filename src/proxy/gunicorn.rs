//! A second kind of app server behind nginx: Debian's `gunicorn` with sync
//! workers, running a WSGI app of a few lines that sockbench writes at start
//! ([`APP`]: the same contract as sockbench's own app server, `app.rs`, so the
//! same client and nginx configuration serve either). [`Gunicorn`] is started,
//! reached and stopped as `AppProcess` is, so the suite can use either.
//!
//! gunicorn runs as the server account from the start (the one nginx runs as:
//! `nginx::server_account`; no master of root's), with an empty environment but
//! for [`ENVIRONMENT`], in its own process group, and its master dies with
//! sockbench (`subprocess::tie_to_parent`: the death signal is asked for after
//! std has changed the account, which would clear it). Its private directory
//! records the master for the leftover sweep and goes with it:
//!
//! ```text
//! sockbench-proxy-…/     sockbench's account, 0711: the owner file
//!  ├─ app/               sockbench's account, 0755: the app and the settings
//!  │                     file (0644), which gunicorn reads and cannot change
//!  └─ run/               the server account's, 0700: gunicorn's Unix socket,
//!                        made by gunicorn, and the workers' heartbeat files
//! ```
//!
//! Why the app is not in `run/`: what gunicorn runs is then no more the server
//! account's to change than nginx's binary is, and Python imports only from a
//! directory it can list, which `app/` is and the top is not. Root writes both
//! files through the descriptor of `app/` (`dir::Dir`).
//!
//! Why a settings file: gunicorn's workers are forked by its master and ask for
//! no death signal, so a master killed with SIGKILL would leave them serving
//! until they next look at their parent (up to half of gunicorn's `--timeout`,
//! or never while a client holds one). The file's `post_fork` hook asks for
//! SIGKILL in each worker when the master dies ([`SETTINGS`]), so the whole tree
//! dies with sockbench:
//!
//! ```text
//! sockbench
//!  └─ gunicorn master: the server account      Gunicorn::pid
//!      └─ sync workers: the server account     its children
//! ```
//!
//! Who answers is checked before root sends anything. The Unix socket is in
//! `run/`, which anything acting as the server account can change at any time,
//! so every connection's peer is checked ([`Gunicorn::check_peer`]: `SO_PEERCRED`
//! names the account and gunicorn's master, which made the listening socket),
//! the first one at start. The TCP port is checked once, at start
//! (`system::peers`): gunicorn's master holds the only listener a connection to
//! 127.0.0.1 reaches on it, and no other socket can bind that port while
//! gunicorn holds it (gunicorn does not set `SO_REUSEPORT`), so it stays
//! gunicorn's for as long as gunicorn runs ([`Gunicorn::running`]).
//!
//! Keep-alive: sync workers serve one request per connection and then close it;
//! every response says `Connection: close`, whatever the request asked (nginx's
//! upstream `keepalive` included). A keep-alive client, or nginx's upstream
//! pool, therefore opens a new connection per request to gunicorn. An HTTP/1.0
//! request without keep-alive, as nginx sends upstream by default, is answered
//! `HTTP/1.0 200 OK` with `Connection: close`, exactly as that request expects.
//! gunicorn's `--keep-alive` is left at its default, which sync workers ignore.
//!
//! Costs of gunicorn's own that it keeps: each worker `fchmod`s its heartbeat
//! file (in `run/`, on TMPDIR's file system) before every accepted connection,
//! and writes a response's header and body in two writes.

use super::http::{HttpConn, HttpRequest, Status};
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::{Address, Conn, Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::{BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long gunicorn may take to listen, boot its workers and answer a first
/// request on every transport.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long it may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the workers of a killed master may take to die of their death
/// signal, and how long a failed start waits for gunicorn's last words.
const AFTER_EXIT: Duration = Duration::from_secs(1);
/// How often the wait for readiness looks at the clock, Ctrl-C and gunicorn.
const POLL: Duration = Duration::from_millis(50);

/// The server account's directory, the app's, and what is in them.
const RUN_DIR: &str = "run";
const APP_DIR: &str = "app";
const SOCKET: &str = "gunicorn.sock";
const APP_FILE: &str = "sockbench_app.py";
const SETTINGS_FILE: &str = "sockbench_gunicorn.py";
/// The app as gunicorn names it: module and callable.
const APP_NAME: &str = "sockbench_app:app";

/// gunicorn's whole environment: no byte code written next to the app (the run's
/// directory stays as written), and no packages from the server account's home
/// (`~/.local`): what runs is Debian's gunicorn and the app, nothing of the
/// account's.
const ENVIRONMENT: [(&str, &str); 2] =
    [("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONNOUSERSITE", "1")];

/// The longest line of gunicorn's log kept (a longer one is cut).
const MAX_LINE: usize = 2048;
/// Lines of gunicorn's log kept while it starts, and shown in an error.
const KEPT_LINES: usize = 64;
const SHOWN_LINES: usize = 4;

/// The WSGI app gunicorn's workers import.
const APP: &str = r#""""sockbench's WSGI app, which gunicorn's workers import: GET /?size=N is
answered 200 with N bytes (N from 0 to 1048576), another size 400, another
method 405, another path 404: the contract of sockbench's own app server
(src/proxy/app.rs). Written by sockbench for one run."""

MAX_SIZE = 1 << 20
# Made once, at import. Slicing bytes copies, so each size's body is cut once
# and kept (the experiments ask for a handful of sizes).
BODY = b"x" * MAX_SIZE
BODIES = {MAX_SIZE: BODY}
MOST_KEPT = 16


def size(query):
    """N of the first size=N in the query, when it is a whole number from 0 to
    MAX_SIZE; other parameters are ignored."""
    for pair in query.split("&"):
        if pair.startswith("size="):
            value = pair[5:]
            if not (0 < len(value) <= 7 and value.isascii() and value.isdigit()):
                return None
            n = int(value)
            return n if n <= MAX_SIZE else None
    return None


def reply(start_response, status, body):
    start_response(status, [("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    if environ["PATH_INFO"] != "/":
        return reply(start_response, "404 Not Found", b"only / is served\n")
    if environ["REQUEST_METHOD"] != "GET":
        return reply(start_response, "405 Method Not Allowed", b"only GET is served\n")
    n = size(environ["QUERY_STRING"])
    if n is None:
        return reply(
            start_response,
            "400 Bad Request",
            b"ask for GET /?size=N with N from 0 to 1048576\n",
        )
    body = BODIES.get(n)
    if body is None:
        body = BODY[:n]
        if len(BODIES) < MOST_KEPT:
            BODIES[n] = body
    start_response("200 OK", [("Content-Length", str(n))])
    # An empty body is not written at all.
    return [body] if n else []
"#;

/// gunicorn's settings file: the one hook that needs Python; every other
/// setting is on the command line.
const SETTINGS: &str = r#""""gunicorn's settings for one sockbench run: the hook below only; every
other setting is on gunicorn's command line."""

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)


def post_fork(server, worker):
    """In each worker, right after the fork: SIGKILL when the master dies, as
    the master gets when sockbench dies; then make sure the master was still
    there when asked (else nothing would ever end this worker)."""
    if LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "prctl(PR_SET_PDEATHSIG): " + os.strerror(errno))
    if os.getppid() != worker.ppid:
        os._exit(1)
"#;

/// `gunicorn` in /usr/bin (Debian's), /usr/local/bin or on `PATH`, if installed.
pub fn find_program() -> Option<PathBuf> {
    crate::subprocess::find_program("gunicorn", &["/usr/bin", "/usr/local/bin"])
}

/// The version `program --version` reports (`20.1.0`), for the server's facts;
/// `None` when it cannot be run or names none. One that hangs is an error within
/// a few seconds (`subprocess::ask`), as is a Ctrl-C meanwhile.
pub fn version(program: &Path) -> Result<Option<String>> {
    let mut command = Command::new(program);
    command.arg("--version").env_clear().envs(ENVIRONMENT);
    let Some(answer) = crate::subprocess::ask(&mut command, crate::subprocess::ASK_LIMIT)? else {
        return Ok(None);
    };
    Ok(parse_version(&String::from_utf8_lossy(&answer.stdout)))
}

/// `20.1.0` from `gunicorn (version 20.1.0)`.
fn parse_version(text: &str) -> Option<String> {
    let (_, after) = text.split_once("gunicorn (version ")?;
    let version = after.split_once(')')?.0.trim();
    Some(version.to_string()).filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// A running gunicorn.
pub struct Gunicorn {
    /// The master.
    child: Child,
    endpoints: Vec<Endpoint>,
    /// The account it runs as, by user ID and for messages.
    uid: u32,
    account: String,
    // Last, so the directory goes after gunicorn has stopped.
    dir: PrivateDir,
}

impl Gunicorn {
    /// Starts gunicorn with `workers` sync workers, listening on each of
    /// `transports` (unix: a socket in its directory; tcp: a free port on
    /// 127.0.0.1), as `account` (`None` only when sockbench is not root: it then
    /// runs as sockbench's account), and waits until every transport answers.
    pub fn start(
        transports: &[Transport],
        account: Option<&Account>,
        workers: u32,
        backlog: Option<u32>,
    ) -> Result<Gunicorn> {
        let program = find_program().ok_or_else(|| {
            usage(
                "gunicorn was not found; install it (Debian/Ubuntu: apt-get install gunicorn) to \
                 measure it as the app server",
            )
        })?;
        Gunicorn::start_with(&program, APP, transports, account, workers, backlog)
    }

    /// As [`Gunicorn::start`], with `program` running `app` (the source of the
    /// `sockbench_app` module).
    fn start_with(
        program: &Path,
        app: &str,
        transports: &[Transport],
        account: Option<&Account>,
        workers: u32,
        backlog: Option<u32>,
    ) -> Result<Gunicorn> {
        if workers == 0 {
            bail!("gunicorn needs at least one worker");
        }
        if account.is_none() && crate::dir::euid() == 0 {
            bail!("gunicorn is never run as root: name the account it runs as");
        }
        let mut asked: Vec<Transport> = Vec::new();
        for &t in transports {
            match t {
                Transport::Unix | Transport::Tcp if !asked.contains(&t) => asked.push(t),
                Transport::Unix | Transport::Tcp => {}
                other => bail!("gunicorn is reached over unix and tcp here, not {other}"),
            }
        }
        if asked.is_empty() {
            bail!("gunicorn needs at least one transport to listen on");
        }
        let dir = account::server_dir(
            account,
            super::DIR_PREFIX,
            "gunicorn",
            &format!("{RUN_DIR}/{SOCKET}"),
            MAX_UNIX_PATH,
        )?;
        let app_dir = dir
            .dir()
            .make_dir(APP_DIR, 0o755, None)
            .and_then(|d| d.set_mode(0o755).map(|()| d))
            .with_context(|| format!("cannot make {}", dir.dir().join(APP_DIR).display()))?;
        for (name, text) in [(APP_FILE, app), (SETTINGS_FILE, SETTINGS)] {
            app_dir
                .replace_file(name, text.as_bytes(), 0o644, None)
                .with_context(|| format!("cannot write {}", app_dir.join(name).display()))?;
        }
        let run = dir
            .dir()
            .make_dir(RUN_DIR, 0o700, account.map(Account::owner))
            .with_context(|| format!("cannot make {}", dir.dir().join(RUN_DIR).display()))?;
        let socket = run.join(SOCKET);
        let Some(socket_text) = socket.to_str().map(str::to_string) else {
            return Err(usage(format!(
                "{} (in TMPDIR) is not UTF-8; set TMPDIR to a plain directory such as /tmp",
                socket.display()
            )));
        };

        let mut command = Command::new(program);
        command
            .arg("--config")
            .arg(app_dir.join(SETTINGS_FILE))
            .args(["--worker-class", "sync", "--workers", &workers.to_string()]);
        if let Some(backlog) = backlog {
            command.arg("--backlog").arg(backlog.to_string());
        }
        for t in &asked {
            let bind = match t {
                Transport::Unix => format!("unix:{socket_text}"),
                _ => format!("{}:0", Ipv4Addr::LOCALHOST),
            };
            command.arg("--bind").arg(bind);
        }
        command
            .arg("--chdir")
            .arg(app_dir.path())
            .arg("--worker-tmp-dir")
            .arg(run.path())
            // Its log on standard error: the ready line and the errors, read here.
            // No access log (gunicorn's default): nothing written per request.
            .args(["--error-logfile", "-", "--log-level", "info"])
            .arg(APP_NAME)
            .env_clear()
            .envs(ENVIRONMENT)
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(a) = account {
            // std changes the account in the child before it runs the pre_exec
            // step `tie_to_parent` adds, so the death signal survives the change.
            command.uid(a.uid).gid(a.gid);
        }
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start gunicorn ({})", program.display()))?;
        let mut log = Log::read(child.stderr.take().expect("stderr is piped"));
        // Held first, so that a failure from here on stops it.
        let mut server = Gunicorn {
            child,
            endpoints: Vec::new(),
            uid: account::uid_of(account),
            account: account.map_or_else(account::current_user_name, |a| a.name.clone()),
            dir,
        };
        server.dir.record_server(server.pid())?;
        let started = Instant::now();
        let ready = server.wait_ready(&mut log, &asked, &socket_text, workers, started);
        match ready {
            Ok(()) => Ok(server),
            Err(e) if crate::interrupt::interrupted() => Err(e),
            Err(e) => {
                // An app that does not load ends gunicorn a moment after the first
                // request failed: its own words then say why.
                let exited = server.exit_within(AFTER_EXIT);
                server.stop();
                log.drain(AFTER_EXIT);
                let e = match exited {
                    Some(status) => anyhow!(
                        "{} exited ({status}) before it was ready",
                        program.display()
                    ),
                    None => e,
                };
                Err(match log.tail() {
                    None => e,
                    Some(tail) => anyhow!("{e:#}: {tail}"),
                })
            }
        }
    }

    /// The master, for its CPU and placement: the workers are its children, so
    /// its tree is the whole server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where it listens over `transport`.
    pub fn endpoint(&self, transport: Transport) -> Option<&Endpoint> {
        self.endpoints.iter().find(|e| e.transport == transport)
    }

    /// True while the master runs (neither exited nor a zombie).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Checks, before anything is sent on `conn`, that gunicorn answers there. A
    /// Unix connection's peer (`SO_PEERCRED`: the process that made the listening
    /// socket) must be the server account and gunicorn's master (or a process of
    /// its: one `getsockopt`, and `/proc` read only when the PID is another);
    /// anything acting as that account can put another socket at the path. A TCP
    /// connection passes: its port was checked at start and stays gunicorn's
    /// while it runs (see the module's documentation).
    pub fn check_peer(&self, conn: &Conn) -> Result<()> {
        let Conn::Unix(stream) = conn else {
            return Ok(());
        };
        let peer =
            peers::unix_peer(stream).context("cannot tell who answers at gunicorn's socket")?;
        let master = self.pid();
        let ours = peer.uid == self.uid
            && (peer.pid == master || crate::cpu::proc::parent(peer.pid) == Some(master));
        if !ours {
            bail!(
                "the process answering at gunicorn's socket is not gunicorn's (PID {}, user ID {}, \
                 where gunicorn is PID {master} as the '{}' account, user ID {}); anything acting \
                 as that account may have put its own socket at the path",
                peer.pid,
                peer.uid,
                self.account,
                self.uid
            );
        }
        Ok(())
    }

    /// Waits until gunicorn says where it listens and that its workers boot
    /// (its log), its TCP ports are its own, and each transport answers a first
    /// request, its peer checked first; all within [`READY_TIMEOUT`] from
    /// `started`, Ctrl-C seen.
    fn wait_ready(
        &mut self,
        log: &mut Log,
        asked: &[Transport],
        socket: &str,
        workers: u32,
        started: Instant,
    ) -> Result<()> {
        let deadline = started + READY_TIMEOUT;
        let mut booted = BTreeSet::new();
        while self.endpoints.is_empty() || booted.len() < workers as usize {
            match log.next(POLL) {
                Ok(Some(line)) => {
                    if let Some((_, list)) = line.split_once("Listening at: ") {
                        self.endpoints = listening(list, asked, socket, self.pid())?;
                    }
                    if let Some((_, pid)) = line.split_once("Booting worker with pid: ") {
                        booted.insert(pid.trim().to_string());
                    }
                }
                Ok(None) => {}
                Err(()) => bail!("gunicorn closed its standard error before it was ready"),
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                bail!("gunicorn exited ({status}) before it was ready");
            }
            crate::interrupt::check()?;
            if Instant::now() >= deadline {
                bail!("gunicorn did not start within {READY_TIMEOUT:?}");
            }
        }
        self.check_listeners()?;
        for endpoint in self.endpoints.clone() {
            let left = deadline.saturating_duration_since(Instant::now());
            self.first_request(&endpoint, left.max(POLL))?;
        }
        Ok(())
    }

    /// `GET /?size=0` at `endpoint`, its peer checked first: 200 within `limit`.
    fn first_request(&self, endpoint: &Endpoint, limit: Duration) -> Result<()> {
        let conn = super::http::connect(endpoint)?;
        self.check_peer(&conn)?;
        let mut client = HttpConn::new(conn, 0, endpoint, limit)?;
        let request = HttpRequest::get("localhost", 0, false)?;
        match client.exchange(&request) {
            Ok(Status(200)) => Ok(()),
            Ok(Status(code)) => bail!("gunicorn answered {code} to GET /?size=0 at {endpoint}"),
            Err(e) => Err(anyhow!(e).context(format!("gunicorn did not answer at {endpoint}"))),
        }
    }

    /// Once, before anything is sent: every TCP port gunicorn reported is held
    /// by its master, as its account, on 127.0.0.1, and no other process listens
    /// where a connection to loopback would reach it.
    fn check_listeners(&self) -> Result<()> {
        for endpoint in &self.endpoints {
            let Address::Ip(addr) = endpoint.address else {
                continue;
            };
            let port = addr.port();
            let (listeners, foreign) = peers::loopback_listeners(port, self.pid(), self.uid)
                .with_context(|| format!("cannot check who answers at gunicorn's {endpoint}"))?;
            if let Some(l) = foreign {
                bail!(
                    "another process listens at gunicorn's port {port} (on {}, user ID {}); \
                     another local account may have bound it first",
                    l.addr,
                    l.uid
                );
            }
            if !listeners.iter().any(|l| l.addr == addr.ip()) {
                bail!("gunicorn does not listen on {addr}, where it says it does");
            }
        }
        Ok(())
    }

    /// How the master ended, if it does within `wait`.
    fn exit_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL / 5),
                _ => return None,
            }
        }
    }

    /// Sends SIGTERM to the master (by its PID; gunicorn's graceful stop: it
    /// ends its workers, then itself), waits briefly, then SIGKILL, whose death
    /// signal ends the workers; waits (briefly) until they are gone too.
    fn stop(&mut self) {
        let workers = match self.child.try_wait() {
            Ok(None) => crate::cpu::proc::children(self.pid()),
            _ => Vec::new(),
        };
        crate::subprocess::stop(&mut self.child, &[(libc::SIGTERM, STOP_TIMEOUT)]);
        let deadline = Instant::now() + AFTER_EXIT;
        while workers.iter().any(|&p| crate::cpu::proc::runs(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The private directory, for tests.
    #[cfg(test)]
    fn dir(&self) -> &crate::dir::Dir {
        self.dir.dir()
    }
}

impl Drop for Gunicorn {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The endpoints of `list`, the rest of gunicorn's `Listening at: LIST (PID)`
/// line, which names its listeners in the order of its `--bind` options
/// (`unix:PATH`, `http://127.0.0.1:PORT` with the port it got), for `asked` in
/// that order, `socket` the Unix socket's path; `master` must be the PID it says.
fn listening(list: &str, asked: &[Transport], socket: &str, master: u32) -> Result<Vec<Endpoint>> {
    let unreadable = || anyhow!("cannot read where gunicorn listens from 'Listening at: {list}'");
    let (mut rest, pid) = list.trim_end().rsplit_once(" (").ok_or_else(unreadable)?;
    let pid = pid.strip_suffix(')').ok_or_else(unreadable)?;
    if pid != master.to_string() {
        bail!("gunicorn says it listens as process {pid}, not as {master}, the one started");
    }
    let unix = format!("unix:{socket}");
    let tcp = format!("http://{}:", Ipv4Addr::LOCALHOST);
    let mut found = Vec::new();
    for (i, &transport) in asked.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix(',').ok_or_else(unreadable)?;
        }
        let address = if transport == Transport::Unix {
            rest = rest.strip_prefix(unix.as_str()).ok_or_else(unreadable)?;
            Address::Path(PathBuf::from(socket))
        } else {
            rest = rest.strip_prefix(tcp.as_str()).ok_or_else(unreadable)?;
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let port: u16 = rest[..digits].parse().map_err(|_| unreadable())?;
            if port == 0 {
                return Err(unreadable());
            }
            rest = &rest[digits..];
            Address::Ip(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
        };
        found.push(Endpoint { transport, address });
    }
    if !rest.is_empty() {
        return Err(unreadable());
    }
    Ok(found)
}

/// gunicorn's log (its standard error), read line by line on a thread for as
/// long as gunicorn writes it, each line cut at [`MAX_LINE`], so gunicorn never
/// blocks on a full pipe; the start keeps the last [`KEPT_LINES`] for its errors.
/// Once the `Log` is dropped the thread reads on and keeps nothing.
pub(super) struct Log {
    lines: mpsc::Receiver<String>,
    kept: VecDeque<String>,
}

impl Log {
    pub(super) fn read(stderr: impl Read + Send + 'static) -> Log {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            let mut keeping = true;
            loop {
                let buf = match reader.fill_buf() {
                    Ok([]) => break,
                    Ok(buf) => buf,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let end = buf.iter().position(|&b| b == b'\n');
                let part = &buf[..end.unwrap_or(buf.len())];
                if keeping {
                    let room = MAX_LINE.saturating_sub(line.len());
                    line.extend_from_slice(&part[..part.len().min(room)]);
                }
                let used = end.map_or(buf.len(), |e| e + 1);
                reader.consume(used);
                if end.is_some() && keeping {
                    keeping = tx.send(String::from_utf8_lossy(&line).into_owned()).is_ok();
                    line.clear();
                }
            }
            if keeping && !line.is_empty() {
                let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
            }
        });
        Log {
            lines,
            kept: VecDeque::new(),
        }
    }

    /// The next line, within `wait`; `Err` once gunicorn (and every worker) has
    /// closed its standard error.
    pub(super) fn next(&mut self, wait: Duration) -> Result<Option<String>, ()> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                if self.kept.len() == KEPT_LINES {
                    self.kept.pop_front();
                }
                self.kept.push_back(line.clone());
                Ok(Some(line))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(()),
        }
    }

    /// Keeps what gunicorn still writes, until it closes its standard error or
    /// `wait` has passed.
    pub(super) fn drain(&mut self, wait: Duration) {
        let deadline = Instant::now() + wait;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            if self.next(left).is_err() {
                return;
            }
        }
    }

    /// The last lines that say what went wrong, on one line: the errors and what
    /// gunicorn printed itself (a Python traceback's last lines), and its
    /// `Reason:` for stopping, each without its time and PID; `None` when
    /// nothing was said.
    pub(super) fn tail(&self) -> Option<String> {
        let lines: Vec<&str> = self
            .kept
            .iter()
            .map(|l| shorten(l))
            .filter(|l| !l.is_empty())
            .collect();
        let telling: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| !l.starts_with("[INFO] ") || l.starts_with("[INFO] Reason: "))
            .collect();
        let shown = if telling.is_empty() {
            &lines[lines.len().saturating_sub(2)..]
        } else {
            &telling[telling.len().saturating_sub(SHOWN_LINES)..]
        };
        (!shown.is_empty()).then(|| shown.join(" | "))
    }
}

/// A line of gunicorn's log without its time and PID (`[time] [PID] [LEVEL]
/// message` becomes `[LEVEL] message`), trimmed; another line only trimmed.
fn shorten(line: &str) -> &str {
    let line = line.trim();
    let stripped = (|| {
        let (_, after_time) = line.strip_prefix('[')?.split_once("] [")?;
        let (pid, rest) = after_time.split_once("] ")?;
        pid.bytes().all(|b| b.is_ascii_digit()).then_some(rest)
    })();
    stripped.unwrap_or(line)
}

#[cfg(test)]
#[path = "gunicorn_tests.rs"]
mod tests;
