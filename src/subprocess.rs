//! Child processes that cannot outlive sockbench or catch its Ctrl-C.
//!
//! Every server sockbench starts (its own socket server, PostgreSQL) gets a signal
//! when sockbench dies (`PR_SET_PDEATHSIG`), so even a killed run leaves no server
//! behind, and runs in its own process group, so a Ctrl-C at the terminal reaches
//! only sockbench, which then stops its children itself, by PID, between
//! measurements. A program asked about itself (`redis-server --version`,
//! `pg_config --bindir`) is waited for a few seconds at most ([`ask`]). A server
//! whose processes must all end with it (nginx, a user's `--app` command) runs in
//! a PID namespace of its own ([`pid_namespace`]).

use anyhow::Context;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub mod pid_namespace;

/// How long a program asked about itself may take: far longer than any does.
pub const ASK_LIMIT: Duration = Duration::from_secs(5);
/// The most of its output kept (a version or a directory is a line).
const ASK_OUTPUT: usize = 64 << 10;
/// How often the wait looks at Ctrl-C and the clock.
const ASK_SLICE: Duration = Duration::from_millis(50);

/// `program` in the first of `dirs` that has it, else on `PATH`, if installed:
/// the distribution's own first, where a family wants that one.
pub fn find_program(program: &str, dirs: &[&str]) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    dirs.iter()
        .map(std::path::PathBuf::from)
        .chain(std::env::split_paths(&path))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Makes the child get `signal` when this process dies and puts it in its own
/// process group.
pub fn tie_to_parent(command: &mut Command, signal: libc::c_int) {
    let parent = std::process::id();
    // SAFETY: prctl, getppid and setpgid are async-signal-safe and touch no memory of
    // the parent; this runs between fork and exec (after any uid change, which would
    // otherwise clear the death signal).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::other("parent already exited"));
            }
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Stops a child by its PID: sends each signal in turn, waiting up to its time for the
/// child to exit, and finally SIGKILL; reaps it.
pub fn stop(child: &mut Child, steps: &[(libc::c_int, Duration)]) {
    let pid = child.id() as libc::pid_t;
    for &(signal, wait) in steps {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        // SAFETY: a plain syscall on the PID of a child not yet reaped.
        unsafe { libc::kill(pid, signal) };
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What a program asked about itself said, once it ended.
#[derive(Debug)]
pub struct SelfReport {
    pub status: ExitStatus,
    /// The start of its standard output (at most 64 KiB); its errors are dropped.
    pub stdout: Vec<u8>,
}

/// Runs `command`, a program asked about itself (`redis-server --version`,
/// `pg_config --bindir`), and returns what it said once it has ended; `None` when
/// it cannot be started (not installed, not executable). One that has not ended
/// within `limit` ([`ASK_LIMIT`] unless a test says otherwise) is an error that
/// names it, in one line, and a Ctrl-C ends the wait within a twentieth of a second
/// (an `Interrupted` error); either way the program and what it started (its own
/// process group) are killed, by the group's ID, before it is reaped.
pub fn ask(command: &mut Command, limit: Duration) -> anyhow::Result<Option<SelfReport>> {
    run_bounded(command, limit, true)
}

/// As [`ask`], but a Ctrl-C does not end the wait, only `limit` does: for a
/// program that undoes what the run made outside itself (an nftables table), which
/// must also run on the way out of a Ctrl-C.
pub fn ask_to_the_end(
    command: &mut Command,
    limit: Duration,
) -> anyhow::Result<Option<SelfReport>> {
    run_bounded(command, limit, false)
}

fn run_bounded(
    command: &mut Command,
    limit: Duration,
    interruptible: bool,
) -> anyhow::Result<Option<SelfReport>> {
    let line = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    tie_to_parent(command, libc::SIGKILL);
    let Ok(mut child) = command.spawn() else {
        return Ok(None);
    };
    let mut stdout = child.stdout.take().context("no pipe from the program")?;
    let mut said = Vec::new();
    let mut open = true;
    let deadline = Instant::now() + limit;
    loop {
        let ended = child.try_wait();
        if let Ok(Some(status)) = ended {
            // What it wrote before it ended; not what a program it left behind
            // may still write.
            while open && said.len() < ASK_OUTPUT && readable(&stdout, Duration::ZERO) {
                open = take(&mut stdout, &mut said);
            }
            return Ok(Some(SelfReport {
                status,
                stdout: said,
            }));
        }
        let stop = if ended.is_err() {
            Some(anyhow::anyhow!("cannot wait for {line}"))
        } else if interruptible && crate::interrupt::interrupted() {
            Some(crate::error::Interrupted::default().into())
        } else if Instant::now() >= deadline {
            Some(anyhow::anyhow!(
                "{line} did not finish within {} s and was killed",
                limit.as_secs_f64()
            ))
        } else {
            None
        };
        if let Some(e) = stop {
            // SAFETY: a plain syscall on the process group of our child, not yet
            // reaped, so its ID still names that group.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        if open && readable(&stdout, ASK_SLICE) {
            open = take(&mut stdout, &mut said);
        } else if !open {
            std::thread::sleep(ASK_SLICE);
        }
    }
}

/// Whether `pipe` has something to read (or is closed) within `wait`.
fn readable(pipe: &impl AsRawFd, wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fd` is a valid pollfd on the stack and 1 is the number of entries
    // behind the pointer.
    unsafe { libc::poll(&mut fd, 1, wait.as_millis() as libc::c_int) > 0 }
}

/// Reads what `pipe` has (it said it would not block), keeping up to
/// [`ASK_OUTPUT`] in `said`; false once the pipe is closed.
fn take(pipe: &mut impl Read, said: &mut Vec<u8>) -> bool {
    let mut buf = [0; 4096];
    match pipe.read(&mut buf) {
        Ok(0) => false,
        Ok(n) => {
            let room = ASK_OUTPUT.saturating_sub(said.len());
            said.extend_from_slice(&buf[..n.min(room)]);
            true
        }
        Err(e) => e.kind() == std::io::ErrorKind::Interrupted,
    }
}

/// Reads the child's stdout line by line on a thread, so waiting can time out.
pub fn read_lines(stdout: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Collects what the child says on stderr (only errors) and hands it back once the
/// child closes it, for the error message.
pub fn forward_stderr(stderr: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut said = String::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
            said.push_str(&line);
            said.push('\n');
        }
        let _ = tx.send(said);
    });
    rx
}

/// Collects the addresses of the `listening ADDR` lines a server sockbench started
/// (`sockbench serve`, named `who` in errors) prints until `ready`, for at most
/// `limit`.
pub fn wait_ready(
    lines: &mpsc::Receiver<String>,
    who: &str,
    limit: Duration,
) -> anyhow::Result<Vec<String>> {
    let deadline = Instant::now() + limit;
    let mut endpoints = Vec::new();
    loop {
        // In slices, so that a Ctrl-C is seen while the server starts.
        crate::interrupt::check()?;
        let left = deadline.saturating_duration_since(Instant::now());
        let line = match lines.recv_timeout(left.min(ASK_SLICE)) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => continue,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                anyhow::bail!("{who} did not report ready within {} s", limit.as_secs())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("{who} exited before it was ready")
            }
        };
        if line == "ready" {
            return Ok(endpoints);
        }
        if let Some(addr) = line.strip_prefix("listening ") {
            endpoints.push(addr.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_hangs_is_killed_with_what_it_started_within_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let marker = tmp.path().join("child-still-ran");
        // The program and a child of its own both hang; the child would leave a
        // mark if it outlived the kill.
        let script = format!("(sleep 3; touch {}) & sleep 60", marker.display());
        let started = Instant::now();
        let e = ask(
            Command::new("sh").args(["-c", &script]),
            Duration::from_millis(500),
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{e}");
        assert!(
            e.to_string().starts_with("sh -c (sleep 3")
                && e.to_string()
                    .ends_with("did not finish within 0.5 s and was killed"),
            "{e}"
        );
        std::thread::sleep(Duration::from_secs(4));
        assert!(!marker.exists(), "the program's child outlived it");
    }

    #[test]
    fn what_a_program_says_is_returned_and_a_missing_one_is_none() {
        let answer = ask(
            Command::new("sh").args(["-c", "echo 7.0.15; echo noise >&2; exit 3"]),
            ASK_LIMIT,
        )
        .unwrap()
        .unwrap();
        assert_eq!(answer.stdout, b"7.0.15\n");
        assert_eq!(answer.status.code(), Some(3));
        let missing = ask(&mut Command::new("/nonexistent/pg_config"), ASK_LIMIT).unwrap();
        assert!(missing.is_none());
        // A long answer is cut, not waited on.
        let long = ask(
            Command::new("sh").args(["-c", "head -c 1000000 /dev/zero"]),
            ASK_LIMIT,
        )
        .unwrap()
        .unwrap();
        assert_eq!(long.stdout.len(), ASK_OUTPUT);
    }
}
