//! The line for a container's network, once per family measured over one: what
//! each way into a container costs against the others on the family's first line's
//! work, paired round by round as every comparison is: the bridge between two
//! containers against a port published to 127.0.0.1 and against a socket shared
//! into the container, `-p` through docker-proxy against `-p` by DNAT, the DNAT
//! against the container's own address, and the shared socket against a plain one;
//! whether the largest difference matters at the work's typical rates; and the
//! kernel's count of why: packets sent per operation on each path (one per device
//! a packet leaves: the loopback device, each end of a veth pair, the bridge) and
//! network softirqs.

use super::words::{also, listed, matters_words};
use super::{Line, Outcome, Pair};
use crate::cpu::why::Event;
use crate::report::experiment::VerdictLine;
use crate::results::ResultRecord;
use crate::transport::Transport;

/// The comparisons, each `(base, other)`: the other's cost over the base's.
const COMPARED: [(Transport, Transport); 5] = [
    (Transport::Published, Transport::Bridge),
    (Transport::UnixShared, Transport::Bridge),
    (Transport::Published, Transport::DockerProxy),
    (Transport::Veth, Transport::Published),
    (Transport::Unix, Transport::UnixShared),
];

/// The line, from the records of the case the family's line picked at one
/// placement (`what`: `In a container (SELECT 1 …, on one CPU)`); none without two
/// of the paths compared.
pub(super) fn line(
    rs: &[&ResultRecord],
    v: &VerdictLine,
    what: String,
    placement: Option<&'static str>,
) -> Option<Line> {
    let find = |t: Transport| rs.iter().copied().find(|r| t.is_named(&r.transport));
    if !rs.iter().any(|r| {
        r.transport
            .parse::<Transport>()
            .is_ok_and(|t| t.crossing().is_some())
    }) {
        return None;
    }
    let pairs: Vec<Pair> = COMPARED
        .iter()
        .filter_map(|&(a, b)| Pair::of(&v.metric, find(a)?, find(b)?))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let mut said: Vec<String> = pairs.iter().map(|p| also(&v.work, &v.metric, p)).collect();
    if find(Transport::Tcp).is_some() {
        said.push("`--network host` is what tcp measures".into());
    }
    let mut sentence = format!("{what}: {}.", said.join("; "));
    // Whether the largest settled difference matters at the work's rates.
    let largest = pairs
        .iter()
        .filter(|p| p.outcome == Outcome::Differs && p.estimate() > 1.0)
        .max_by(|a, b| a.estimate().total_cmp(&b.estimate()));
    if let Some(p) = largest {
        if let Some(m) = matters_words(&v.work, p, &v.cpu_op(&rs[0].params)) {
            sentence.push_str(&format!(" {} against {}: {m}.", p.other, p.base));
        }
    }
    if let Some(why) = why(rs, v.work.op) {
        sentence.push_str(&format!(" Why: {why}."));
    }
    Some(Line {
        what,
        work: Some(v.work),
        placement,
        reference: String::new(),
        ratios: Vec::new(),
        pairs: Vec::new(),
        sentence,
        caveat: false,
        by_case: false,
        experiment: None,
        reference_ns: 0.0,
    })
}

/// Packets sent and network softirqs per operation on each path, client and
/// server together: `per query, packets sent: unix-shared 0, published 4.00, …`.
fn why(rs: &[&ResultRecord], op: &str) -> Option<String> {
    let count = |r: &ResultRecord, events: &[Event]| -> Option<f64> {
        let why = r.counters.as_ref()?.why.as_ref()?;
        events.iter().map(|&e| why.total(e)).sum()
    };
    let mut parts = Vec::new();
    for (noun, events) in [
        ("packets sent", &[Event::PacketsSent][..]),
        (
            "network softirqs",
            &[Event::NetRxSoftirqs, Event::NetTxSoftirqs][..],
        ),
    ] {
        let each: Vec<String> = rs
            .iter()
            .filter_map(|r| Some(format!("{} {}", r.transport, shown(count(r, events)?))))
            .collect();
        if each.len() >= 2 {
            parts.push(format!("{noun} {}", listed(&each)));
        }
    }
    (!parts.is_empty()).then(|| format!("per {op}, {}", parts.join("; ")))
}

/// A count per operation: `0`, `4.00`.
fn shown(n: f64) -> String {
    if n < 0.005 {
        "0".into()
    } else {
        format!("{n:.2}")
    }
}
