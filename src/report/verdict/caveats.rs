//! What a run could not see, said after the verdict: a busy host, where the
//! scheduler put client and server, and servers that are the user's own.

use super::pair::{Outcome, Pair};
use crate::cpu::affinity::Placement;
use crate::cpu::load::RETRIES;
use crate::report::columns::{distinct, shared_cpu};
use crate::report::experiment::placement;
use crate::report::format::capitalised;
use crate::results::ResultRecord;

use crate::stats::MOST_ROUNDS;

/// The caveats of a run's records, as sentences, given the verdict's comparisons.
pub fn lines(records: &[ResultRecord], pairs: &[&Pair]) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(unsettled(records, pairs));
    out.extend(busy(records));
    out.extend(placed(records));
    out.extend(servers(records));
    out
}

/// The comparisons not settled, and what would settle them: more rounds, or, when
/// rounds vary too much for that, a quieter or pinned measurement.
fn unsettled(records: &[ResultRecord], pairs: &[&Pair]) -> Option<String> {
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
    if let Some(n) = reachable {
        // The commands of the families measured, which take --trials.
        let families = distinct(records, |r| {
            r.experiment.split('.').next().map(str::to_string)
        });
        let commands: Vec<String> = families
            .into_iter()
            .flatten()
            .map(|f| format!("`sockbench {f}`"))
            .collect();
        s.push_str(&format!(
            "; about {n} rounds would settle {} ({} with --trials {n}; `sockbench run` \
             measures a quick few)",
            if beyond > 0 { "the others" } else { "them" },
            commands.join(" or ")
        ));
    }
    if beyond > 0 {
        s.push_str(&format!(
            "; {beyond} {} too much from round to round for more rounds to help: pin \
             client and server (--placement split) or measure on a quieter machine",
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
    (rerun + disturbed > 0).then(|| {
        format!(
            "The host was busy: {rerun} of {} trials ran again because other processes \
             used the CPUs, {disturbed} still disturbed after {} tries; a quieter machine \
             may give narrower intervals.",
            trials.len(),
            RETRIES + 1
        )
    })
}

/// Free placement: how often client and server shared a CPU, and how to see whether
/// placement changes the answer.
fn placed(records: &[ResultRecord]) -> Option<String> {
    // Placement chosen on the command line (other than free) is said per line.
    let chosen = |r: &ResultRecord| placement(&r.params).is_some_and(|p| p != Placement::Free);
    if records.iter().any(chosen) {
        return None;
    }
    let counted = shared_cpu(records).map_or(String::new(), |(shared, of)| match shared {
        0 => format!(
            " (on different CPUs in all {of} trials, so this is the answer for split placement)"
        ),
        _ => format!(" (they shared one CPU in {shared} of {of} trials)"),
    });
    Some(format!(
        "The scheduler placed client and server{counted}; on a virtual machine placement \
         can change the answer: --placement same,split measures both ways."
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
