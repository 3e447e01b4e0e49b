//! A stalled server must not hang a trial, and Ctrl-C must end one at once.
//!
//! The timed loops block in plain reads with no receive timeout (a timeout would
//! arm a kernel timer on every read, which would be measured), so a server that
//! stops answering (stopped with SIGSTOP, or stuck) would hold them forever, and a
//! Ctrl-C with them. Rather than add work to the loops, a thread watches the trial
//! from outside: every [`SLICE`] it checks Ctrl-C, and every second the CPU time
//! the server process has used (from `/proc`). A server that used none for
//! [`STALL`] while a trial talks to it has stalled: every operation of a trial
//! makes it work. Either way the watchdog kills the server (sockbench's own child,
//! by PID, not yet reaped): its sockets close, the blocked read returns (a
//! datagram socket, which no close reaches, is shut down: [`super::Blocking`]), and
//! the trial ends with one line saying why. A server sockbench did not start
//! (`--server`) is watched too, but never stopped: on Ctrl-C, or when its process
//! (where found) has stalled, the trial's sockets are shut down
//! ([`super::Blocking`]), which wakes their blocked reads and writes, streams'
//! as datagrams'.

use super::IO_TIMEOUT;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(100);
/// How long a server may do no work while a trial waits on it: shorter than the
/// connections' own receive timeout ([`IO_TIMEOUT`]), so that a stalled server is
/// always reported as one, never as a read that timed out.
const STALL: Duration = Duration::from_secs(IO_TIMEOUT.as_secs() - 2);

/// Why the watchdog stopped the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fired {
    Stalled,
    Interrupted,
}

/// The server a trial talks to.
#[derive(Debug, Clone, Copy)]
pub enum Watched {
    /// sockbench's own server child, which the watchdog stops.
    Own(u32),
    /// A server the user started, its process where found: never stopped.
    Theirs(Option<u32>),
}

/// Runs `work` while watching `server`; returns what `work` returned and, if the
/// watchdog fired meanwhile, why.
pub fn watched<T>(
    server: Watched,
    blocking: &super::Blocking,
    work: impl FnOnce() -> T,
) -> (T, Option<Fired>) {
    let (done, finished) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let watcher = scope.spawn(move || {
            let fired = watch(server, &finished);
            if fired.is_some() {
                // A datagram socket's read is not woken by its server's end.
                blocking.wake();
            }
            fired
        });
        let result = work();
        drop(done);
        (result, watcher.join().unwrap_or(None))
    })
}

/// Watches until `finished` is closed; when the server stalls or on Ctrl-C, kills
/// it if it is sockbench's own.
fn watch(server: Watched, finished: &mpsc::Receiver<()>) -> Option<Fired> {
    let pid = match server {
        Watched::Own(pid) | Watched::Theirs(Some(pid)) => Some(pid),
        Watched::Theirs(None) => None,
    };
    let mut cpu = pid.and_then(cpu_ticks);
    let mut since = Instant::now();
    let mut checked = since;
    loop {
        match finished.recv_timeout(SLICE) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => return None,
        }
        let fired = if crate::interrupt::interrupted() {
            Some(Fired::Interrupted)
        } else if let Some(pid) = pid.filter(|_| checked.elapsed() >= Duration::from_secs(1)) {
            checked = Instant::now();
            let now = cpu_ticks(pid);
            if now != cpu {
                (cpu, since) = (now, checked);
            }
            (since.elapsed() >= STALL).then_some(Fired::Stalled)
        } else {
            None
        };
        if fired.is_some() {
            if let Watched::Own(pid) = server {
                // SAFETY: a plain syscall on the PID of sockbench's own server child,
                // which is reaped only after this trial, so the PID cannot have been
                // reused.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
            return fired;
        }
    }
}

/// The CPU time (user and system clock ticks) process `pid` has used, all its
/// threads together; `None` once it is gone.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are plain numbers.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The error for a trial the watchdog ended.
pub fn error(fired: Fired, server: Watched) -> anyhow::Error {
    let stalled = STALL.as_secs();
    match (fired, server) {
        (Fired::Interrupted, _) => crate::error::Interrupted::default().into(),
        (Fired::Stalled, Watched::Own(pid)) => anyhow::anyhow!(
            "the sockbench server (PID {pid}) did no work for {stalled} s while a trial waited \
             on it (stopped or stalled); sockbench stopped it; the experiments that finished \
             before are kept"
        ),
        (Fired::Stalled, Watched::Theirs(pid)) => anyhow::anyhow!(
            "the server{} did no work for {stalled} s while a trial waited on it (stopped or \
             stalled); sockbench did not start it and left it running; the experiments that \
             finished before are kept",
            pid.map_or(String::new(), |p| format!(" (PID {p})"))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cpu_time_of_a_process() {
        let pid = std::process::id();
        let before = cpu_ticks(pid).expect("own /proc/PID/stat");
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {}
        assert!(cpu_ticks(pid).unwrap() > before);
        assert_eq!(cpu_ticks(u32::MAX), None);
    }
}
