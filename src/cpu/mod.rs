//! What a timed loop costs the CPU, client and server apart, per operation: CPU
//! time (user and system), context switches, CPU migrations and, where the
//! hardware counters are exposed, instructions in user and kernel mode. Also where
//! client and server run ([`affinity`]) and how busy the rest of the machine was
//! ([`load`]).
//!
//! Two ways to count, because counting is not free:
//! - [`Meter::times`]: CPU time from `getrusage` (the client, every thread) and
//!   `/proc/<pid>/stat` (the server with its children, in clock ticks), read before
//!   and after the loop and never during it. Every measured trial uses it, so its
//!   wall time is not touched.
//! - [`Meter::counters`]: kernel counters from `perf_event_open` (CPU time, context
//!   switches, migrations, and instructions where the hardware exposes them),
//!   inherited by every thread and process the watched task starts after they
//!   open, so the server's session threads, or the PostgreSQL backends the
//!   postmaster forks, are counted too. A task with counters pays for them at every
//!   context switch (10–15% of a loopback round trip here), so they run in a
//!   counting trial of their own, whose wall time is not used.

pub mod affinity;
pub(crate) mod counters;
pub(crate) mod load;
pub(crate) mod placed;
pub(crate) mod proc;
pub(crate) mod wakeup;
pub(crate) mod why;

use counters::{Task, TaskCounters};
use placed::ServerSide;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// CPU figures of one side: running totals, or per operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// User plus system CPU time, ns.
    pub cpu_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switches: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_user: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_kernel: Option<f64>,
}

impl Counts {
    /// `self − before`, field by field, divided by `ops`.
    fn per_op(&self, before: &Counts, ops: f64) -> Counts {
        let d = |a: Option<f64>, b: Option<f64>| Some((a? - b?) / ops);
        Counts {
            cpu_ns: (self.cpu_ns - before.cpu_ns) / ops,
            user_ns: d(self.user_ns, before.user_ns),
            sys_ns: d(self.sys_ns, before.sys_ns),
            context_switches: d(self.context_switches, before.context_switches),
            migrations: d(self.migrations, before.migrations),
            instructions_user: d(self.instructions_user, before.instructions_user),
            instructions_kernel: d(self.instructions_kernel, before.instructions_kernel),
        }
    }

    /// Precise counter totals with the user/system split of the coarser times:
    /// `cpu_ns` stays the counters', divided in the times' proportion.
    fn split_like(mut self, times: &Counts) -> Counts {
        if let (Some(user), Some(sys)) = (times.user_ns, times.sys_ns) {
            let total = user + sys;
            if total > 0.0 {
                self.user_ns = Some(self.cpu_ns * user / total);
                self.sys_ns = Some(self.cpu_ns * sys / total);
            }
        }
        self
    }

    /// Each figure's median over `all`.
    pub fn median_of(all: &[Counts]) -> Counts {
        let m = |get: fn(&Counts) -> Option<f64>| {
            let v: Vec<f64> = all.iter().filter_map(get).collect();
            (!v.is_empty()).then(|| crate::stats::median(&v))
        };
        Counts {
            cpu_ns: m(|c| Some(c.cpu_ns)).unwrap_or(0.0),
            user_ns: m(|c| c.user_ns),
            sys_ns: m(|c| c.sys_ns),
            context_switches: m(|c| c.context_switches),
            migrations: m(|c| c.migrations),
            instructions_user: m(|c| c.instructions_user),
            instructions_kernel: m(|c| c.instructions_kernel),
        }
    }

    /// User plus kernel instructions, when counted.
    pub fn instructions(&self) -> Option<f64> {
        Some(self.instructions_user? + self.instructions_kernel?)
    }
}

/// What one timed loop cost per operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Where the figures came from: `perf_event` (counters) or `proc` (times from
    /// getrusage and /proc: no instructions or migrations, and context switches
    /// for the client only).
    pub source: counters::CountedBy,
    pub client: Counts,
    /// The server's side: sockbench's server process, or the PostgreSQL postmaster
    /// and the backends it starts, or a `--server` process found on this machine.
    /// Absent for a server sockbench could not identify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Counts>,
    /// The CPU the client ran on when the loop ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu: Option<u32>,
    /// The CPUs the server's threads and processes that used CPU during the loop
    /// last ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_cpus: Vec<u32>,
    /// The kernel's account of the loop (events per operation, CPU by layer):
    /// counting trials only, where tracepoints and sampling are permitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<why::Why>,
}

#[cfg(test)]
impl Cost {
    /// The cost of a loop whose client alone took `cpu_ns` per operation, counted
    /// by perf_event (for tests of what reads it).
    pub fn of_client(cpu_ns: f64) -> Cost {
        Cost {
            source: counters::CountedBy::PerfEvent,
            client: Counts {
                cpu_ns,
                ..Counts::default()
            },
            server: None,
            client_cpu: None,
            server_cpus: Vec::new(),
            why: None,
        }
    }
}

/// One side's counters: kernel counters, or only times from /proc.
enum SideCounters {
    Counters(Vec<TaskCounters>),
    Times,
}

/// Counts one trial's timed loop: opened before the trial sets up (so the
/// connections and backends it starts are followed), started and stopped around
/// the loop by the experiment.
pub struct Meter {
    client: SideCounters,
    server: Option<(u32, SideCounters)>,
    started: Option<(Counts, Option<Counts>)>,
    /// The server's threads and their CPU time when the loop started.
    server_tasks: Vec<(i32, u64, Option<u32>)>,
    ended: Option<Ended>,
    cost: Option<Cost>,
    /// The kernel's account (tracepoints, samples): counting trials only.
    why: Option<why::collect::Collector>,
    /// Where the server's side runs, and the processes of a user's server found
    /// during the trial ([`ServerSide::adopt`]).
    side: Arc<ServerSide>,
    /// Their CPU time from adoption to the loop's end, ns.
    adopted_ns: f64,
}

/// The closing reading, taken when the loop ended.
struct Ended {
    client: Option<Counts>,
    client_cpu: Option<u32>,
    server: Option<Counts>,
    server_cpus: Vec<u32>,
}

impl Meter {
    /// Times only, for a measured trial: nothing runs during the loop.
    pub fn times(server: Option<u32>) -> Meter {
        Meter {
            client: SideCounters::Times,
            server: server.map(|pid| (pid, SideCounters::Times)),
            started: None,
            server_tasks: Vec::new(),
            ended: None,
            cost: None,
            why: None,
            side: Arc::default(),
            adopted_ns: 0.0,
        }
    }

    /// The same meter with the server's side placed on `cpus` (`None`: freely),
    /// for the processes adopted during the trial.
    pub fn with_server_at(mut self, cpus: Option<Vec<usize>>) -> Meter {
        self.side = ServerSide::at(cpus);
        self
    }

    /// The server's side, for client threads that each adopt their own (a user's
    /// server's process found once a trial connected: [`ServerSide::adopt`]).
    pub fn server_side(&self) -> Arc<ServerSide> {
        Arc::clone(&self.side)
    }

    /// The CPU time of the adopted processes up to the loop's end, ns: the
    /// server's, not outside load.
    pub fn adopted_cpu_ns(&self) -> f64 {
        self.adopted_ns
    }

    /// Opens the counters of the calling thread (the client, and the client
    /// threads it starts) and of process `server` with everything it starts, for
    /// a counting trial; times only where counters are not permitted. The
    /// kernel's account ([`why`]) is collected on both too, where permitted: its
    /// samples' interrupts add to the CPU time the counters count (about 8% at
    /// one sample per 50 µs), one more reason a counting trial's times are not
    /// used for figures.
    pub fn counters(server: Option<u32>) -> Meter {
        Meter {
            why: why::collect::Collector::open(server),
            ..Meter::counters_alone(server)
        }
    }

    /// [`Meter::counters`] without the kernel's account.
    pub fn counters_alone(server: Option<u32>) -> Meter {
        let client = match TaskCounters::open(Task::Me) {
            Ok(c) => SideCounters::Counters(vec![c]),
            Err(_) => SideCounters::Times,
        };
        let server = server.map(|pid| {
            let side = match &client {
                SideCounters::Counters(_) => {
                    server_counters(pid).map_or(SideCounters::Times, SideCounters::Counters)
                }
                SideCounters::Times => SideCounters::Times,
            };
            (pid, side)
        });
        Meter {
            client,
            server,
            ..Meter::times(None)
        }
    }

    /// Reads the counters just before the timed loop.
    pub fn start(&mut self) {
        if let (None, Some(pid)) = (&self.server, self.side.only()) {
            let side = match &self.client {
                SideCounters::Counters(_) => {
                    server_counters(pid).map_or(SideCounters::Times, SideCounters::Counters)
                }
                SideCounters::Times => SideCounters::Times,
            };
            self.server = Some((pid, side));
        }
        let client = read(&mut self.client, None);
        let server = self
            .server
            .as_mut()
            .map(|(pid, side)| read(side, Some(*pid)));
        self.server_tasks = self
            .server
            .as_ref()
            .map_or_else(Vec::new, |(pid, _)| proc::tasks(*pid));
        self.started = client.map(|c| (c, server.flatten()));
        if let Some(w) = &mut self.why {
            w.start();
        }
    }

    /// Reads them again when the loop ends, for a loop whose count of operations
    /// is known only later (see [`Meter::stop`]).
    pub fn end(&mut self) {
        if let Some(w) = &mut self.why {
            w.end();
        }
        self.adopted_ns = self.side.cpu_ns();
        let client_cpu = affinity::current_cpu();
        let client = read(&mut self.client, None);
        let server = self
            .server
            .as_mut()
            .and_then(|(pid, side)| read(side, Some(*pid)));
        let server_cpus = self
            .server
            .as_ref()
            .map_or_else(Vec::new, |(pid, _)| ran_since(*pid, &self.server_tasks));
        self.ended = Some(Ended {
            client,
            client_cpu,
            server,
            server_cpus,
        });
    }

    /// Reads them again just after the loop (unless [`Meter::end`] did), which did
    /// `ops` operations.
    pub fn stop(&mut self, ops: u64) {
        if self.ended.is_none() {
            self.end();
        }
        let ended = self.ended.take();
        let (Some((client_before, server_before)), Some(ended)) = (self.started.take(), ended)
        else {
            return;
        };
        let Some(client) = ended.client else {
            return;
        };
        let client_cpu = ended.client_cpu;
        let ops = ops.max(1) as f64;
        // Times read from /proc can still step back when a child is reaped at
        // the wrong moment; such a reading is left out rather than reported.
        let server = match (server_before, ended.server) {
            (Some(before), Some(after)) => Some(after.per_op(&before, ops)).filter(|c| {
                c.cpu_ns >= 0.0
                    && c.sys_ns.is_none_or(|s| s >= 0.0)
                    && c.user_ns.is_none_or(|u| u >= 0.0)
            }),
            _ => None,
        };
        self.cost = Some(Cost {
            source: match self.client {
                SideCounters::Counters(_) => counters::CountedBy::PerfEvent,
                SideCounters::Times => counters::CountedBy::Proc,
            },
            client: client.per_op(&client_before, ops),
            server,
            client_cpu,
            server_cpus: ended.server_cpus,
            why: self.why.as_mut().map(|w| w.finish(ops as u64)),
        });
    }

    /// The cost of the loop between `start` and `stop`, once.
    pub fn take(&mut self) -> Option<Cost> {
        self.cost.take()
    }
}

/// Counters on every thread of process `pid`; a thread that ends meanwhile (a
/// server session closing) is passed over, any other failure fails them all.
fn server_counters(pid: u32) -> std::io::Result<Vec<TaskCounters>> {
    let mut all = Vec::new();
    for tid in proc::threads(pid) {
        match TaskCounters::open(Task::Id(tid)) {
            Ok(c) => all.push(c),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(all)
}

/// A side's running totals; `pid` is the server's process (`None`: this one).
fn read(side: &mut SideCounters, pid: Option<u32>) -> Option<Counts> {
    let times = match pid {
        None => proc::own_usage(),
        Some(pid) => {
            let (user, sys) = proc::process_times(pid, true)?;
            Counts {
                cpu_ns: user + sys,
                user_ns: Some(user),
                sys_ns: Some(sys),
                ..Counts::default()
            }
        }
    };
    match side {
        SideCounters::Times => Some(times),
        SideCounters::Counters(all) => {
            let mut sum = Counts::default();
            for c in all {
                let r = c.read().ok()?;
                sum.cpu_ns += r.cpu_ns;
                let add = |a: Option<f64>, b: Option<f64>| Some(a.unwrap_or(0.0) + b?);
                sum.context_switches = add(sum.context_switches, r.context_switches);
                sum.migrations = add(sum.migrations, r.migrations);
                sum.instructions_user = add(sum.instructions_user, r.instructions_user);
                sum.instructions_kernel = add(sum.instructions_kernel, r.instructions_kernel);
            }
            Some(sum.split_like(&times))
        }
    }
}

/// The CPUs on which the threads of process `pid` (and of its children) that used
/// CPU since `before` last ran; a thread new since then counts when it used any.
fn ran_since(pid: u32, before: &[(i32, u64, Option<u32>)]) -> Vec<u32> {
    let mut cpus: Vec<u32> = proc::tasks(pid)
        .into_iter()
        .filter(|(tid, ticks, _)| {
            let earlier = before.iter().find(|(t, _, _)| t == tid).map_or(0, |b| b.1);
            *ticks > earlier
        })
        .filter_map(|(_, _, cpu)| cpu)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

#[cfg(test)]
mod tests;
