//! The user's app server behind nginx, two ways:
//!
//! - `--app 'CMD'`: sockbench starts the command once per transport
//!   ([`Command`]), `{socket}`, `{host}` and `{port}` replaced by where that one
//!   is to listen, and stops it by its PID after. It runs as nginx's account (the
//!   server account: `nginx::server_account`), never as root, through `/bin/sh
//!   -c 'exec CMD'` in the directory sockbench was started in (where the user's
//!   app is), with `PATH` as sockbench's and nothing else of its environment, in
//!   its own process group. The process started dies with sockbench
//!   (`PR_SET_PDEATHSIG`); what it starts is stopped with its group at the end of
//!   the run, and, should sockbench be killed outright, is the command's own to
//!   end when its parent dies (gunicorn's workers do). Its Unix socket is in a
//!   directory of that account's:
//!
//!   ```text
//!   sockbench-proxy-…/     sockbench's account, 0711: the owner file
//!    └─ run/               the server account's, 0700: app.sock, made by the app
//!   ```
//!
//!   So who answers is checked before root sends anything: every connection's
//!   peer over the Unix socket (the account, and a process of the command's
//!   tree), and before each trial that the TCP port's listener is the command's
//!   and that nothing of the command listens beyond 127.0.0.1.
//! - `--upstream NAME=ADDRESS`: an app server that runs. Only read: its process,
//!   when found on this machine ([`running_process`]), is counted as the `app`
//!   role, and never placed (it serves others).

use super::gunicorn::Log;
use crate::cpu::proc;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::{Address, Conn, Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
use std::cell::Cell;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long the user's app server may take to answer its first request.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How often the wait for it looks again, and at Ctrl-C.
const POLL: Duration = Duration::from_millis(50);
/// How long it may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
const RUN_DIR: &str = "run";
const SOCKET: &str = "app.sock";
/// What messages call it.
const WHO: &str = "your app server (--app)";

/// One start of the user's command, listening over one transport.
pub struct Command {
    child: Child,
    pub endpoint: Endpoint,
    uid: u32,
    account: String,
    /// The last process below the command found answering on its socket, so a
    /// check in a timed loop is one `getsockopt` and a compare.
    verified: Cell<u32>,
    /// Whether the process started has been reaped (its PID, the group's ID,
    /// is then no longer sockbench's to signal).
    reaped: bool,
    // Last, so the directory goes after the app server has stopped.
    dir: PrivateDir,
}

/// Why the app server did not answer at its start: not yet (tried again), or
/// something else answers there (refused at once).
enum NotReady {
    NotYet(anyhow::Error),
    Refused(anyhow::Error),
}

impl Command {
    /// Starts `command` to listen over `transport` (unix or tcp), as `account`,
    /// and waits until it answers `GET path` with any status.
    pub fn start(
        command: &str,
        transport: Transport,
        account: Option<&Account>,
        path: &str,
    ) -> Result<Command> {
        if account.is_none() && crate::dir::euid() == 0 {
            bail!("{WHO} is never run as root: name the account it runs as");
        }
        let dir = account::server_dir(
            account,
            super::DIR_PREFIX,
            WHO,
            &format!("{RUN_DIR}/{SOCKET}"),
            MAX_UNIX_PATH,
        )?;
        let run = dir
            .dir()
            .make_dir(RUN_DIR, 0o700, account.map(Account::owner))
            .with_context(|| format!("cannot make {}", dir.dir().join(RUN_DIR).display()))?;
        let endpoint = match transport {
            Transport::Unix => Endpoint {
                transport,
                address: Address::Path(run.join(SOCKET)),
            },
            Transport::Tcp => Endpoint {
                transport,
                address: Address::Ip(free_port()?),
            },
            other => bail!("{WHO} is started over unix and tcp, not {other}"),
        };
        let line = fill(command, &endpoint)?;
        let mut shell = std::process::Command::new("/bin/sh");
        shell
            .arg("-c")
            .arg(format!("exec {line}"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Ok(here) = std::env::current_dir() {
            shell.current_dir(here);
        }
        if let Some(a) = account {
            shell.uid(a.uid).gid(a.gid);
        }
        crate::subprocess::tie_to_parent(&mut shell, libc::SIGKILL);
        let mut child = shell
            .spawn()
            .with_context(|| format!("cannot start {WHO}: {line}"))?;
        // Its log, kept only while it starts (a bounded tail); after, read and
        // dropped, so a server that logs every request costs nothing kept.
        let mut log = Log::read(child.stderr.take().expect("stderr is piped"));
        // Held first, so that a failure from here on stops it.
        let mut app = Command {
            child,
            endpoint,
            uid: account::uid_of(account),
            account: account.map_or_else(account::current_user_name, |a| a.name.clone()),
            verified: Cell::new(0),
            reaped: false,
            dir,
        };
        app.dir.record_server(app.pid())?;
        match app.wait_ready(path, &mut log) {
            Ok(()) => Ok(app),
            Err(e) if crate::interrupt::interrupted() => Err(e),
            Err(e) => {
                app.stop();
                log.drain(Duration::from_secs(1));
                Err(match log.tail() {
                    None => e.context(format!("started as: {line}")),
                    Some(said) => anyhow!("{e:#} (started as: {line}): {said}"),
                })
            }
        }
    }

    /// The process started (the shell became the command), for its CPU and
    /// placement: what it starts is below it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// True while it runs.
    pub fn running(&mut self) -> bool {
        match self.child.try_wait() {
            Ok(None) => true,
            _ => {
                self.reaped = true;
                false
            }
        }
    }

    /// Before anything is sent on `conn`: a Unix connection's peer must be the
    /// account it runs as, and its process or one below it (anything acting as
    /// that account can put another socket at the path).
    pub fn check_peer(&self, conn: &Conn) -> Result<()> {
        let Conn::Unix(stream) = conn else {
            return Ok(());
        };
        let peer = peers::unix_peer(stream).context("cannot tell who answers at its socket")?;
        let root = self.pid();
        let known = peer.pid == root || peer.pid == self.verified.get();
        // Another process below the command (a worker, a reloader's child): the
        // tree is read once for it, then it is known.
        let ours = peer.uid == self.uid && (known || proc::descendants(root).contains(&peer.pid));
        if ours && !known {
            self.verified.set(peer.pid);
        }
        if !ours {
            bail!(
                "the process answering at {WHO}'s socket is not its own (PID {}, user ID {}, \
                 where it is PID {root} as the '{}' account); anything acting as that account \
                 may have put its own socket at the path",
                peer.pid,
                peer.uid,
                self.account
            );
        }
        Ok(())
    }

    /// Waits until it answers `GET path` (any status: a 404 is said later, by
    /// the trials), who answers checked first.
    fn wait_ready(&mut self, path: &str, log: &mut Log) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let request = super::http::HttpRequest::get_path(super::http::HOST, path, false)?;
        loop {
            crate::interrupt::check()?;
            if let Ok(Some(status)) = self.child.try_wait() {
                self.reaped = true;
                bail!("{WHO} exited ({status}) before it answered");
            }
            match self.answer(&request) {
                Ok(()) => return Ok(()),
                Err(NotReady::Refused(e)) => return Err(e),
                Err(NotReady::NotYet(e)) if Instant::now() >= deadline => {
                    return Err(e.context(format!(
                        "{WHO} did not answer GET {path} at {} within {READY_TIMEOUT:?}",
                        self.endpoint
                    )))
                }
                // Its log read meanwhile: the pipe never fills.
                Err(NotReady::NotYet(_)) => while let Ok(Some(_)) = log.next(POLL) {},
            }
        }
    }

    /// One try at the first request: who answers checked once it is connected.
    fn answer(&self, request: &super::http::HttpRequest) -> Result<(), NotReady> {
        let conn = super::http::connect(&self.endpoint).map_err(NotReady::NotYet)?;
        self.check_listeners().map_err(NotReady::Refused)?;
        self.check_peer(&conn).map_err(NotReady::Refused)?;
        let mut client = super::http::HttpConn::new(conn, 64 << 10, &self.endpoint, READY_TIMEOUT)
            .map_err(|e| NotReady::NotYet(e.into()))?;
        match client.exchange(request) {
            Ok(_) => Ok(()),
            Err(e) => Err(NotReady::NotYet(anyhow!(e))),
        }
    }

    /// Before anything is sent to it (at start, and before each trial): the TCP
    /// port it was given is held by the command's processes as its account, and
    /// nothing the command holds listens beyond 127.0.0.0/8 (a bind to 0.0.0.0
    /// or `::` would open it to the network).
    pub fn check_listeners(&self) -> Result<()> {
        let listeners = peers::all_tcp_listeners()
            .with_context(|| format!("cannot check who answers at {}", self.endpoint))?;
        let tree: Vec<u32> = std::iter::once(self.pid())
            .chain(proc::descendants(self.pid()))
            .collect();
        let held = |inode: u64| tree.iter().any(|&p| peers::holds(p, inode));
        if let Some(open) = listeners
            .iter()
            .find(|l| !l.addr.is_loopback() && l.uid == self.uid && held(l.inode))
        {
            bail!(
                "{WHO} listens on {}:{}, beyond this machine's loopback; sockbench measures \
                 this machine only: have it listen on {{host}} (127.0.0.1)",
                open.addr,
                open.port
            );
        }
        let Address::Ip(addr) = self.endpoint.address else {
            return Ok(());
        };
        if let Some(l) = listeners.iter().find(|l| {
            l.port == addr.port()
                && (l.addr.is_unspecified() || l.addr.is_loopback())
                && (l.uid != self.uid || !held(l.inode))
        }) {
            bail!(
                "another process listens at {WHO}'s port {} (on {}, user ID {}); another local \
                 account may have bound it first",
                l.port,
                l.addr,
                l.uid
            );
        }
        Ok(())
    }

    /// SIGTERM to its process group (its own: `tie_to_parent` made it), a wait,
    /// then SIGKILL to the group, and the process started is reaped. Once that
    /// process was reaped its PID may name another's group, so what is left of
    /// the group is then found by its members (`/proc`: the group's ID and the
    /// account) and stopped by their PIDs.
    fn stop(&mut self) {
        let group = self.pid();
        if !self.reaped {
            signal_group(group, libc::SIGTERM);
            let deadline = Instant::now() + STOP_TIMEOUT;
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
            // Reaped or not, its PID stays the group's while a member lives.
            signal_group(group, libc::SIGKILL);
            crate::subprocess::stop(&mut self.child, &[]);
            self.reaped = true;
        }
        for pid in proc::in_group(group, self.uid) {
            // SAFETY: a signal to a process of the group sockbench made.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

/// Sends `signal` to process group `group`.
fn signal_group(group: u32, signal: libc::c_int) {
    // SAFETY: a signal to the process group sockbench made for its child,
    // whose leader it has not reaped (so the ID is still that group's).
    unsafe { libc::kill(-(group as libc::pid_t), signal) };
}

impl Drop for Command {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `command` with `{socket}`, `{host}` and `{port}` replaced for `endpoint`
/// (the socket's path quoted for the shell; an address and a port need no
/// quotes); the option of another transport's placeholder is left out
/// ([`drop_word`]).
fn fill(command: &str, endpoint: &Endpoint) -> Result<String> {
    let (socket, host, port) = match &endpoint.address {
        Address::Path(path) => {
            let text = path.to_str().ok_or_else(|| {
                usage(format!(
                    "{} (in TMPDIR) is not UTF-8; set TMPDIR to a plain directory such as /tmp",
                    path.display()
                ))
            })?;
            (
                Some(format!("'{}'", text.replace('\'', r"'\''"))),
                None,
                None,
            )
        }
        Address::Ip(addr) => (
            None,
            Some(addr.ip().to_string()),
            Some(addr.port().to_string()),
        ),
        Address::Abstract(_) => bail!("{WHO} cannot listen on an abstract Unix socket"),
    };
    let mut line = command.to_string();
    for (name, value) in [("{socket}", socket), ("{host}", host), ("{port}", port)] {
        match value {
            Some(v) => line = line.replace(name, &v),
            // The other transport's start fills it; this one leaves it out.
            None => line = drop_word(&line, name),
        }
    }
    Ok(line)
}

/// `line` without the option that holds `placeholder` (`-b unix:{socket}`, or
/// `--uds {socket}`): the word with it (words split at spaces, quotes not
/// read), and the word before it when that one is an option (`-b`, `--uds`:
/// starts with `-`, holds no `=`).
fn drop_word(line: &str, placeholder: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let mut kept: Vec<&str> = Vec::new();
    for word in words {
        if word.contains(placeholder) {
            // `-b unix:{socket}`, `--uds {socket}`: the flag goes with it.
            if kept
                .last()
                .is_some_and(|w| w.starts_with('-') && !w.contains('='))
            {
                kept.pop();
            }
            continue;
        }
        kept.push(word);
    }
    kept.join(" ")
}

/// A port on 127.0.0.1 free now (the kernel's pick, let go at once); the app's
/// listener is checked to be the app's once it answers.
fn free_port() -> Result<SocketAddr> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .context("cannot find a free port on 127.0.0.1 for your app server")?;
    Ok(listener.local_addr()?)
}

/// The process of the user's app server at `endpoint`, when it runs on this
/// machine and sockbench may look at it: over a Unix socket, the process that
/// made the listening socket (`SO_PEERCRED`); over TCP, the topmost process
/// holding the port's listener (a master whose workers inherited it).
pub fn running_process(endpoint: &Endpoint) -> Result<u32, String> {
    match &endpoint.address {
        Address::Path(path) => peers::path_listener(path)
            .map(|p| p.pid)
            .map_err(|e| format!("cannot reach {} ({e})", path.display())),
        Address::Ip(addr) => {
            let listeners = peers::tcp_listeners(addr.port())
                .map_err(|e| format!("cannot read the listeners of port {} ({e})", addr.port()))?;
            let inode = listeners
                .iter()
                .find(|l| l.addr == addr.ip() || l.addr.is_unspecified())
                .map(|l| l.inode)
                .ok_or_else(|| format!("nothing on this machine listens at {addr}"))?;
            let holders = peers::holders(inode);
            holders
                .iter()
                .copied()
                .find(|&p| proc::parent(p).is_none_or(|parent| !holders.contains(&parent)))
                .ok_or_else(|| {
                    format!("the process listening at {addr} cannot be seen (another account's)")
                })
        }
        Address::Abstract(_) => Err("an abstract socket is not reached by nginx".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Endpoint {
        text.parse().unwrap()
    }

    fn cmdline_of(pid: u32) -> String {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&raw).replace('\0', " ")
    }

    #[test]
    fn placeholders_are_filled_and_the_other_transports_option_left_out() {
        let cmd = "gunicorn -w 2 -b unix:{socket} -b {host}:{port} app:app";
        let unix = fill(cmd, &at("unix:/tmp/x/run/app.sock")).unwrap();
        assert_eq!(unix, "gunicorn -w 2 -b unix:'/tmp/x/run/app.sock' app:app");
        let tcp = fill(cmd, &at("tcp:127.0.0.1:8123")).unwrap();
        assert_eq!(tcp, "gunicorn -w 2 -b 127.0.0.1:8123 app:app");
        let uvicorn = "uvicorn --uds {socket} --host {host} --port {port} main:app";
        assert_eq!(
            fill(uvicorn, &at("unix:/s")).unwrap(),
            "uvicorn --uds '/s' main:app"
        );
        // A path the shell would read otherwise stays one word.
        assert_eq!(
            fill("srv --uds {socket}", &at("unix:/t m/it's;x")).unwrap(),
            r"srv --uds '/t m/it'\''s;x'"
        );
    }

    #[test]
    fn a_command_started_answers_its_checks_and_is_gone_after() {
        let Some(python) = ["/usr/bin/python3"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
        else {
            eprintln!("skipped: python3 is not installed");
            return;
        };
        let account = crate::proxy::nginx::server_account().unwrap();
        let cmd = format!("{python} -m http.server --bind {{host}} {{port}}");
        let app = Command::start(&cmd, Transport::Tcp, account.as_ref(), "/").unwrap();
        let pid = app.pid();
        // The listener is the command's own process (the shell became it).
        assert_eq!(running_process(&app.endpoint), Ok(pid));
        assert!(
            cmdline_of(pid).contains("http.server"),
            "{}",
            cmdline_of(pid)
        );
        drop(app);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}
