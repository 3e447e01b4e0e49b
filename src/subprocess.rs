//! Child processes that cannot outlive sockbench or catch its Ctrl-C.
//!
//! Every server sockbench starts (its own socket server, PostgreSQL) gets a signal
//! when sockbench dies (`PR_SET_PDEATHSIG`), so even a killed run leaves no server
//! behind, and runs in its own process group, so a Ctrl-C at the terminal reaches
//! only sockbench, which then stops its children itself, by PID, between
//! measurements.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

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
