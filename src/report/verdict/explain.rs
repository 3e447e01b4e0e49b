//! The sentence that says why one transport costs more than another, made from
//! the kernel's account of both (counting trial): which events the dearer one adds
//! per operation (packets through the loopback device, network softirqs, system
//! calls, wakeups), and in which layers its extra CPU time is. Where the layers do
//! not explain the difference, it says so.

use super::words::listed;
use crate::cpu::why::{Event, Layer, Why};
use crate::report::columns::kernel::{layer_times, per_op};
use crate::report::format::duration_interval_ns;
use crate::results::ResultRecord;
use crate::stats::{Difference, Mean};
use std::collections::BTreeMap;

/// An event the sentence may name: what it is called, and its events.
const EVENTS: [(&str, &str, &[Event]); 4] = [
    ("packet", "packets", &[Event::PacketsSent]),
    (
        "network softirq",
        "network softirqs",
        &[Event::NetRxSoftirqs, Event::NetTxSoftirqs],
    ),
    ("system call", "system calls", &[Event::Syscalls]),
    ("wakeup", "wakeups", &[Event::Wakeups]),
];

/// A difference in events per operation too small to name.
const SMALL: f64 = 0.25;

/// Below this share of the extra CPU time, the largest layers do not explain it.
const EXPLAINS: f64 = 0.4;

/// Why `other` costs more per `op` than `base`: the events it adds, from both
/// records' counting trials, and its extra CPU time (`extra`, `other` − `base`:
/// the comparison's one figure, from the measured rounds) with the layers it grew
/// in. None when neither says anything.
pub fn explain(
    op: &str,
    extra: Option<Difference>,
    base: &ResultRecord,
    other: &ResultRecord,
) -> Option<String> {
    let (a, b) = (account(base), account(other));
    let (base, other) = (&base.transport, &other.transport);
    let events = a.zip(b).and_then(|(a, b)| events(a, b, base));
    let cpu = extra.map(|extra| {
        if !extra.resolved() {
            return format!(
                "spends no more CPU time that the rounds can tell ({}), so the \
                 difference is waiting, not work",
                duration_interval_ns(extra.estimate, extra.low, extra.high)
            );
        }
        let spends = format!(
            "spends {} more CPU time",
            duration_interval_ns(extra.estimate, extra.low, extra.high)
        );
        match a.zip(b).and_then(|(a, b)| layers(a, b)) {
            Some(layers) => format!("{spends}, {layers}"),
            None => spends,
        }
    });
    let parts: Vec<String> = [events, cpu].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| format!("per {op}, {other} {}", parts.join(" and ")))
}

fn account(r: &ResultRecord) -> Option<&Why> {
    r.counters.as_ref()?.why.as_ref()
}

/// `makes 2.00 packets and 2.00 network softirqs more (unix: 0 and 0)`.
fn events(a: &Why, b: &Why, base: &str) -> Option<String> {
    let mut more = Vec::new();
    let mut had = Vec::new();
    for (one, many, events) in EVENTS {
        let total = |w: &Why| events.iter().map(|&e| w.total(e)).sum::<Option<f64>>();
        let (Some(x), Some(y)) = (total(a), total(b)) else {
            continue;
        };
        if y - x >= SMALL && y >= 1.5 * x {
            let noun = if (y - x - 1.0).abs() < 0.005 {
                one
            } else {
                many
            };
            more.push(format!("{} {noun}", per_op(y - x)));
            had.push(per_op(x));
        }
    }
    (!more.is_empty()).then(|| format!("makes {} more ({base}: {})", listed(&more), listed(&had)))
}

/// Where the extra CPU time is, without its amount: `76% [58%, 90%] of the
/// growth in TCP and the scheduler`, the layers whose time grew most as a share of
/// all that grew (a layer the other transport does not use, such as Unix sockets
/// against TCP, shrinks); `spread over many layers that none explains`; `the
/// split between layers is not settled`; or, when the layers hold no extra time,
/// `the kernel's account does not explain the difference`. None without an
/// account on both.
///
/// The split is settled only where it holds over the counting trials: the
/// trials of both transports are paired by the counting round they ran in, a
/// layer is named only when the 95% interval of its growth lies above zero, and
/// the share only when its interval lies wholly on one side of [`EXPLAINS`].
/// With one counting trial (files from before) nothing about the split is
/// settled.
fn layers(a: &Why, b: &Why) -> Option<String> {
    let (la, lb) = (layer_times(a), layer_times(b));
    if la.is_empty() || lb.is_empty() {
        return None;
    }
    let total = |all: &[(Layer, f64)]| all.iter().map(|(_, ns)| ns).sum::<f64>();
    if total(&lb) - total(&la) <= 0.0 {
        return Some("the kernel's account does not explain the difference".into());
    }
    Some(match split(&a.trial_layers(), &b.trial_layers()) {
        Split::Named { share, layers } => format!(
            "{} of the growth in {}",
            percent_with_bounds(share),
            listed(
                &layers
                    .iter()
                    .map(|l| describe(*l).to_string())
                    .collect::<Vec<_>>()
            )
        ),
        Split::Spread => "spread over many layers that none explains".into(),
        Split::NotSettled => NOT_SETTLED.into(),
    })
}

/// What the sentence says when the counting trials do not settle the split.
pub const NOT_SETTLED: &str = "the split between layers is not settled";

/// Where the extra CPU time is, over paired counting trials.
#[derive(Debug, PartialEq)]
enum Split {
    /// These layers (largest growth first) hold `share` of the growth.
    Named {
        share: Mean,
        layers: Vec<Layer>,
    },
    /// No few layers hold much of it: the share of the largest is settled below
    /// [`EXPLAINS`].
    Spread,
    NotSettled,
}

/// The split of the growth from `a`'s trials to `b`'s (CPU ns per operation by
/// layer, trial by trial, paired in order): the two layers whose growth is
/// largest and settled above zero, and a third that holds a tenth of the growth,
/// with their share of all that grew, trial by trial.
fn split(a: &[BTreeMap<Layer, f64>], b: &[BTreeMap<Layer, f64>]) -> Split {
    let n = a.len().min(b.len());
    if n < 2 {
        return Split::NotSettled;
    }
    let at = |t: &BTreeMap<Layer, f64>, l: Layer| t.get(&l).copied().unwrap_or(0.0);
    let growths: Vec<(Layer, Vec<f64>)> = Layer::ALL
        .into_iter()
        .map(|l| (l, (0..n).map(|k| at(&b[k], l) - at(&a[k], l)).collect()))
        .collect();
    let Some(mut grown): Option<Vec<(Layer, Mean)>> = growths
        .iter()
        .map(|(l, d)| Some((*l, Mean::of(d)?)))
        .filter(|g| g.as_ref().is_none_or(|(_, m)| m.estimate > 0.0))
        .collect()
    else {
        return Split::NotSettled;
    };
    grown.sort_by(|x, y| y.1.estimate.total_cmp(&x.1.estimate));
    let growth: f64 = grown.iter().map(|(_, m)| m.estimate).sum();
    // The two layers that grew most, and a third that holds a tenth of the growth.
    let leading = |among: &[&(Layer, Mean)]| -> Vec<Layer> {
        among
            .iter()
            .enumerate()
            .take_while(|(i, (_, m))| *i < 2 || (*i == 2 && m.estimate >= 0.1 * growth))
            .map(|(_, (l, _))| *l)
            .collect()
    };
    let top = leading(
        &grown
            .iter()
            .filter(|(_, m)| m.above_zero())
            .collect::<Vec<_>>(),
    );
    let of = |set: &[Layer], k: usize| -> f64 {
        growths
            .iter()
            .filter(|(l, _)| set.contains(l))
            .map(|(_, d)| d[k])
            .sum()
    };
    let all: Vec<Layer> = grown.iter().map(|(l, _)| *l).collect();
    let share_of = |set: &[Layer]| -> Option<Mean> {
        let shares: Option<Vec<f64>> = (0..n)
            .map(|k| {
                let whole = of(&all, k);
                (whole > 0.0).then(|| of(set, k) / whole)
            })
            .collect();
        Mean::of(&shares?)
    };
    // The leading layers, settled or not, hold less than EXPLAINS for sure.
    if share_of(&leading(&grown.iter().collect::<Vec<_>>())).is_some_and(|s| s.high < EXPLAINS) {
        return Split::Spread;
    }
    match share_of(&top) {
        Some(share) if !top.is_empty() && share.low >= EXPLAINS => {
            Split::Named { share, layers: top }
        }
        _ => Split::NotSettled,
    }
}

/// `76% [58%, 90%]`, the bounds held to 0-100%.
fn percent_with_bounds(share: Mean) -> String {
    let pc = |x: f64| 100.0 * x.clamp(0.0, 1.0);
    format!(
        "{:.0}% [{:.0}%, {:.0}%]",
        pc(share.estimate),
        pc(share.low),
        pc(share.high)
    )
}

/// A layer as the sentence names it.
pub fn describe(layer: Layer) -> &'static str {
    match layer {
        Layer::Syscall => "system-call entry and exit",
        Layer::Socket => "the socket layer",
        Layer::Unix => "Unix sockets",
        Layer::Tcp => "TCP",
        Layer::Ip => "IP",
        Layer::Loopback => "the loopback device",
        Layer::Bridge => "the bridge and veth pairs",
        Layer::Netfilter => "netfilter (conntrack and NAT)",
        Layer::Scheduler => "the scheduler",
        Layer::Copy => "copying memory",
        Layer::Tls => "TLS crypto",
        Layer::User => "the rest of user space",
        Layer::OtherKernel => "the rest of the kernel",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::why::KernelAccount;
    use crate::cpu::Cost;
    use crate::results::{Metrics, Params};

    /// A record whose kernel account has `events` and, per counting trial, these
    /// samples by layer, scaled to `cpu_ns` per operation.
    fn record(
        transport: &str,
        events: &[(Event, f64)],
        trials: &[&[(Layer, u64)]],
        cpu_ns: f64,
    ) -> ResultRecord {
        let mut layer_samples: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (k, trial) in trials.iter().enumerate() {
            for (layer, n) in trial.iter() {
                let row = layer_samples.entry(layer.name().into()).or_default();
                row.resize(k, 0);
                row.push(*n);
            }
        }
        for row in layer_samples.values_mut() {
            row.resize(trials.len(), 0);
        }
        let account = KernelAccount {
            events: events.iter().map(|(e, n)| (e.name().into(), *n)).collect(),
            layer_samples,
            ..KernelAccount::default()
        };
        let mut r = crate::harness::aggregate::record(
            "sockets.pingpong",
            &crate::results::metric::Metric::new(
                "rtt_ns.p50",
                crate::results::metric::Unit::Time,
                crate::results::metric::Better::Lower,
            ),
            &Params::default(),
            transport,
            Vec::new(),
            None,
        );
        r.metrics = Metrics::default();
        let cost = Cost::of_client(cpu_ns);
        let mut why = Why {
            client: account,
            ..Why::default()
        };
        why.scale_layers(None, &cost);
        r.counters = Some(Cost {
            why: Some(why),
            ..cost
        });
        r
    }

    const UNIX: &[(Layer, u64)] = &[(Layer::Unix, 20), (Layer::User, 10)];

    #[test]
    fn tcp_against_unix_is_explained_by_its_packets_and_layers() {
        let unix = record(
            "unix",
            &[(Event::PacketsSent, 0.0), (Event::Syscalls, 4.0)],
            &[UNIX, UNIX, UNIX],
            1500.0,
        );
        let tcp = |trials: &[&[(Layer, u64)]]| {
            record(
                "tcp",
                &[(Event::PacketsSent, 2.0), (Event::Syscalls, 4.0)],
                trials,
                2500.0,
            )
        };
        use Layer::*;
        let steady = tcp(&[
            &[(Tcp, 12), (Ip, 3), (Loopback, 5), (User, 5)],
            &[(Tcp, 13), (Ip, 3), (Loopback, 4), (User, 5)],
            &[(Tcp, 11), (Ip, 3), (Loopback, 6), (User, 5)],
        ]);
        assert_eq!(
            explain(
                "round trip",
                Some(extra(1000.0, 900.0, 1100.0)),
                &unix,
                &steady
            )
            .unwrap(),
            "per round trip, tcp makes 2.00 packets more (unix: 0) and spends 1.00 [0.90, \
             1.10] µs more CPU time, 100% [100%, 100%] of the growth in TCP, the loopback \
             device and IP"
        );
        // The scheduler's growth swings from trial to trial: TCP and IP are named,
        // with the share they hold and its interval, the scheduler is not.
        let swinging = tcp(&[
            &[(Tcp, 12), (Ip, 4), (Scheduler, 4), (User, 5)],
            &[(Tcp, 12), (Ip, 3), (Scheduler, 0), (User, 5)],
            &[(Tcp, 11), (Ip, 4), (Scheduler, 8), (User, 5)],
        ]);
        let clause = layers(why_of(&unix), why_of(&swinging)).unwrap();
        assert!(clause.ends_with("of the growth in TCP and IP"), "{clause}");
        let Split::Named { share, layers } = split(
            &why_of(&unix).trial_layers(),
            &why_of(&swinging).trial_layers(),
        ) else {
            panic!("not named: {clause}");
        };
        assert_eq!(layers, [Layer::Tcp, Layer::Ip]);
        assert!(share.low >= EXPLAINS && share.high > share.low, "{share:?}");
        assert!(clause.starts_with(&percent_with_bounds(share)), "{clause}");
    }

    fn why_of(r: &ResultRecord) -> &Why {
        account(r).unwrap()
    }

    #[test]
    fn a_split_that_moves_between_trials_names_no_layer() {
        let unix = record(
            "unix",
            &[(Event::PacketsSent, 0.0)],
            &[
                &[(Layer::User, 15)],
                &[(Layer::User, 15)],
                &[(Layer::User, 15)],
            ],
            1500.0,
        );
        use Layer::*;
        let tcp = record(
            "tcp",
            &[(Event::PacketsSent, 2.0)],
            &[
                &[(Tcp, 20), (User, 5)],
                &[(Scheduler, 20), (User, 5)],
                &[(Tcp, 10), (Scheduler, 10), (User, 5)],
            ],
            2500.0,
        );
        let text = explain(
            "round trip",
            Some(extra(1000.0, 800.0, 1200.0)),
            &unix,
            &tcp,
        )
        .unwrap();
        assert!(text.ends_with(NOT_SETTLED), "{text}");
        assert!(
            text.contains("spends 1.00 [0.80, 1.20] µs more CPU time, "),
            "{text}"
        );
        assert!(
            !text.contains("TCP") && !text.contains("scheduler"),
            "{text}"
        );
        // The exact counts still say what tcp does more.
        assert!(text.contains("makes 2.00 packets more"), "{text}");
        // One counting trial settles nothing about the split, however clear it looks.
        let one = record("tcp", &[], &[&[(Tcp, 20), (User, 5)]], 2500.0);
        let unix_one = record("unix", &[], &[&[(User, 15)]], 1500.0);
        assert_eq!(
            layers(why_of(&unix_one), why_of(&one)).as_deref(),
            Some(NOT_SETTLED)
        );
    }

    #[test]
    fn a_difference_the_layers_do_not_hold_is_said_to_be_unexplained() {
        let a = record(
            "unix",
            &[],
            &[&[(Layer::User, 10)], &[(Layer::User, 10)]],
            1000.0,
        );
        let b = record(
            "tcp",
            &[],
            &[&[(Layer::User, 10)], &[(Layer::User, 10)]],
            900.0,
        );
        // The rounds cannot tell the extra CPU from none: waiting, whatever the
        // layers say.
        let text = explain("round trip", Some(extra(-100.0, -300.0, 100.0)), &a, &b).unwrap();
        assert!(text.contains("waiting, not work"), "{text}");
        // The rounds measured more CPU, the samples none: the account does not
        // explain it.
        let text = explain("round trip", Some(extra(300.0, 100.0, 500.0)), &a, &b).unwrap();
        assert!(text.contains("does not explain the difference"), "{text}");
        let even: Vec<(Layer, u64)> = Layer::ALL.map(|l| (l, 10)).to_vec();
        let spread = record("tcp", &[], &[&even, &even], 2000.0);
        let text = explain(
            "round trip",
            Some(extra(1900.0, 1500.0, 2300.0)),
            &a,
            &spread,
        )
        .unwrap();
        assert!(
            text.contains("spread over many layers that none explains"),
            "{text}"
        );
    }

    #[test]
    fn nothing_is_said_without_a_kernel_account() {
        let mut a = record("unix", &[], &[&[(Layer::User, 10)]], 1000.0);
        let b = record("tcp", &[], &[&[(Layer::User, 10)]], 2000.0);
        a.counters = None;
        assert_eq!(explain("round trip", None, &a, &b), None);
    }

    #[test]
    fn the_cpu_figure_is_the_comparisons_own_whatever_the_layers_add_up_to() {
        // The layers add 1000 ns; the comparison's figure from the rounds is 850.
        let a = record("unix", &[], &[&[(Layer::User, 10)]], 1000.0);
        let b = record(
            "tcp",
            &[],
            &[&[(Layer::User, 10), (Layer::Tcp, 10)]],
            2000.0,
        );
        let text = explain("round trip", Some(extra(850.0, 700.0, 1000.0)), &a, &b).unwrap();
        assert!(
            text.contains("spends 850 [700, 1000] ns more CPU time"),
            "{text}"
        );
    }

    fn extra(estimate: f64, low: f64, high: f64) -> Difference {
        Difference {
            estimate,
            low,
            high,
        }
    }
}
