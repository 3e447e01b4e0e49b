//! The sentence that says why one transport costs more than another, made from
//! the kernel's account of both (counting trial): which events the dearer one adds
//! per operation (packets through the loopback device, network softirqs, system
//! calls, wakeups), and in which layers its extra CPU time is. Where the layers do
//! not explain the difference, it says so.

use super::words::listed;
use crate::cpu::why::{Event, Layer, Why};
use crate::report::columns::why::{layer_times, per_op};
use crate::report::format::duration_interval_ns;
use crate::results::ResultRecord;
use crate::stats::Difference;

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

/// `85% of the growth in TCP and IP`: the layers whose time grew most, as a share
/// of all that grew (a layer the other transport does not use, such as Unix
/// sockets against TCP, shrinks); or that the layers do not explain it. None
/// without layers on both sides, or when no layer grew.
fn layers(a: &Why, b: &Why) -> Option<String> {
    let (la, lb) = (layer_times(a), layer_times(b));
    if la.is_empty() || lb.is_empty() {
        return None;
    }
    let of = |all: &[(Layer, f64)], layer: Layer| {
        all.iter()
            .find(|(l, _)| *l == layer)
            .map_or(0.0, |(_, ns)| *ns)
    };
    let mut grown: Vec<(Layer, f64)> = Layer::ALL
        .iter()
        .map(|&l| (l, of(&lb, l) - of(&la, l)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    grown.sort_by(|x, y| y.1.total_cmp(&x.1));
    let growth: f64 = grown.iter().map(|(_, d)| d).sum();
    if growth <= 0.0 {
        return None;
    }
    // The two layers that grew most, and a third that holds a tenth of the growth.
    let top: Vec<(Layer, f64)> = grown
        .into_iter()
        .enumerate()
        .take_while(|(i, (_, d))| *i < 2 || (*i == 2 && *d >= 0.1 * growth))
        .map(|(_, g)| g)
        .collect();
    let share = top.iter().map(|(_, d)| d).sum::<f64>() / growth;
    let names: Vec<String> = top.iter().map(|(l, _)| describe(*l).to_string()).collect();
    Some(if share < EXPLAINS {
        "spread over many layers that none explains".into()
    } else {
        format!("{:.0}% of the growth in {}", 100.0 * share, listed(&names))
    })
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
    use crate::cpu::why::Account;
    use crate::cpu::{Cost, Counts};
    use crate::results::{Metrics, Params};

    fn record(transport: &str, events: &[(Event, f64)], layers: &[(Layer, f64)]) -> ResultRecord {
        let account = Account {
            events: events.iter().map(|(e, n)| (e.name().into(), *n)).collect(),
            layers: layers.iter().map(|(l, n)| (l.name().into(), *n)).collect(),
            ..Account::default()
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
        r.counters = Some(Cost {
            source: "perf_event".into(),
            client: Counts::default(),
            server: None,
            client_cpu: None,
            server_cpus: Vec::new(),
            why: Some(Why {
                client: account,
                server: None,
                tracepoints: Vec::new(),
            }),
        });
        r
    }

    #[test]
    fn tcp_against_unix_is_explained_by_its_packets_and_layers() {
        let unix = record(
            "unix",
            &[(Event::PacketsSent, 0.0), (Event::Syscalls, 4.0)],
            &[(Layer::Unix, 1000.0), (Layer::User, 500.0)],
        );
        let tcp = record(
            "tcp",
            &[(Event::PacketsSent, 2.0), (Event::Syscalls, 4.0)],
            &[
                (Layer::Tcp, 1200.0),
                (Layer::Ip, 300.0),
                (Layer::Loopback, 500.0),
                (Layer::User, 500.0),
            ],
        );
        let text = explain(
            "round trip",
            Some(extra(1000.0, 800.0, 1200.0)),
            &unix,
            &tcp,
        )
        .unwrap();
        assert_eq!(
            text,
            "per round trip, tcp makes 2.00 packets more (unix: 0) and spends 1.00 [0.80, \
             1.20] µs more CPU time, 100% of the growth in TCP, the loopback device and IP"
        );
    }

    #[test]
    fn a_difference_the_layers_do_not_hold_is_said_to_be_unexplained() {
        let a = record("unix", &[], &[(Layer::User, 1000.0)]);
        let b = record("tcp", &[], &[(Layer::User, 900.0)]);
        let text = explain("round trip", Some(extra(-100.0, -300.0, 100.0)), &a, &b).unwrap();
        assert!(text.contains("waiting, not work"), "{text}");
        let spread = record(
            "tcp",
            &[],
            &Layer::ALL.map(|l| (l, if l == Layer::User { 1000.0 } else { 100.0 })),
        );
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
        let mut a = record("unix", &[], &[(Layer::User, 1000.0)]);
        let b = record("tcp", &[], &[(Layer::User, 2000.0)]);
        a.counters = None;
        assert_eq!(explain("round trip", None, &a, &b), None);
    }

    #[test]
    fn the_cpu_figure_is_the_comparisons_own_whatever_the_layers_add_up_to() {
        // The layers add 1000 ns; the comparison's figure from the rounds is 850.
        let a = record("unix", &[], &[(Layer::User, 1000.0)]);
        let b = record("tcp", &[], &[(Layer::User, 1000.0), (Layer::Tcp, 1000.0)]);
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
