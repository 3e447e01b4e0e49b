//! The meter against the kernel's own clock of this thread's CPU time.

use super::load::{CpuLoad, Snapshot};
use super::*;
use std::time::{Duration, Instant};

fn thread_cpu_ns() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

/// Lets one test of this file burn or measure CPU at a time: each one's busy
/// processes are outside load to another's reading of the machine.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spins until this thread has used `time` of CPU, however busy the machine is
/// (for at most ten times as long). The clocks are read every 100,000 turns: a
/// thread's CPU clock is a system call, and the loop is to run in user mode.
fn spin(time: Duration) -> u64 {
    let until = thread_cpu_ns() + time.as_nanos() as f64;
    let end = Instant::now() + time * 10;
    let mut n = 0u64;
    while thread_cpu_ns() < until && Instant::now() < end {
        for _ in 0..100_000 {
            n = std::hint::black_box(n + 1);
        }
    }
    n
}

#[test]
fn the_client_side_counts_this_threads_cpu_time() {
    let _turn = one_at_a_time();
    // On a thread of its own, so the test harness's other threads stay out; without
    // the kernel's account, whose sampling interrupts the counters count too.
    std::thread::spawn(|| {
        let mut meter = Meter::counters_alone(&[]);
        meter.start();
        let before = thread_cpu_ns();
        spin(Duration::from_millis(200));
        let spent = thread_cpu_ns() - before;
        meter.stop(4);
        let cost = meter.take().expect("a cost after start and stop");
        assert!(meter.take().is_none(), "taken once");
        let per_op = spent / 4.0;
        let counted = cost.client.cpu_ns;
        // getrusage (the fallback) counts the whole process, so allow more there.
        let tolerance = if cost.source == counters::CountedBy::PerfEvent {
            0.05
        } else {
            0.5
        };
        assert!(
            (counted - per_op).abs() <= tolerance * per_op,
            "{} counted {counted:.0} ns/op, the thread clock says {per_op:.0}",
            cost.source
        );
        assert!(cost.server.is_none());
        if let (Some(user), Some(sys)) = (cost.client.user_ns, cost.client.sys_ns) {
            assert!(user > sys, "a spinning loop runs in user mode: {cost:?}");
        }
    })
    .join()
    .unwrap();
}

#[test]
fn times_alone_count_this_process_without_counters() {
    let _turn = one_at_a_time();
    let mut meter = Meter::times(&[]);
    meter.start();
    spin(Duration::from_millis(100));
    meter.stop(1);
    let cost = meter.take().unwrap();
    assert_eq!(cost.source, counters::CountedBy::Proc);
    assert!(cost.client.cpu_ns >= 80e6, "{cost:?}");
    assert!(cost.client.migrations.is_none());
}

#[test]
fn stop_without_start_gives_nothing() {
    let mut meter = Meter::times(&[]);
    meter.stop(10);
    assert!(meter.take().is_none());
}

#[test]
fn per_op_divides_every_counted_figure() {
    let before = Counts {
        cpu_ns: 100.0,
        context_switches: Some(2.0),
        migrations: None,
        ..Counts::default()
    };
    let after = Counts {
        cpu_ns: 1100.0,
        context_switches: Some(12.0),
        migrations: Some(3.0),
        ..Counts::default()
    };
    let c = after.per_op(&before, 10.0);
    assert_eq!(c.cpu_ns, 100.0);
    assert_eq!(c.context_switches, Some(1.0));
    assert_eq!(c.migrations, None, "not counted at the start");
    let split = Counts {
        cpu_ns: 1000.0,
        ..Counts::default()
    }
    .split_like(&Counts {
        user_ns: Some(30.0),
        sys_ns: Some(10.0),
        ..Counts::default()
    });
    assert_eq!((split.user_ns, split.sys_ns), (Some(750.0), Some(250.0)));
}

#[test]
fn a_busy_neighbour_disturbs_and_a_quiet_machine_does_not() {
    let _turn = one_at_a_time();
    let quiet = CpuLoad {
        outside_cpus: 0.02,
        steal_cpus: 0.0,
    };
    assert!(!quiet.disturbed());
    let busy = CpuLoad {
        outside_cpus: 0.9,
        ..quiet
    };
    assert!(busy.disturbed());
    let stolen = CpuLoad {
        steal_cpus: 0.2,
        ..quiet
    };
    assert!(stolen.disturbed());
    // Our own busy thread is not outside load: what is counted outside is the
    // machine's busy time less at least most of the thread's (other tests of the
    // suite may keep the machine busy meanwhile, so the machine's own total is
    // the bound, not a fixed figure).
    let start = Instant::now();
    let (busy_before, _) = proc::machine_times().unwrap();
    let ours_before = proc::own_usage().cpu_ns;
    let before = Snapshot::take(&[]).unwrap();
    let t = std::thread::spawn(|| spin(Duration::from_millis(300)));
    t.join().unwrap();
    let load = before.until(&Snapshot::take(&[]).unwrap()).unwrap();
    let ours = proc::own_usage().cpu_ns - ours_before;
    let (busy_after, _) = proc::machine_times().unwrap();
    let wall = start.elapsed().as_secs_f64() * 1e9;
    let bound = (busy_after - busy_before - 0.8 * ours) / wall + 0.1;
    assert!(ours > 0.2e9, "the thread spun only {ours} ns");
    assert!(load.outside_cpus <= bound, "{load:?} over {bound}");
}

#[test]
fn threads_started_after_opening_count_while_they_still_run() {
    let _turn = one_at_a_time();
    std::thread::spawn(|| {
        let mut meter = Meter::counters(&[]);
        let worker = std::thread::spawn(|| spin(Duration::from_millis(600)));
        std::thread::sleep(Duration::from_millis(100));
        meter.start();
        std::thread::sleep(Duration::from_millis(300));
        meter.end();
        worker.join().unwrap();
        meter.stop(1);
        let cost = meter.take().unwrap();
        if cost.source != counters::CountedBy::PerfEvent {
            return; // getrusage counts the whole process: nothing to tell apart
        }
        // The worker spun through the whole window: up to about 300 ms of CPU,
        // less as far as other work on the machine took its CPU (none counted
        // would mean the thread was missed).
        let ms = cost.client.cpu_ns / 1e6;
        assert!((50.0..=400.0).contains(&ms), "{ms:.0} ms counted");
    })
    .join()
    .unwrap();
}

/// A shell that keeps a CPU busy for a few seconds at most; killed by the guard.
struct Busy(std::process::Child);

impl Busy {
    /// `sh` burning CPU itself, or (`below`) through a child of its own.
    fn start(below: bool) -> Busy {
        let burn = "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done";
        let script = if below {
            format!("sh -c '{burn}'; :")
        } else {
            burn.to_string()
        };
        let child = std::process::Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .expect("sh starts");
        Busy(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        // The process group is the test's own: kill the tree through /proc.
        for pid in proc::descendants(self.0.id()) {
            // SAFETY: a plain signal to a process this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn each_role_is_counted_with_the_processes_below_it() {
    let _turn = one_at_a_time();
    let (tree, alone) = (Busy::start(true), Busy::start(false));
    // Until the tree's child has started.
    let end = Instant::now() + Duration::from_secs(5);
    while proc::descendants(tree.pid()).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    let roles = [
        ServerRole::started("proxy", tree.pid()),
        ServerRole::started("app", alone.pid()),
    ];
    let mut meter = Meter::times(&roles);
    meter.start();
    std::thread::sleep(Duration::from_millis(400));
    meter.stop(1);
    let cost = meter.take().expect("a cost");
    let names: Vec<&str> = cost.roles.keys().map(String::as_str).collect();
    assert_eq!(names, ["app", "proxy"]);
    // Both shells burn about a CPU each for 0.4 s; the proxy's only below it.
    for (name, counts) in &cost.roles {
        assert!(counts.cpu_ns > 50e6, "{name}: {counts:?}");
    }
    let sum: f64 = cost.roles.values().map(|c| c.cpu_ns).sum();
    let server = cost.server.expect("the server side").cpu_ns;
    assert!((server - sum).abs() < 1.0, "{server} against {sum}");
}

#[test]
fn one_role_keeps_the_server_side_as_it_was() {
    let _turn = one_at_a_time();
    let alone = Busy::start(false);
    let mut meter = Meter::times(&[ServerRole::server(alone.pid())]);
    meter.start();
    std::thread::sleep(Duration::from_millis(200));
    meter.stop(1);
    let cost = meter.take().expect("a cost");
    assert!(cost.roles.is_empty(), "{:?}", cost.roles);
    assert!(cost.server.expect("the server side").cpu_ns > 20e6);
}

#[test]
fn a_servers_time_is_counted_over_a_loop_shorter_than_a_clock_tick() {
    let _turn = one_at_a_time();
    let busy = Busy::start(false);
    // 2 ms loops, against /proc's 10 ms ticks: counted in ticks, each would read
    // nothing or a whole tick.
    // SAFETY: sysconf reads a constant of the system.
    let tick = 1e9 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut read = Vec::new();
    for _ in 0..20 {
        let mut meter = Meter::times(&[ServerRole::server(busy.pid())]);
        meter.start();
        std::thread::sleep(Duration::from_millis(2));
        meter.stop(1);
        let server = meter.take().expect("a cost").server.expect("the server");
        if let (Some(user), Some(sys)) = (server.user_ns, server.sys_ns) {
            let sum = user + sys;
            assert!((sum - server.cpu_ns).abs() < 1.0, "{server:?}");
        }
        read.push(server.cpu_ns);
    }
    assert!(
        read.iter().any(|&ns| ns > 0.0 && ns % tick != 0.0),
        "every reading a whole number of clock ticks: {read:?}"
    );
}
