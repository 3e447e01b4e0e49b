//! How busy the rest of the machine was during a trial: the CPU time every
//! process used, minus sockbench's own and its server's, and the time the
//! hypervisor stole. A trial run while something else took a real share of the
//! CPUs is "disturbed": its wall time says more about the neighbour than about the
//! transport.

use super::proc;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How many times a disturbed trial is run again, at most.
pub const RETRIES: u32 = 2;

/// Outside work above this share of one CPU disturbs a trial.
pub const OUTSIDE_LIMIT: f64 = 0.15;
/// Stolen time above this share of one CPU disturbs a trial.
pub const STEAL_LIMIT: f64 = 0.05;

/// What the rest of the machine did over a span (a trial), in CPUs (1.0 is one CPU
/// busy all the time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuLoad {
    pub outside_cpus: f64,
    pub steal_cpus: f64,
}

impl CpuLoad {
    pub fn disturbed(&self) -> bool {
        self.outside_cpus > OUTSIDE_LIMIT || self.steal_cpus > STEAL_LIMIT
    }
}

/// Running totals at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    busy_ns: f64,
    steal_ns: f64,
    ours_ns: f64,
}

impl Snapshot {
    /// The machine's and our own totals now; `server` are the server's roles,
    /// whose time (with what they started) is ours too.
    pub fn take(server: &[super::ServerRole]) -> Option<Snapshot> {
        let (busy_ns, steal_ns) = proc::machine_times()?;
        let own = proc::own_usage().cpu_ns;
        let server_ns: f64 = server
            .iter()
            .filter_map(|role| proc::process_times(role.pid, true))
            .map(|t| t.cpu_ns)
            .sum();
        Some(Snapshot {
            at: Instant::now(),
            busy_ns,
            steal_ns,
            ours_ns: own + server_ns,
        })
    }

    /// The load between `self` and `later`; `None` over too short a time for the
    /// clock ticks of /proc/stat to say anything.
    pub fn until(&self, later: &Snapshot) -> Option<CpuLoad> {
        self.until_besides(later, 0.0)
    }

    /// [`Snapshot::until`], `also_ours_ns` of CPU time in between being ours too
    /// (a user's server process that served only sockbench).
    pub fn until_besides(&self, later: &Snapshot, also_ours_ns: f64) -> Option<CpuLoad> {
        let wall = (later.at - self.at).as_secs_f64() * 1e9;
        if wall < 0.2e9 {
            return None;
        }
        let outside =
            (later.busy_ns - self.busy_ns) - (later.ours_ns - self.ours_ns) - also_ours_ns;
        Some(CpuLoad {
            outside_cpus: (outside / wall).max(0.0),
            steal_cpus: ((later.steal_ns - self.steal_ns) / wall).max(0.0),
        })
    }
}

/// The load over `time` while sockbench itself waits: how quiet the machine is.
pub fn sample(time: Duration) -> Option<CpuLoad> {
    let before = Snapshot::take(&[])?;
    std::thread::sleep(time);
    before.until(&Snapshot::take(&[])?)
}
