//! The programs that build a container's network: iproute2's `ip` and `nft`, run
//! to completion within a few seconds, what they said on failure in the error.

use crate::subprocess;
use anyhow::{bail, Result};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// Where the distribution puts these programs, looked at before `PATH`.
const DIRS: &[&str] = &["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// `program` (`ip`, `nft`, `docker-proxy`), if installed.
pub fn find(program: &str) -> Option<PathBuf> {
    crate::subprocess::find_program(program, DIRS)
}

/// Runs `program` with `args` to its end, in the network namespace of the calling
/// thread; what it printed (errors included) is returned, or, when it fails, is
/// the error. A Ctrl-C ends the wait.
pub fn run(program: &str, args: &[&str]) -> Result<String> {
    run_as(program, args, subprocess::ask)
}

/// As [`run`], for a program that removes what sockbench made, on every way out:
/// a Ctrl-C does not cut it short, else a run interrupted would leave it.
pub fn undo(program: &str, args: &[&str]) -> Result<String> {
    run_as(program, args, subprocess::ask_to_the_end)
}

/// How a program is waited for.
type Waited = fn(&mut Command, std::time::Duration) -> Result<Option<subprocess::SelfReport>>;

fn run_as(program: &str, args: &[&str], wait: Waited) -> Result<String> {
    let Some(path) = find(program) else {
        bail!("{program} is not installed");
    };
    let mut command = Command::new(&path);
    command.args(args).env_clear().env("LC_ALL", "C");
    // SAFETY: dup2 is async-signal-safe; it runs between fork and exec, after the
    // standard streams are set up, so the program's errors join its output.
    unsafe {
        command.pre_exec(|| {
            if libc::dup2(1, 2) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let line = format!("{program} {}", args.join(" "));
    let Some(report) = wait(&mut command, subprocess::ASK_LIMIT)? else {
        bail!("cannot start {}", path.display());
    };
    let said = String::from_utf8_lossy(&report.stdout).trim().to_string();
    if !report.status.success() {
        let said = said.lines().collect::<Vec<_>>().join("; ");
        bail!("`{line}` failed ({}): {said}", report.status);
    }
    Ok(said)
}

/// Runs `ip` with `args` (see [`run`]).
pub fn ip(args: &[&str]) -> Result<String> {
    run("ip", args)
}
