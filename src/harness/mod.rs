//! The one scheduler every suite runs its trials through, and what timed loops share.
//!
//! An experiment is a [`Schedule`] (its cases, each over some targets, and how many
//! rounds) and a [`Runner`] that knows how to run one trial of one case on one
//! target. [`run`] does the rest the same way for every server family: rounds ×
//! cases × targets, the target that goes first rotated from round to round (so slow
//! drift in the machine spreads over all targets instead of landing on one),
//! optional warm-up rounds that are run and thrown away, a check for Ctrl-C before
//! and after every trial, and progress between trials, never inside one.
//!
//! [`aggregate`] turns the trials into result records; [`measure`] holds the helpers
//! of the timed loops themselves; [`threads`] runs clients on threads of their own.

pub(crate) mod aggregate;
pub mod estimate;
mod layout;
pub(crate) mod measure;
mod settle;
#[cfg(test)]
mod tests;
pub(crate) mod threads;

use crate::cpu::affinity::{self, Placement};
use crate::cpu::load::{Snapshot, RETRIES};
use crate::cpu::{Meter, ServerRole};
use crate::results::metric::Metric;
use crate::results::params::PLACEMENT;
use crate::results::{Params, ResultRecord, Trial};
use anyhow::{Context, Result};
use estimate::{Allowance, ExperimentTime, Timing};
use std::time::{Duration, Instant};

/// What the scheduler reports between trials; the terminal's progress bar is one.
pub trait Progress {
    /// Starts an experiment of `steps` trials.
    fn begin(&self, experiment: &str, steps: u64);
    /// Counts the trial about to start and says what it is.
    fn step(&self, what: String);
    /// Adds `steps` trials to the experiment: a round more, to settle its intervals.
    fn grow(&self, _steps: u64) {}
    /// Says what happens while no trial runs, e.g. a server starting.
    fn note(&self, text: &str);
}

/// Progress nobody sees.
#[cfg(test)]
pub struct Silent;

#[cfg(test)]
impl Progress for Silent {
    fn begin(&self, _: &str, _: u64) {}
    fn step(&self, _: String) {}
    fn note(&self, _: &str) {}
}

/// Where each finished experiment goes: the result file, then the terminal.
pub trait Sink {
    /// Takes one experiment's records, or the failure that ended it.
    fn keep(&mut self, records: Result<Vec<ResultRecord>>) -> Result<()>;
}

/// One case of an experiment (a message size, a client count, an authentication
/// method …) and the targets it runs on, as indices into the runner's targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// How progress and errors name the case; empty when there is only one.
    pub label: String,
    pub targets: Vec<usize>,
    /// Where client and server run during its trials.
    pub placement: Placement,
}

impl Case {
    /// A case placed as its parameters say (free when they do not).
    pub fn new(label: String, targets: Vec<usize>, params: &Params) -> Case {
        let placement = params.get(PLACEMENT).unwrap_or(Placement::Free);
        Case {
            label,
            targets,
            placement,
        }
    }
}

/// Every case once per placement, its parameters naming it; with only `free`,
/// the cases as they are.
pub fn placed<T: Clone>(
    cases: Vec<T>,
    placements: &[Placement],
    params: impl Fn(&mut T) -> &mut Params,
) -> Vec<T> {
    if placements == [Placement::Free] {
        return cases;
    }
    placements
        .iter()
        .flat_map(|p| {
            cases.iter().cloned().map(|mut case| {
                params(&mut case).set(PLACEMENT, *p);
                case
            })
        })
        .collect()
}

/// How many measured rounds an experiment runs: every case on every one of its
/// targets once per round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounds {
    /// Always run.
    pub min: u32,
    /// Never more.
    pub max: u32,
    /// After `min` rounds, another one only while the whole experiment stays within
    /// this multiple of the time its first `min` rounds took.
    pub time_factor: f64,
}

impl Rounds {
    /// Exactly `n` rounds.
    pub fn fixed(n: u32) -> Rounds {
        Rounds {
            min: n,
            max: n,
            time_factor: 1.0,
        }
    }
}

/// The trials of one experiment.
pub struct Schedule<'a> {
    /// The experiment, as progress and errors name it (`sockets.pingpong`).
    pub experiment: &'a str,
    pub cases: Vec<Case>,
    pub rounds: Rounds,
    /// The figure whose intervals decide whether more rounds are needed; without
    /// one, `rounds.min` rounds run.
    pub settle_on: Option<Metric>,
    /// Rounds run first and thrown away.
    pub warmup_rounds: u32,
    /// How many counting trials of every case on every target follow the rounds
    /// (none where no kernel counters are permitted).
    pub counting_rounds: u32,
    /// Says whether to stop: `Err` once the user asked to (Ctrl-C).
    pub stop: fn() -> Result<()>,
    /// The time one trial is expected to take, for the experiment's time allowance
    /// ([`estimate::Allowance`]), and what it spends besides its timed loop.
    pub trial: Duration,
    pub around: Duration,
    /// How outside load during a trial is seen.
    pub watch: Watch,
}

/// How the scheduler sees outside load during a trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Watch {
    /// The machine's own account (`cpu::load::Snapshot`).
    Machine,
    /// The same load for every trial, whatever the machine does (tests).
    #[cfg(test)]
    Fixed(crate::cpu::load::CpuLoad),
}

impl<'a> Schedule<'a> {
    /// `timing.rounds` of `cases`, each trial expected to take `timing.trial`, settled on
    /// `headline`, no warm-up round, stopped by Ctrl-C.
    pub fn new(
        experiment: &'a str,
        cases: Vec<Case>,
        timing: Timing,
        headline: Metric,
    ) -> Schedule<'a> {
        let counting = counting_rounds();
        if counting == 0 {
            // Without a counting trial, no collector is opened to say so itself.
            crate::cpu::why::collect::note("no kernel counters are permitted");
        }
        Schedule {
            experiment,
            cases,
            rounds: timing.rounds,
            settle_on: Some(headline),
            warmup_rounds: 0,
            counting_rounds: counting,
            stop: crate::interrupt::check,
            trial: timing.trial,
            around: timing.around,
            watch: Watch::Machine,
        }
    }

    /// Its trials, as far as time goes.
    pub fn work(&self) -> ExperimentTime {
        ExperimentTime {
            trials_per_round: self.steps_per_round(),
            trial: self.trial,
            around: self.around,
            rounds: self.rounds,
            warmup_rounds: self.warmup_rounds,
            counting_rounds: self.counting_rounds,
        }
    }

    /// The trials of one round.
    pub fn steps_per_round(&self) -> u64 {
        self.cases.iter().map(|c| c.targets.len() as u64).sum()
    }
}

/// Runs the trials of one experiment.
pub trait Runner {
    /// How progress and errors name a target (`tcp`, or a URL's name).
    fn target_label(&self, target: usize) -> String;
    /// The server's side of `target`: each process sockbench started (or the
    /// user's found on this machine), named by its role: its CPU is counted (with
    /// the threads and processes it starts) and it is placed as `--placement` says.
    /// Empty when there is none to count. (A target may have servers of its own: a
    /// proxy's app server started once per transport.)
    fn server_roles(&self, _target: usize) -> Vec<ServerRole> {
        Vec::new()
    }
    /// False when the server runs on this machine but not in `server_roles`: its CPU
    /// cannot be told apart from outside load, so no trial's load is recorded and none
    /// is run again for it.
    fn outside_load_known(&self) -> bool {
        true
    }
    /// False when `server_roles` is a user's server counted but not to be placed:
    /// one that serves others, under free placement.
    fn places_server(&self) -> bool {
        true
    }
    /// Called before each case's trials in every round, e.g. to switch the server's
    /// authentication method.
    fn enter(&mut self, _case: usize) -> Result<()> {
        Ok(())
    }
    /// One trial of `case` on `target`; the experiment starts and stops `meter`
    /// around its timed loop.
    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial>;
}

/// The trials of every case on every one of its targets:
/// `trials[case][k][round]`, `k` in the order of the case's `targets`.
pub type Grid = Vec<Vec<Vec<Trial>>>;

/// Runs the rounds of `schedule` and returns the measured trials: at least
/// `rounds.min` of every case, then more rounds of the cases whose headline
/// interval is still wider than ±5%, while the time and round limits allow. A
/// settled case runs no more rounds: its time goes to those still open.
pub fn run(schedule: &Schedule, runner: &mut dyn Runner, progress: &dyn Progress) -> Result<Grid> {
    let rounds = schedule.rounds;
    progress.begin(
        schedule.experiment,
        schedule.steps_per_round() * u64::from(rounds.min),
    );
    let mut grid: Grid = schedule
        .cases
        .iter()
        .map(|c| vec![Vec::new(); c.targets.len()])
        .collect();
    let mut allowance = Allowance::start(&schedule.work());
    let all = vec![true; schedule.cases.len()];
    for round in 0..schedule.warmup_rounds {
        let mut trials = Trials::new(runner, &mut allowance, true);
        run_round(
            schedule,
            &mut trials,
            progress,
            round,
            None,
            &all,
            &mut grid,
        )?;
    }
    // Seconds each case's rounds took so far, to foresee the next round's time.
    let mut spent = vec![0.0; schedule.cases.len()];
    let mut first = 0.0;
    let mut done = 0;
    while done < rounds.max {
        let mut open = all.clone();
        if done >= rounds.min {
            if done == rounds.min {
                first = spent.iter().sum();
            }
            if let Some(metric) = &schedule.settle_on {
                open = settle::settled(schedule, runner, metric, &grid)
                    .iter()
                    .map(|s| !s)
                    .collect();
            } else {
                break;
            }
            let next: f64 = (0..open.len())
                .filter(|&c| open[c])
                .map(|c| spent[c] / grid[c][0].len().max(1) as f64)
                .sum();
            let elapsed: f64 = spent.iter().sum();
            if !open.contains(&true)
                || elapsed + next > first * rounds.time_factor
                || !allowance.room_for(next)
            {
                break;
            }
            let steps = schedule
                .cases
                .iter()
                .zip(&open)
                .filter(|(_, o)| **o)
                .map(|(c, _)| c.targets.len() as u64)
                .sum();
            progress.grow(steps);
        }
        let mut trials = Trials::new(runner, &mut allowance, done < rounds.min);
        let took = run_round(
            schedule,
            &mut trials,
            progress,
            schedule.warmup_rounds + done,
            Some(done),
            &open,
            &mut grid,
        )?;
        for (s, t) in spent.iter_mut().zip(took) {
            *s += t;
        }
        done += 1;
    }
    if schedule.counting_rounds > 0 {
        // Keeps each trial's tracepoint counters cheap to close.
        let _held = crate::cpu::why::events::hold();
        progress.grow(schedule.steps_per_round() * u64::from(schedule.counting_rounds));
        for _ in 0..schedule.counting_rounds {
            counting_round(schedule, runner, progress, &mut grid)?;
            allowance.ran_round(schedule.steps_per_round());
        }
    }
    Ok(grid)
}

/// The runner with the experiment's time allowance, for one round: `planned` when
/// the round is one the estimate counted (warm-up and minimum rounds).
struct Trials<'r, 'a> {
    runner: &'r mut dyn Runner,
    allowance: &'a mut Allowance,
    planned: bool,
}

impl<'r, 'a> Trials<'r, 'a> {
    fn new(runner: &'r mut dyn Runner, allowance: &'a mut Allowance, planned: bool) -> Self {
        Trials {
            runner,
            allowance,
            planned,
        }
    }
}

/// Counting rounds after the measured ones. The kernel's account samples where
/// each layer's CPU time goes, and one trial's split moves by 15-20 points from
/// one trial to the next; several trials give each layer an interval. They run
/// after the rounds, never in them: sampling takes an interrupt every 50 µs of
/// CPU, and counters cost at every context switch, which would be timed. Four
/// give Student's t three degrees of freedom (3.18, against 4.30 with three
/// trials and 2.78 with five). Measured with five on 2 shared cores under a load
/// average of 10-15: `sockbench run` took 341, 349 and 374 s with one counting
/// round, 403, 384 and 445 s with five (+16%, about 14 s per added round there,
/// where the run is 3.4 times its quiet 105 s: about 4 s per round when quiet).
/// Five would take the quiet run to about 121 s, past the two minutes the README
/// promises; four to about 117 s.
pub const COUNTING_ROUNDS: u32 = 4;

/// The counting rounds every experiment runs here: none where no kernel counters
/// are permitted.
pub fn counting_rounds() -> u32 {
    if crate::cpu::counters::available() == crate::cpu::counters::CountedBy::Proc {
        0
    } else {
        COUNTING_ROUNDS
    }
}

/// One trial of every case on every target with kernel counters on, appended to
/// the grid as counting trials.
fn counting_round(
    schedule: &Schedule,
    runner: &mut dyn Runner,
    progress: &dyn Progress,
    grid: &mut Grid,
) -> Result<()> {
    for (c, case) in schedule.cases.iter().enumerate() {
        (schedule.stop)()?;
        runner.enter(c)?;
        for (slot, &target) in case.targets.iter().enumerate() {
            (schedule.stop)()?;
            let label = runner.target_label(target);
            progress.step(
                format!("{} {label} counting", case.label)
                    .trim()
                    .to_string(),
            );
            let server = runner.server_roles(target);
            let placed = placed_roles(&server, &*runner);
            let server_cpus = place(case.placement, placed, 0)?;
            let mut meter = Meter::counters(&server).with_server_at(server_cpus);
            let mut trial = runner.trial(c, target, &mut meter).with_context(|| {
                format!(
                    "{} over {label} failed in its counting trial",
                    schedule.experiment
                )
            })?;
            (schedule.stop)()?;
            trial.metrics.cpu = meter.take();
            trial.counting = true;
            grid[c][slot].push(trial);
        }
    }
    Ok(())
}

/// One trial with its CPU cost and the load of the rest of the machine; run again
/// (up to [`RETRIES`] times) while outside load disturbs it and the experiment's
/// time allowance has room for another run. The last run is kept, marked when it
/// was disturbed too (and when it was kept for want of time). `round` chooses the
/// CPUs of a pinned placement.
fn measured_trial(
    schedule: &Schedule,
    trials: &mut Trials,
    case: usize,
    target: usize,
    round: u32,
) -> Result<Trial> {
    let runner = &mut *trials.runner;
    let server = runner.server_roles(target);
    let placed = placed_roles(&server, &*runner);
    let server_cpus = place(schedule.cases[case].placement, placed, round)?;
    let mut reruns = 0;
    loop {
        let started = Instant::now();
        let before = Snapshot::take(&server);
        let mut meter = Meter::times(&server).with_server_at(server_cpus.clone());
        let mut trial = layout::shifted(round, || runner.trial(case, target, &mut meter))?;
        trial.metrics.cpu = meter.take();
        let adopted = meter.adopted_cpu_ns();
        trial.load = match schedule.watch {
            Watch::Machine => before
                .filter(|_| runner.outside_load_known())
                .and_then(|b| b.until_besides(&Snapshot::take(&server)?, adopted)),
            #[cfg(test)]
            Watch::Fixed(load) => Some(load),
        };
        trial.disturbed = trial.load.is_some_and(|l| l.disturbed());
        trial.reruns = reruns;
        if trial.disturbed {
            trials.allowance.saw_load();
        }
        let settled = !trial.disturbed || reruns == RETRIES;
        let cut = !settled
            && !trials
                .allowance
                .room_for_rerun(started.elapsed().as_secs_f64());
        if settled || cut {
            trial.cut = cut;
            if trials.planned {
                trials.allowance.ran();
            }
            return Ok(trial);
        }
        (schedule.stop)()?;
        reruns += 1;
    }
}

/// Pins the calling thread (the client, and the client threads it starts) and the
/// server process (with what it starts) as `placement` says; `free` lets both run
/// anywhere they may. A pinned placement moves to the next CPU every round
/// ([`affinity::rotated`]): every target of a round sees the same CPUs, so the
/// round's ratio compares like with like, and the rounds together sample each
/// CPU and what else runs there, which otherwise differs from one run to the next.
/// Returns the server's CPUs under a pinned placement, for the processes of a
/// user's server a trial finds once connected ([`crate::cpu::ServerSide::adopt`]).
/// The roles the harness places: all of them, or none when the runner's server is
/// a user's not to be placed.
fn placed_roles<'a>(server: &'a [ServerRole], runner: &dyn Runner) -> &'a [ServerRole] {
    if runner.places_server() {
        server
    } else {
        &[]
    }
}

fn place(placement: Placement, server: &[ServerRole], round: u32) -> Result<Option<Vec<usize>>> {
    let allowed = affinity::rotated(affinity::allowed(), round as usize);
    let allowed = &allowed[..];
    let (client, server_cpus, pinned) = match affinity::cpus_for(placement, allowed) {
        Ok(Some((c, s))) => (vec![c], vec![s], true),
        Ok(None) => (allowed.to_vec(), allowed.to_vec(), false),
        Err(e) => anyhow::bail!(e),
    };
    affinity::pin(0, &client).context("cannot place the client")?;
    for role in server {
        role.pin(&server_cpus)
            .with_context(|| format!("cannot place the {} (process {})", role.name, role.pid))?;
    }
    Ok(pinned.then_some(server_cpus))
}

/// One round: every case that is `open` on every one of its targets, the first
/// target rotated by `round`. `measured` is the measured round's number, `None` for
/// a warm-up round. Returns the seconds each case took (0 for those not run).
fn run_round(
    schedule: &Schedule,
    trials: &mut Trials,
    progress: &dyn Progress,
    round: u32,
    measured: Option<u32>,
    open: &[bool],
    grid: &mut Grid,
) -> Result<Vec<f64>> {
    let mut took = vec![0.0; schedule.cases.len()];
    for (c, case) in schedule.cases.iter().enumerate() {
        if !open[c] {
            continue;
        }
        let start = Instant::now();
        (schedule.stop)()?;
        trials.runner.enter(c)?;
        let n = case.targets.len();
        for k in 0..n {
            let slot = (k + round as usize) % n;
            let target = case.targets[slot];
            (schedule.stop)()?;
            let label = trials.runner.target_label(target);
            if let Some(r) = measured {
                let what = if case.label.is_empty() {
                    label.clone()
                } else {
                    format!("{} {label}", case.label)
                };
                progress.step(format!("{what} round {}", r + 1));
            }
            let trial = measured_trial(schedule, trials, c, target, round).with_context(|| {
                let case = if case.label.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", case.label)
                };
                match measured {
                    Some(r) => format!(
                        "{}{case} over {label} failed in trial {}",
                        schedule.experiment,
                        r + 1
                    ),
                    None => format!(
                        "{}{case} over {label} failed in a warm-up round",
                        schedule.experiment
                    ),
                }
            })?;
            // A signal during the last trial must not pass for a finished one.
            (schedule.stop)()?;
            if measured.is_some() {
                grid[c][slot].push(trial);
            }
        }
        took[c] = start.elapsed().as_secs_f64();
    }
    Ok(took)
}
