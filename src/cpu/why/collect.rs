//! The kernel's account of one counting trial's loop, collected: the tracepoint
//! counters and the samplers of the client (the calling thread) and of the
//! server (every thread of its process), opened with the [`crate::cpu::Meter`],
//! started and stopped with its counters, and turned into a [`Why`] per
//! operation.

use super::events::{self, EventCounters};
use super::kallsyms::Kallsyms;
use super::sampler::{Drained, Sampler};
use super::tracepoints::{self, Chosen};
use super::{Event, KernelAccount, Why};
use crate::cpu::counters::Task;
use crate::cpu::proc;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// What is collected on one side.
struct Collected {
    /// One set per task (the client: one; the server: one per thread).
    events: Vec<EventCounters>,
    sampler: Option<Sampler>,
    before: Vec<(Event, u64)>,
    after: Vec<(Event, u64)>,
}

/// The collectors of one trial.
pub struct Collector {
    chosen: &'static [Chosen],
    client: Collected,
    server: Option<Collected>,
}

impl Collector {
    /// Opens the collectors of the calling thread and of process `server`'s
    /// threads. One line on stderr, once per run, when a part of the account is
    /// missing (no tracepoints, or no sampling) and what would give it; `None`
    /// when both are (the rest of the run goes on).
    pub fn open(server: &[crate::cpu::ServerRole]) -> Option<Collector> {
        let chosen = tracepoints::chosen();
        let kallsyms = Kallsyms::get();
        let me = std::process::id();
        let client = match open_side(&[Task::Me], me, chosen, kallsyms.is_ok()) {
            Ok(side) => side,
            Err(e) => {
                note(&format!("cannot count tracepoints ({e})"));
                return None;
            }
        };
        let mut missing = Vec::new();
        if let Some(why) = tracepoints::missing() {
            missing.push(why.sentence());
        }
        if client.sampler.is_none() {
            missing.push(match kallsyms {
                Err(why) => why.to_string(),
                Ok(_) => format!(
                    "cannot sample with call chains, so no CPU by layer; {}",
                    advice()
                ),
            });
        }
        if !missing.is_empty() {
            say(&missing.join("; also, "));
        }
        if client.events.is_empty() && client.sampler.is_none() {
            return None;
        }
        // Every role's threads together: the kernel's account of the server's side.
        let server = server.first().and_then(|first| {
            let tasks: Vec<Task> = server
                .iter()
                .flat_map(|role| proc::tree_threads(role.pid))
                .map(Task::Id)
                .collect();
            open_side(&tasks, first.pid, chosen, kallsyms.is_ok()).ok()
        });
        Some(Collector {
            chosen,
            client,
            server,
        })
    }

    /// Just before the loop: reads the event counts, starts sampling.
    pub fn start(&mut self) {
        for side in self.sides() {
            side.before = read(&mut side.events);
            if let Some(s) = &mut side.sampler {
                s.start();
            }
        }
    }

    /// Just after the loop: stops sampling, reads the event counts.
    pub fn end(&mut self) {
        for side in self.sides() {
            if let Some(s) = &mut side.sampler {
                s.stop();
            }
            side.after = read(&mut side.events);
        }
    }

    /// The account of the `ops` operations between [`Collector::start`] and
    /// [`Collector::end`]; drains the samples.
    pub fn finish(&mut self, ops: u64) -> Why {
        let ops = ops.max(1) as f64;
        let kallsyms = Kallsyms::get().ok();
        let mut account = |side: &mut Collected| {
            let mut a = KernelAccount::default();
            for (event, per_op) in events::per_op(&side.before, &side.after, ops) {
                a.events.insert(event.name().to_string(), per_op);
            }
            if let (Some(s), Some(k)) = (&mut side.sampler, kallsyms) {
                let Drained {
                    by_layer,
                    left_out,
                    lost,
                } = s.drain(k);
                for (layer, n) in by_layer {
                    a.layer_samples.insert(layer.name().to_string(), vec![n]);
                }
                a.samples_left_out = left_out;
                a.samples_lost = lost;
            }
            a
        };
        let client = account(&mut self.client);
        let server = self.server.as_mut().map(&mut account);
        let clock = self.client.sampler.as_ref().map(|s| s.clock);
        Why {
            client,
            server,
            tracepoints: tracepoints::names(self.chosen),
            clock,
        }
    }

    fn sides(&mut self) -> impl Iterator<Item = &mut Collected> {
        std::iter::once(&mut self.client).chain(self.server.as_mut())
    }
}

/// Opens the counters and the sampler of `tasks` (process `root`); a task gone
/// meanwhile is passed over. Sampling is skipped without `kallsyms` (nothing to
/// name the chains with) or when not permitted; counting failing fails the side.
fn open_side(
    tasks: &[Task],
    root: u32,
    chosen: &[Chosen],
    kallsyms: bool,
) -> io::Result<Collected> {
    let mut events = Vec::new();
    let mut alive = Vec::new();
    for &task in tasks {
        match EventCounters::open(task, chosen) {
            Ok(e) => {
                events.push(e);
                alive.push(task);
            }
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
    }
    let sampler = if kallsyms {
        Sampler::open(&alive, root).ok()
    } else {
        None
    };
    if chosen.is_empty() {
        events.clear();
    }
    Ok(Collected {
        events,
        sampler,
        before: Vec::new(),
        after: Vec::new(),
    })
}

/// Each event's count summed over the tasks; an event a task could not read is
/// left out.
fn read(all: &mut [EventCounters]) -> Vec<(Event, u64)> {
    let mut sum: Vec<(Event, u64)> = Vec::new();
    for counters in all {
        let Ok(counts) = counters.read() else {
            continue;
        };
        for (event, n) in counts {
            match sum.iter_mut().find(|(e, _)| *e == event) {
                Some((_, total)) => *total += n,
                None => sum.push((event, n)),
            }
        }
    }
    sum
}

/// One line on stderr, once per run, saying what of the kernel's account is missing
/// and why, when what is not permitted is the reason. Also for the harness, which
/// runs no counting trial at all when no counters are permitted (then no
/// [`Collector`] is ever opened to say so).
pub fn note(why: &str) {
    say(&format!("{why}; {}", advice()));
}

/// What would permit the kernel's counters and samples to account `euid`: as
/// root on the host, nothing sockbench can suggest (the kernel refuses perf events
/// to root only when they are turned off, or filtered as in some containers); as
/// root of a user namespace only, or as another account, root on the host or the
/// sysctl that lets every account count.
fn permission_advice(euid: u32, namespaced: bool) -> &'static str {
    match (euid, namespaced) {
        (0, false) => {
            "this kernel refuses them even to root (perf events turned off, or filtered as \
             in some containers)"
        }
        (0, true) => {
            "sockbench is root only in a user namespace, which the kernel does not trust \
             with them; run it as root on the host, or allow them with `sysctl \
             kernel.perf_event_paranoid=-1`"
        }
        _ => "run as root, or allow them with `sysctl kernel.perf_event_paranoid=-1`",
    }
}

/// Whether this process runs in a user namespace of its own: its uid map is not
/// the whole range mapped to itself, as in the host's.
fn in_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() != ["0", "0", "4294967295"])
}

/// [`permission_advice`] for this process.
fn advice() -> &'static str {
    permission_advice(rustix::process::geteuid().as_raw(), in_user_namespace())
}

/// The line [`note`] prints, once per run: `what` says what is missing, why, and
/// what would give it.
fn say(what: &str) {
    static NOTED: AtomicBool = AtomicBool::new(false);
    if !NOTED.swap(true, Ordering::Relaxed) {
        let line = format!("note: the kernel's account of operations is incomplete: {what}");
        eprintln!("{}", crate::units::printable(&line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_never_told_to_run_as_root() {
        assert!(!permission_advice(0, false).contains("run as root"));
        assert!(permission_advice(1000, false).contains("run as root"));
        let namespaced = permission_advice(0, true);
        assert!(namespaced.contains("root on the host"), "{namespaced}");
        assert!(namespaced.contains("sysctl kernel.perf_event_paranoid=-1"));
    }
}
