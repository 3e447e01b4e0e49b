//! Tracepoints counted on one task and every thread and process it starts
//! (`inherit`), on any CPU: how many times each [`Event`] fired between two
//! readings.

use super::tracepoints::Chosen;
use super::Event;
use crate::cpu::counters::Task;
use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

/// `PERF_EVENT_IOC_SET_FILTER`: `_IOW('$', 6, char *)`.
const SET_FILTER: libc::c_ulong = 0x4008_2406;

/// The event counters of one task.
pub struct EventCounters {
    counters: Vec<(Event, Counter)>,
}

impl EventCounters {
    /// Opens and enables a counter for each of `chosen` on `task`. Fails when
    /// tracepoints are not permitted, or when `task` is gone (`ESRCH`).
    pub fn open(task: Task, chosen: &[Chosen]) -> io::Result<EventCounters> {
        let mut counters = Vec::with_capacity(chosen.len());
        for c in chosen {
            let mut builder = Builder::new(Tracepoint::with_id(c.id));
            match task {
                Task::Me => builder.observe_self(),
                Task::Id(id) => builder.observe_pid(id),
            };
            let counter = builder
                .any_cpu()
                .inherit(true)
                .exclude_kernel(false)
                .enabled(false)
                .build()?;
            if let Some(filter) = c.filter {
                set_filter(&counter, filter)?;
            }
            counters.push((c.event, counter));
        }
        for (_, counter) in &mut counters {
            counter.enable()?;
        }
        Ok(EventCounters { counters })
    }

    /// Each event's count so far, children that are still running included.
    pub fn read(&mut self) -> io::Result<Vec<(Event, u64)>> {
        self.counters
            .iter_mut()
            .map(|(event, counter)| Ok((*event, counter.read()?)))
            .collect()
    }
}

/// Every chosen tracepoint held open (disabled, counting nothing) on the calling
/// thread. The last close of a tracepoint's perf event unregisters it, which waits
/// for an RCU grace period: about 30 ms a tracepoint here, 0.3 s after every
/// counting trial. Held over an experiment's counting trials, their closes are
/// cheap and the wait comes once.
pub struct Hold {
    _counters: Vec<Counter>,
}

/// Holds the tracepoints [`EventCounters`] count; none when they cannot be opened.
pub fn hold() -> Option<Hold> {
    let counters = super::tracepoints::chosen()
        .iter()
        .map(|c| {
            Builder::new(Tracepoint::with_id(c.id))
                .observe_self()
                .any_cpu()
                .exclude_kernel(false)
                .enabled(false)
                .build()
        })
        .collect::<io::Result<Vec<Counter>>>()
        .ok()?;
    Some(Hold {
        _counters: counters,
    })
}

/// Sets the tracepoint filter `filter` (ftrace's syntax: `vec == 3`) on `counter`.
fn set_filter(counter: &Counter, filter: &str) -> io::Result<()> {
    let text = CString::new(filter).map_err(io::Error::other)?;
    // SAFETY: the fd is a live perf event, and SET_FILTER reads a NUL-terminated
    // string that outlives the call.
    let r = unsafe { libc::ioctl(counter.as_raw_fd(), SET_FILTER, text.as_ptr()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `after − before` per event, divided by `ops`; an event missing from either is
/// left out.
pub fn per_op(before: &[(Event, u64)], after: &[(Event, u64)], ops: f64) -> Vec<(Event, f64)> {
    after
        .iter()
        .filter_map(|(event, a)| {
            let (_, b) = before.iter().find(|(e, _)| e == event)?;
            Some((*event, a.saturating_sub(*b) as f64 / ops))
        })
        .collect()
}
