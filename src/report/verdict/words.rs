//! A verdict line in words: which transport to pick and what it saves, whether that
//! matters at the rates the work typically runs, and what TLS adds.

use super::pair::{Outcome, Pair};
use crate::report::experiment::{Work, WorkKind};
use crate::report::format::{duration_interval_ns, duration_ns, factor, figure, rounds, versus};
use crate::results::metric::{Metric, Unit};

/// Below this share of one core, as printed, a cost does not matter (README: "under
/// 1% of a core").
const NEGLIGIBLE_PERCENT: f64 = 1.0;

/// The whole sentence of one line: the reference against the plain transports,
/// then TLS against tcp. `cpu_op` is the operation CPU time is counted per (`query`,
/// `64 KiB write`).
pub fn sentence(what: &str, work: &Work, metric: &Metric, pairs: &[Pair], cpu_op: &str) -> String {
    let mut parts = Vec::new();
    let (tls, mut plain): (Vec<&Pair>, Vec<&Pair>) = pairs.iter().partition(|p| is_tls(p));
    // The main statement is the reference against tcp, when tcp was measured.
    plain.sort_by_key(|p| !crate::transport::Transport::Tcp.is_named(&p.other));
    let mut plain = plain.into_iter();
    if let Some(main) = plain.next() {
        parts.push(choice(work, metric, main, cpu_op));
    }
    for other in plain {
        parts.push(also(work, metric, other));
    }
    for p in tls {
        parts.push(tls_cost(work, metric, p));
    }
    format!("{what}: {}.", parts.join(". "))
}

/// The pair a line's answer rests on: the reference against tcp when tcp was
/// measured, else against the first other plain transport.
pub fn main_pair(pairs: &[Pair]) -> Option<&Pair> {
    let plain = || pairs.iter().filter(|p| !is_tls(p));
    plain()
        .find(|p| crate::transport::Transport::Tcp.is_named(&p.other))
        .or_else(|| plain().next())
}

/// TLS against tcp.
pub fn is_tls(p: &Pair) -> bool {
    crate::transport::Transport::Tls.is_named(&p.other)
        && p.base != p.other
        && crate::transport::Transport::Tcp.is_named(&p.base)
}

/// The main statement: which to use, what it saves, and whether that matters;
/// "either is fine" where the difference is real but its extra CPU stays under 1%
/// of a core even at the busiest typical rate.
fn choice(work: &Work, metric: &Metric, p: &Pair, cpu_op: &str) -> String {
    let (a, b) = (&p.base, &p.other);
    let figures = figures(work, metric, p);
    let interval = shown_ratio(p);
    match p.outcome {
        Outcome::Differs => {
            let (win, lose) = if p.estimate() > 1.0 { (a, b) } else { (b, a) };
            let saving = if shows_time(work, metric) {
                format!("{} than {lose}", saving(work, metric, p))
            } else {
                // A rate: said from the slower side, so it reads like the ratio.
                let r = p.estimate().max(1.0 / p.estimate());
                format!("{lose} {}", longer(r, work.op, win))
            };
            let said = format!("{saving} ({figures}; {b} {interval})");
            match matters(work, p, cpu_op) {
                Some(Matters::No(why)) => {
                    format!("either is fine: {} {said}; {why}", faster(win))
                }
                Some(Matters::Yes(why)) => format!("use {} — {said}; {why}", named(win)),
                None => format!("use {} — {said}", named(win)),
            }
        }
        Outcome::Same => format!(
            "the transport does not matter — {a} and {b} are the same within ±5% \
             ({b} {interval})"
        ),
        Outcome::Inconclusive => match p.ratio.filter(|r| !r.informative()) {
            Some(r) => format!(
                "not settled — too few rounds to tell {b} from {a} ({})",
                rounds(&r)
            ),
            None => format!("not settled — {b} {interval} against {a} could be a gain or a loss"),
        },
    }
}

/// `the Unix socket is faster —`: the faster side, for "either is fine".
fn faster(win: &str) -> String {
    format!("{} is faster —", named(win))
}

/// A pair's ratio as the verdict prints it, with its interval.
fn shown_ratio(p: &Pair) -> String {
    p.ratio.as_ref().map_or("(too few rounds)".into(), versus)
}

/// What a comparison that is not settled rests on: its interval when it is narrow
/// enough to print, else its rounds and how many would settle it; what follows
/// `not settled` in every line that says so, in parentheses.
pub fn unsettled(p: &Pair) -> String {
    match &p.ratio {
        Some(r) if r.informative() => versus(r),
        Some(r) => rounds(r),
        None => "too few rounds".into(),
    }
}

/// Another plain transport (tcp6, unix-abstract, a named server) against the
/// reference, briefly.
pub(super) fn also(work: &Work, metric: &Metric, p: &Pair) -> String {
    let interval = shown_ratio(p);
    let (a, b) = (&p.base, &p.other);
    match p.outcome {
        Outcome::Differs => format!("{b}: {} ({interval})", saving_of(work, metric, p)),
        Outcome::Same => format!("{b}: the same as {a} within ±5% ({interval})"),
        Outcome::Inconclusive => format!("{b} against {a}: not settled ({})", unsettled(p)),
    }
}

/// What TLS adds over the same transport without it.
fn tls_cost(work: &Work, metric: &Metric, p: &Pair) -> String {
    extra_cost("TLS", work, metric, p)
}

/// What a layer (nginx, a pooler) adds over the same work without it, from the
/// work without it (`p.base`) and through it (`p.other`), two experiments not
/// paired round by round ([`Pair::unpaired`], which the words say):
/// `nginx adds 18.1 µs per request (direct 10.8 µs, through nginx 28.8 µs; 2.7×
/// [2.1×, 3.4×], unpaired); at 1,000 requests/s its extra CPU (…) is 2.1% of a
/// core; …`, or that it is the same within ±5%, or not settled.
pub fn layer_cost(layer: &str, work: &Work, metric: &Metric, p: &Pair, cpu_op: &str) -> String {
    let (a, b, op) = (&p.base, &p.other, work.op);
    let interval = shown_ratio(p);
    match p.outcome {
        Outcome::Differs => {
            let delta = per_op_ns(metric, p.other_cost) - per_op_ns(metric, p.base_cost);
            let verb = if delta > 0.0 { "adds" } else { "saves" };
            let by = if shows_time(work, metric) {
                format!("{verb} {} per {op}", duration_ns(delta.abs()))
            } else if p.estimate() > 1.0 {
                longer(p.estimate(), op, a)
            } else {
                format!("is faster: {a} {}", longer(1.0 / p.estimate(), op, b))
            };
            let said = format!(
                "{layer} {by} ({}; {interval}, unpaired)",
                figures(work, metric, p)
            );
            match matters(work, p, cpu_op) {
                Some(Matters::Yes(why) | Matters::No(why)) => format!("{said}; {why}"),
                None => said,
            }
        }
        Outcome::Same => format!(
            "{layer} adds nothing that matters — {a} and {b} are the same within ±5% \
             ({b} {interval}, unpaired)"
        ),
        Outcome::Inconclusive => match p.ratio.filter(|r| r.informative()) {
            Some(r) => format!(
                "what {layer} adds is not settled — {b} {} against {a} could be a gain or a \
                 loss (unpaired)",
                versus(&r)
            ),
            None => format!(
                "what {layer} adds is not settled — its rounds vary too much to tell {b} from \
                 {a} (unpaired)"
            ),
        },
    }
}

/// A line that compares cases (e.g. authentication methods) with the first case measured.
pub fn cases_sentence(what: &str, work: &Work, metric: &Metric, pairs: &[Pair]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .map(|p| extra_cost(&p.other, work, metric, p))
        .collect();
    format!("{what}: {}.", parts.join("; "))
}

/// What `who` adds over `p.base`.
fn extra_cost(who: &str, work: &Work, metric: &Metric, p: &Pair) -> String {
    let interval = shown_ratio(p);
    let figures = figures(work, metric, p);
    match p.outcome {
        Outcome::Differs if p.estimate() > 1.0 => {
            format!("{who} {} ({figures}; {interval})", adds(work, metric, p))
        }
        Outcome::Differs => format!("{who} is faster than {} here ({interval})", p.base),
        Outcome::Same => format!("{who} costs the same as {} within ±5% ({interval})", p.base),
        Outcome::Inconclusive => {
            format!("{who} against {}: not settled ({})", p.base, unsettled(p))
        }
    }
}

/// `12.9 µs less per query`.
fn saving(work: &Work, metric: &Metric, p: &Pair) -> String {
    let delta = (per_op_ns(metric, p.other_cost) - per_op_ns(metric, p.base_cost)).abs();
    format!("{} less per {}", duration_ns(delta), work.op)
}

/// The other transport's difference, from its side: `12.9 µs more per query`.
fn saving_of(work: &Work, metric: &Metric, p: &Pair) -> String {
    let (a, op) = (&p.base, work.op);
    let more = if p.estimate() > 1.0 { "more" } else { "less" };
    if shows_time(work, metric) {
        let delta = (per_op_ns(metric, p.other_cost) - per_op_ns(metric, p.base_cost)).abs();
        format!("{} {more} per {op} than {a}", duration_ns(delta))
    } else if p.estimate() > 1.0 {
        longer(p.estimate(), op, a)
    } else {
        format!("faster; {a} {}", longer(1.0 / p.estimate(), op, &p.other))
    }
}

/// `adds 1.9 ms per connection over tcp`, or for a rate `takes 34% longer per
/// transaction than tcp`.
fn adds(work: &Work, metric: &Metric, p: &Pair) -> String {
    if shows_time(work, metric) {
        let delta = per_op_ns(metric, p.other_cost) - per_op_ns(metric, p.base_cost);
        format!(
            "adds {} per {} over {}",
            duration_ns(delta),
            work.op,
            p.base
        )
    } else {
        longer(p.estimate(), work.op, &p.base)
    }
}

/// A ratio of times above 1 as words: `takes 34% longer per byte than tcp`,
/// `takes 2.1× as long per byte as tcp`.
fn longer(r: f64, op: &str, than: &str) -> String {
    if r >= 2.0 {
        format!("takes {} as long per {op} as {than}", factor(r))
    } else {
        format!(
            "takes {:.0}% longer per {op} than {than}",
            (r - 1.0) * 100.0
        )
    }
}

/// Both figures the ratio comes from: `unix 23.5 µs, tcp 32.0 µs`.
fn figures(work: &Work, metric: &Metric, p: &Pair) -> String {
    let show = |cost: f64| {
        if shows_time(work, metric) {
            duration_ns(per_op_ns(metric, cost))
        } else {
            figure(metric.unit, 1.0 / cost)
        }
    };
    format!(
        "{} {}, {} {}",
        p.base,
        show(p.base_cost),
        p.other,
        show(p.other_cost)
    )
}

/// Whether the line speaks of time per operation (rather than a rate).
fn shows_time(work: &Work, metric: &Metric) -> bool {
    metric.unit == Unit::Time
        || matches!(work.kind, WorkKind::Requests | WorkKind::Connections)
            && metric.unit == Unit::Rate
}

/// A cost as time per operation in ns: a time already, or a rate's reciprocal.
pub fn per_op_ns(metric: &Metric, cost: f64) -> f64 {
    match metric.unit {
        Unit::Time => cost,
        _ => cost * 1e9,
    }
}

/// What the extra CPU says at the rates the work typically runs.
enum Matters {
    /// At the busiest typical rate it is 1% of a core or more: the sentence.
    Yes(String),
    /// Under 1% of a core even at the busiest typical rate, or the difference is
    /// waiting rather than CPU: the sentence.
    No(String),
}

/// Whether the difference matters at the rates the work typically runs: the extra
/// CPU per operation (client and server, [`Pair::extra_cpu_ns`]) as a share of one
/// core at each rate. A share counts from 1% as it is printed, so "1.0%" never
/// reads as "does not matter".
fn matters(work: &Work, p: &Pair, cpu_op: &str) -> Option<Matters> {
    if work.typical.is_empty() {
        return None;
    }
    let extra = p.extra_cpu_ns?;
    if extra.estimate * (p.estimate() - 1.0) <= 0.0 {
        return Some(Matters::Yes(
            "the difference is waiting, not CPU: it adds latency, not load".into(),
        ));
    }
    let per_op = extra.estimate.abs();
    let share = |rate: f64| rate * per_op / 1e9;
    let ops = work.ops;
    let rates = work.typical;
    let first_that_counts = rates.iter().position(|r| counts(share(*r)));
    let (low, high) = if extra.estimate < 0.0 {
        (-extra.high, -extra.low)
    } else {
        (extra.low, extra.high)
    };
    let cpu = format!(
        "its extra CPU ({} per {cpu_op}, client and server)",
        duration_interval_ns(per_op, low, high),
    );
    if low <= 0.0 {
        // The rounds cannot tell the extra CPU from none: no share of a core to
        // weigh, as the why says too.
        return Some(Matters::Yes(format!(
            "{cpu} is not told from zero: the difference adds latency, not measurable load"
        )));
    }
    Some(match first_that_counts {
        None => {
            let top = rates[rates.len() - 1];
            Matters::No(format!(
                "even at {} {ops}/s {cpu} is {} of a core",
                whole(top),
                core_share(share(top))
            ))
        }
        Some(0) => Matters::Yes(format!(
            "at {} {ops}/s {cpu} is already {} of a core",
            whole(rates[0]),
            core_share(share(rates[0]))
        )),
        Some(i) => Matters::Yes(format!(
            "at {} {ops}/s {cpu} is {} of a core; at {}/s ({}) it does not matter",
            whole(rates[i]),
            core_share(share(rates[i])),
            whole(rates[i - 1]),
            core_share(share(rates[i - 1]))
        )),
    })
}

/// What the extra CPU of `p` comes to at the work's typical rates, as a clause:
/// `at 10,000 round trips/s its extra CPU (…) is 4.3% of a core; …`.
pub(super) fn matters_words(work: &Work, p: &Pair, cpu_op: &str) -> Option<String> {
    matters(work, p, cpu_op).map(|m| match m {
        Matters::Yes(s) | Matters::No(s) => s,
    })
}

/// Whether a share of one core counts: 1% or more as [`core_share`] prints it.
fn counts(share: f64) -> bool {
    shown_percent(share) >= NEGLIGIBLE_PERCENT
}

/// `the Unix socket` for unix, else the label.
pub fn named(label: &str) -> String {
    match label.parse() {
        Ok(crate::transport::Transport::Unix) => "the Unix socket".into(),
        _ => label.to_string(),
    }
}

/// A share of one core: `1.2%`, `0.04%`.
fn core_share(share: f64) -> String {
    let p = shown_percent(share);
    if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 0.1 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// A share of one core in percent, rounded as [`core_share`] prints it.
fn shown_percent(share: f64) -> f64 {
    let p = share * 100.0;
    let digits = if p >= 10.0 {
        0
    } else if p >= 0.1 {
        1
    } else {
        2
    };
    let scale = 10f64.powi(digits);
    (p * scale).round() / scale
}

/// `a`, `a and b`, `a, b and c`.
pub fn listed(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A whole number with thousands separated: `10,000`.
pub fn whole(n: f64) -> String {
    crate::units::thousands(&format!("{:.0}", n.max(0.0)))
}
