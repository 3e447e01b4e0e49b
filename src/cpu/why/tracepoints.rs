//! Which tracepoints this kernel offers for each [`Event`], read from tracefs.
//!
//! Each event has a list of candidates, best first; the first whose
//! `events/<category>/<name>/id` exists is used, with its filter (set on the
//! counter with `PERF_EVENT_IOC_SET_FILTER`). The table is [`CANDIDATES`].

use super::Event;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A tracepoint to count for one event: `category:name`, its id, and the filter
/// that selects the event's instances of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub event: Event,
    /// `category:name`, as `perf stat -e` takes it.
    pub name: String,
    pub id: u64,
    pub filter: Option<&'static str>,
}

/// A tracepoint (`category:name`) and the filter that selects an event's
/// instances of it.
pub type Candidate = (&'static str, Option<&'static str>);

/// For each event, its tracepoints (`category:name`, filter), best first.
///
/// - wakeups: `sched_waking` fires on the waker's CPU, in the waker's context;
///   `sched_wakeup` may fire on the target CPU from an IPI, where it would be
///   counted on whatever task runs there.
/// - softirqs: `irq:softirq_entry` with `vec` 3 (NET_RX) or 2 (NET_TX).
/// - TCP: `tcp:tcp_probe` fires for every segment TCP receives on an established
///   connection; `data_len` tells data from pure ACKs.
pub const CANDIDATES: &[(Event, &[Candidate])] = &[
    (Event::Syscalls, &[("raw_syscalls:sys_enter", None)]),
    (Event::PacketsSent, &[("net:net_dev_xmit", None)]),
    (
        Event::PacketsReceived,
        &[("net:netif_receive_skb", None), ("net:netif_rx", None)],
    ),
    (
        Event::NetRxSoftirqs,
        &[("irq:softirq_entry", Some("vec == 3"))],
    ),
    (
        Event::NetTxSoftirqs,
        &[("irq:softirq_entry", Some("vec == 2"))],
    ),
    (
        Event::Wakeups,
        &[("sched:sched_waking", None), ("sched:sched_wakeup", None)],
    ),
    (Event::SkbConsumed, &[("skb:consume_skb", None)]),
    (Event::SkbFreed, &[("skb:kfree_skb", None)]),
    (Event::SkbCopies, &[("skb:skb_copy_datagram_iovec", None)]),
    (
        Event::TcpDataSegments,
        &[("tcp:tcp_probe", Some("data_len > 0"))],
    ),
    (
        Event::TcpPureAcks,
        &[("tcp:tcp_probe", Some("data_len == 0"))],
    ),
];

/// The `events` directory of tracefs, where it is mounted and readable.
fn events_dir() -> Option<PathBuf> {
    [
        "/sys/kernel/tracing/events",
        "/sys/kernel/debug/tracing/events",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.join("raw_syscalls").is_dir() || p.join("sched").is_dir())
}

/// The id of tracepoint `category:name` under `events`.
fn id(events: &Path, name: &str) -> Option<u64> {
    let (category, event) = name.split_once(':')?;
    let text = std::fs::read_to_string(events.join(category).join(event).join("id")).ok()?;
    text.trim().parse().ok()
}

/// The tracepoints to count on this kernel, one per event it offers, in
/// [`CANDIDATES`] order; read once per process. Where tracefs is not mounted (many
/// virtual machines and containers), root reads the ids from a mount of its own
/// that no other process sees ([`in_private_mount`]).
pub fn chosen() -> &'static [Chosen] {
    match found() {
        Ok(chosen) => chosen,
        Err(_) => &[],
    }
}

/// Why no tracepoint can be counted on this run, when none can.
pub fn missing() -> Option<&'static Missing> {
    found().as_ref().err()
}

/// The tracepoints, or why there are none; read once per process.
fn found() -> &'static Result<Vec<Chosen>, Missing> {
    static FOUND: OnceLock<Result<Vec<Chosen>, Missing>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let chosen = match events_dir() {
            Some(events) => choose(&events),
            None => in_private_mount()?,
        };
        if chosen.is_empty() {
            return Err(Missing::NoneOffered);
        }
        Ok(chosen)
    })
}

/// Why no tracepoint can be counted, each case with what would give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// tracefs is not mounted (or not readable by this account), and only root
    /// can mount it.
    NotRoot,
    /// tracefs is not mounted, and sockbench could not have a mount namespace of
    /// its own to mount it in (`unshare` failed with this errno).
    NoNamespace(i32),
    /// tracefs is not mounted, and mounting it privately failed with this errno
    /// (not in this kernel, not permitted here, no mount point).
    NotMountable(i32),
    /// tracefs offers none of the tracepoints in [`CANDIDATES`].
    NoneOffered,
}

impl Missing {
    /// What is missing, why, and the command that gives it, as one clause.
    pub fn sentence(self) -> String {
        let mount = format!("`mount -t tracefs nodev {TRACEFS}`");
        let none = "no tracepoints (system calls, packets, wakeups) could be counted";
        let errno = |e: i32| {
            let text = std::io::Error::from_raw_os_error(e).to_string();
            text.split(" (os error").next().unwrap_or(&text).to_string()
        };
        match self {
            Missing::NotRoot => format!(
                "{none}, as tracefs is not mounted or not readable by this account; run as root \
                 (sockbench then mounts it where only it sees it)"
            ),
            Missing::NoNamespace(e) => format!(
                "{none}, as tracefs is not mounted and sockbench could not make a mount \
                 namespace of its own to mount it in ({}); mount it with {mount}",
                errno(e)
            ),
            Missing::NotMountable(e) if e == libc::ENODEV => format!(
                "{none}, as this kernel has no tracefs ({}); a kernel built with \
                 CONFIG_TRACING has it",
                errno(e)
            ),
            Missing::NotMountable(e) => format!(
                "{none}, as tracefs is not mounted and sockbench could not mount it ({}); \
                 mount it with {mount} as root on the host",
                errno(e)
            ),
            Missing::NoneOffered => format!(
                "{none}, as this kernel's tracefs offers none of them (a kernel built with \
                 CONFIG_TRACEPOINTS has them)"
            ),
        }
    }
}

/// Where tracefs is mounted when it is mounted at all.
const TRACEFS: &str = "/sys/kernel/tracing";

/// The tracepoints read from tracefs mounted in a mount namespace of one thread's
/// own, as root: the mount is never seen by the host or by sockbench's other
/// threads, and it goes with the namespace when the thread ends, so the machine is
/// left as it was (`perf` instead mounts tracefs for everyone and leaves it). The
/// ids are all the counters need: a tracepoint is opened by id, and its filter is
/// set on the counter. `None` when this cannot be done (not root, no mount
/// namespaces, no tracefs in the kernel) and why.
fn in_private_mount() -> Result<Vec<Chosen>, Missing> {
    if rustix::process::geteuid().as_raw() != 0 {
        return Err(Missing::NotRoot);
    }
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let reader = std::thread::Builder::new()
        .name("tracefs".into())
        .spawn(move || {
            let target = std::ffi::CString::new(TRACEFS).map_err(|_| Missing::NotMountable(0))?;
            // Mounted in the thread's own copy of the mounts, made private, so the
            // host's mounts stay as they were.
            crate::mounts::enter_private()
                .map_err(|e| Missing::NoNamespace(e.raw_os_error().unwrap_or(0)))?;
            // SAFETY: a plain syscall; the pointers are valid NUL-terminated strings
            // or null where allowed.
            unsafe {
                if libc::mount(
                    c"nodev".as_ptr(),
                    target.as_ptr(),
                    c"tracefs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ) != 0
                {
                    let e = errno();
                    // Already mounted there (by the host since it was looked at):
                    // the copy of the mounts holds it.
                    let events = Path::new(TRACEFS).join("events");
                    if e == libc::EBUSY && events.is_dir() {
                        return Ok(choose(&events));
                    }
                    return Err(Missing::NotMountable(e));
                }
            }
            Ok(choose(&Path::new(TRACEFS).join("events")))
        })
        .map_err(|e| Missing::NoNamespace(e.raw_os_error().unwrap_or(0)))?;
    reader.join().unwrap_or(Err(Missing::NotMountable(0)))
}

/// The first candidate of each event that `events` holds.
pub fn choose(events: &Path) -> Vec<Chosen> {
    CANDIDATES
        .iter()
        .filter_map(|(event, candidates)| {
            candidates.iter().find_map(|(name, filter)| {
                Some(Chosen {
                    event: *event,
                    name: name.to_string(),
                    id: id(events, name)?,
                    filter: *filter,
                })
            })
        })
        .collect()
}

/// The tracepoints of `chosen`, each named once, for [`super::Why::tracepoints`]
/// (`irq:softirq_entry` serves two events).
pub fn names(chosen: &[Chosen]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in chosen {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether tracefs is mounted is the machine's own business: as root, the
    /// private mount finds the tracepoints either way, and leaves the mounts the
    /// process (and so the host) sees as they were.
    #[test]
    fn root_reads_the_tracepoints_from_a_mount_no_one_else_sees() {
        if rustix::process::geteuid().as_raw() != 0 {
            eprintln!("SKIPPED root_reads_the_tracepoints_from_a_mount_no_one_else_sees: not root");
            return;
        }
        let mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let before = mounts();
        let chosen = in_private_mount().expect("tracefs mounted privately");
        assert!(!chosen.is_empty());
        assert_eq!(
            mounts(),
            before,
            "the private mount was seen outside its thread"
        );
        let events: Vec<Event> = chosen.iter().map(|c| c.event).collect();
        for event in [Event::Syscalls, Event::PacketsSent, Event::Wakeups] {
            assert!(events.contains(&event), "{event:?} not found: {chosen:?}");
        }
    }

    /// Each reason names what is missing and what gives it.
    #[test]
    fn every_reason_says_what_would_give_the_tracepoints() {
        assert!(Missing::NotRoot.sentence().contains("run as root"));
        for m in [
            Missing::NoNamespace(libc::EPERM),
            Missing::NotMountable(libc::EPERM),
        ] {
            let s = m.sentence();
            assert!(
                s.contains("mount -t tracefs nodev /sys/kernel/tracing"),
                "{s}"
            );
            assert!(!s.contains("os error"), "{s}");
        }
        assert!(Missing::NotMountable(libc::ENODEV)
            .sentence()
            .contains("this kernel has no tracefs (No such device)"));
    }

    #[test]
    fn every_event_has_candidates_and_the_first_present_is_chosen() {
        for event in Event::ALL {
            assert!(CANDIDATES.iter().any(|(e, c)| *e == event && !c.is_empty()));
        }
        let dir = tempfile::tempdir().unwrap();
        for (path, id) in [("sched/sched_wakeup", 7), ("net/netif_rx", 9)] {
            std::fs::create_dir_all(dir.path().join(path)).unwrap();
            std::fs::write(dir.path().join(path).join("id"), format!("{id}\n")).unwrap();
        }
        let chosen = choose(dir.path());
        let got: Vec<(Event, &str, u64)> = chosen
            .iter()
            .map(|c| (c.event, c.name.as_str(), c.id))
            .collect();
        assert_eq!(
            got,
            [
                (Event::PacketsReceived, "net:netif_rx", 9),
                (Event::Wakeups, "sched:sched_wakeup", 7)
            ]
        );
    }
}
