//! How long a plan is expected to take, said before anything is measured, and the
//! time allowance [`run`](super::run) holds each experiment to.
//!
//! One experiment's share is an [`ExperimentTime`]: its trials per round, the time of one
//! trial, its rounds, warm-up and counting rounds. The families say what their
//! plans hold (the cases, the targets, the trial each runs); the arithmetic is
//! here only, for the line printed before a run and for the scheduler's
//! [`Allowance`], so that what is promised and what is enforced cannot drift apart.
//!
//! The rule: the expected time is the minimum rounds, the warm-up and counting
//! rounds, each trial with [`TRIAL_OVERHEAD`] around it, and the plan's setup. More
//! rounds to settle an interval may take the experiment to its stated maximum
//! ([`ExperimentTime::most_s`]); reruns for outside load come out of [`BUSY_FACTOR`] times the
//! expected time (the scheduler holds to [`HELD_FACTOR`], for what it cannot
//! bound), and once the machine is seen busy, extra rounds do too. A trial's
//! own timed loop is never cut: a trial that takes longer than planned (one bounded
//! by a count of operations on a slow machine) leaves less room for the rest.

use super::Rounds;
use std::time::{Duration, Instant};

/// Time around each trial besides its timed loop: connecting, sizing and touching
/// the sample buffer, placing client and server, reading /proc before and after,
/// the progress line, deciding whether the intervals are settled. Measured as the
/// wall time of `sockbench sockets --quick` and `redis --quick` less their timed
/// loops, over their trials, on 2 vCPUs: 30–45 ms with other work running.
pub const TRIAL_OVERHEAD: Duration = Duration::from_millis(35);

/// What a run may take, as a multiple of its expected time, when outside load
/// makes trials run again: reruns and extra rounds stop at this.
pub const BUSY_FACTOR: f64 = 1.5;

/// The multiple of an experiment's expected time the scheduler itself holds to
/// once outside load is seen: below [`BUSY_FACTOR`], so that what it cannot bound
/// (starting servers, a trial's own overrun, the planned trials left when the
/// last rerun is decided, all slower on a busy machine) keeps the whole within
/// the factor it promises.
pub const HELD_FACTOR: f64 = 1.4;

/// What every measuring command spends besides its plans: reading the system's
/// facts (with a 300 ms look at how busy the machine is), sweeping leftovers,
/// writing the result file and the verdict.
pub const COMMAND_SETUP: Duration = Duration::from_millis(700);

/// How many rounds an experiment runs and how long one trial takes: what a family
/// says of each experiment's time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub rounds: Rounds,
    /// The time of one trial: its timed loop, or what a trial bounded by a count
    /// of operations is expected to take.
    pub trial: Duration,
    /// What each trial of this experiment spends besides its timed loop and
    /// [`TRIAL_OVERHEAD`] (a warm-up, connecting many clients).
    pub around: Duration,
}

impl Timing {
    /// The work of `trials_per_round` trials a round, with this machine's counting
    /// rounds and no warm-up.
    pub fn work(self, trials_per_round: u64) -> ExperimentTime {
        ExperimentTime {
            trials_per_round,
            trial: self.trial,
            around: self.around,
            rounds: self.rounds,
            warmup_rounds: 0,
            counting_rounds: super::counting_rounds(),
        }
    }
}

/// One experiment's trials, as far as time goes.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentTime {
    /// Trials in one round: every case on every one of its targets.
    pub trials_per_round: u64,
    /// The time of one trial: its timed loop, or what a trial bounded by a count
    /// of operations is expected to take.
    pub trial: Duration,
    /// What each trial spends besides its timed loop and [`TRIAL_OVERHEAD`].
    pub around: Duration,
    pub rounds: Rounds,
    pub warmup_rounds: u32,
    pub counting_rounds: u32,
}

impl ExperimentTime {
    /// Seconds of one trial with what surrounds it.
    pub fn per_trial_s(&self) -> f64 {
        self.trial.as_secs_f64() + self.around().as_secs_f64()
    }

    /// Time around each trial: [`TRIAL_OVERHEAD`] and the experiment's own.
    pub fn around(&self) -> Duration {
        TRIAL_OVERHEAD + self.around
    }

    /// Trials every run of it makes: warm-up, minimum and counting rounds.
    pub fn planned_trials(&self) -> u64 {
        let rounds = self.warmup_rounds + self.rounds.min + self.counting_rounds;
        self.trials_per_round * u64::from(rounds)
    }

    /// Seconds of one counting trial with what surrounds it: its timed loop is a
    /// share of a measured one's ([`crate::cpu::Meter::counting`]).
    pub fn per_counting_trial_s(&self) -> f64 {
        let share = f64::from(crate::cpu::COUNTING_SHARE);
        self.trial.as_secs_f64() / share + self.around().as_secs_f64()
    }

    /// Seconds of the counting rounds.
    fn counting_s(&self) -> f64 {
        (self.trials_per_round * u64::from(self.counting_rounds)) as f64
            * self.per_counting_trial_s()
    }

    /// Seconds it is expected to take: its planned trials, none run again.
    pub fn expected_s(&self) -> f64 {
        let rounds = self.warmup_rounds + self.rounds.min;
        (self.trials_per_round * u64::from(rounds)) as f64 * self.per_trial_s() + self.counting_s()
    }

    /// Seconds it may take at most: more rounds to settle (up to `rounds.max`, and
    /// `time_factor` times the minimum rounds), or reruns for outside load
    /// ([`BUSY_FACTOR`] times the expected time), whichever allows more.
    pub fn most_s(&self) -> f64 {
        let round_s = self.trials_per_round as f64 * self.per_trial_s();
        let min_s = f64::from(self.rounds.min) * round_s;
        let settling = (min_s * self.rounds.time_factor).min(f64::from(self.rounds.max) * round_s);
        let others = f64::from(self.warmup_rounds) * round_s + self.counting_s();
        (settling.max(min_s) + others).max(self.busy_s())
    }

    /// Seconds it may take once outside load is seen.
    pub fn busy_s(&self) -> f64 {
        self.expected_s() * BUSY_FACTOR
    }

    /// Seconds the scheduler holds it to once outside load is seen.
    pub fn held_s(&self) -> f64 {
        self.expected_s() * HELD_FACTOR
    }
}

/// What a plan (or a whole command) is expected to take.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// Starting servers and what else happens before and after the trials.
    pub setup: Duration,
    /// Every experiment, in order.
    pub works: Vec<ExperimentTime>,
}

impl Estimate {
    /// The estimate of several plans run one after the other, with the command's
    /// own setup.
    pub fn of_command(plans: impl IntoIterator<Item = Estimate>) -> Estimate {
        let mut all = Estimate {
            setup: COMMAND_SETUP,
            works: Vec::new(),
        };
        for plan in plans {
            all.setup += plan.setup;
            all.works.extend(plan.works);
        }
        all
    }

    /// Seconds expected: setup and every experiment's planned trials.
    pub fn expected_s(&self) -> f64 {
        self.setup.as_secs_f64()
            + self
                .works
                .iter()
                .map(ExperimentTime::expected_s)
                .sum::<f64>()
    }

    /// Seconds at most (setup is not limited: it is counted as expected).
    pub fn most_s(&self) -> f64 {
        self.setup.as_secs_f64() + self.works.iter().map(ExperimentTime::most_s).sum::<f64>()
    }

    /// Trials in one round of every experiment.
    pub fn trials_per_round(&self) -> u64 {
        self.works.iter().map(|w| w.trials_per_round).sum()
    }

    /// The fewest minimum and the most maximum rounds of its experiments.
    pub fn rounds(&self) -> Option<(u32, u32)> {
        let min = self.works.iter().map(|w| w.rounds.min).min()?;
        let max = self.works.iter().map(|w| w.rounds.max).max()?;
        Some((min, max))
    }

    /// The shortest and longest trial.
    pub fn trials(&self) -> Option<(Duration, Duration)> {
        let shortest = self.works.iter().map(|w| w.trial).min()?;
        let longest = self.works.iter().map(|w| w.trial).max()?;
        Some((shortest, longest))
    }

    /// The least and most time around one trial.
    pub fn around(&self) -> Option<(Duration, Duration)> {
        let least = self.works.iter().map(ExperimentTime::around).min()?;
        let most = self.works.iter().map(ExperimentTime::around).max()?;
        Some((least, most))
    }

    /// The most counting rounds of any experiment.
    pub fn counting_rounds(&self) -> u32 {
        self.works
            .iter()
            .map(|w| w.counting_rounds)
            .max()
            .unwrap_or(0)
    }
}

/// One experiment's time as it runs: how long it has taken, what its plan still
/// holds, and whether there is room for more than planned.
#[derive(Debug)]
pub struct Allowance {
    start: Instant,
    per_trial_s: f64,
    /// Planned trials not yet run.
    left: u64,
    /// The limits it holds to once outside load is seen, and else.
    held_s: f64,
    most_s: f64,
    /// Set once a trial of the experiment ran under outside load.
    busy: bool,
}

impl Allowance {
    /// The allowance of `work`, starting now.
    pub fn start(work: &ExperimentTime) -> Allowance {
        Allowance {
            start: Instant::now(),
            per_trial_s: work.per_trial_s(),
            left: work.planned_trials(),
            held_s: work.held_s(),
            most_s: work.most_s() - work.busy_s() + work.held_s(),
            busy: false,
        }
    }

    /// Counts a planned trial as run.
    pub fn ran(&mut self) {
        self.left = self.left.saturating_sub(1);
    }

    /// Counts a planned round of `trials` as run.
    pub fn ran_round(&mut self, trials: u64) {
        self.left = self.left.saturating_sub(trials);
    }

    /// Notes a trial disturbed by outside load: from now on the experiment holds
    /// to the busy limit.
    pub fn saw_load(&mut self) {
        self.busy = true;
    }

    /// Whether `extra_s` seconds more than planned still leave the planned trials
    /// room within the limit: the busy one once outside load was seen, else the
    /// stated maximum.
    pub fn room_for(&self, extra_s: f64) -> bool {
        self.room_within(extra_s, self.start.elapsed().as_secs_f64())
    }

    /// [`room_for`](Self::room_for) after `elapsed_s` seconds.
    pub fn room_within(&self, extra_s: f64, elapsed_s: f64) -> bool {
        let limit = if self.busy { self.held_s } else { self.most_s };
        elapsed_s + extra_s + self.left as f64 * self.per_trial_s <= limit
    }

    /// Whether a rerun of `extra_s` seconds fits: reruns are for outside load, so
    /// they always hold to the busy limit.
    pub fn room_for_rerun(&self, extra_s: f64) -> bool {
        let elapsed = self.start.elapsed().as_secs_f64();
        elapsed + extra_s + self.left as f64 * self.per_trial_s <= self.held_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(trials_per_round: u64, trial_ms: u64, rounds: Rounds, counting: u32) -> ExperimentTime {
        ExperimentTime {
            trials_per_round,
            trial: Duration::from_millis(trial_ms) - TRIAL_OVERHEAD,
            around: Duration::ZERO,
            rounds,
            warmup_rounds: 0,
            counting_rounds: counting,
        }
    }

    #[test]
    fn expected_time_is_the_planned_trials_with_what_surrounds_them() {
        // 5 rounds of 12 trials of 0.5 s (with overhead), and 4 counting rounds
        // of 12 trials of their half loop (0.2325 s) and the same overhead
        // (0.035 s): 30 s and 12.84 s.
        let settling = Rounds {
            min: 5,
            max: 20,
            time_factor: 3.0,
        };
        let w = work(12, 500, settling, 4);
        assert_eq!(w.planned_trials(), 12 * 9);
        assert!((w.expected_s() - 42.84).abs() < 1e-9, "{}", w.expected_s());
        // More rounds: 3 × the 5 rounds' 30 s, then the counting rounds' 12.84 s.
        assert!((w.most_s() - 102.84).abs() < 1e-9, "{}", w.most_s());
        assert!((w.busy_s() - 64.26).abs() < 1e-9);
        // The round cap binds before the time factor.
        let capped = work(12, 500, Rounds { max: 8, ..settling }, 0);
        assert!((capped.most_s() - 48.0).abs() < 1e-9, "{}", capped.most_s());
        // Fixed rounds: only reruns can take it past the expectation.
        let fixed = work(2, 5_000, Rounds::fixed(5), 0);
        assert!((fixed.expected_s() - 50.0).abs() < 1e-9);
        assert!((fixed.most_s() - 75.0).abs() < 1e-9);

        let all = Estimate::of_command([
            Estimate {
                setup: Duration::from_secs(2),
                works: vec![w.clone(), fixed.clone()],
            },
            Estimate {
                setup: Duration::from_secs(1),
                works: vec![],
            },
        ]);
        let setup = 3.0 + COMMAND_SETUP.as_secs_f64();
        assert!((all.expected_s() - (setup + 92.84)).abs() < 1e-9);
        assert!((all.most_s() - (setup + 177.84)).abs() < 1e-9);
        assert_eq!(all.trials_per_round(), 14);
        assert_eq!(all.rounds(), Some((5, 20)));
        assert_eq!(
            all.trials(),
            Some((w.trial, Duration::from_secs(5) - TRIAL_OVERHEAD))
        );
    }

    #[test]
    fn room_beyond_the_plan_holds_to_the_busy_limit_once_load_is_seen() {
        let settling = Rounds {
            min: 4,
            max: 20,
            time_factor: 3.0,
        };
        // 4 rounds of 1 trial of 1 s: 4 s expected, 6 s busy (held to 5.6 s),
        // 12 s at most (held to 11.6 s).
        let mut a = Allowance::start(&work(1, 1_000, settling, 0));
        a.ran();
        // 1 trial run in 1 s, 3 left.
        assert!(a.room_within(7.5, 1.0), "quiet: more rounds up to 11.6 s");
        assert!(!a.room_within(7.7, 1.0), "1 + 7.7 + 3 > 11.6");
        a.saw_load();
        assert!(a.room_within(1.5, 1.0));
        assert!(!a.room_within(1.7, 1.0), "busy: 1 + 1.7 + 3 > 5.6");
        a.ran_round(3);
        assert!(a.room_within(4.0, 1.5) && !a.room_within(4.2, 1.5));
    }
}
