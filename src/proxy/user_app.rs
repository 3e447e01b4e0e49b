//! The user's app server behind nginx, two ways:
//!
//! - `--app 'CMD'`: sockbench starts the command once per transport
//!   ([`Command`]), `{socket}`, `{host}` and `{port}` replaced by where that one
//!   is to listen, and stops it by its PID after. It runs as nginx's account (the
//!   server account: `nginx::server_account`), never as root, through `/bin/sh
//!   -c 'exec CMD'` in the directory sockbench was started in (where the user's
//!   app is), with `PATH` as sockbench's and nothing else of its environment, as
//!   PID 1 of a PID namespace of its own, as nginx runs
//!   (`subprocess::pid_namespace`): whatever it starts, a daemon that left its
//!   process group (`setsid -f`) included, ends with it, at the end of the run, on
//!   an error, on Ctrl-C and when sockbench is killed outright. Its Unix socket is
//!   in a directory of that account's:
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
use crate::subprocess::pid_namespace::Kept;
use crate::system::account::{self, Account};
use crate::system::peers;
use crate::transport::{Address, Conn, Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
use std::cell::Cell;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::Stdio;
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
    /// The command, PID 1 of its namespace, below its keeper.
    kept: Kept,
    pub endpoint: Endpoint,
    uid: u32,
    account: String,
    /// The last process below the command found answering on its socket, so a
    /// check in a timed loop is one `getsockopt` and a compare.
    verified: Cell<u32>,
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
        let ids = account.map(|a| (a.uid, a.gid));
        let mut kept = Kept::spawn(&mut shell, ids)
            .with_context(|| format!("cannot start {WHO} in a PID namespace of its own: {line}"))?;
        // Its log, kept only while it starts (a bounded tail); after, read and
        // dropped, so a server that logs every request costs nothing kept.
        let mut log = Log::read(kept.take_stderr().expect("stderr is piped"));
        // Held first, so that a failure from here on stops it.
        let mut app = Command {
            kept,
            endpoint,
            uid: account::uid_of(account),
            account: account.map_or_else(account::current_user_name, |a| a.name.clone()),
            verified: Cell::new(0),
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

    /// The keeper of its PID namespace, for its CPU and placement: the command
    /// and all it starts are below it.
    pub fn pid(&self) -> u32 {
        self.kept.pid()
    }

    /// True while it runs.
    pub fn running(&mut self) -> bool {
        matches!(self.kept.try_wait(), Ok(None))
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
        // The process started (the shell became the command).
        let started = self.kept.server_pid().unwrap_or(root);
        let known = peer.pid == started || peer.pid == self.verified.get();
        // Another process below the command (a worker, a reloader's child): the
        // tree is read once for it, then it is known.
        let ours = peer.uid == self.uid && (known || proc::descendants(root).contains(&peer.pid));
        if ours && !known {
            self.verified.set(peer.pid);
        }
        if !ours {
            bail!(
                "the process answering at {WHO}'s socket is not its own (PID {}, user ID {}, \
                 where it is PID {started} as the '{}' account); anything acting as that account \
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
            if let Ok(Some(status)) = self.kept.try_wait() {
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

    /// SIGTERM to the command when it catches it, a wait, then SIGKILL to the
    /// keeper, which takes the command and so everything left in its namespace
    /// (`Kept::stop`).
    fn stop(&mut self) {
        self.kept.stop(STOP_TIMEOUT);
    }
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

    /// `python3`, which the tests' app servers run; otherwise says why `test` is
    /// skipped.
    fn python(test: &str) -> Option<&'static str> {
        let found = ["/usr/bin/python3"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        if found.is_none() {
            eprintln!("skipped {test}: python3 is not installed");
        }
        found
    }

    /// A directory the command may write in (the server account's), with a
    /// script that starts a daemon in a session of its own (`setsid -f`: out of
    /// the command's process group, reparented away from it), which writes its
    /// PID as the host sees it (its shell reads /proc/self itself) to
    /// `daemon.pid`, then serves; and the command that runs it.
    fn daemonizing(python: &str, account: Option<&Account>) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("app.sh"),
            format!(
                "setsid -f sh -c 'read -r pid rest </proc/self/stat; echo \"$pid\" >\"$1\"; \
                 exec sleep 300' daemon \"$3\"\n\
                 exec {python} -m http.server --bind \"$1\" \"$2\"\n"
            ),
        )
        .unwrap();
        if let Some(a) = account {
            std::os::unix::fs::chown(dir.path(), Some(a.uid), Some(a.gid)).unwrap();
        }
        let path = dir.path().display();
        let command = format!("sh {path}/app.sh {{host}} {{port}} {path}/daemon.pid");
        (dir, command)
    }

    /// A process the test saw, held by a descriptor: killed when dropped, so a
    /// failing test leaves nothing running (and nothing that took its PID later
    /// is signalled).
    struct Held(u32, std::os::fd::OwnedFd);

    impl Drop for Held {
        fn drop(&mut self) {
            use rustix::process::{pidfd_send_signal, Signal};
            let _ = pidfd_send_signal(&self.1, Signal::KILL);
        }
    }

    /// The daemon whose PID is in `dir`'s `daemon.pid`, held once it is there
    /// (a few seconds at most).
    fn daemon_of(dir: &std::path::Path) -> Held {
        use rustix::process::{pidfd_open, Pid, PidfdFlags};
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let said = std::fs::read_to_string(dir.join("daemon.pid")).unwrap_or_default();
            let pid: Option<u32> = said.trim().parse().ok();
            let fd = pid
                .and_then(|p| Pid::from_raw(p as i32))
                .and_then(|p| pidfd_open(p, PidfdFlags::empty()).ok());
            if let (Some(pid), Some(fd)) = (pid, fd) {
                // Checked once held: the daemon (its shell, or sleep once it ran).
                assert!(cmdline_of(pid).contains("sleep 300"), "{}", cmdline_of(pid));
                return Held(pid, fd);
            }
            assert!(Instant::now() < deadline, "the daemon never said its PID");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A child process killed with SIGKILL when dropped, and reaped.
    struct KillOnDrop(std::process::Child);

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Waits up to two seconds for none of `pids` to run; those still running.
    fn still_running(pids: &[u32]) -> Vec<u32> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let left: Vec<u32> = pids.iter().copied().filter(|&p| proc::runs(p)).collect();
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
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
        let Some(python) = python("a_command_started_answers_its_checks") else {
            return;
        };
        let account = crate::proxy::nginx::server_account().unwrap();
        let cmd = format!("{python} -m http.server --bind {{host}} {{port}}");
        let app = Command::start(&cmd, Transport::Tcp, account.as_ref(), "/").unwrap();
        let (keeper, started) = (app.pid(), app.kept.server_pid().unwrap());
        // The listener is the command's own process (the shell became it), PID 1
        // of its namespace below the keeper.
        assert_eq!(running_process(&app.endpoint), Ok(started));
        assert_eq!(proc::parent(started), Some(keeper));
        assert!(
            cmdline_of(started).contains("http.server"),
            "{}",
            cmdline_of(started)
        );
        drop(app);
        for pid in [keeper, started] {
            assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        }
    }

    #[test]
    fn a_daemon_the_command_starts_is_gone_after() {
        let Some(python) = python("a_daemon_the_command_starts_is_gone_after") else {
            return;
        };
        let account = crate::proxy::nginx::server_account().unwrap();
        let (dir, command) = daemonizing(python, account.as_ref());
        let app = Command::start(&command, Transport::Tcp, account.as_ref(), "/").unwrap();
        let daemon = daemon_of(dir.path());
        drop(app);
        assert_eq!(
            still_running(&[daemon.0]),
            Vec::<u32>::new(),
            "the daemon outlived its stop"
        );
    }

    /// Set in the child process of the next test.
    const KILLED_CHILD: &str = "SOCKBENCH_TEST_APP_KILLED";
    /// What starts the child's report of the command's processes.
    const PIDS_SAID: &str = "the command's processes: ";

    #[test]
    fn nothing_the_command_starts_outlives_a_killed_sockbench() {
        let Some(python) = python("nothing_the_command_starts_outlives_a_killed_sockbench") else {
            return;
        };
        if let Some(command) = std::env::var_os(KILLED_CHILD) {
            // The child: starts the command, says its processes, and waits to
            // be killed.
            let account = crate::proxy::nginx::server_account().unwrap();
            let command = command.to_str().unwrap();
            let app = Command::start(command, Transport::Tcp, account.as_ref(), "/").unwrap();
            let pids = [app.pid(), app.kept.server_pid().unwrap()];
            let said: Vec<String> = pids.iter().map(u32::to_string).collect();
            // On the line libtest has begun with the test's name.
            println!("{PIDS_SAID}{}", said.join(" "));
            std::io::Write::flush(&mut std::io::stdout()).unwrap();
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        // The parent: runs this test alone in a child process, with its own
        // TMPDIR (which the server account may pass through), and kills it once
        // the command serves.
        let account = crate::proxy::nginx::server_account().unwrap();
        let (dir, command) = daemonizing(python, account.as_ref());
        let tmp = tempfile::tempdir().unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(tmp.path(), mode).unwrap();
        let mut child = KillOnDrop(
            std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "proxy::user_app::tests::nothing_the_command_starts_outlives_a_killed_sockbench",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(KILLED_CHILD, &command)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        );
        let stdout = child.0.stdout.take().unwrap();
        let said = std::io::BufRead::lines(std::io::BufReader::new(stdout))
            .map_while(Result::ok)
            .find_map(|l| Some(l.split_once(PIDS_SAID)?.1.to_string()));
        // Held before the child dies: the daemon is killed should the test fail.
        let daemon = said.as_ref().map(|_| daemon_of(dir.path()));
        drop(child);
        let mut pids: Vec<u32> = said
            .iter()
            .flat_map(|s| s.split(' ').map(|p| p.parse::<u32>().unwrap()))
            .collect();
        assert_eq!(pids.len(), 2, "keeper, command: {said:?}");
        pids.extend(daemon.as_ref().map(|d| d.0));
        let left = still_running(&pids);
        assert!(left.is_empty(), "{left:?} outlived the killed sockbench");
        // Its server gone, the leftover sweep removes the directory.
        let held = crate::dir::Dir::open(tmp.path()).unwrap();
        let kinds = [crate::leftovers::DirKind {
            prefix: super::super::DIR_PREFIX,
        }];
        assert_eq!(crate::leftovers::sweep(&held, &kinds), 1);
        assert!(held.names().unwrap().is_empty());
    }
}
