//! Samples with kernel call chains of one task and everything it starts, from
//! the PMU's `cycles` where the kernel accepts it, else the `cpu-clock` timer
//! ([`Clock`]), taken between [`Sampler::start`] and [`Sampler::stop`] and read only
//! afterwards: nothing runs in sockbench during the loop, the kernel writes the
//! samples into ring buffers.
//!
//! The kernel refuses to map the buffer of an inherited event on every CPU
//! (`cpu == -1`), so the task has one event per CPU, and every event of one CPU
//! (across tasks) writes into one buffer through `PERF_EVENT_IOC_SET_OUTPUT`, as
//! `perf record` does. A buffer that fills up loses samples; the kernel says how
//! many (`PERF_RECORD_LOST`), and [`Drained::lost`] keeps the count.

use super::kallsyms::Kallsyms;
use super::layers::{self, Class};
use super::{Clock, Layer};
use crate::cpu::counters::Task;
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter, SampleFlag, Sampler as Buffer};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::fd::AsRawFd;

/// `PERF_EVENT_IOC_SET_OUTPUT`: `_IO('$', 5)`.
const SET_OUTPUT: libc::c_ulong = 0x2405;
/// One `cpu-clock` sample every 50 µs of a task's CPU time: about 20 000 per
/// CPU-second, so a counting trial of a few hundred ms of CPU gives a few
/// thousand per side (a layer's share then within ±2 points from sampling
/// alone). Each sample costs a few µs in an interrupt, paid in the counting
/// trial only, whose wall time is not used. NOTE: bench/why-check.sh reads this
/// period to sample the reference loop alike.
pub const PERIOD_NS: u64 = 50_000;
/// One `cycles` sample every 125 000 cycles: [`PERIOD_NS`] at 2.5 GHz.
pub const PERIOD_CYCLES: u64 = 125_000;
/// Each CPU's buffer: 4 MiB, about 20 000 samples of 200 bytes, one second of
/// one busy CPU at [`PERIOD_NS`].
const BUFFER_BYTES: usize = 4 << 20;
/// Call-chain markers (`PERF_CONTEXT_KERNEL`, `…_USER`) are above this.
const CONTEXT_MAX: u64 = (-4095i64) as u64;
/// `PERF_RECORD_MISC_CPUMODE_MASK` and `PERF_RECORD_MISC_USER`.
const CPUMODE_MASK: u16 = 7;
const MISC_USER: u16 = 2;
/// `PERF_RECORD_LOST` (`u64 id; u64 lost`) and `PERF_RECORD_SAMPLE`.
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;

/// One side's samplers: one buffer per CPU, and the events of the other tasks
/// writing into it.
pub struct Sampler {
    /// What makes the samples.
    pub clock: Clock,
    buffers: Vec<Buffer>,
    others: Vec<Counter>,
    /// The side's process, whose mappings stand in for a task gone at drain time.
    root: u32,
}

/// The samples of one side, by layer.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Drained {
    pub by_layer: BTreeMap<Layer, u64>,
    /// Samples inside perf's own functions, left out.
    pub left_out: u64,
    /// Samples the kernel could not write (a full buffer).
    pub lost: u64,
}

impl Sampler {
    /// Opens, disabled, the sampling events of `tasks` on every online CPU;
    /// `root` is their process (a task gone meanwhile is passed over). Fails when
    /// sampling is not permitted.
    pub fn open(tasks: &[Task], root: u32) -> io::Result<Sampler> {
        let clock = chosen();
        let mut buffers: Vec<Buffer> = Vec::new();
        let mut others = Vec::new();
        for cpu in online_cpus() {
            let mut first: Option<Buffer> = None;
            for &task in tasks {
                let counter = match build(clock, task, cpu) {
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                    built => built?,
                };
                match &first {
                    None => first = Some(counter.sampled(BUFFER_BYTES)?),
                    Some(buffer) => {
                        // SAFETY: both fds are live perf events of this process;
                        // SET_OUTPUT takes the target fd as its argument.
                        let r = unsafe {
                            libc::ioctl(counter.as_raw_fd(), SET_OUTPUT, buffer.as_raw_fd())
                        };
                        if r < 0 {
                            return Err(io::Error::last_os_error());
                        }
                        others.push(counter);
                    }
                }
            }
            buffers.extend(first);
        }
        Ok(Sampler {
            clock,
            buffers,
            others,
            root,
        })
    }

    /// Starts sampling, just before the loop.
    pub fn start(&mut self) {
        self.each(Counter::enable);
    }

    /// Stops sampling, just after the loop.
    pub fn stop(&mut self) {
        self.each(Counter::disable);
    }

    fn each(&mut self, act: fn(&mut Counter) -> io::Result<()>) {
        for b in &mut self.buffers {
            let _ = act(b.as_counter_mut());
        }
        for c in &mut self.others {
            let _ = act(c);
        }
    }

    /// Reads every sample in the buffers and attributes it to a layer.
    pub fn drain(&mut self, kallsyms: &Kallsyms) -> Drained {
        let mut drained = Drained::default();
        let mut maps: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        let root = self.root;
        for buffer in &mut self.buffers {
            while let Some(record) = buffer.next_record() {
                let bytes = record.to_contiguous();
                match record.ty() {
                    RECORD_SAMPLE => {
                        let Some(sample) = Sample::parse(&bytes) else {
                            continue;
                        };
                        let class = if record.misc() & CPUMODE_MASK == MISC_USER {
                            let ranges = maps.entry(sample.pid).or_insert_with(|| {
                                crypto_ranges(sample.pid)
                                    .or_else(|| crypto_ranges(root))
                                    .unwrap_or_default()
                            });
                            let ip = sample.ip;
                            let tls = ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&ip));
                            Class::In(if tls { Layer::Tls } else { Layer::User })
                        } else {
                            let frames = sample
                                .chain
                                .iter()
                                .filter(|&&a| a < CONTEXT_MAX)
                                .filter_map(|&a| kallsyms.name(a));
                            layers::classify(frames)
                        };
                        match class {
                            Class::In(layer) => *drained.by_layer.entry(layer).or_default() += 1,
                            Class::Perf => drained.left_out += 1,
                        }
                    }
                    RECORD_LOST => drained.lost += u64_at(&bytes, 8).unwrap_or(0),
                    _ => {}
                }
            }
        }
        drained
    }
}

/// A `PERF_RECORD_SAMPLE` of [`build`]'s layout (`PERF_SAMPLE_IP | TID |
/// CALLCHAIN`): `u64 ip; u32 pid, tid; u64 nr; u64 ips[nr]`, header left out.
/// (perf-event-data 0.1 fails on the empty chain of a user-space sample, so the
/// three fields are read here.)
#[derive(Debug, PartialEq)]
pub struct Sample {
    pub ip: u64,
    pub pid: u32,
    pub chain: Vec<u64>,
}

impl Sample {
    pub fn parse(bytes: &[u8]) -> Option<Sample> {
        let ip = u64_at(bytes, 0)?;
        let pid = u32::from_ne_bytes(bytes.get(8..12)?.try_into().ok()?);
        let nr = usize::try_from(u64_at(bytes, 16)?).ok()?;
        let chain = (0..nr)
            .map(|i| u64_at(bytes, 24 + 8 * i))
            .collect::<Option<Vec<u64>>>()?;
        Some(Sample { ip, pid, chain })
    }
}

/// The native-endian `u64` at `offset` of `bytes`.
fn u64_at(bytes: &[u8], offset: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        bytes.get(offset..offset + 8)?.try_into().ok()?,
    ))
}

/// The clock this machine samples with, chosen once per run: `cycles` where
/// the kernel accepts a sampling `cycles` event (a PMU, exposed to this machine),
/// else `cpu-clock`.
pub fn chosen() -> Clock {
    static CHOSEN: std::sync::OnceLock<Clock> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| choose(|clock| build(clock, Task::Me, 0).map(drop)))
}

/// The first of `cycles` and `cpu-clock` for which `open` succeeds; `cpu-clock`
/// when neither does (opening it again then says why).
pub fn choose(mut open: impl FnMut(Clock) -> io::Result<()>) -> Clock {
    if open(Clock::Cycles).is_ok() {
        Clock::Cycles
    } else {
        Clock::CpuClock
    }
}

/// A disabled sampling event of `clock` for `task` on `cpu`, inherited.
fn build(clock: Clock, task: Task, cpu: usize) -> io::Result<Counter> {
    let (mut builder, period) = match clock {
        Clock::Cycles => (Builder::new(Hardware::CPU_CYCLES), PERIOD_CYCLES),
        Clock::CpuClock => (Builder::new(Software::CPU_CLOCK), PERIOD_NS),
    };
    match task {
        Task::Me => builder.observe_self(),
        Task::Id(id) => builder.observe_pid(id),
    };
    builder
        .one_cpu(cpu)
        .inherit(true)
        .exclude_kernel(false)
        .sample_period(period)
        .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CALLCHAIN)
        .exclude_callchain_user(true)
        .enabled(false)
        .build()
}

/// The CPUs online, from `/sys/devices/system/cpu/online` (`0-3,5`).
fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpus = parse_cpu_list(&text);
    if cpus.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        return (0..n).collect();
    }
    cpus
}

/// A kernel CPU list (`0-3,5`).
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    text.trim()
        .split(',')
        .filter_map(|part| {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            Some(lo.trim().parse().ok()?..=hi.trim().parse().ok()?)
        })
        .flatten()
        .collect()
}

/// The address ranges of process `pid` mapped from libssl or libcrypto.
fn crypto_ranges(pid: u32) -> Option<Vec<(u64, u64)>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    Some(crypto_ranges_in(&text))
}

/// The ranges of a `maps` text mapped from a file named `libssl*` or `libcrypto*`.
pub fn crypto_ranges_in(maps: &str) -> Vec<(u64, u64)> {
    maps.lines()
        .filter_map(|line| {
            let path = line.split_whitespace().nth(5)?;
            let file = path.rsplit('/').next()?;
            if !(file.starts_with("libssl") || file.starts_with("libcrypto")) {
                return None;
            }
            let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
            Some((
                u64::from_str_radix(lo, 16).ok()?,
                u64::from_str_radix(hi, 16).ok()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_that_refuses_cycles_is_sampled_by_its_timer() {
        let mut asked = Vec::new();
        let clock = choose(|c| {
            asked.push(c);
            match c {
                Clock::Cycles => Err(io::Error::from_raw_os_error(libc::ENOENT)),
                Clock::CpuClock => Ok(()),
            }
        });
        assert_eq!(clock, Clock::CpuClock);
        assert_eq!(asked, [Clock::Cycles]);
        assert_eq!(choose(|_| Ok(())), Clock::Cycles);
    }

    /// The clock chosen is the one this kernel accepts: where opening a sampling
    /// `cycles` event fails (no PMU, as in most VMs), `cpu-clock`.
    #[test]
    fn the_chosen_clock_is_the_one_the_kernel_accepts() {
        let cycles = build(Clock::Cycles, Task::Me, 0).is_ok();
        let expected = if cycles {
            Clock::Cycles
        } else {
            Clock::CpuClock
        };
        assert_eq!(chosen(), expected);
    }
}
