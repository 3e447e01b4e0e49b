//! Where placement weighs more than the transport: the verdict's line that puts
//! what a wakeup across CPUs costs on this machine (measured before the run) next
//! to the largest difference a transport made per request. On a virtual machine
//! the first is often tens of microseconds and the second one or two, so which
//! CPUs an application and its server run on decides more than the socket it
//! uses; the line says so in the run's own units, and how the run was placed.

use super::caveats::Origin;
use super::Line;
use crate::cpu::affinity::Placement;
use crate::cpu::wakeup::Wakeup;
use crate::report::experiment::WorkKind;
use crate::report::format::{duration_interval_ns, duration_ns};

/// Placement is said to weigh more when its cost is at least this many times the
/// largest transport difference, with the interval's low end.
pub const DOMINATES: f64 = 3.0;

/// The largest difference between two transports per request among the lines of
/// one request at a time, and the line it is in (its heading, lower-cased).
fn largest_gap(lines: &[Line]) -> Option<(f64, String)> {
    lines
        .iter()
        .filter(|l| !l.caveat && l.work.is_some_and(|w| w.kind == WorkKind::Requests))
        .flat_map(|l| {
            l.pairs.iter().map(move |p| {
                let work = l.work.map_or("", |w| w.ops);
                (
                    (p.other_cost - p.base_cost).abs(),
                    format!("{} over {} vs {}", work, p.other, p.base),
                )
            })
        })
        .filter(|(gap, _)| gap.is_finite() && *gap > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The sentence, when a wakeup across CPUs costs at least [`DOMINATES`] times
/// what the transports changed per request.
pub fn weighs(lines: &[Line], wakeup: &Wakeup, origin: &Origin) -> Option<String> {
    let (gap, said) = largest_gap(lines)?;
    let across = wakeup.across_ns;
    if across.low < DOMINATES * gap {
        return None;
    }
    let times = across.estimate / gap;
    let how = if origin.placements == [Placement::Same] {
        "sockbench measured client and server on one CPU, which shows the transport's \
         part; where your application and server run apart, every request pays that wakeup \
         too"
        .to_string()
    } else if origin.placements.contains(&Placement::Free) {
        let pin = if origin.pinnable {
            " (add --placement same to pin them and see the transport's part)"
        } else {
            ""
        };
        format!(
            "placed freely, a request pays it or not as the scheduler decides, so figures \
             placed freely can differ by that much from one run to the next{pin}"
        )
    } else {
        "each placement's line above says which part the placement takes".to_string()
    };
    Some(format!(
        "Where client and server run weighs more than the transport on this machine: a \
         round trip takes {} longer with them on two CPUs than on one (waking the other \
         across CPUs; {} against {}), {:.0}× the largest difference a transport makes per \
         request ({}, {said}); {how}.",
        duration_interval_ns(across.estimate, across.low, across.high),
        duration_ns(wakeup.split_ns.estimate),
        duration_ns(wakeup.same_ns.estimate),
        times,
        duration_ns(gap),
    ))
}
