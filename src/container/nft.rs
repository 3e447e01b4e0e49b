//! One `nft -i` process for the life of a network's table: every change to the
//! table goes over that process's one netlink socket, which the table belongs to
//! (`flags owner`), so the kernel deletes the table when the socket closes. nft
//! reads its commands from a pipe only sockbench holds and quits at its end, so the
//! socket closes when sockbench ends the session or dies, SIGKILL included.
//!
//! No death signal ties nft to sockbench (`PR_SET_PDEATHSIG` comes when the thread
//! that started it ends, which may be long before the table's network): the end of
//! its input is that signal.
//!
//! nft answers a line of commands with nothing when they succeed and with its
//! errors when not. After each line sockbench sends one nft cannot parse, numbered,
//! whose error echoes it back: the echo ends the answer.

use super::tool;
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// A running `nft -i`, ended on drop.
pub struct Session {
    child: Child,
    /// nft's input; closing it ends nft.
    input: Option<ChildStdin>,
    /// What nft says, errors included, line by line (in a mutex only so that a
    /// network can be shared between threads; one thread at a time changes it).
    said: Mutex<mpsc::Receiver<String>>,
    /// Lines sent so far, numbering the lines that end the answers.
    sent: u64,
}

impl Session {
    /// Starts `nft -i` in the network namespace of the calling thread.
    pub fn start() -> Result<Session> {
        let path = tool::find("nft").context("nft is not installed")?;
        let mut command = Command::new(&path);
        command
            .arg("-i")
            .env_clear()
            .env("LC_ALL", "C")
            // nft -i keeps a history of its commands in $HOME/.nft.history: under
            // /dev/null it has nowhere to write one.
            .env("HOME", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // SAFETY: dup2 and setpgid are async-signal-safe; they run between fork and
        // exec, after the standard streams are set up: nft's errors join its
        // answers, and a Ctrl-C at the terminal does not reach it (sockbench ends it).
        unsafe {
            command.pre_exec(|| {
                if libc::dup2(1, 2) < 0 || libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {} -i", path.display()))?;
        let said = match child.stdout.take() {
            Some(stdout) => Mutex::new(crate::subprocess::read_lines(stdout)),
            None => bail!("no pipe from nft"),
        };
        let input = child.stdin.take();
        Ok(Session {
            child,
            input,
            said,
            sent: 0,
        })
    }

    /// Runs `line`, commands separated by `;` that nft applies as one transaction;
    /// when they fail, what nft said is the error. Waits [`crate::subprocess::ASK_LIMIT`]
    /// at most, and a Ctrl-C ends the wait when `interruptible`; either ends the
    /// session.
    pub fn run(&mut self, line: &str, interruptible: bool) -> Result<()> {
        let said = match self.answer(line, interruptible) {
            Ok(said) => said,
            Err(e) => {
                self.end();
                return Err(e);
            }
        };
        if !said.is_empty() {
            bail!("`nft {line}` failed: {}", said.join("; "));
        }
        Ok(())
    }

    /// Sends `line` and the line that ends its answer; returns the answer.
    fn answer(&mut self, line: &str, interruptible: bool) -> Result<Vec<String>> {
        self.sent += 1;
        let end = format!("sockbench-end-{}", self.sent);
        let input = self.input.as_mut().context("nft -i has ended")?;
        writeln!(input, "{line}\n{end}")
            .and_then(|()| input.flush())
            .context("nft -i has ended")?;
        let deadline = Instant::now() + crate::subprocess::ASK_LIMIT;
        let mut said = Vec::new();
        loop {
            let next = self.next_line(deadline, interruptible)?;
            if next == end {
                break;
            }
            said.push(next);
        }
        // The end line's error: its first line before the echo, a marker after it.
        self.next_line(deadline, interruptible)?;
        if let Some(first) = said.iter().rposition(|l| l.starts_with("Error:")) {
            said.truncate(first);
        }
        Ok(said)
    }

    fn next_line(&mut self, deadline: Instant, interruptible: bool) -> Result<String> {
        let said = self.said.get_mut().unwrap_or_else(|e| e.into_inner());
        loop {
            if interruptible && crate::interrupt::interrupted() {
                return Err(crate::error::Interrupted::default().into());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match said.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok(line) => return Ok(line),
                Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(anyhow!(
                        "nft -i did not answer within {} s and was killed",
                        crate::subprocess::ASK_LIMIT.as_secs()
                    ))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => bail!("nft -i has ended"),
            }
        }
    }

    /// Whether nft still takes commands: not once [`Session::end`] ran, or a
    /// command went unanswered.
    pub fn running(&self) -> bool {
        self.input.is_some()
    }

    /// Closes nft's input, on which nft quits, its socket closed and what that
    /// socket owns deleted; kills it after a second if it has not.
    pub fn end(&mut self) {
        if self.input.take().is_none() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        crate::subprocess::stop(&mut self.child, &[]);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end();
    }
}
