//! The comparison's summary sentences: how many times and gaps to the reference
//! changed which way for each file against A, and the gaps that changed, named.

use super::change::Outcome;
use super::Run;

/// How many changes of each kind the tables show, for the summary; and the gaps
/// that changed, named.
#[derive(Default)]
pub(super) struct Tally {
    /// Per file after A: outcomes of the time changes.
    pub(super) times: Vec<(String, Outcome)>,
    /// Per file after A: outcomes of the gap changes.
    pub(super) gaps: Vec<(String, Outcome)>,
    /// The gaps that changed clearly, as sentences.
    pub(super) changed: Vec<String>,
}

impl Tally {
    pub(super) fn sentences(&self, runs: &[Run]) -> Vec<String> {
        let mut out = Vec::new();
        for run in &runs[1..] {
            let count = |of: &[(String, Outcome)], o: Outcome| {
                of.iter()
                    .filter(|(l, x)| *l == run.letter && *x == o)
                    .count()
            };
            let total =
                |of: &[(String, Outcome)]| of.iter().filter(|(l, _)| *l == run.letter).count();
            let t = &self.times;
            let g = &self.gaps;
            if total(t) == 0 {
                continue;
            }
            out.push(format!(
                "{} against A: times faster in {}, slower in {}, no clear difference in {}, \
                 not settled in {} of {}; the gap to the reference (for TLS, to tcp) changed in {} of {} \
                 (not settled in {}).",
                run.letter,
                count(t, Outcome::Faster),
                count(t, Outcome::Slower),
                count(t, Outcome::Same),
                count(t, Outcome::Unsettled),
                total(t),
                count(g, Outcome::Faster) + count(g, Outcome::Slower),
                total(g),
                count(g, Outcome::Unsettled),
            ));
        }
        out.extend(self.changed.iter().cloned());
        out
    }
}
