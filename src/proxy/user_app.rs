//! The user's app server behind nginx, two ways:
//!
//! - `--app 'CMD'`: sockbench starts the command once per transport
//!   ([`Command`]), `{socket}`, `{host}` and `{port}` replaced by where that one
//!   is to listen, and stops it by its PID after. It runs as nginx's account (the
//!   server account: `nginx::server_account`), never as root, through `/bin/sh
//!   -c 'exec CMD'` in the directory sockbench was started in (where the user's
//!   app is), with `PATH` as sockbench's and nothing else of its environment, in
//!   its own process group, and dies with sockbench (`PR_SET_PDEATHSIG`). Its
//!   Unix socket is in a directory of that account's:
//!
//!   ```text
//!   sockbench-proxy-…/     sockbench's account, 0711: the owner file
//!    └─ run/               the server account's, 0700: app.sock, made by the app
//!   ```
//!
//!   So who answers is checked before root sends anything: every connection's
//!   peer over the Unix socket (the account, and a process of the command's
//!   tree), and, once at start, that the TCP port's listener is the command's.
//! - `--upstream NAME=ADDRESS`: an app server that runs. Only read: its process,
//!   when found on this machine ([`running_process`]), is counted as the `app`
//!   role, and never placed (it serves others).

use crate::cpu::proc;
use crate::error::usage;
use crate::leftovers::PrivateDir;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::{Address, Conn, Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
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
    stderr: std::sync::mpsc::Receiver<String>,
    // Last, so the directory goes after the app server has stopped.
    _dir: PrivateDir,
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
        let stderr = crate::subprocess::forward_stderr(child.stderr.take().expect("piped"));
        dir.record_server(child.id())?;
        let mut app = Command {
            child,
            endpoint,
            uid: account::uid_of(account),
            account: account.map_or_else(account::current_user_name, |a| a.name.clone()),
            stderr,
            _dir: dir,
        };
        match app.wait_ready(path) {
            Ok(()) => Ok(app),
            Err(e) if crate::interrupt::interrupted() => Err(e),
            Err(e) => {
                app.stop();
                let tail = app.stderr.recv_timeout(Duration::from_secs(1));
                let tail = tail.unwrap_or_default();
                let said: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
                let said = &said[said.len().saturating_sub(3)..];
                Err(match said.join(" | ") {
                    s if s.is_empty() => e.context(format!("started as: {line}")),
                    s => anyhow!("{e:#} (started as: {line}): {s}"),
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
        matches!(self.child.try_wait(), Ok(None))
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
        let ours = peer.uid == self.uid
            && (peer.pid == root || proc::descendants(root).contains(&peer.pid));
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
    /// the trials), its peer or port checked first.
    fn wait_ready(&mut self, path: &str) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let request = super::http::HttpRequest::get_path(super::http::HOST, path, false)?;
        loop {
            crate::interrupt::check()?;
            if let Ok(Some(status)) = self.child.try_wait() {
                bail!("{WHO} exited ({status}) before it answered");
            }
            let answered = super::http::connect(&self.endpoint).and_then(|conn| {
                self.check_listener()?;
                self.check_peer(&conn)?;
                let mut client =
                    super::http::HttpConn::new(conn, 64 << 10, &self.endpoint, READY_TIMEOUT)?;
                client.exchange(&request).map_err(|e| anyhow!(e))
            });
            match answered {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(e.context(format!(
                        "{WHO} did not answer GET {path} at {} within {READY_TIMEOUT:?}",
                        self.endpoint
                    )))
                }
                Err(e) if e.to_string().contains("not its own") => return Err(e),
                Err(_) => std::thread::sleep(POLL),
            }
        }
    }

    /// Over TCP: the port's listeners on loopback are the command's processes'
    /// (held by its process or one below it), as its account.
    fn check_listener(&self) -> Result<()> {
        let Address::Ip(addr) = self.endpoint.address else {
            return Ok(());
        };
        let listeners = peers::tcp_listeners(addr.port())
            .with_context(|| format!("cannot check who answers at {}", self.endpoint))?;
        let tree: Vec<u32> = std::iter::once(self.pid())
            .chain(proc::descendants(self.pid()))
            .collect();
        let foreign = listeners.iter().find(|l| {
            (l.addr.is_unspecified() || l.addr.is_loopback())
                && (l.uid != self.uid || !tree.iter().any(|&p| peers::holds(p, l.inode)))
        });
        if let Some(l) = foreign {
            bail!(
                "another process listens at {WHO}'s port {} (on {}, user ID {}), not yours: \
                 not its own; another local account may have bound it first",
                l.port,
                l.addr,
                l.uid
            );
        }
        Ok(())
    }

    /// SIGTERM to its process group (its own: `tie_to_parent` made it), a wait,
    /// then SIGKILL to the group; the process is reaped.
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let group = self.pid() as libc::pid_t;
        // SAFETY: a signal to the process group sockbench made for this child.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above; whatever of the group is left.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        crate::subprocess::stop(&mut self.child, &[]);
    }
}

impl Drop for Command {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `command` with `{socket}`, `{host}` and `{port}` replaced for `endpoint`,
/// each quoted for the shell; a placeholder of another transport is refused.
fn fill(command: &str, endpoint: &Endpoint) -> Result<String> {
    let (socket, host, port) = match &endpoint.address {
        Address::Path(path) => {
            let text = path.to_str().ok_or_else(|| {
                usage(format!(
                    "{} (in TMPDIR) is not UTF-8; set TMPDIR to a plain directory such as /tmp",
                    path.display()
                ))
            })?;
            (Some(text.to_string()), None, None)
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
/// `--uds {socket}`): the word with it, and the option before it when that word
/// is the placeholder alone in a value of its own.
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
        assert_eq!(unix, "gunicorn -w 2 -b unix:/tmp/x/run/app.sock app:app");
        let tcp = fill(cmd, &at("tcp:127.0.0.1:8123")).unwrap();
        assert_eq!(tcp, "gunicorn -w 2 -b 127.0.0.1:8123 app:app");
        let uvicorn = "uvicorn --uds {socket} --host {host} --port {port} main:app";
        assert_eq!(
            fill(uvicorn, &at("unix:/s")).unwrap(),
            "uvicorn --uds /s main:app"
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
