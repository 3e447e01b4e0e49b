//! What a comparison says of its times when a host was busy: a run measured while
//! other processes used the CPUs is slower for that alone, so its longer times (or
//! the baseline's, making the other look faster) are said to be the host's, not the
//! code's. The gaps to the reference are not touched: both transports of a round
//! ran under the same load, so their ratio survives it.

use super::change::ChangeOutcome;
use super::Run;
use crate::results::outside::OutsideLoad;
use crate::results::ResultRecord;

/// How one file's times changed against A's, counted by outcome.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct OutcomeCounts {
    pub(super) faster: usize,
    pub(super) slower: usize,
    pub(super) same: usize,
    pub(super) unsettled: usize,
}

impl OutcomeCounts {
    pub(super) fn of(outcomes: impl Iterator<Item = ChangeOutcome>) -> OutcomeCounts {
        let mut c = OutcomeCounts::default();
        for o in outcomes {
            match o {
                ChangeOutcome::Faster => c.faster += 1,
                ChangeOutcome::Slower => c.slower += 1,
                ChangeOutcome::Same => c.same += 1,
                ChangeOutcome::Unsettled => c.unsettled += 1,
            }
        }
        c
    }

    pub(super) fn total(&self) -> usize {
        self.faster + self.slower + self.same + self.unsettled
    }
}

/// Whose host was busy in a comparison of `x` with the baseline `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Busy {
    Neither,
    Baseline,
    Other,
    Both,
}

impl Busy {
    pub(super) fn of(a: &OutsideLoad, x: &OutsideLoad) -> Busy {
        match (a.busy(), x.busy()) {
            (false, false) => Busy::Neither,
            (true, false) => Busy::Baseline,
            (false, true) => Busy::Other,
            (true, true) => Busy::Both,
        }
    }
}

/// The part of `x`'s summary sentence on its times against the baseline `a`.
/// With both hosts quiet, the counts by outcome; when a busy host explains the
/// change, the change is said to be the host's and the counts are not a verdict.
pub(super) fn times(a: &Run, x: &Run, c: OutcomeCounts) -> String {
    let n = c.total();
    let plain = format!(
        "times faster in {}, slower in {}, no clear difference in {}, not settled in {} of {n}",
        c.faster, c.slower, c.same, c.unsettled
    );
    let (l, busy) = (&x.letter, Busy::of(&a.host, &x.host));
    let loads = format!("{l}: {}; A: {}", describe(&x.host), describe(&a.host));
    match busy {
        Busy::Neither => plain,
        Busy::Other if c.slower > 0 => format!(
            "the host was busy while {l} ran ({loads}), and {l}'s times are longer in {} of \
             {n} (shorter in {}): that slowdown coincides with the busy host and is the \
             host's, not the code's",
            c.slower, c.faster
        ),
        Busy::Baseline if c.faster > 0 => format!(
            "the host was busy while A ran ({loads}), and {l}'s times are shorter in {} of \
             {n} (longer in {}): that speed-up coincides with A's busy host and is the \
             host's, not the code's",
            c.faster, c.slower
        ),
        Busy::Both if c.slower + c.faster > 0 => format!(
            "the host was busy while both A and {l} ran ({loads}), so their times, longer \
             in {} and shorter in {} of {n} for {l}, say more about the host than about \
             the code",
            c.slower, c.faster
        ),
        // No change, or one the other way from what the busy host would make.
        Busy::Other | Busy::Baseline | Busy::Both => {
            let who = match busy {
                Busy::Other => l.to_string(),
                Busy::Baseline => "A".to_string(),
                _ => format!("both A and {l}"),
            };
            format!("{plain}; the host was busy while {who} ran ({loads})")
        }
    }
}

/// `56 of 471 trials ran again, other processes 0.41 CPUs on average`, or what
/// the start said when no trial's load was measured.
fn describe(o: &OutsideLoad) -> String {
    if o.during_known() {
        let mean = o.mean.map_or(String::new(), |m| {
            format!(", other processes {:.2} CPUs on average", m.outside_cpus)
        });
        format!("{} of {} trials ran again{mean}", o.busy_trials, o.trials)
    } else if let Some(l) = o.at_start {
        format!(
            "other processes {:.2} CPUs at the start, no trial's load measured",
            l.outside_cpus
        )
    } else {
        "load not recorded".into()
    }
}

/// Whether any trial of `record` ran again or stayed disturbed.
pub(super) fn disturbed(record: &ResultRecord) -> bool {
    record.trials.iter().any(|t| t.reruns > 0 || t.disturbed)
}
