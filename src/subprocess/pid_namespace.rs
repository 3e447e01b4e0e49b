//! A server in a PID namespace of its own, so that nothing it starts outlives it:
//! nginx's workers go on serving, reparented, when their master is killed, and a
//! user's `--app` command may start anything, a daemon that leaves its process
//! group (`setsid -f`) included. The server runs as PID 1 of the namespace, and
//! when it dies, however it dies, the kernel kills everything else in the
//! namespace. As the host sees the tree:
//!
//! ```text
//! sockbench
//!  └─ keeper: sockbench's account, a fork of sockbench    Kept::pid
//!      └─ the server: its account, PID 1 inside           Kept::server_pid
//!          └─ whatever it starts
//! ```
//!
//! Each dies with the one above it: the keeper gets SIGKILL when sockbench dies
//! (`subprocess::tie_to_parent`), the server when the keeper dies (its own death
//! signal, asked for after it took the account, since a change of account clears
//! it), the rest when the server dies (the namespace). The keeper exists because
//! only the children of a process that makes a PID namespace are in it; it waits
//! for the server and exits as it did. util-linux's `unshare --pid --fork
//! --kill-child --setuid` would make the same tree, but asks for the death signal
//! before the change of account, so its child outlives a killed `unshare` (seen
//! with util-linux 2.38). The keeper blocks in `waitpid` and so costs no CPU; its
//! memory is sockbench's, shared until written. It runs exactly as long as the
//! server does, so an owner file records it (`PrivateDir::record_server`). When
//! sockbench is not root, a user namespace of its own gives it the right to make
//! the PID namespace (the server then runs as sockbench's account).
//!
//! As PID 1 of its namespace, the server gets from outside only the signals it
//! handles, and SIGKILL: [`Kept::stop`] sends SIGTERM only to a server that
//! catches it, and SIGKILL to any other, to which SIGTERM would be dropped where
//! its default is the end.

use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A server started in a PID namespace of its own, below its keeper.
pub struct Kept {
    keeper: Child,
    /// Found once the keeper has started it.
    server: Option<Server>,
}

/// The server, PID 1 of the namespace: its PID as the host sees it, and a
/// descriptor of the process, which a signal goes through so that it reaches the
/// server and never a process that took its PID later.
struct Server {
    pid: u32,
    fd: OwnedFd,
}

impl Kept {
    /// Starts `command` as PID 1 of a PID namespace of its own, as `ids` (uid,
    /// gid) when given, below a keeper tied to sockbench's life
    /// (`subprocess::tie_to_parent`) and in its own process group. The account is
    /// taken here, never by `command` (`Command::uid`): the keeper needs
    /// sockbench's right to make the namespace.
    pub fn spawn(command: &mut Command, ids: Option<(u32, u32)>) -> io::Result<Kept> {
        super::tie_to_parent(command, libc::SIGKILL);
        // SAFETY: `enter` makes only async-signal-safe calls (raw system calls and
        // glibc's thin wrappers of them) on memory of its own stack, as a child
        // forked from a process with other threads must; see there.
        unsafe {
            command.pre_exec(move || enter(ids));
        }
        let keeper = command.spawn()?;
        let mut kept = Kept {
            keeper,
            server: None,
        };
        // std's spawn returns once the server has run its program (or failed to),
        // so the keeper's child is there to be found.
        kept.find_server();
        Ok(kept)
    }

    /// The root of the server's tree as the host sees it: the keeper, whose
    /// descendants are the server and all it started. Counting or placing this
    /// process with its descendants covers all of the server.
    pub fn pid(&self) -> u32 {
        self.keeper.id()
    }

    /// The server's process (PID 1 in its namespace) as the host sees it, once
    /// found.
    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(|s| s.pid)
    }

    /// The server's standard error, when piped.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.keeper.stderr.take()
    }

    /// How the server ended, once it has (read from its keeper, which exits as it
    /// did); `None` while it runs.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        Ok(self.keeper.try_wait()?.map(server_status))
    }

    /// The server, once the keeper has started it: the keeper's one child. Its
    /// descriptor is opened before it is checked to be the keeper's child still, so
    /// it cannot name a process that took the PID meanwhile.
    pub fn find_server(&mut self) -> Option<u32> {
        if self.server.is_none() {
            let keeper = self.pid();
            self.server = (|| {
                let pid = *crate::cpu::proc::children(keeper).first()?;
                let fd = pidfd_open(Pid::from_raw(pid as i32)?, PidfdFlags::empty()).ok()?;
                let parent = crate::cpu::proc::parent(pid)?;
                (parent == keeper).then_some(Server { pid, fd })
            })();
        }
        self.server_pid()
    }

    /// Stops the server and all it started: SIGTERM to the server when it
    /// catches it (it then ends its own, then itself, and the keeper follows),
    /// else SIGKILL, waiting up to `timeout` for the keeper to follow; then
    /// SIGKILL to the keeper, whose death kills the server and so the rest of the
    /// namespace; waits up to `timeout` more until the server is gone. Once
    /// stopped, [`Kept::try_wait`] says how it ended.
    pub fn stop(&mut self, timeout: Duration) {
        if matches!(self.keeper.try_wait(), Ok(Some(_))) {
            // The server has exited, and the kernel ended its namespace with it.
            return;
        }
        self.find_server();
        if let Some(server) = &self.server {
            if catches(server.pid, libc::SIGTERM) {
                // A stopped server acts on SIGTERM only once continued.
                let _ = pidfd_send_signal(&server.fd, Signal::CONT);
                let _ = pidfd_send_signal(&server.fd, Signal::TERM);
            } else {
                // Killed here, it is reaped by the keeper, which exits as it did.
                let _ = pidfd_send_signal(&server.fd, Signal::KILL);
            }
            let deadline = Instant::now() + timeout;
            while matches!(self.keeper.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        super::stop(&mut self.keeper, &[]);
        if let Some(server) = &self.server {
            // Its descriptor reads as ready once it has exited, which is after the
            // kernel has ended the rest of its namespace.
            let mut exited = libc::pollfd {
                fd: server.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `exited` is a valid pollfd on the stack, and 1 is the number
            // of entries behind the pointer.
            unsafe { libc::poll(&mut exited, 1, timeout.as_millis() as libc::c_int) };
        }
    }
}

/// How the server ended, from its keeper's status: the keeper exits with the
/// server's exit status, or with 128 and the signal that killed it.
fn server_status(keeper: ExitStatus) -> ExitStatus {
    match keeper.code() {
        Some(code @ 129..=192) => ExitStatus::from_raw(code - 128),
        _ => keeper,
    }
}

/// Whether process `pid` has a handler for `signal` (`SigCgt` in its status).
fn catches(pid: u32, signal: libc::c_int) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Why a server cannot be started in a PID namespace of its own here, if it
/// cannot (a container that forbids making one): a child asks for one as
/// [`Kept::spawn`] does, then runs `sockbench --version`; the answer is whether it
/// could start.
pub fn refused() -> Option<String> {
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

/// Runs in the child std forks to start the server, after `tie_to_parent`'s step
/// and before the exec: makes a PID namespace, forks the process that becomes the
/// server into it (as its PID 1), and stays behind as the keeper, which never
/// returns. Returns in the server-to-be only, which runs as `ids` (uid, gid) when
/// given and has asked for SIGKILL when the keeper dies.
///
/// This is a child forked from a process with other threads, so it makes only
/// async-signal-safe calls and allocates nothing; errors are the system's own
/// numbers, which std hands to `spawn`'s caller.
fn enter(ids: Option<(u32, u32)>) -> io::Result<()> {
    // SAFETY: system calls on values of this stack frame. The clone is a raw
    // system call, not glibc's fork, which would first run the handlers registered
    // with pthread_atfork; without CLONE_VM it copies this process as fork does,
    // returning 0 in the copy, whose glibc state is this one's: `become_server`
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
            0 => become_server(alive, ids),
            server => keep(server as libc::pid_t, alive),
        }
    }
}

/// The server-to-be, PID 1 of the new namespace: takes the account, then asks for
/// SIGKILL when the keeper dies (a change of account clears that request, so not
/// before), then makes sure the keeper did not die before it asked (else nothing
/// would ever end it): the keeper holds the write end of `alive` until it exits.
///
/// # Safety
/// Only in the child [`enter`] forks, with `alive` the pipe it made.
unsafe fn become_server(alive: [libc::c_int; 2], ids: Option<(u32, u32)>) -> io::Result<()> {
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

/// The keeper: waits for the server, then exits as it did (with its exit status,
/// or 128 and the signal that killed it). It is a copy of sockbench that never
/// execs, so it first drops what it inherited: sockbench's signal handlers (a
/// SIGTERM must end it, not count as a Ctrl-C) and every descriptor but its end of
/// `alive` (std's pipe among them, whose closing tells the spawning thread that
/// the server's exec happened).
///
/// # Safety
/// Only in the process [`enter`] forked from, with `server` its child and `alive`
/// the pipe it made.
unsafe fn keep(server: libc::pid_t, alive: [libc::c_int; 2]) -> ! {
    libc::close(alive[0]);
    let mut default: libc::sigaction = std::mem::zeroed();
    default.sa_sigaction = libc::SIG_DFL;
    for signal in 1..=64 {
        // SIGKILL, SIGSTOP and glibc's own signals refuse; nothing to do there.
        libc::sigaction(signal, &default, std::ptr::null_mut());
    }
    close_others(alive[1]);
    let mut status = 0;
    while libc::waitpid(server, &mut status, 0) == -1 {
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
mod tests {
    use super::*;

    #[test]
    fn as_root_a_pid_namespace_can_be_made() {
        // The probe asks as a server's start does; as root it is granted
        // (sockbench's run skips the proxy family in one line where it is not).
        if crate::dir::euid() != 0 {
            eprintln!("skipped: not root");
            return;
        }
        assert_eq!(refused(), None);
    }

    #[test]
    fn a_server_that_does_not_catch_sigterm_is_stopped_at_once_with_all_it_started() {
        // A shell that starts a daemon in a session of its own, then waits.
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", "setsid -f sleep 300; exec sleep 300"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut kept = Kept::spawn(&mut command, None).unwrap();
        let server = kept.server_pid().expect("the server is found at once");
        assert_eq!(crate::cpu::proc::parent(server), Some(kept.pid()));
        assert!(!catches(server, libc::SIGTERM));
        let deadline = Instant::now() + Duration::from_secs(5);
        let sleeping = |pid: u32| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"));
            comm.is_ok_and(|c| c.trim() == "sleep") && crate::cpu::proc::runs(pid)
        };
        let daemon = loop {
            // The daemon, reparented to the server, PID 1 of its namespace.
            let below = crate::cpu::proc::children(server);
            if let Some(&d) = below.iter().find(|&&p| sleeping(p)) {
                break d;
            }
            assert!(Instant::now() < deadline, "the daemon never started");
            std::thread::sleep(Duration::from_millis(10));
        };
        let stopping = Instant::now();
        kept.stop(Duration::from_secs(5));
        // Sooner than the SIGKILL that would follow a SIGTERM without effect.
        assert!(stopping.elapsed() < Duration::from_secs(2));
        let status = kept.try_wait().unwrap().expect("stopped");
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
        for pid in [kept.pid(), server, daemon] {
            assert!(!crate::cpu::proc::runs(pid), "process {pid} outlived stop");
        }
    }
}
