//! How busy the rest of the machine was while a run measured, from its trials:
//! how many ran again or stayed disturbed because other processes used the CPUs,
//! and the outside load they saw on average; with the load sampled before the
//! run as the only evidence where no trial's load was measured (trials shorter
//! than the clock ticks can time, or a server sockbench cannot tell apart).
//!
//! Computed from what every result file holds (each trial's `load`, `reruns`
//! and `disturbed`, and the system's `load_at_start`), so files of every format
//! give it; a file from before loads were recorded has none of them and is
//! neither busy nor quiet, only not recorded.

use super::ResultRecord;
use crate::cpu::load::CpuLoad;

/// The share of a run's trials that may run again or stay disturbed before its
/// host counts as busy during the run: one trial in twenty.
pub const BUSY_SHARE: f64 = 0.05;

/// The outside load over a run's trials.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OutsideLoad {
    /// The load sampled before the first trial.
    pub at_start: Option<CpuLoad>,
    /// Every trial of the run.
    pub trials: usize,
    /// Trials whose load was measured.
    pub measured: usize,
    /// Trials that ran again because of outside load, or stayed disturbed.
    pub busy_trials: usize,
    /// Trials still disturbed after their last try.
    pub disturbed: usize,
    /// The mean load over the measured trials (each one's last try).
    pub mean: Option<CpuLoad>,
}

/// How the host was while a run measured, as far as its file tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Neither the trials nor the start say anything.
    NotRecorded,
    Quiet,
    /// Busy, as its trials show.
    BusyDuring,
    /// Busy before the run, and no trial's load was measured to say otherwise.
    BusyAtStart,
}

impl OutsideLoad {
    /// The outside load over `records`, with the load `at_start` of their run.
    pub fn of<'r>(
        records: impl IntoIterator<Item = &'r ResultRecord>,
        at_start: Option<CpuLoad>,
    ) -> OutsideLoad {
        let mut o = OutsideLoad {
            at_start,
            ..OutsideLoad::default()
        };
        let mut sum = CpuLoad::default();
        for t in records.into_iter().flat_map(|r| &r.trials) {
            o.trials += 1;
            o.busy_trials += usize::from(t.reruns > 0 || t.disturbed);
            o.disturbed += usize::from(t.disturbed);
            if let Some(l) = t.load {
                o.measured += 1;
                sum.outside_cpus += l.outside_cpus;
                sum.steal_cpus += l.steal_cpus;
            }
        }
        o.mean = (o.measured > 0).then(|| CpuLoad {
            outside_cpus: sum.outside_cpus / o.measured as f64,
            steal_cpus: sum.steal_cpus / o.measured as f64,
        });
        o
    }

    /// Whether the trials say anything about the load during the run.
    pub fn during_known(&self) -> bool {
        self.measured > 0 || self.busy_trials > 0
    }

    /// The host during the run: busy when at least [`BUSY_SHARE`] of the trials
    /// ran again or stayed disturbed, or their mean load would disturb a trial;
    /// without any trial's load, as it was at the start.
    pub fn host(&self) -> Host {
        if self.during_known() {
            let share = self.busy_trials as f64 / self.trials.max(1) as f64;
            if share >= BUSY_SHARE || self.mean.is_some_and(|m| m.disturbed()) {
                Host::BusyDuring
            } else {
                Host::Quiet
            }
        } else {
            match self.at_start {
                Some(l) if l.disturbed() => Host::BusyAtStart,
                Some(_) => Host::Quiet,
                None => Host::NotRecorded,
            }
        }
    }

    pub fn busy(&self) -> bool {
        matches!(self.host(), Host::BusyDuring | Host::BusyAtStart)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Trial;

    fn record(trials: Vec<Trial>) -> ResultRecord {
        let mut r: ResultRecord = serde_json::from_value(serde_json::json!({
            "experiment": "sockets.pingpong", "transport": "unix", "params": {},
            "metrics": {}, "trials": [],
            "headline": {"metric": "rtt_ns", "higher_is_better": false, "noisy": false,
                         "spread": {"min": 1.0, "median": 1.0, "max": 1.0}},
        }))
        .unwrap();
        r.trials = trials;
        r
    }

    fn trial(outside: f64, reruns: u32) -> Trial {
        let load = CpuLoad {
            outside_cpus: outside,
            steal_cpus: 0.0,
        };
        Trial {
            load: Some(load),
            reruns,
            disturbed: load.disturbed(),
            ..Trial::default()
        }
    }

    const QUIET: CpuLoad = CpuLoad {
        outside_cpus: 0.01,
        steal_cpus: 0.0,
    };

    #[test]
    fn one_trial_in_twenty_run_again_makes_the_host_busy() {
        let mut trials: Vec<Trial> = (0..19).map(|_| trial(0.02, 0)).collect();
        trials.push(trial(0.05, 1));
        let o = OutsideLoad::of(&[record(trials.clone())], Some(QUIET));
        assert_eq!(
            (o.trials, o.measured, o.busy_trials, o.disturbed),
            (20, 20, 1, 0)
        );
        assert_eq!(o.host(), Host::BusyDuring);
        trials.push(trial(0.02, 0));
        assert_eq!(
            OutsideLoad::of(&[record(trials)], Some(QUIET)).host(),
            Host::Quiet
        );
    }

    #[test]
    fn a_mean_load_that_disturbs_is_busy_and_the_start_counts_only_alone() {
        let loaded = record(vec![trial(0.10, 0), trial(0.30, 2)]);
        let o = OutsideLoad::of([&loaded], Some(QUIET));
        assert!((o.mean.unwrap().outside_cpus - 0.20).abs() < 1e-12);
        assert_eq!(o.disturbed, 1);
        assert_eq!(o.host(), Host::BusyDuring);
        let busy_start = CpuLoad {
            outside_cpus: 1.9,
            steal_cpus: 0.0,
        };
        let quiet = record(vec![trial(0.01, 0), trial(0.02, 0)]);
        assert_eq!(
            OutsideLoad::of([&quiet], Some(busy_start)).host(),
            Host::Quiet
        );
        let unmeasured = record(vec![Trial::default(), Trial::default()]);
        let o = OutsideLoad::of([&unmeasured], Some(busy_start));
        assert_eq!((o.measured, o.mean), (0, None));
        assert_eq!(o.host(), Host::BusyAtStart);
        assert_eq!(
            OutsideLoad::of([&unmeasured], None).host(),
            Host::NotRecorded
        );
    }
}
