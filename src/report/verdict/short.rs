//! The verdict's first sentence, "In short": for which kinds of work a transport
//! was faster, the same or not settled, and what TLS did.

use super::words;
use super::{Line, Outcome, Pair};

/// The answer in one sentence: for which kinds of work the reference transport
/// (or another) was faster, for which they were the same, and which are not settled.
pub fn in_short(lines: &[Line]) -> Option<String> {
    let lines: Vec<&Line> = lines.iter().filter(|l| !l.by_case).collect();
    // Each line's kind of work and what its main comparison says: the transport
    // that was faster, or none for the same / not settled.
    let said: Vec<(&Line, &str, Outcome, Option<&String>)> = lines
        .iter()
        .filter_map(|l| {
            let work = l.work?;
            let main = words::main_pair(&l.pairs)?;
            let winner = (main.outcome == Outcome::Differs).then(|| {
                if main.estimate() > 1.0 {
                    &main.base
                } else {
                    &main.other
                }
            });
            Some((*l, work.heading, main.outcome, winner))
        })
        .collect();
    // A kind of work measured twice (raw socket and PostgreSQL) with different
    // answers is named by its whole description.
    let name = |l: &Line, heading: &'static str, outcome: Outcome, winner: Option<&String>| {
        let apart = said
            .iter()
            .any(|(_, h, o, w)| *h == heading && (*o != outcome || *w != winner));
        if apart {
            l.what.clone()
        } else {
            heading.to_string()
        }
    };
    let mut faster: Vec<(&String, Vec<String>)> = Vec::new();
    let mut same: Vec<String> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for &(l, heading, outcome, winner) in &said {
        let named = name(l, heading, outcome, winner);
        let list = match (outcome, winner) {
            (Outcome::Differs, Some(w)) => match faster.iter().position(|(x, _)| *x == w) {
                Some(i) => &mut faster[i].1,
                None => {
                    faster.push((w, Vec::new()));
                    &mut faster.last_mut().expect("just pushed").1
                }
            },
            (Outcome::Same, _) => &mut same,
            _ => &mut open,
        };
        if !list.contains(&named) {
            list.push(named);
        }
    }
    let mut parts: Vec<String> = faster
        .iter()
        .map(|(winner, works)| {
            format!(
                "{} was faster for {}",
                words::named(winner),
                lowercase_list(works)
            )
        })
        .collect();
    if !same.is_empty() {
        parts.push(format!(
            "the transport made no difference for {}",
            lowercase_list(&same)
        ));
    }
    if !open.is_empty() {
        parts.push(format!("not settled for {}", lowercase_list(&open)));
    }
    parts.extend(tls_in_short(&lines));
    (!parts.is_empty()).then(|| format!("In short: {}.", parts.join("; ")))
}

/// What TLS did, in short: added time everywhere it was measured, or where.
fn tls_in_short(lines: &[&Line]) -> Option<String> {
    let costly = |p: &Pair| words::is_tls(p) && p.outcome == Outcome::Differs && p.estimate() > 1.0;
    let with_tls: Vec<&&Line> = lines
        .iter()
        .filter(|l| l.pairs.iter().any(words::is_tls))
        .collect();
    let mut added: Vec<String> = Vec::new();
    for l in with_tls.iter().filter(|l| l.pairs.iter().any(costly)) {
        let heading = l.work.map_or("", |w| w.heading).to_string();
        if !added.contains(&heading) {
            added.push(heading);
        }
    }
    let everywhere = with_tls.iter().all(|l| l.pairs.iter().any(costly));
    match (added.is_empty(), everywhere) {
        (true, _) => None,
        (false, true) => Some("TLS added time to every kind of work it was measured on".into()),
        (false, false) => Some(format!("TLS added time for {}", lowercase_list(&added))),
    }
}

/// `short queries, new connections and bulk bytes`.
fn lowercase_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| lowercase_first(s)).collect();
    super::words::listed(&items)
}

/// `Short queries (SELECT 1 …)` as `short queries (SELECT 1 …)`: only the first
/// letter, so SQL and names keep their case.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
}
