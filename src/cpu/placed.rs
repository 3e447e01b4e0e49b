//! The server's side of one trial when sockbench learns its process only once the
//! trial has connected: a PostgreSQL backend of the user's server, which serves
//! sockbench's own connection and nothing else. The harness says where the
//! server's side runs ([`ServerSide::at`]); the experiment hands over each such
//! process as it finds it ([`ServerSide::adopt`]), which places it there and
//! counts its CPU time, so that the trial's figures have a server side and its
//! CPU is not mistaken for outside load.

use super::{affinity, proc};
use std::io;
use std::sync::{Arc, Mutex};

/// Where the server's side of a trial runs, and the processes adopted into it.
/// Shared by the client threads of one trial, each adopting its own connection's.
#[derive(Debug, Default)]
pub struct ServerSide {
    /// The CPUs a pinned placement gives the server; `None` when placed freely.
    cpus: Option<Vec<usize>>,
    /// Each adopted process with its CPU time (ns) when adopted.
    adopted: Mutex<Vec<(u32, f64)>>,
}

impl ServerSide {
    /// A trial's server side on `cpus` (`None`: wherever the scheduler puts it).
    pub fn at(cpus: Option<Vec<usize>>) -> Arc<ServerSide> {
        Arc::new(ServerSide {
            cpus,
            adopted: Mutex::new(Vec::new()),
        })
    }

    /// Places process `pid` (every thread) where the server runs and counts its
    /// CPU time from now on.
    pub fn adopt(&self, pid: u32) -> io::Result<()> {
        if let Some(cpus) = &self.cpus {
            affinity::pin_process(pid, cpus)?;
        }
        let times = proc::process_times(pid, false)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
        self.lock().push((pid, times.cpu_ns));
        Ok(())
    }

    /// The one process adopted, when there is exactly one: the trial's server.
    pub fn only(&self) -> Option<u32> {
        match self.lock().as_slice() {
            [(pid, _)] => Some(*pid),
            _ => None,
        }
    }

    /// The CPU time the adopted processes used since they were adopted, ns; one
    /// that ended meanwhile adds nothing more.
    pub fn cpu_ns(&self) -> f64 {
        self.lock()
            .iter()
            .filter_map(|&(pid, at)| {
                let now = proc::process_times(pid, false)?.cpu_ns;
                Some((now - at).max(0.0))
            })
            .sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u32, f64)>> {
        self.adopted.lock().unwrap_or_else(|e| e.into_inner())
    }
}
