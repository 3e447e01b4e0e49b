//! Helpers for the Redis tests: whether `redis-server` is installed, a sockbench run
//! watched from outside while it goes on (its throwaway `redis-server` found as its
//! child, its private directory and configuration seen in TMPDIR), and a Redis
//! server set up as a user would run their own, for `--url`.
//!
//! The throwaway server cannot be found by its command line as the PostgreSQL
//! tests find their postmaster: `redis-server` rewrites its process title to
//! `redis-server 127.0.0.1:PORT`, so the configuration path under TMPDIR is gone
//! from `/proc/PID/cmdline`. It is found instead as the child of sockbench whose
//! `comm` is `redis-server`, and remembered with its start time so that a later
//! process given the same PID is not mistaken for it.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `redis-server` where sockbench looks for it (`PATH`, /usr/bin, /usr/local/bin);
/// otherwise says why the test is skipped.
pub fn redis_installed(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/usr/local/bin".into()])
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("SKIPPED {test}: redis-server is not installed (apt-get install redis-server)");
    }
    found
}

/// What `redis-server --version` says its version is (`7.0.15`).
pub fn version_of(program: &Path) -> String {
    let out = Command::new(program).arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    said.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .unwrap_or_else(|| panic!("no version in {said:?}"))
        .to_string()
}

/// A process, told apart from a later one with the same PID by its start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    start: u64,
}

/// `(comm, state, ppid, start time)` of a process, from `/proc/PID/stat` (the name
/// stands in parentheses and may hold spaces: the fields follow the last `)`).
fn stat(pid: u32) -> Option<(String, char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    // fields[0] is the state (field 3 of stat), so field N is fields[N - 3].
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    Some((
        comm,
        fields.first()?.chars().next()?,
        fields.get(1)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
    ))
}

/// The running children of `parent` whose `comm` is `name`.
pub fn children_named(parent: u32, name: &str) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (comm, state, ppid, start) = stat(pid)?;
            (ppid == parent && comm == name && state != 'Z').then_some(Process { pid, start })
        })
        .collect()
}

/// The throwaway `redis-server` that sockbench `parent` runs: its child of that
/// name, but not the short-lived `redis-server --version` it asks the version of
/// (nor a process exiting, whose command line reads empty).
pub fn throwaway_servers(parent: u32) -> Vec<Process> {
    children_named(parent, "redis-server")
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.pid)).is_ok_and(|c| {
                !c.is_empty() && !c.split(|&b| b == 0).any(|arg| arg == b"--version")
            })
        })
        .collect()
}

impl Process {
    /// True while this very process runs (not a zombie, not a newer one on its PID).
    pub fn running(&self) -> bool {
        stat(self.pid).is_some_and(|(_, state, _, start)| state != 'Z' && start == self.start)
    }

    /// True until this very process is reaped (a zombie still exists).
    pub fn exists(&self) -> bool {
        stat(self.pid).is_some_and(|(_, _, _, start)| start == self.start)
    }
}

/// A sockbench run in the background, watched while it goes on.
pub struct Watched {
    child: Child,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    scratch: PathBuf,
    /// Every throwaway `redis-server` seen as sockbench's child.
    pub servers: Vec<Process>,
    /// Every `sockbench-redis-*` directory seen in TMPDIR.
    pub dirs: Vec<PathBuf>,
    /// The throwaway server's `redis.conf`, once read.
    pub config: Option<String>,
}

/// How a watched run ended.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub servers: Vec<Process>,
    pub dirs: Vec<PathBuf>,
    pub config: Option<String>,
}

fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

impl Watched {
    /// Starts `sockbench ARGS` with TMPDIR `scratch` and the variables `env`.
    pub fn start(scratch: &Path, args: &[&str], env: &[(&str, &str)]) -> Watched {
        let mut command = super::sockbench(scratch);
        command.args(args).env_remove("REDISCLI_AUTH");
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sockbench starts");
        let stdout = Some(drain(child.stdout.take().unwrap()));
        let stderr = Some(drain(child.stderr.take().unwrap()));
        Watched {
            child,
            stdout,
            stderr,
            scratch: scratch.to_path_buf(),
            servers: Vec::new(),
            dirs: Vec::new(),
            config: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Looks once at the run: its server, its directory, its configuration.
    pub fn look(&mut self) {
        for p in throwaway_servers(self.pid()) {
            if !self.servers.contains(&p) {
                self.servers.push(p);
            }
        }
        for d in super::leftovers(&self.scratch) {
            let private = d
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sockbench-redis-"));
            if private && !self.dirs.contains(&d) {
                self.dirs.push(d.clone());
            }
            if private && self.config.is_none() {
                // Root, or the server's own account when not root, may read it.
                self.config = std::fs::read_to_string(d.join("srv/redis.conf"))
                    .ok()
                    .filter(|t| t.contains("\nuser "));
            }
        }
    }

    fn ended(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Watches until `done` (true) or the run ends (false), at most `within`.
    pub fn until(&mut self, within: Duration, done: impl Fn(&Watched) -> bool) -> bool {
        let deadline = Instant::now() + within;
        loop {
            self.look();
            if done(self) {
                return true;
            }
            if self.ended() {
                return false;
            }
            assert!(Instant::now() < deadline, "still waiting after {within:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` to sockbench.
    pub fn signal(&self, signal: libc::c_int) {
        super::signal(&self.child, signal);
    }

    /// Watches until sockbench ends (killing it after `within`) and collects what it
    /// said.
    pub fn finish(mut self, within: Duration) -> Finished {
        self.until(within, |_| false);
        let status = self.child.wait().unwrap();
        Finished {
            status,
            stdout: self.stdout.take().unwrap().join().unwrap(),
            stderr: self.stderr.take().unwrap().join().unwrap(),
            servers: std::mem::take(&mut self.servers),
            dirs: std::mem::take(&mut self.dirs),
            config: self.config.take(),
        }
    }
}

impl Drop for Watched {
    /// A test that fails half-way kills its run (by PID), which takes the server
    /// with it.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Finished {
    /// Nothing of the run is left: no server it started runs (given 5 s to go), and
    /// no `sockbench-redis-*` directory is in TMPDIR.
    pub fn assert_nothing_left(&self, scratch: &Path) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.servers.iter().any(Process::running) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let running: Vec<&Process> = self.servers.iter().filter(|p| p.running()).collect();
        assert!(running.is_empty(), "redis-server left running: {running:?}");
        let left: Vec<PathBuf> = super::leftovers(scratch)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("sockbench-redis-"))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        for d in &self.dirs {
            assert!(!d.exists(), "{} is still there", d.display());
        }
    }
}

/// The password of the user's server.
pub const USER_PASSWORD: &str = "redis-user-pw-4711";

/// A `redis-server` as a user runs their own: started by the test as `nobody` when
/// the tests run as root (else as the current user), from a configuration file
/// holding `requirepass`, listening on a port on 127.0.0.1 and on a Unix socket in
/// its private directory. Stopped by its PID and removed on drop.
pub struct UserRedis {
    pub port: u16,
    pub socket: PathBuf,
    child: Option<Child>,
    // Last: removed after the server stopped.
    dir: tempfile::TempDir,
}

/// `nobody`'s uid and gid when root, else `None` (the current user).
fn nobody() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("nobody").unwrap();
    // SAFETY: getpwnam returns NULL or a static entry, read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(!entry.is_null(), "running as root needs a 'nobody' account");
    // SAFETY: non-null, as checked.
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

impl UserRedis {
    /// Starts `program` and waits until it refuses an unauthenticated PING.
    pub fn start(program: &Path) -> UserRedis {
        let ids = nobody();
        let dir = tempfile::Builder::new()
            .prefix("sockbench-userredis-")
            .tempdir_in("/tmp")
            .unwrap();
        // The top passes the server account through; srv is its own.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let srv = dir.path().join("srv");
        std::fs::create_dir(&srv).unwrap();
        std::fs::set_permissions(&srv, std::fs::Permissions::from_mode(0o700)).unwrap();
        let chown = |p: &Path| {
            if let Some((uid, gid)) = ids {
                std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
            }
        };
        chown(&srv);
        let mut server = UserRedis {
            port: 0,
            socket: srv.join("redis.sock"),
            child: None,
            dir,
        };
        for _ in 0..3 {
            server.port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = srv.join("redis.conf");
            std::fs::write(
                &config,
                format!(
                    "daemonize no\nlogfile \"\"\nbind 127.0.0.1\nport {}\nunixsocket {}\n\
                     unixsocketperm 700\ndir {}\nsave \"\"\nappendonly no\n\
                     requirepass {USER_PASSWORD}\n",
                    server.port,
                    server.socket.display(),
                    srv.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
            chown(&config);
            let log = server.dir.path().join("redis.log");
            let mut command = Command::new(program);
            if let Some((uid, gid)) = ids {
                command.uid(uid).gid(gid);
            }
            let child = command
                .arg(&config)
                .current_dir("/")
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap();
            server.child = Some(child);
            if server.wait_ready() {
                return server;
            }
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            server.stop();
            assert!(
                said.contains("Address already in use"),
                "the user's redis-server did not start: {said}"
            );
        }
        panic!("no free port for the user's redis-server after 3 tries");
    }

    /// True once the server answers a PING on its port with NOAUTH (and its socket
    /// exists); false if it exited first.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.as_mut().unwrap().try_wait().unwrap().is_some() {
                return false;
            }
            if self.socket.exists() && self.ping().starts_with("-NOAUTH") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the user's redis-server did not answer within 20 s");
    }

    /// What the server answers an unauthenticated inline PING on its port.
    fn ping(&self) -> String {
        use std::io::Write;
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut reply = [0u8; 64];
        match stream
            .write_all(b"PING\r\n")
            .and_then(|()| stream.read(&mut reply))
        {
            Ok(n) => String::from_utf8_lossy(&reply[..n]).into_owned(),
            Err(_) => String::new(),
        }
    }

    /// The server's process.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// True while the server runs.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    /// Stops the server by its PID (SIGTERM, then SIGKILL) and reaps it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let wait = Duration::from_secs(5);
            super::stop_child(&mut child, &[(libc::SIGTERM, wait), (libc::SIGKILL, wait)]);
        }
    }
}

impl Drop for UserRedis {
    fn drop(&mut self) {
        self.stop();
    }
}
