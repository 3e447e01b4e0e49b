//! CPU figures from `/proc` and `getrusage`, which need no privilege: user and
//! system time of a process and its children, the busy and steal time of the whole
//! machine, and the CPU a task last ran on.

use super::Counts;
use std::fs;

/// Clock ticks per second of `/proc`'s times (`sysconf(_SC_CLK_TCK)`).
fn ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 is index 0).
fn stat_fields(path: &str) -> Option<Vec<String>> {
    let text = fs::read_to_string(path).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    Some(after.split_whitespace().map(String::from).collect())
}

/// True when process `pid` runs (is neither gone nor a zombie).
pub fn runs(pid: u32) -> bool {
    stat_fields(&format!("/proc/{pid}/stat"))
        .and_then(|f| f.first().cloned())
        .is_some_and(|state| state != "Z" && state != "X")
}

/// The parent of process `pid`.
pub fn parent(pid: u32) -> Option<u32> {
    stat_fields(&format!("/proc/{pid}/stat"))?
        .get(1)?
        .parse()
        .ok()
}

/// A process's CPU time so far, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Times {
    /// The total, to the nanosecond where the kernel's CPU clock of each process
    /// can be read (everyone's can: `clock_getcpuclockid`), else in clock ticks.
    pub cpu_ns: f64,
    /// The user and system time `/proc` counts in clock ticks (10 ms here): a loop
    /// shorter than a few ticks is split between them in their proportion
    /// ([`super::Counts::split_as_ticked`]), never measured by them.
    pub user_ns: f64,
    pub sys_ns: f64,
}

/// User and system time of process `pid` with all its threads, plus the
/// processes it started: those already waited for, and (with `live_children`)
/// every one still running below it, each with the ones it waited for, read one
/// by one. A child reaped while they are read would be counted twice or not at
/// all, so the reading is taken again (a few times at most) until the waited-for
/// total did not move meanwhile.
pub fn process_times(pid: u32, live_children: bool) -> Option<Times> {
    let mut last = None;
    for _ in 0..5 {
        let (mut times, waited) = own_and_waited(pid)?;
        if live_children {
            for below in descendants(pid) {
                if let Some((t, _)) = own_and_waited(below) {
                    times.cpu_ns += t.cpu_ns;
                    times.user_ns += t.user_ns;
                    times.sys_ns += t.sys_ns;
                }
            }
        } else {
            return Some(times);
        }
        last = Some(times);
        if own_and_waited(pid)?.1 == waited {
            break;
        }
    }
    last
}

/// The CPU time of process `pid` with the processes it waited for, and their
/// share of it (cutime and cstime, fields 16 and 17, in ticks): its own from its
/// CPU clock where readable, else from utime and stime (fields 14 and 15).
fn own_and_waited(pid: u32) -> Option<(Times, [u64; 2])> {
    let f = stat_fields(&format!("/proc/{pid}/stat"))?;
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let [user, sys, c_user, c_sys] = [field(11)?, field(12)?, field(13)?, field(14)?];
    let tick = 1e9 / ticks_per_s();
    let ticked = |t: u64| t as f64 * tick;
    let own = cpu_clock_ns(pid).unwrap_or(ticked(user + sys));
    let times = Times {
        cpu_ns: own + ticked(c_user + c_sys),
        user_ns: ticked(user + c_user),
        sys_ns: ticked(sys + c_sys),
    };
    Some((times, [c_user, c_sys]))
}

/// The CPU time process `pid` has used, every thread of it (those ended too),
/// ns, from its CPU clock.
fn cpu_clock_ns(pid: u32) -> Option<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid, writable clockid_t.
    if unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) } != 0 {
        return None;
    }
    // SAFETY: an all-zero timespec is a valid value for clock_gettime to fill.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return None;
    }
    Some(t.tv_sec as f64 * 1e9 + t.tv_nsec as f64)
}

/// The running children of `pid`, from every one of its threads.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// At most this many processes below one are followed: a server's tree (nginx's
/// master and workers, a postmaster and its backends) is far smaller.
const MOST_DESCENDANTS: usize = 4_096;

/// Every running process below `pid` (children, their children, …), parents
/// before their children.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = children(pid);
    let mut next = 0;
    while next < found.len() && found.len() < MOST_DESCENDANTS {
        let below = children(found[next]);
        found.extend(below);
        next += 1;
    }
    found.truncate(MOST_DESCENDANTS);
    found
}

/// The thread ids of process `pid` and of every process below it.
pub fn tree_threads(pid: u32) -> Vec<i32> {
    std::iter::once(pid)
        .chain(descendants(pid))
        .flat_map(threads)
        .collect()
}

/// The thread ids of process `pid`.
pub fn threads(pid: u32) -> Vec<i32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// Every thread of process `pid` and of every running process below it, with the
/// CPU time it has used (ns: from `schedstat`, or in clock ticks where the kernel
/// keeps no scheduler statistics) and the CPU it last ran on.
pub fn tasks(pid: u32) -> Vec<(i32, u64, Option<u32>)> {
    let tick = (1e9 / ticks_per_s()) as u64;
    std::iter::once(pid)
        .chain(descendants(pid))
        .flat_map(|p| {
            threads(p).into_iter().filter_map(move |tid| {
                let task = format!("/proc/{p}/task/{tid}");
                let f = stat_fields(&format!("{task}/stat"))?;
                let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
                let ran = fs::read_to_string(format!("{task}/schedstat"))
                    .ok()
                    .and_then(|s| s.split_whitespace().next()?.parse().ok())
                    .or_else(|| Some((get(11)? + get(12)?) * tick))?;
                Some((tid, ran, get(36).map(|c| c as u32)))
            })
        })
        .collect()
}

/// This process's CPU use so far: user and system time and context switches,
/// every thread included, from `getrusage`.
pub fn own_usage() -> Counts {
    // SAFETY: an all-zero rusage is a valid value for getrusage to fill.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let ns = |t: libc::timeval| t.tv_sec as f64 * 1e9 + t.tv_usec as f64 * 1e3;
    let (user, sys) = (ns(u.ru_utime), ns(u.ru_stime));
    Counts {
        cpu_ns: user + sys,
        user_ns: Some(user),
        sys_ns: Some(sys),
        context_switches: Some((u.ru_nvcsw + u.ru_nivcsw) as f64),
        migrations: None,
        instructions_user: None,
        instructions_kernel: None,
    }
}

/// The whole machine's CPU time so far, ns: busy (everything but idle and iowait)
/// and stolen by the hypervisor, from the first line of `/proc/stat`.
pub fn machine_times() -> Option<(f64, f64)> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest times are in user)
    if v.len() < 8 {
        return None;
    }
    let tick = 1e9 / ticks_per_s();
    let busy = v[0] + v[1] + v[2] + v[5] + v[6];
    Some((busy * tick, v[7] * tick))
}
