//! Counters of one task (a thread or process) and of every thread and process it
//! starts after they open, from the kernel's `perf_event_open`: CPU time,
//! context switches, migrations, and where the hardware exposes them, instructions
//! in user and kernel mode.

use super::Counts;
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter};
use std::io;

/// The counters of one task.
pub struct TaskCounters {
    task_clock: Counter,
    switches: Counter,
    migrations: Counter,
    /// User and kernel instructions; `None` where the hardware counters are not
    /// available (many virtual machines).
    instructions: Option<(Counter, Counter)>,
}

/// Whom to count.
#[derive(Debug, Clone, Copy)]
pub enum Task {
    /// The calling thread.
    Me,
    /// A thread or process by its id.
    Id(i32),
}

impl TaskCounters {
    /// Opens and enables the counters of `task`, inherited by the threads and
    /// processes it starts from now on. Fails when software counters are not
    /// permitted (`perf_event_paranoid`, no privilege); instructions are left out
    /// quietly when only they fail, and [`TaskCounters::has_instructions`] says so.
    pub fn open(task: Task) -> io::Result<TaskCounters> {
        let software = |event: Software| build(task, event, true, true);
        let instructions = match (
            build(task, Hardware::INSTRUCTIONS, true, false),
            build(task, Hardware::INSTRUCTIONS, false, true),
        ) {
            (Ok(user), Ok(kernel)) => Some((user, kernel)),
            _ => None,
        };
        Ok(TaskCounters {
            task_clock: software(Software::TASK_CLOCK)?,
            switches: software(Software::CONTEXT_SWITCHES)?,
            migrations: software(Software::CPU_MIGRATIONS)?,
            instructions,
        })
    }

    pub fn has_instructions(&self) -> bool {
        self.instructions.is_some()
    }

    /// The counts so far, children that are still running included.
    pub fn read(&mut self) -> io::Result<Counts> {
        let (instructions_user, instructions_kernel) = match &mut self.instructions {
            Some((user, kernel)) => (Some(user.read()? as f64), Some(kernel.read()? as f64)),
            None => (None, None),
        };
        Ok(Counts {
            cpu_ns: self.task_clock.read()? as f64,
            user_ns: None,
            sys_ns: None,
            context_switches: Some(self.switches.read()? as f64),
            migrations: Some(self.migrations.read()? as f64),
            instructions_user,
            instructions_kernel,
        })
    }
}

crate::named! {
    /// Where the CPU cost of a loop can come from on this machine. Its names are
    /// the text result files keep (`system.cpu_counters`, and `cost.source`, which
    /// says only `perf_event` or `proc`).
    pub enum CountedBy as "counting source" {
        /// perf_event counters, instructions included.
        PerfEvent = "perf_event",
        /// perf_event software counters only: the hardware counters are not exposed
        /// (many virtual machines).
        PerfEventWithoutInstructions = "perf_event without instructions",
        /// No counters (`perf_event_paranoid`, no privilege): times from getrusage
        /// and /proc.
        Proc = "proc",
    }
}

/// Which counters this process can open.
pub fn available() -> CountedBy {
    match TaskCounters::open(Task::Me) {
        Ok(c) if c.has_instructions() => CountedBy::PerfEvent,
        Ok(_) => CountedBy::PerfEventWithoutInstructions,
        Err(_) => CountedBy::Proc,
    }
}

fn build<E: perf_event::events::Event>(
    task: Task,
    event: E,
    user: bool,
    kernel: bool,
) -> io::Result<Counter> {
    let mut builder = Builder::new(event);
    match task {
        Task::Me => builder.observe_self(),
        Task::Id(id) => builder.observe_pid(id),
    };
    builder
        .any_cpu()
        .inherit(true)
        .exclude_user(!user)
        .exclude_kernel(!kernel)
        .enabled(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sources_keep_the_names_result_files_hold() {
        assert_eq!(
            CountedBy::ALL.map(|c| serde_json::to_value(c).unwrap()),
            ["perf_event", "perf_event without instructions", "proc"]
        );
    }
}
