//! The scheduler against a fake target: no sockets, no clock, every outcome known.

use super::aggregate::record;
use super::*;
use crate::cpu::Meter;
use crate::results::metric::{Better, Metric, Unit};
use crate::results::paired::pair;
use crate::results::{Metrics, Params};
use anyhow::bail;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// A target whose trial `i` (counting every call) measures `values[i]` operations per
/// second; it logs every call as (case, target) and can fail on a chosen call.
struct Fake {
    labels: Vec<&'static str>,
    values: Vec<f64>,
    calls: Vec<(usize, usize)>,
    entered: Vec<usize>,
    fail_on: Option<usize>,
}

impl Fake {
    fn new(labels: &[&'static str], values: &[f64]) -> Fake {
        Fake {
            labels: labels.to_vec(),
            values: values.to_vec(),
            calls: Vec::new(),
            entered: Vec::new(),
            fail_on: None,
        }
    }
}

impl Runner for Fake {
    fn target_label(&self, target: usize) -> String {
        self.labels[target].to_string()
    }

    fn enter(&mut self, case: usize) -> Result<()> {
        self.entered.push(case);
        Ok(())
    }

    fn trial(&mut self, case: usize, target: usize, _: &mut Meter) -> Result<Trial> {
        let i = self.calls.len();
        self.calls.push((case, target));
        if self.fail_on == Some(i) {
            bail!("the fake server went away");
        }
        Ok(Trial {
            metrics: Metrics::default()
                .with(CONN_PER_S, self.values.get(i).copied().unwrap_or(1.0)),
            count: 1,
            ..Trial::default()
        })
    }
}

/// Progress that remembers what it was told.
#[derive(Default)]
struct Log {
    begun: RefCell<Vec<(String, u64)>>,
    steps: RefCell<Vec<String>>,
}

impl Progress for Log {
    fn begin(&self, experiment: &str, steps: u64) {
        self.begun.borrow_mut().push((experiment.into(), steps));
    }
    fn step(&self, what: String) {
        self.steps.borrow_mut().push(what);
    }
    fn note(&self, _: &str) {}
}

fn never() -> Result<()> {
    Ok(())
}

fn cases(labels: &[&str], targets: usize) -> Vec<Case> {
    labels
        .iter()
        .map(|l| Case::new(l.to_string(), (0..targets).collect(), &Params::default()))
        .collect()
}

const RATE: Metric = Metric::new("conn_per_s", Unit::Rate, Better::Higher);
const CONN_PER_S: crate::results::Key<f64> = crate::results::Key::new("conn_per_s");

/// `rounds` of trials expected to take a long time, so that no fake reaches the
/// time allowance.
fn timing(rounds: Rounds) -> estimate::Timing {
    estimate::Timing {
        rounds,
        trial: std::time::Duration::from_secs(3_600),
        around: std::time::Duration::ZERO,
    }
}

fn schedule(cases: Vec<Case>, rounds: u32) -> Schedule<'static> {
    Schedule {
        stop: never,
        counting_rounds: 0,
        ..Schedule::new("fake.connect", cases, timing(Rounds::fixed(rounds)), RATE)
    }
}

/// Up to `max` rounds, until settled, with no time limit a fake could reach.
fn until_settled(cases: Vec<Case>, min: u32, max: u32) -> Schedule<'static> {
    Schedule {
        stop: never,
        counting_rounds: 0,
        ..Schedule::new(
            "fake.connect",
            cases,
            timing(Rounds {
                min,
                max,
                time_factor: 1e9,
            }),
            RATE,
        )
    }
}

#[test]
fn rounds_stop_once_every_ratio_is_settled() {
    // tcp is always half as fast as unix, whatever the round: settled at the minimum.
    let values: Vec<f64> = (0..40)
        .map(|i| if i % 2 == 0 { 100.0 } else { 50.0 })
        .collect();
    let steady: Vec<f64> = (0..40)
        .map(|i| {
            let round = i / 2;
            // unix goes first in even rounds, tcp in odd ones.
            let unix_first = round % 2 == 0;
            let is_unix = (i % 2 == 0) == unix_first;
            let swing = 1.0 + (round % 3) as f64 * 0.5;
            if is_unix {
                100.0 * swing
            } else {
                50.0 * swing
            }
        })
        .collect();
    let mut fake = Fake::new(&["unix", "tcp"], &steady);
    let grid = run(&until_settled(cases(&[""], 2), 3, 10), &mut fake, &Silent).unwrap();
    assert_eq!(
        grid[0][0].len(),
        3,
        "a steady ratio settles in the minimum rounds"
    );

    // The same targets with a ratio that keeps jumping never settle: every round runs.
    let mut fake = Fake::new(&["unix", "tcp"], &values);
    let log = Log::default();
    let grid = run(&until_settled(cases(&[""], 2), 3, 10), &mut fake, &log).unwrap();
    assert_eq!(
        grid[0][0].len(),
        10,
        "an unsettled ratio runs to the maximum"
    );
    assert_eq!(log.steps.borrow().len(), 20);
    assert_eq!(log.steps.borrow()[19], "unix round 10");
}

#[test]
fn a_counting_trial_follows_the_rounds_and_stays_out_of_the_figures() {
    let mut fake = Fake::new(&["unix", "tcp"], &[100.0, 50.0, 50.0, 100.0, 1.0, 1.0]);
    let schedule = Schedule {
        counting_rounds: 1,
        ..schedule(cases(&[""], 2), 2)
    };
    let grid = run(&schedule, &mut fake, &Silent).unwrap();
    // Two rounds, then one counting trial per target, in the targets' order.
    assert_eq!(&fake.calls[4..], [(0, 0), (0, 1)]);
    let unix = &grid[0][0];
    assert_eq!(unix.len(), 3);
    assert!(unix[2].counting && !unix[0].counting && !unix[1].counting);
    let r = record(
        "fake.connect",
        &RATE,
        &Params::default(),
        "unix",
        unix.clone(),
        None,
    );
    assert_eq!(r.trials.len(), 2, "the counting trial is not a round");
    assert_eq!(r.headline.spread.median, 100.0, "nor part of the median");
}

#[test]
fn several_counting_rounds_follow_the_rounds_each_over_every_target() {
    let mut fake = Fake::new(
        &["unix", "tcp"],
        &[100.0, 50.0, 50.0, 100.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    );
    let schedule = Schedule {
        counting_rounds: 3,
        ..schedule(cases(&[""], 2), 2)
    };
    let grid = run(&schedule, &mut fake, &Silent).unwrap();
    assert_eq!(
        &fake.calls[4..],
        [(0, 0), (0, 1), (0, 0), (0, 1), (0, 0), (0, 1)]
    );
    let unix = &grid[0][0];
    assert_eq!(unix.iter().filter(|t| t.counting).count(), 3);
    assert!(!unix[0].counting && !unix[1].counting);
}

#[test]
fn rounds_stop_when_the_time_allowance_is_spent() {
    let values: Vec<f64> = (0..40)
        .map(|i| if i % 2 == 0 { 100.0 } else { 50.0 })
        .collect();
    let mut fake = Fake::new(&["unix", "tcp"], &values);
    let schedule = Schedule {
        rounds: Rounds {
            min: 3,
            max: 10,
            time_factor: 0.0,
        },
        ..until_settled(cases(&[""], 2), 3, 10)
    };
    let grid = run(&schedule, &mut fake, &Silent).unwrap();
    assert_eq!(grid[0][0].len(), 3);
}

#[test]
fn every_round_runs_each_case_on_every_target_first_one_rotating() {
    let mut fake = Fake::new(&["unix", "tcp", "tls"], &[]);
    let log = Log::default();
    let grid = run(&schedule(cases(&["64 B", "4 KiB"], 3), 3), &mut fake, &log).unwrap();
    let expected: Vec<(usize, usize)> = [
        // round 1 starts with target 0, round 2 with 1, round 3 with 2
        [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)],
        [(0, 1), (0, 2), (0, 0), (1, 1), (1, 2), (1, 0)],
        [(0, 2), (0, 0), (0, 1), (1, 2), (1, 0), (1, 1)],
    ]
    .concat();
    assert_eq!(fake.calls, expected);
    assert_eq!(fake.entered, [0, 1, 0, 1, 0, 1]);
    // trials[case][target][round], whatever order they ran in.
    assert_eq!(grid.len(), 2);
    assert!(grid.iter().flatten().all(|t| t.len() == 3));
    assert_eq!(*log.begun.borrow(), [("fake.connect".to_string(), 18)]);
    let steps = log.steps.borrow();
    assert_eq!(steps.len(), 18);
    assert_eq!(steps[0], "64 B unix round 1");
    assert_eq!(steps[17], "4 KiB tcp round 3");
}

#[test]
fn a_case_runs_only_on_its_own_targets() {
    let mut fake = Fake::new(&["unix", "tcp", "tls"], &[]);
    let mut cases = cases(&["trust", "peer"], 3);
    cases[1].targets = vec![0];
    let grid = run(&schedule(cases, 2), &mut fake, &Silent).unwrap();
    assert_eq!(fake.calls.iter().filter(|c| c.0 == 1).count(), 2);
    assert!(fake.calls.iter().all(|&(c, t)| c == 0 || t == 0));
    assert_eq!(grid[1].len(), 1);
}

#[test]
fn warm_up_rounds_run_but_are_not_kept() {
    let mut fake = Fake::new(&["unix", "tcp"], &[1.0, 2.0, 10.0, 20.0]);
    let log = Log::default();
    let mut s = schedule(cases(&[""], 2), 1);
    s.warmup_rounds = 1;
    let grid = run(&s, &mut fake, &log).unwrap();
    assert_eq!(fake.calls.len(), 4);
    // The measured round is the second: rotated to start with tcp (10), then unix (20).
    let kept = |t: usize| grid[0][t][0].metrics.get(CONN_PER_S);
    assert_eq!((kept(0), kept(1)), (Some(20.0), Some(10.0)));
    assert_eq!(
        log.steps.borrow().len(),
        2,
        "warm-up trials are not counted"
    );
}

static STOP: AtomicBool = AtomicBool::new(false);

fn stop_when_asked() -> Result<()> {
    if STOP.load(Ordering::SeqCst) {
        Err(crate::error::Interrupted::default().into())
    } else {
        Ok(())
    }
}

/// Asks to stop during its second trial, as a Ctrl-C would.
struct StopsMidway(Fake);

impl Runner for StopsMidway {
    fn target_label(&self, target: usize) -> String {
        self.0.target_label(target)
    }
    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        if self.0.calls.len() == 1 {
            STOP.store(true, Ordering::SeqCst);
        }
        self.0.trial(case, target, meter)
    }
}

#[test]
fn a_signal_during_a_trial_stops_the_run_right_after_it() {
    let mut runner = StopsMidway(Fake::new(&["unix", "tcp"], &[]));
    let s = Schedule {
        stop: stop_when_asked,
        ..schedule(cases(&[""], 2), 5)
    };
    let err = run(&s, &mut runner, &Silent).unwrap_err();
    STOP.store(false, Ordering::SeqCst);
    assert!(err.is::<crate::error::Interrupted>(), "{err:#}");
    // The trial the signal came in finished, and nothing ran after it.
    assert_eq!(runner.0.calls.len(), 2);
}

#[test]
fn a_failed_trial_names_experiment_case_target_and_round() {
    let mut fake = Fake::new(&["unix", "tcp"], &[]);
    fake.fail_on = Some(3);
    let err = run(&schedule(cases(&["10 clients"], 2), 3), &mut fake, &Silent).unwrap_err();
    // Call 3 is round 2's second trial: rotated, that is unix.
    assert_eq!(
        format!("{err:#}"),
        "fake.connect (10 clients) over unix failed in trial 2: the fake server went away"
    );
}

#[test]
fn trials_aggregate_into_paired_records() {
    // Calls alternate unix, tcp / tcp, unix / unix, tcp over three rounds.
    let values = [100.0, 40.0, 50.0, 90.0, 110.0, 60.0];
    let mut fake = Fake::new(&["unix", "tcp"], &values);
    let grid = run(&schedule(cases(&[""], 2), 3), &mut fake, &Silent).unwrap();
    let mut records: Vec<_> = grid[0]
        .iter()
        .zip(["unix", "tcp"])
        .map(|(trials, label)| {
            record(
                "fake.connect",
                &RATE,
                &Params::default(),
                label,
                trials.clone(),
                None,
            )
        })
        .collect();
    pair(&mut records, &RATE);
    assert_eq!(records[0].headline.spread.median, 100.0);
    // Paired by round, tcp took 100/40, 90/50 and 110/60 times unix's time per
    // connection; the reference has no ratio of its own.
    let versus = records[1].headline.vs_reference.as_ref().unwrap();
    assert_eq!(versus.reference, "unix");
    let geometric = (2.5f64 * 1.8 * (110.0 / 60.0)).powf(1.0 / 3.0);
    assert!((versus.ratio.estimate - geometric).abs() < 1e-9);
    assert!(versus.ratio.differs(), "{:?}", versus.ratio);
    assert!(!versus.ratio.settled());
    assert!(records[0].headline.vs_reference.is_none());
    assert!(!records[0].headline.settled && !records[1].headline.settled);
    assert_eq!(records[1].headline.spread.median, 50.0);
    assert!(
        records[1].headline.noisy,
        "40–60 around 50 is wider than 10%"
    );
}

#[test]
fn rounds_past_the_minimum_run_only_the_cases_still_open() {
    // Case "a": tcp always half as fast as unix (settled at the minimum); case "b":
    // a ratio that jumps every round (never settled). Calls go a, b in each round
    // until "a" settles, then only b.
    let mut fake = JumpingB::default();
    let grid = run(
        &until_settled(cases(&["a", "b"], 2), 3, 6),
        &mut fake,
        &Silent,
    )
    .unwrap();
    assert_eq!(grid[0][0].len(), 3, "the settled case stops at the minimum");
    assert_eq!(grid[1][0].len(), 6, "the open one runs to the maximum");
    assert_eq!(
        fake.calls.iter().filter(|(c, _)| *c == 0).count(),
        6,
        "no trial of the settled case after the minimum"
    );
}

#[test]
fn extra_rounds_stop_when_the_open_cases_would_pass_the_time_allowance() {
    // Only case "b" stays open; with an allowance of nothing past the first rounds,
    // no extra round runs even though one would be short.
    let mut fake = JumpingB::default();
    let schedule = Schedule {
        rounds: Rounds {
            min: 3,
            max: 6,
            time_factor: 1.0,
        },
        ..until_settled(cases(&["a", "b"], 2), 3, 6)
    };
    let grid = run(&schedule, &mut fake, &Silent).unwrap();
    assert_eq!((grid[0][0].len(), grid[1][0].len()), (3, 3));
}

/// Case 0 measures unix 100, tcp 50 every round; case 1 alternates its tcp
/// between 50 and 100, so its ratio never settles.
#[derive(Default)]
struct JumpingB {
    calls: Vec<(usize, usize)>,
}

impl Runner for JumpingB {
    fn target_label(&self, target: usize) -> String {
        ["unix", "tcp"][target].to_string()
    }

    fn trial(&mut self, case: usize, target: usize, _: &mut Meter) -> Result<Trial> {
        let b_rounds = self.calls.iter().filter(|c| **c == (1, 1)).count();
        self.calls.push((case, target));
        let value = match (case, target) {
            (_, 0) => 100.0,
            (0, _) => 50.0,
            _ if b_rounds % 2 == 0 => 50.0,
            _ => 100.0,
        };
        Ok(Trial {
            metrics: Metrics::default().with(CONN_PER_S, value),
            count: 1,
            ..Trial::default()
        })
    }
}

/// A target whose every trial takes `each` of wall time.
#[derive(Default)]
struct Slow {
    each: Duration,
    calls: usize,
    tcp: usize,
}

impl Runner for Slow {
    fn target_label(&self, target: usize) -> String {
        ["unix", "tcp"][target].to_string()
    }

    fn trial(&mut self, _: usize, target: usize, _: &mut Meter) -> Result<Trial> {
        self.calls += 1;
        std::thread::sleep(self.each);
        // unix 100; tcp 50 or 100 by turns, so the ratio never settles.
        let value = match target {
            0 => 100.0,
            _ => {
                self.tcp += 1;
                if self.tcp % 2 == 0 {
                    50.0
                } else {
                    100.0
                }
            }
        };
        Ok(Trial {
            metrics: Metrics::default().with(CONN_PER_S, value),
            count: 1,
            ..Trial::default()
        })
    }
}

use crate::cpu::load::CpuLoad;
use std::time::{Duration, Instant};

const BUSY: CpuLoad = CpuLoad {
    outside_cpus: 1.5,
    steal_cpus: 0.0,
};

/// Rounds of 2 targets whose trials are expected to take 100 ms each (with what
/// surrounds them), under the load `watch` reports.
fn slow_schedule(rounds: Rounds, watch: Watch) -> Schedule<'static> {
    let trial = Duration::from_millis(100) - estimate::TRIAL_OVERHEAD;
    Schedule {
        stop: never,
        counting_rounds: 0,
        watch,
        ..Schedule::new(
            "fake.connect",
            cases(&[""], 2),
            estimate::Timing {
                rounds,
                trial,
                around: Duration::ZERO,
            },
            RATE,
        )
    }
}

#[test]
fn reruns_for_outside_load_stop_at_the_busy_time_limit() {
    // 4 rounds of 2 trials of 100 ms: 0.8 s expected, 1.2 s at most when busy.
    // Every trial is disturbed: three tries each would take 2.4 s.
    let schedule = slow_schedule(Rounds::fixed(4), Watch::Fixed(BUSY));
    let work = schedule.work();
    assert!((work.expected_s() - 0.8).abs() < 1e-9);
    assert!((work.busy_s() - 1.2).abs() < 1e-9);
    let mut slow = Slow {
        each: Duration::from_millis(100),
        ..Slow::default()
    };
    let start = Instant::now();
    let grid = run(&schedule, &mut slow, &Silent).unwrap();
    let took = start.elapsed().as_secs_f64();
    let trials: Vec<&Trial> = grid.iter().flatten().flatten().collect();
    assert_eq!(trials.len(), 8, "every planned trial is kept");
    assert!(trials.iter().all(|t| t.disturbed));
    assert!(
        slow.calls < 8 * 3,
        "reruns stopped before all three tries: {} calls",
        slow.calls
    );
    assert!(slow.calls > 8, "the allowance left room for some reruns");
    assert!(trials.iter().any(|t| t.cut), "kept for want of time");
    assert!(trials.iter().all(|t| t.cut || t.reruns == RETRIES));
    // The last trial finds no room left: it is kept at its first try.
    let last = grid[0].iter().map(|t| t.last().unwrap());
    assert!(
        last.clone().any(|t| t.reruns == 0 && t.cut),
        "{:?}",
        slow.calls
    );
    // Sleeps only run long: the limit holds unless the machine stalls the test.
    assert!(took <= 1.2 + 0.2, "took {took:.2} s");
}

#[test]
fn a_quiet_machine_runs_each_trial_once() {
    let quiet = CpuLoad::default();
    let schedule = slow_schedule(Rounds::fixed(3), Watch::Fixed(quiet));
    let mut slow = Slow {
        each: Duration::from_millis(1),
        ..Slow::default()
    };
    let grid = run(&schedule, &mut slow, &Silent).unwrap();
    assert_eq!(slow.calls, 6);
    assert!(grid
        .iter()
        .flatten()
        .flatten()
        .all(|t| !t.cut && t.reruns == 0));
}

#[test]
fn once_the_machine_is_busy_extra_rounds_stop_at_the_busy_limit() {
    // Never settled (tcp jumps between half and all of unix's rate): quiet, the
    // rounds run to their maximum; busy, reruns and extra rounds stop at the limit.
    let rounds = Rounds {
        min: 3,
        max: 10,
        time_factor: 10.0,
    };
    let quiet = slow_schedule(rounds, Watch::Fixed(CpuLoad::default()));
    let mut slow = Slow {
        each: Duration::from_millis(10),
        ..Slow::default()
    };
    let grid = run(&quiet, &mut slow, &Silent).unwrap();
    assert_eq!(grid[0][0].len(), 10, "quiet: up to the maximum");

    let busy = slow_schedule(rounds, Watch::Fixed(BUSY));
    let work = busy.work();
    assert!((work.expected_s() - 0.6).abs() < 1e-9);
    assert!((work.busy_s() - 0.9).abs() < 1e-9);
    assert!((work.most_s() - 2.0).abs() < 1e-9, "{}", work.most_s());
    let mut slow = Slow {
        each: Duration::from_millis(100),
        ..Slow::default()
    };
    let start = Instant::now();
    let grid = run(&busy, &mut slow, &Silent).unwrap();
    let took = start.elapsed().as_secs_f64();
    assert_eq!(grid[0][0].len(), 3, "busy: no round past the minimum");
    assert!(took <= 0.9 + 0.2, "took {took:.2} s");
}

/// Records where each trial's stack lies: (round's first call, address of a local).
struct Stack {
    fake: Fake,
    at: Vec<usize>,
}

impl Runner for Stack {
    fn target_label(&self, target: usize) -> String {
        self.fake.target_label(target)
    }

    fn trial(&mut self, case: usize, target: usize, meter: &mut Meter) -> Result<Trial> {
        let local = 0u8;
        self.at
            .push(std::hint::black_box(&local) as *const u8 as usize);
        self.fake.trial(case, target, meter)
    }
}

#[test]
fn each_round_runs_its_trials_at_a_stack_depth_of_its_own() {
    let mut stack = Stack {
        fake: Fake::new(&["unix", "tcp", "tls"], &[]),
        at: Vec::new(),
    };
    run(&schedule(cases(&[""], 3), 8), &mut stack, &Silent).unwrap();
    let rounds: Vec<&[usize]> = stack.at.chunks(3).collect();
    assert_eq!(rounds.len(), 8);
    for round in &rounds {
        assert!(round.iter().all(|&a| a == round[0]), "{round:?}");
    }
    let mut depths: Vec<usize> = rounds.iter().map(|r| r[0]).collect();
    depths.sort_unstable();
    depths.dedup();
    assert_eq!(depths.len(), 8, "{:?}", stack.at);
}
