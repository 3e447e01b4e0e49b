//! Which CPUs a thread or process may run on, and on which one it ran.

use std::io;

crate::named! {
    /// Where client and server run, as `--placement` names it.
    pub enum Placement as "placement" {
        /// Wherever the scheduler puts them.
        Free = "free",
        /// Both pinned to one CPU.
        Same = "same",
        /// Pinned to two different CPUs.
        Split = "split",
    }
}

impl Placement {
    /// How tables and the verdict name it: `one CPU`, `two CPUs`, `free`.
    pub fn describe(self) -> &'static str {
        match self {
            Placement::Free => "placed freely",
            Placement::Same => "on one CPU",
            Placement::Split => "on two CPUs",
        }
    }
}

/// The CPUs this process could run on when it first asked, in order; pinning the
/// calling thread later does not change the answer.
pub fn allowed() -> &'static [usize] {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(read_allowed)
}

fn read_allowed() -> Vec<usize> {
    cpus_of(0).unwrap_or_default()
}

/// The CPUs thread `tid` (0: the calling thread) may run on, in order.
pub fn cpus_of(tid: i32) -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size given.
    let rc = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// The CPUs each thread of a process sockbench did not start may run on, read
/// before sockbench first places it, and put back when this is dropped: however
/// the run ends (finished, failed or interrupted), a user's server is left on the
/// CPUs it had. A thread started meanwhile gets the process's main thread's.
#[derive(Debug)]
pub struct Restore {
    pid: u32,
    threads: Vec<(i32, Vec<usize>)>,
}

impl Restore {
    /// Reads the CPUs of every thread of process `pid`.
    pub fn of_process(pid: u32) -> io::Result<Restore> {
        let mut threads = Vec::new();
        for tid in super::proc::threads(pid) {
            match cpus_of(tid) {
                Ok(cpus) => threads.push((tid, cpus)),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => return Err(e),
            }
        }
        if threads.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(Restore { pid, threads })
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let main = self
            .threads
            .iter()
            .find(|(tid, _)| *tid as u32 == self.pid)
            .unwrap_or(&self.threads[0])
            .1
            .clone();
        for tid in super::proc::threads(self.pid) {
            let cpus = self
                .threads
                .iter()
                .find(|(t, _)| *t == tid)
                .map_or(&main, |(_, cpus)| cpus);
            // A thread that ended meanwhile needs nothing; nothing else can be done
            // about one that cannot be placed back.
            let _ = pin(tid, cpus);
        }
    }
}

/// Lets thread `tid` (0: the calling thread) run only on `cpus`. Threads and
/// processes it starts afterwards inherit this.
pub fn pin(tid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: CPU_SET checks nothing; `cpu` is below the set's size.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size given.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pins every thread of process `pid` to `cpus`; a thread that ends meanwhile (a
/// server session closing) is passed over.
pub fn pin_process(pid: u32, cpus: &[usize]) -> io::Result<()> {
    pin_threads(super::proc::threads(pid), cpus)
}

/// Pins every thread of process `pid` and of every process below it to `cpus`
/// (a server sockbench started, with the workers it started).
pub fn pin_tree(pid: u32, cpus: &[usize]) -> io::Result<()> {
    pin_threads(super::proc::tree_threads(pid), cpus)
}

fn pin_threads(tids: Vec<i32>, cpus: &[usize]) -> io::Result<()> {
    for tid in tids {
        match pin(tid, cpus) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            other => other?,
        }
    }
    Ok(())
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: a plain call with no arguments.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// `cpus` starting at its `round`-th (modulo their count) and wrapping around: the
/// CPUs a pinned placement uses in that round, so that `same` takes each CPU in
/// turn and `split` swaps client and server from round to round on two CPUs.
pub fn rotated(cpus: &[usize], round: usize) -> Vec<usize> {
    let mut cpus = cpus.to_vec();
    if !cpus.is_empty() {
        let n = round % cpus.len();
        cpus.rotate_left(n);
    }
    cpus
}

/// The client's and the server's CPUs under `placement`, from the CPUs this
/// process may use: `None` for free placement; an error when `split` has fewer
/// than two CPUs to use.
pub fn cpus_for(placement: Placement, allowed: &[usize]) -> Result<Option<(usize, usize)>, String> {
    match (placement, allowed) {
        (Placement::Free, _) => Ok(None),
        (_, []) => Err("cannot read which CPUs sockbench may use".into()),
        (Placement::Same, [first, ..]) => Ok(Some((*first, *first))),
        (Placement::Split, [first, second, ..]) => Ok(Some((*first, *second))),
        (Placement::Split, [_]) => Err(
            "--placement split needs two CPUs, and sockbench may use only one here; use \
             --placement same or free"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_choose_cpus_from_those_allowed() {
        assert_eq!(cpus_for(Placement::Free, &[0, 1]), Ok(None));
        assert_eq!(cpus_for(Placement::Same, &[2, 3]), Ok(Some((2, 2))));
        assert_eq!(cpus_for(Placement::Split, &[2, 3]), Ok(Some((2, 3))));
        assert!(cpus_for(Placement::Split, &[0])
            .unwrap_err()
            .contains("two CPUs"));
    }

    #[test]
    fn pinned_placements_move_to_the_next_cpu_every_round() {
        assert_eq!(rotated(&[0, 1], 0), [0, 1]);
        assert_eq!(rotated(&[0, 1], 1), [1, 0]);
        assert_eq!(rotated(&[0, 1], 2), [0, 1]);
        assert_eq!(rotated(&[2, 5, 7], 4), [5, 7, 2]);
        assert!(rotated(&[], 3).is_empty());
        let same = |r| cpus_for(Placement::Same, &rotated(&[0, 1], r));
        assert_eq!((same(0), same(1)), (Ok(Some((0, 0))), Ok(Some((1, 1)))));
        let split = |r| cpus_for(Placement::Split, &rotated(&[0, 1], r));
        assert_eq!((split(0), split(1)), (Ok(Some((0, 1))), Ok(Some((1, 0)))));
    }

    #[test]
    fn threads_that_end_while_a_process_is_pinned_are_passed_over() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::spawn(|| {}).join().unwrap();
                }
            })
        };
        for _ in 0..200 {
            pin_process(std::process::id(), allowed()).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        churn.join().unwrap();
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned() {
        let cpus = allowed();
        assert!(!cpus.is_empty());
        let before = cpus.to_vec();
        let last = *cpus.last().unwrap();
        std::thread::spawn(move || {
            pin(0, &[last]).unwrap();
            std::thread::yield_now();
            assert_eq!(current_cpu(), Some(last as u32));
        })
        .join()
        .unwrap();
        assert_eq!(allowed(), before, "the first answer stays");
    }
}
