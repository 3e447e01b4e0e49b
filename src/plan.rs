//! What every measuring command's plan shares: the arguments every one of them
//! takes, the number of rounds, the default transports. Each family's `plan.rs`
//! turns its raw arguments into a validated plan.
//!
//! Every check that can fail on bad input happens in a plan, before any server
//! starts, so a typo costs one clear line and no waiting.

use crate::cpu::affinity::{self, Placement};
use crate::error::usage;
use crate::harness::aggregate::record;
use crate::harness::estimate::Timing;
use crate::harness::{self, Case, Progress, Rounds, Runner, Schedule};
use crate::report::experiment::Description;
use crate::results::paired::pair;
use crate::results::{Params, ResultRecord};
use crate::transport::{TlsInfo, Transport};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// What runs when `--transports` is not given.
pub const DEFAULT_TRANSPORTS: [Transport; 3] = [Transport::Unix, Transport::Tcp, Transport::Tls];
const MAX_TRIALS: u32 = 1_000;

/// Rounds without `--trials`: at least `min`, then more until settled, at most `max`
/// or `time_factor` times the time of the first `min`.
const DEFAULT_ROUNDS: Rounds = Rounds {
    min: 5,
    max: 20,
    time_factor: 3.0,
};
/// The same with `--quick` (and in `run`): more, shorter rounds (each family's
/// quick budget is half what it was with 3), as the t quantile alone falls from
/// 4.30 at 3 rounds to 2.57 at 6; rounds past the sixth only while the experiment
/// stays within 1.25 times its first six (one more while every case is open), to
/// keep `run` within its two minutes.
const QUICK_ROUNDS: Rounds = Rounds {
    min: 6,
    max: 16,
    time_factor: 1.25,
};

/// The rounds: exactly `--trials N` when given, else until settled.
pub fn rounds(given: Option<u32>, quick: bool) -> Result<Rounds> {
    match given {
        Some(n) if !(1..=MAX_TRIALS).contains(&n) => Err(usage(format!(
            "--trials must be between 1 and {MAX_TRIALS}, not {n}"
        ))),
        Some(n) => Ok(Rounds::fixed(n)),
        None if quick => Ok(QUICK_ROUNDS),
        None => Ok(DEFAULT_ROUNDS),
    }
}

/// The placements to measure, each once, checked against the CPUs this process
/// may use: `default` when none are given, falling back to `free` where it cannot
/// be (one CPU for `split`, or none readable).
pub fn placements(given: &[Placement], default: Placement) -> Result<Vec<Placement>> {
    if given.is_empty() {
        let usable = affinity::cpus_for(default, affinity::allowed()).is_ok();
        return Ok(vec![if usable { default } else { Placement::Free }]);
    }
    let placements = { distinct("--placement", given)? };
    for &p in &placements {
        affinity::cpus_for(p, affinity::allowed()).map_err(usage)?;
    }
    Ok(placements)
}

/// `--help`'s account of the rounds.
fn rounds_help() -> String {
    let (d, q) = (DEFAULT_ROUNDS, QUICK_ROUNDS);
    format!(
        "Run exactly N rounds (every measurement once per round, transports in turn). \
         Without it: at least {} rounds, then more rounds of the cases whose headline \
         95% interval is not yet within ±{:.0}%, at most {} rounds or {}x the time of the first {} \
         (with --quick: {}, {}, {}x); then one counting trial of each with kernel counters \
         (switches, migrations, instructions, and the kernel's events per operation \
         and CPU by layer), whose time is not used. A trial disturbed by other processes \
         runs again (at most {} times) while the run stays within {}x its expected time; \
         the line printed before measuring says how long that is. Intervals: {}",
        d.min,
        crate::stats::SETTLED * 100.0,
        d.max,
        d.time_factor,
        d.min,
        q.min,
        q.max,
        q.time_factor,
        crate::cpu::load::RETRIES,
        crate::harness::estimate::BUSY_FACTOR,
        crate::stats::INTERVAL_METHOD,
    )
}

/// The items of a list argument, refused when one is given twice: a repeated
/// item is more likely a typo for another than a wish to measure it twice, so it is
/// not quietly dropped.
pub fn distinct<T: PartialEq + Clone + std::fmt::Display>(
    flag: &str,
    items: &[T],
) -> Result<Vec<T>> {
    for (i, item) in items.iter().enumerate() {
        if items[..i].contains(item) {
            return Err(usage(format!(
                "{flag} names {} twice; give each once",
                crate::units::shown(&item.to_string())
            )));
        }
    }
    Ok(items.to_vec())
}

/// The longest NAME a `--url NAME=…` files its results under.
pub const MAX_NAME: usize = 64;

/// Checks the NAME of a `--url NAME=…`, in every family: 1 to [`MAX_NAME`]
/// letters, digits, `-`, `_` and `.`, so that it stays one word in every table,
/// file, chart and message, and holds no control character and no part of a URL.
/// The error says what a name may hold, echoing it with its control characters
/// escaped (each family adds its flag and an example).
/// `transports` without those into a container this machine cannot build (not
/// root, a program missing), each left out with one line on standard error that
/// names `family`; none left is bad input that says why.
pub fn buildable(family: &str, transports: Vec<Transport>) -> Result<Vec<Transport>> {
    let mut why_not = Vec::new();
    let kept: Vec<Transport> = transports
        .into_iter()
        .filter(
            |t| match t.crossing().and_then(crate::container::Network::missing) {
                Some(why) => {
                    eprintln!("{family}: {t} left out: {why}");
                    why_not.push(why);
                    false
                }
                None => true,
            },
        )
        .collect();
    if kept.is_empty() {
        why_not.dedup();
        return Err(usage(format!(
            "no transport asked for can be measured here: {}",
            why_not.join("; ")
        )));
    }
    Ok(kept)
}

pub fn url_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    match name.len() {
        n if plain && n <= MAX_NAME => Ok(()),
        n if plain => Err(format!(
            "the NAME before = is {n} characters long; use at most {MAX_NAME}"
        )),
        _ => Err(format!(
            "the NAME before = must be 1 to {MAX_NAME} letters, digits, '-', '_' or '.', \
             not '{}'",
            crate::units::shown(&name.escape_debug().to_string())
        )),
    }
}

/// Open files a process may hold: the soft limit is raised to the hard one at
/// start (`main`), so this is what is left after that.
fn open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the struct it is given.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (got == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Descriptors besides one per client: standard streams, listeners, result file,
/// perf counters, /proc readers, libpq's and the TLS library's own.
const SPARE_FILES: u64 = 64;

/// `clients` connections at once fit in this process's open-file limit (and so in
/// the server child's, which inherits it); checked before anything starts, since
/// past the limit connections fail only once the clients are set up.
pub fn check_open_files(flag: &str, clients: u64) -> Result<()> {
    let needed = clients + SPARE_FILES;
    match open_file_limit() {
        Some(limit) if limit < needed => Err(usage(format!(
            "{flag} {clients} needs about {needed} open files, but this process may open \
             only {limit} (its hard limit, `ulimit -Hn`); raise it (e.g. `ulimit -n {}` as \
             root) or ask for fewer clients",
            needed.next_power_of_two()
        ))),
        _ => Ok(()),
    }
}

/// The arguments of every measuring command.
#[derive(Debug, Clone, Default, Args)]
pub struct Measuring {
    /// Rounds of every measurement [default: see `Measuring::with_defaults`].
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Shorter timed loops and smaller batches, and fewer rounds unless --trials is given.
    #[arg(long)]
    pub quick: bool,

    /// Where client and server run: free (as the OS schedules), same (both pinned to
    /// one CPU), split (pinned to two different CPUs). Several make one table each.
    /// A server sockbench starts is pinned with every thread and process it starts;
    /// on your PostgreSQL server, the backend of each of sockbench's connections
    /// (new connections run free: their backends come from your postmaster); your
    /// Redis server or `sockbench serve` only when you ask, put back as it was
    /// after. [default: same, where sockbench can pin the server without touching
    /// what serves others; free for `redis --url` and `sockets --server`]. The
    /// system facts say what a round trip across two CPUs adds on this machine.
    #[arg(long, value_name = "PLACEMENT", value_delimiter = ',')]
    pub placement: Vec<Placement>,

    #[command(flatten)]
    pub output: Output,
}

/// Where the results go and what is printed while measuring: the same for `run`
/// and every family's command.
#[derive(Debug, Clone, Default, Args)]
pub struct Output {
    /// Write the results to FILE as JSON, rewritten as each experiment finishes
    /// [default: sockbench-results/<start time>.json for `run`; no file for a
    /// family's command]. `-` writes them to standard output once the run ends
    /// (what finished, if interrupted), and what is printed for a person goes to
    /// standard error instead; `./-` names a file called `-`.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Print each experiment's full tables as it finishes, instead of one line per
    /// case (`sockbench report FILE` shows them from the result file at any time).
    #[arg(long)]
    pub tables: bool,

    /// No progress line (it is also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
}

impl Measuring {
    /// The quick suite, as `run` measures it: client and server pinned to one CPU,
    /// a different one each round. Placed freely, a round trip's time is bimodal on
    /// 2 cores (client and server on one CPU, or each on its own with a wakeup
    /// across: 16 µs or 25 µs for a 64 B tcp round trip), and which mode a trial
    /// gets differs from target to target within a round and from run to run, so
    /// the paired ratios did not hold from one run to the next.
    pub fn quick() -> Measuring {
        Measuring {
            quick: true,
            placement: vec![Placement::Same],
            ..Measuring::default()
        }
    }
}

impl Measuring {
    /// A measuring command whose `--help` states the defaults this build uses.
    pub fn with_defaults(command: clap::Command) -> clap::Command {
        command.mut_arg("trials", |a| a.help(rounds_help()))
    }
}

/// Runs every round of one experiment of a family whose cases all run on every
/// target (`labels`, in the runner's order, with the TLS each negotiated) and builds
/// its records, paired.
pub fn measure_experiment(
    experiment: &Description,
    cases: &[Params],
    labels: &[&str],
    tls: &[Option<TlsInfo>],
    timing: Timing,
    runner: &mut dyn Runner,
    progress: &dyn Progress,
) -> Result<Vec<ResultRecord>> {
    let all: Vec<usize> = (0..labels.len()).collect();
    let cases: Vec<(Params, Vec<usize>)> = cases.iter().map(|p| (p.clone(), all.clone())).collect();
    let per_case = run_cases(experiment, &cases, labels, tls, timing, runner, progress)?;
    let mut records: Vec<ResultRecord> = per_case.into_iter().flatten().collect();
    pair(&mut records, &experiment.headline);
    Ok(records)
}

/// Runs every round of `experiment`'s cases, each (its parameters) on the targets
/// it lists (indices into `labels` and `tls`, in the runner's order), and builds
/// the records: for each case, one per target it lists, in that order, not yet
/// paired (a family may first add what it knows of each).
pub fn run_cases(
    experiment: &Description,
    cases: &[(Params, Vec<usize>)],
    labels: &[&str],
    tls: &[Option<TlsInfo>],
    timing: Timing,
    runner: &mut dyn Runner,
    progress: &dyn Progress,
) -> Result<Vec<Vec<ResultRecord>>> {
    let schedule = Schedule::new(
        experiment.id,
        cases
            .iter()
            .map(|(params, targets)| {
                Case::new(experiment.case_label(params), targets.clone(), params)
            })
            .collect(),
        timing,
        experiment.headline,
    );
    let grid = harness::run(&schedule, runner, progress)?;
    let (id, headline) = (experiment.id, &experiment.headline);
    let records = cases
        .iter()
        .zip(grid)
        .map(|((params, targets), per_target)| {
            (targets.iter().zip(per_target))
                .map(|(&t, trials)| record(id, headline, params, labels[t], trials, tls[t].clone()))
                .collect()
        });
    Ok(records.collect())
}
