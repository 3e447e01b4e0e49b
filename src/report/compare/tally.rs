//! The comparison's summary sentences: for each file against A, first how many
//! gaps to the reference changed (measured in the same rounds, they survive a busy
//! host), then its times, said to be the host's where a busy host explains them;
//! and the gaps that changed, named.

use super::change::ChangeOutcome;
use super::host::{self, OutcomeCounts};
use super::Run;

/// How many changes of each kind the tables show, for the summary; and the gaps
/// that changed, named.
#[derive(Default)]
pub(super) struct Tally {
    /// Per file after A: outcomes of the time changes.
    pub(super) times: Vec<(String, ChangeOutcome)>,
    /// Per file after A: outcomes of the gap changes.
    pub(super) gaps: Vec<(String, ChangeOutcome)>,
    /// The gaps that changed clearly, as sentences.
    pub(super) changed: Vec<String>,
}

impl Tally {
    pub(super) fn sentences(&self, runs: &[Run]) -> Vec<String> {
        let mut out = Vec::new();
        for run in &runs[1..] {
            let of = |all: &[(String, ChangeOutcome)]| {
                OutcomeCounts::of(
                    all.iter()
                        .filter(|(l, _)| *l == run.letter)
                        .map(|(_, o)| *o),
                )
            };
            let (t, g) = (of(&self.times), of(&self.gaps));
            if t.total() == 0 {
                continue;
            }
            out.push(format!(
                "{} against A: the gap to the reference (for TLS, to tcp), measured in the \
                 same rounds, changed in {} of {} (not settled in {}); {}.",
                run.letter,
                g.faster + g.slower,
                g.total(),
                g.unsettled,
                host::times(&runs[0], run, t),
            ));
        }
        out.extend(self.changed.iter().cloned());
        out
    }
}
