//! What a run could not see, said after the verdict: a busy host, where the
//! scheduler put client and server, and servers that are the user's own.
//!
//! What the caveats suggest (`--trials N`, `--placement …`) is a [`Suggestion`]
//! chosen for the [`Origin`] context the records come from, so it is always a
//! change the command that measured them accepts: no pinning where sockbench could
//! not find the server's process (`redis --url`, a remote `sockets --server`), no
//! placement already measured.

use super::pair::{Outcome, Pair};
use crate::cpu::affinity::Placement;
use crate::cpu::load::RETRIES;
use crate::harness::estimate::BUSY_FACTOR;
use crate::report::columns::{distinct, shared_cpu};
use crate::report::experiment::{placement, Catalog};
use crate::report::format::capitalised;
use crate::results::ResultRecord;

use crate::stats::MOST_ROUNDS;

/// The caveats of a run's records, as sentences, given the verdict's comparisons.
pub fn lines(records: &[ResultRecord], catalog: &Catalog, pairs: &[&Pair]) -> Vec<String> {
    let origin = Origin::of(records, catalog);
    let mut out = Vec::new();
    out.extend(unsettled(&origin, pairs));
    out.extend(busy(records));
    out.extend(placed(&origin, records));
    out.extend(servers(records));
    out
}

/// What the records say of the command that measured them, as far as a
/// suggestion must fit it.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// The family commands that measured (`sockets`, `postgres`, `redis`), which
    /// take `--trials` and `--placement`.
    pub families: Vec<String>,
    /// Whether sockbench found every server's process, which `--placement same`
    /// or `split` pins with the client: not a user's server it could not see
    /// (`redis --url`, `postgres --url`, a `sockets --server` elsewhere).
    pub pinnable: bool,
    /// The placements measured; `free` when none was chosen.
    pub placements: Vec<Placement>,
}

impl Origin {
    /// The context of `records`. A record whose trials counted CPU for the client
    /// alone ran against a server whose process sockbench could not find.
    pub fn of(records: &[ResultRecord], catalog: &Catalog) -> Origin {
        let families = distinct(records, |r| catalog.family_of(r).map(str::to_string))
            .into_iter()
            .flatten()
            .collect();
        let unseen = |r: &ResultRecord| {
            let mut costs = r.trials.iter().filter_map(|t| t.metrics.cpu.as_ref());
            let first = costs.next();
            first.is_some_and(|c| c.server.is_none()) && costs.all(|c| c.server.is_none())
        };
        let placements = distinct(records, |r| placement(&r.params).unwrap_or(Placement::Free));
        Origin {
            families,
            pinnable: !records.iter().any(unseen),
            placements,
        }
    }

    /// Every suggestion the caveats may make in this context, `rounds` being the
    /// rounds that would settle the comparisons.
    pub fn suggestions(&self, rounds: u32) -> Vec<Suggestion> {
        std::iter::once(Suggestion::Trials(rounds))
            .chain(self.pin())
            .chain(self.both_ways())
            .collect()
    }

    /// Pinning client and server to two CPUs, where it can be done and was not.
    fn pin(&self) -> Option<Suggestion> {
        (self.pinnable && !self.placements.contains(&Placement::Split))
            .then(|| Suggestion::Placement(vec![Placement::Split]))
    }

    /// Both pinned placements, where only free placement was measured.
    fn both_ways(&self) -> Option<Suggestion> {
        (self.pinnable && self.placements == [Placement::Free])
            .then(|| Suggestion::Placement(vec![Placement::Same, Placement::Split]))
    }

    /// The commands that take a suggestion: `` `sockbench sockets` or … ``.
    fn commands(&self) -> String {
        self.families
            .iter()
            .map(|f| format!("`sockbench {f}`"))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// A change to the command line that a caveat suggests.
#[derive(Debug, Clone, PartialEq)]
pub enum Suggestion {
    /// Exactly N rounds.
    Trials(u32),
    /// Client and server placed so.
    Placement(Vec<Placement>),
}

impl Suggestion {
    /// The arguments to add to the command that measured.
    pub fn args(&self) -> Vec<String> {
        match self {
            Suggestion::Trials(n) => vec!["--trials".into(), n.to_string()],
            Suggestion::Placement(ps) => vec![
                "--placement".into(),
                ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
            ],
        }
    }
}

impl std::fmt::Display for Suggestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.args().join(" "))
    }
}

/// The comparisons not settled, and what would settle them: more rounds, or, when
/// rounds vary too much for that, a quieter or pinned measurement.
fn unsettled(origin: &Origin, pairs: &[&Pair]) -> Option<String> {
    let open: Vec<&&Pair> = pairs
        .iter()
        .filter(|p| p.outcome == Outcome::Inconclusive)
        .collect();
    if open.is_empty() {
        return None;
    }
    let needed: Vec<Option<u32>> = open.iter().map(|p| p.rounds_to_settle()).collect();
    let reachable = needed.iter().flatten().filter(|n| **n <= MOST_ROUNDS).max();
    let beyond = needed
        .iter()
        .flatten()
        .filter(|n| **n > MOST_ROUNDS)
        .count();
    let mut s = format!(
        "{} of {} comparisons are not settled",
        open.len(),
        pairs.len()
    );
    if let Some(&n) = reachable {
        s.push_str(&format!(
            "; about {n} rounds would settle {} ({} with {}; `sockbench run` measures a \
             quick few)",
            if beyond > 0 { "the others" } else { "them" },
            origin.commands(),
            Suggestion::Trials(n)
        ));
    }
    if beyond > 0 {
        let instead = match origin.pin() {
            Some(pin) => format!(
                "pin client and server ({} with {pin}) or measure on a quieter machine",
                origin.commands()
            ),
            None => "measure on a quieter machine".to_string(),
        };
        s.push_str(&format!(
            "; {beyond} {} too much from round to round for more rounds to help: {instead}",
            if beyond == 1 { "varies" } else { "vary" }
        ));
    }
    s.push('.');
    Some(capitalised(&s))
}

/// Trials that ran under outside load.
fn busy(records: &[ResultRecord]) -> Option<String> {
    let trials: Vec<_> = records.iter().flat_map(|r| &r.trials).collect();
    let rerun = trials.iter().filter(|t| t.reruns > 0).count();
    let disturbed = trials.iter().filter(|t| t.disturbed).count();
    let cut = trials.iter().filter(|t| t.cut).count();
    let stopped = match cut {
        0 => String::new(),
        n => format!(
            " ({n} of them kept with fewer tries: reruns stopped at the time limit, \
             {BUSY_FACTOR}× the time expected)"
        ),
    };
    (rerun + disturbed > 0).then(|| {
        format!(
            "The host was busy: {rerun} of {} trials ran again because other processes \
             used the CPUs, {disturbed} still disturbed after {} tries{stopped}; a quieter \
             machine may give narrower intervals.",
            trials.len(),
            RETRIES + 1
        )
    })
}

/// Free placement: how often client and server shared a CPU, and how to see whether
/// placement changes the answer (where sockbench can pin the server).
fn placed(origin: &Origin, records: &[ResultRecord]) -> Option<String> {
    // Placement chosen on the command line (other than free) is said per line.
    let both = origin.both_ways()?;
    let counted = shared_cpu(records).map_or(String::new(), |(shared, of)| match shared {
        0 => format!(
            " (on different CPUs in all {of} trials, so this is the answer for split placement)"
        ),
        _ => format!(" (they shared one CPU in {shared} of {of} trials)"),
    });
    Some(format!(
        "The scheduler placed client and server{counted}; on a virtual machine placement \
         can change the answer: {both} measures both ways."
    ))
}

/// Servers the user named: the verdict speaks for them as configured.
fn servers(records: &[ResultRecord]) -> Option<String> {
    let theirs: Vec<&ResultRecord> = records
        .iter()
        .filter(|r| r.server.as_ref().is_some_and(|s| !s.throwaway))
        .collect();
    let named = distinct(theirs.iter().copied(), |r| {
        let tls = r
            .tls
            .as_ref()
            .map_or("no TLS".to_string(), |t| format!("TLS {}", t.version));
        format!("{} ({tls})", r.transport)
    });
    (!named.is_empty()).then(|| {
        format!(
            "Measured on your servers as they are configured: {}.",
            named.join(", ")
        )
    })
}
