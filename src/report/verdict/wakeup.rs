//! Where placement weighs more than the transport: the verdict's line that puts
//! what a wakeup across CPUs costs on this machine (measured after the first
//! experiment) next to the largest difference a transport made per request. On a virtual machine
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

/// The most a transport could change a request, among the lines of one request at
/// a time: each comparison's difference per request at the far end of its
/// interval, so that an unsettled comparison counts as large as it may be. With
/// the line it is in.
fn largest_gap(lines: &[Line]) -> Option<(f64, String)> {
    lines
        .iter()
        .filter(|l| !l.caveat && l.work.is_some_and(|w| w.kind == WorkKind::Requests))
        .flat_map(|l| {
            l.pairs.iter().map(move |p| {
                let work = l.work.map_or("", |w| w.ops);
                let gap = match p.ratio {
                    Some(r) => p.base_cost * (r.high - 1.0).abs().max((r.low - 1.0).abs()),
                    None => (p.other_cost - p.base_cost).abs(),
                };
                (gap, format!("{work} over {} vs {}", p.other, p.base))
            })
        })
        .filter(|(gap, _)| gap.is_finite() && *gap > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The sentence, when a wakeup across CPUs costs at least [`DOMINATES`] times
/// the most the transports could have changed a request (both ends of both
/// intervals taken against it).
pub fn weighs(lines: &[Line], wakeup: &Wakeup, origin: &Origin) -> Option<String> {
    let (gap, said) = largest_gap(lines)?;
    let across = wakeup.across_ns;
    if across.low < DOMINATES * gap {
        return None;
    }
    let times = across.low / gap;
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
            "placed freely, a request pays it or not as the scheduler decides, so these \
             figures can differ by that much from one run to the next{pin}"
        )
    } else {
        "each placement's line above says which part the placement takes".to_string()
    };
    Some(format!(
        "Where client and server run weighs more than the transport on this machine: a \
         round trip takes {} longer with them on two CPUs than on one (waking the other \
         across CPUs: {} against {}), at least {:.0}× the most a transport changes a request \
         (at most {}, {said}); {how}.",
        duration_interval_ns(across.estimate, across.low, across.high),
        duration_ns(wakeup.split_ns.estimate),
        duration_ns(wakeup.same_ns.estimate),
        times,
        duration_ns(gap),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::verdict::{caveat, Outcome, Pair};
    use crate::stats::{Difference, Interval, Mean};

    /// A line of requests whose tcp costs `base` ns per query against unix, with
    /// the ratio's interval.
    fn requests(base: f64, low: f64, high: f64) -> Line {
        let mut line = caveat(String::new());
        line.caveat = false;
        line.work = Some(crate::report::experiment::Work {
            heading: "Short queries",
            op: "query",
            ops: "queries",
            kind: WorkKind::Requests,
            typical: &[],
            pool_against: None,
        });
        line.pairs = vec![Pair {
            base: "unix".into(),
            other: "tcp".into(),
            ratio: Some(Interval {
                estimate: (low + high) / 2.0,
                low,
                high,
                n: 6,
            }),
            base_cost: base,
            other_cost: base * (low + high) / 2.0,
            outcome: Outcome::Inconclusive,
            extra_cpu_ns: None,
        }];
        line
    }

    fn wakeup(across: f64, half: f64) -> Wakeup {
        let mean = |x: f64| Mean {
            estimate: x,
            low: x - 1.0,
            high: x + 1.0,
            n: 6,
        };
        Wakeup {
            same_ns: mean(5_000.0),
            split_ns: mean(5_000.0 + across),
            across_ns: Difference {
                estimate: across,
                low: across - half,
                high: across + half,
            },
        }
    }

    fn origin(placements: Vec<Placement>, pinnable: bool) -> Origin {
        Origin {
            families: vec!["postgres".into()],
            pinnable,
            placements,
        }
    }

    #[test]
    fn a_wakeup_far_above_every_transport_gap_is_said_with_the_placement() {
        // Gap at most 10 µs × 0.2 = 2 µs; the wakeup's low end 50 µs is 25× it.
        let lines = [requests(10_000.0, 1.05, 1.2)];
        let said = weighs(
            &lines,
            &wakeup(60_000.0, 10_000.0),
            &origin(vec![Placement::Same], true),
        )
        .expect("said");
        assert!(said.contains("60.0 [50.0, 70.0] µs longer"), "{said}");
        assert!(said.contains("at least 25×"), "{said}");
        assert!(
            said.contains("at most 2.00 µs, queries over tcp vs unix"),
            "{said}"
        );
        assert!(said.contains("on one CPU"), "{said}");
        let free = weighs(
            &lines,
            &wakeup(60_000.0, 10_000.0),
            &origin(vec![Placement::Free], true),
        )
        .expect("said");
        assert!(free.contains("--placement same"), "{free}");
        let unseen = weighs(
            &lines,
            &wakeup(60_000.0, 10_000.0),
            &origin(vec![Placement::Free], false),
        )
        .expect("said");
        assert!(!unseen.contains("--placement"), "{unseen}");
    }

    #[test]
    fn a_wakeup_not_surely_three_times_the_widest_gap_is_not_said() {
        // Unsettled: the ratio's far end, +100%, makes the gap up to 10 µs; the
        // wakeup's low end, 25 µs, is less than three times that.
        let lines = [requests(10_000.0, 0.9, 2.0)];
        assert_eq!(
            weighs(
                &lines,
                &wakeup(30_000.0, 5_000.0),
                &origin(vec![Placement::Same], true)
            ),
            None
        );
        // Without lines of requests there is nothing to weigh it against.
        assert_eq!(
            weighs(
                &[],
                &wakeup(30_000.0, 5_000.0),
                &origin(vec![Placement::Same], true)
            ),
            None
        );
    }
}
