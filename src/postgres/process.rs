//! Running PostgreSQL's programs: as the server account, output into a log file, tied
//! to sockbench's life, and when one fails, an error that shows the whole command line
//! and the end of what it said.

use super::account::Account;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A started program, stopped by PID.
pub struct Spawned {
    child: Child,
    line: String,
    log: std::path::PathBuf,
}

impl Spawned {
    /// Starts `program args…` as `account`, stdout and stderr into `log`; it gets
    /// `death_signal` if sockbench dies first.
    pub fn start(
        program: &Path,
        args: &[String],
        account: Option<&Account>,
        log: &Path,
        death_signal: libc::c_int,
    ) -> Result<Spawned> {
        let line = command_line(program, args);
        // The log lives in sockbench's own directory (see `leftovers`), not the
        // server account's: the program writes to it through the inherited descriptor.
        let out = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .current_dir("/");
        // An empty environment: the caller's PG* variables would steer the server
        // (PGPORT, PGDATA, …), and the rest of root's (tokens, keys, HOME) would be
        // readable as the server account in /proc/PID/environ. The programs need
        // none of it: they are named by full path, and the locale is given.
        command.env_clear();
        if let Some(a) = account {
            command.uid(a.uid).gid(a.gid); // std drops root's supplementary groups
        }
        crate::subprocess::tie_to_parent(&mut command, death_signal);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {line}"))?;
        Ok(Spawned {
            child,
            line,
            log: log.to_path_buf(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// An error naming the command and its last words if it has exited.
    pub fn check_running(&mut self) -> Result<()> {
        match self.child.try_wait()? {
            None => Ok(()),
            Some(status) => bail!("{} exited with {status}: {}", self.line, tail(&self.log)),
        }
    }

    /// Waits up to `limit` for the program to end; an error unless it succeeded.
    pub fn finish(mut self, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        loop {
            if crate::interrupt::interrupted() {
                self.stop(&[]);
                return crate::interrupt::check();
            }
            if let Some(status) = self.child.try_wait()? {
                if status.success() {
                    return Ok(());
                }
                bail!("{} failed with {status}: {}", self.line, tail(&self.log));
            }
            if Instant::now() > deadline {
                let line = self.line.clone();
                self.stop(&[]);
                bail!("{line} did not finish within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends each signal in turn, waiting up to its time for the program to exit, and
    /// finally SIGKILL. The program and its children are resumed first: a backend
    /// someone stopped (SIGSTOP) cannot act on the shutdown the postmaster asks of
    /// it, and the postmaster would wait for it until it gives up (seconds later).
    pub fn stop(mut self, steps: &[(libc::c_int, Duration)]) {
        self.resume();
        crate::subprocess::stop(&mut self.child, steps);
    }

    /// Sends SIGCONT to the program and to its children (listed by the kernel while
    /// the program, not yet reaped, is their parent; a backend calls `setsid`, so
    /// the process group would not reach it).
    fn resume(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        let pid = self.child.id();
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let pids = children.split_whitespace().filter_map(|p| p.parse().ok());
        for p in std::iter::once(pid as libc::pid_t).chain(pids) {
            // SAFETY: a plain syscall; `p` is our child (not reaped) or one of its
            // children, as the kernel listed them.
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
    }
}

/// Runs a program to its end (at most `limit`, or until a signal arrives). It is
/// killed outright if sockbench dies: `initdb` would otherwise only note a gentler
/// signal and carry on.
pub fn run_to_end(
    program: &Path,
    args: &[String],
    account: Option<&Account>,
    log: &Path,
    limit: Duration,
) -> Result<()> {
    Spawned::start(program, args, account, log, libc::SIGKILL)?.finish(limit)
}

/// The program and its arguments as one would type them.
fn command_line(program: &Path, args: &[String]) -> String {
    std::iter::once(program.display().to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last few lines of a log, joined on one line.
pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = &lines[lines.len().saturating_sub(5)..];
    if last.is_empty() {
        "(no output)".into()
    } else {
        last.join(" | ")
    }
}
