//! What a timed loop costs the CPU, client and server apart, per operation: CPU
//! time (user and system), context switches, CPU migrations and, where the
//! hardware counters are exposed, instructions in user and kernel mode. Also where
//! client and server run ([`affinity`]) and how busy the rest of the machine was
//! ([`load`]).
//!
//! Two ways to count, because counting is not free:
//! - [`Meter::times`]: CPU time from `getrusage` (the client, every thread) and
//!   each server process's CPU clock, with `/proc/<pid>/stat` for its children
//!   waited for and the user/system split, read before and after the loop and
//!   never during it. Every measured trial uses it, so its wall time is not
//!   touched.
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
use std::collections::BTreeMap;
use std::sync::Arc;

/// One part of a target's server side, named by what it does: `server` for a
/// family with one server process; a proxy's `proxy` (nginx) and `app` (the
/// application server behind it). Its CPU is counted with everything it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerRole {
    pub name: &'static str,
    pub pid: u32,
    /// Whether sockbench started it, so the whole tree below it is sockbench's to
    /// place; a user's process is placed alone (its CPUs are restored after).
    pub started: bool,
}

impl ServerRole {
    /// The one server process sockbench started.
    pub const fn server(pid: u32) -> ServerRole {
        ServerRole::started("server", pid)
    }

    /// A server process sockbench started, named `name`.
    pub const fn started(name: &'static str, pid: u32) -> ServerRole {
        ServerRole {
            name,
            pid,
            started: true,
        }
    }

    /// A user's server process found on this machine.
    pub const fn found(pid: u32) -> ServerRole {
        ServerRole::found_as("server", pid)
    }

    /// A user's server process found on this machine, named `name`.
    pub const fn found_as(name: &'static str, pid: u32) -> ServerRole {
        ServerRole {
            name,
            pid,
            started: false,
        }
    }

    /// Places the role on `cpus`: the whole tree of one sockbench started, a
    /// user's process alone.
    pub fn pin(&self, cpus: &[usize]) -> std::io::Result<()> {
        if self.started {
            affinity::pin_tree(self.pid, cpus)
        } else {
            affinity::pin_process(self.pid, cpus)
        }
    }
}

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

    /// The sum of `all`, figure by figure; a figure one of them lacks is left out.
    fn sum(all: &[Counts]) -> Counts {
        let add = |get: fn(&Counts) -> Option<f64>| all.iter().map(get).sum::<Option<f64>>();
        Counts {
            cpu_ns: all.iter().map(|c| c.cpu_ns).sum(),
            user_ns: add(|c| c.user_ns),
            sys_ns: add(|c| c.sys_ns),
            context_switches: add(|c| c.context_switches),
            migrations: add(|c| c.migrations),
            instructions_user: add(|c| c.instructions_user),
            instructions_kernel: add(|c| c.instructions_kernel),
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

    /// The user/system split of a loop's counts made to add up to its CPU time:
    /// in the proportion the split counted, or unknown where it counted nothing
    /// (a loop shorter than `/proc`'s clock tick).
    fn split_as_ticked(mut self) -> Counts {
        let ticked = self.user_ns.zip(self.sys_ns).map(|(u, s)| u + s);
        if ticked.is_some_and(|t| t <= 0.0) && self.cpu_ns > 0.0 {
            self.user_ns = None;
            self.sys_ns = None;
            return self;
        }
        let times = self;
        self.split_like(&times)
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
    /// The server's side role by role, where it has more than one (a proxy's
    /// `proxy` and `app`); `server` is their sum in each trial (a record keeps the
    /// median of each, so there the roles need not add up to `server` exactly).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, Counts>,
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
            roles: BTreeMap::new(),
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

/// What part of a measured trial's timed loop a counting trial's runs: a half
/// ([`Meter::counting`]).
pub const COUNTING_SHARE: u32 = 2;

/// Counts one trial's timed loop: opened before the trial sets up (so the
/// connections and backends it starts are followed), started and stopped around
/// the loop by the experiment.
pub struct Meter {
    client: SideCounters,
    /// Each role of the server's side, with its counters.
    server: Vec<(ServerRole, SideCounters)>,
    /// The client's reading and each role's when the loop started.
    started: Option<(Counts, Vec<Option<Counts>>)>,
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
    /// A counting trial's meter: only the counts per operation of its loop are
    /// used, so the loop may be shorter ([`Meter::counting`]).
    counting: bool,
}

/// The closing reading, taken when the loop ended.
struct Ended {
    client: Option<Counts>,
    client_cpu: Option<u32>,
    server: Vec<Option<Counts>>,
    server_cpus: Vec<u32>,
}

impl Meter {
    /// Times only, for a measured trial: nothing runs during the loop.
    pub fn times(server: &[ServerRole]) -> Meter {
        Meter {
            client: SideCounters::Times,
            server: server.iter().map(|&r| (r, SideCounters::Times)).collect(),
            started: None,
            server_tasks: Vec::new(),
            ended: None,
            cost: None,
            why: None,
            side: Arc::default(),
            adopted_ns: 0.0,
            counting: false,
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
    /// threads it starts) and of each `server` role with everything it starts, for
    /// a counting trial; times only where counters are not permitted. The
    /// kernel's account ([`why`]) is collected on both too, where permitted: its
    /// samples' interrupts add to the CPU time the counters count (about 8% at
    /// one sample per 50 µs), one more reason a counting trial's times are not
    /// used for figures.
    pub fn counters(server: &[ServerRole]) -> Meter {
        Meter {
            why: why::collect::Collector::open(server),
            ..Meter::counters_alone(server)
        }
    }

    /// [`Meter::counters`] without the kernel's account.
    pub fn counters_alone(server: &[ServerRole]) -> Meter {
        let client = match TaskCounters::open(Task::Me) {
            Ok(c) => SideCounters::Counters(vec![c]),
            Err(_) => SideCounters::Times,
        };
        let server = server
            .iter()
            .map(|&role| (role, side_like(&client, role.pid)))
            .collect();
        Meter {
            client,
            server,
            counting: true,
            ..Meter::times(&[])
        }
    }

    /// True for a counting trial's meter. Its figures are counts per operation,
    /// which hold as well over half the loop, and its time is not used: each
    /// family runs a counting trial's timed loop at half its measured one's
    /// (`COUNTING_SHARE`), which keeps `sockbench run` within its two minutes
    /// (four counting rounds against six or seven measured ones).
    pub fn counting(&self) -> bool {
        self.counting
    }

    /// Reads the counters just before the timed loop.
    pub fn start(&mut self) {
        if let (true, Some(pid)) = (self.server.is_empty(), self.side.only()) {
            let role = ServerRole::found(pid);
            self.server = vec![(role, side_like(&self.client, pid))];
        }
        let client = read(&mut self.client, None);
        let server = self.read_server();
        self.server_tasks = self
            .server
            .iter()
            .flat_map(|(role, _)| proc::tasks(role.pid))
            .collect();
        self.started = client.map(|c| (c, server));
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
        let server = self.read_server();
        let server_cpus = ran_since(
            self.server.iter().map(|(role, _)| role.pid),
            &self.server_tasks,
        );
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
        let per_role: Vec<Option<Counts>> = server_before
            .iter()
            .zip(&ended.server)
            .map(|(before, after)| match (before, after) {
                (Some(before), Some(after)) => Some(after.per_op(before, ops).split_as_ticked())
                    .filter(|c| {
                        c.cpu_ns >= 0.0
                            && c.sys_ns.is_none_or(|s| s >= 0.0)
                            && c.user_ns.is_none_or(|u| u >= 0.0)
                    }),
                _ => None,
            })
            .collect();
        // The side is whole only when every role was read.
        let whole: Option<Vec<Counts>> = per_role.iter().copied().collect();
        let server = whole.filter(|w| !w.is_empty()).map(|w| Counts::sum(&w));
        let roles = match (&server, per_role.len()) {
            (Some(_), 2..) => self
                .server
                .iter()
                .zip(per_role.iter().flatten())
                .map(|((role, _), counts)| (role.name.to_string(), *counts))
                .collect(),
            _ => BTreeMap::new(),
        };
        self.cost = Some(Cost {
            source: match self.client {
                SideCounters::Counters(_) => counters::CountedBy::PerfEvent,
                SideCounters::Times => counters::CountedBy::Proc,
            },
            client: client.per_op(&client_before, ops),
            server,
            roles,
            client_cpu,
            server_cpus: ended.server_cpus,
            why: self.why.as_mut().map(|w| w.finish(ops as u64)),
        });
    }

    /// Each role's reading now, in the order of `self.server`.
    fn read_server(&mut self) -> Vec<Option<Counts>> {
        self.server
            .iter_mut()
            .map(|(role, side)| read(side, Some(role.pid)))
            .collect()
    }

    /// The cost of the loop between `start` and `stop`, once.
    pub fn take(&mut self) -> Option<Cost> {
        self.cost.take()
    }
}

/// A server side counted as the client is: counters on every thread of process
/// `pid` and of the processes below it when the client has counters, else times.
fn side_like(client: &SideCounters, pid: u32) -> SideCounters {
    match client {
        SideCounters::Counters(_) => {
            server_counters(pid).map_or(SideCounters::Times, SideCounters::Counters)
        }
        SideCounters::Times => SideCounters::Times,
    }
}

/// Counters on every thread of process `pid` and of the processes below it; a
/// thread that ends meanwhile (a server session closing) is passed over, any
/// other failure fails them all.
fn server_counters(pid: u32) -> std::io::Result<Vec<TaskCounters>> {
    let mut all = Vec::new();
    for tid in proc::tree_threads(pid) {
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
            let t = proc::process_times(pid, true)?;
            Counts {
                cpu_ns: t.cpu_ns,
                user_ns: Some(t.user_ns),
                sys_ns: Some(t.sys_ns),
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

/// The CPUs on which the threads of processes `pids` (and of the processes below
/// them) that used CPU since `before` last ran; a thread new since then counts when it used any.
fn ran_since(pids: impl Iterator<Item = u32>, before: &[(i32, u64, Option<u32>)]) -> Vec<u32> {
    let mut cpus: Vec<u32> = pids
        .flat_map(proc::tasks)
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
