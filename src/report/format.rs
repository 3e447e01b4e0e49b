//! Numbers formatted for tables: durations, rates and relative differences.

use crate::results::metric::Unit;
use crate::stats::{Interval, MOST_ROUNDS};

/// Nanoseconds with a unit that keeps three significant digits: `850 ns`,
/// `12.3 µs`, `4.56 ms`.
pub fn duration_ns(ns: f64) -> String {
    let (value, unit) = match ns {
        n if n >= 1e9 => (n / 1e9, "s"),
        n if n >= 1e6 => (n / 1e6, "ms"),
        n if n >= 1e3 => (n / 1e3, "µs"),
        n => (n, "ns"),
    };
    format!("{} {unit}", three_digits(value))
}

/// A duration with its interval, all in the estimate's unit so the bracket reads
/// at a glance: `2.13 [1.17, 3.08] ms`.
pub fn duration_interval_ns(estimate: f64, low: f64, high: f64) -> String {
    let (scale, unit) = match estimate.abs() {
        n if n >= 1e9 => (1e9, "s"),
        n if n >= 1e6 => (1e6, "ms"),
        n if n >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    let show = |ns: f64| {
        let v = ns / scale;
        let sign = if v < 0.0 { "−" } else { "" };
        format!("{sign}{}", three_digits(v.abs()))
    };
    format!("{} [{}, {}] {unit}", show(estimate), show(low), show(high))
}

/// A per-second rate: `950/s`, `21.4k/s`, `1.20M/s`.
pub fn rate(per_s: f64) -> String {
    let (value, unit) = match per_s {
        r if r >= 1e6 => (r / 1e6, "M"),
        r if r >= 1e3 => (r / 1e3, "k"),
        r => (r, ""),
    };
    format!("{}{unit}/s", three_digits(value))
}

/// A count with three significant digits: `950`, `21.4k`, `1.20M`.
pub fn count(n: f64) -> String {
    let (value, unit) = match n {
        n if n >= 1e6 => (n / 1e6, "M"),
        n if n >= 1e3 => (n / 1e3, "k"),
        n => (n, ""),
    };
    format!("{}{unit}", three_digits(value))
}

/// Bytes per second in decimal units: `2.31 GB/s`, `850 MB/s`.
pub fn bytes_rate(per_s: f64) -> String {
    let (value, unit) = match per_s {
        r if r >= 1e9 => (r / 1e9, "GB/s"),
        r if r >= 1e6 => (r / 1e6, "MB/s"),
        r if r >= 1e3 => (r / 1e3, "kB/s"),
        r => (r, "B/s"),
    };
    format!("{} {unit}", three_digits(value))
}

/// Ratios at or beyond these read as factors (`24×`, `0.41×`), nearer ones as
/// percentages (`+36%`): a percentage of a large difference (`+2329%`) is hard
/// to read, a factor of a small one (`1.04×`) hides it.
const FACTOR_ABOVE: f64 = 2.0;
const FACTOR_BELOW: f64 = 0.5;

/// A cost ratio (time per operation over the reference's) as a person reads it:
/// `+36%`, `−4.2%`, `+0.0%` near 1, `3.5×`, `0.41×` from 2 up or 0.5 down.
pub fn relative(ratio: f64) -> String {
    if reads_as_factor(ratio) {
        factor(ratio)
    } else {
        percent(ratio)
    }
}

fn reads_as_factor(ratio: f64) -> bool {
    ratio >= FACTOR_ABOVE || ratio <= FACTOR_BELOW
}

/// A ratio as a factor with two significant digits (whole from 10 up): `24×`,
/// `3.5×`, `0.41×`.
pub fn factor(ratio: f64) -> String {
    let digits = match ratio.abs() {
        r if r >= 10.0 => 0,
        r if r >= 1.0 => 1,
        r if r >= 0.1 => 2,
        _ => 3,
    };
    format!("{ratio:.digits$}×")
}

/// A ratio as extra time in percent: `+28%`, `−4.2%`, `+0.0%`.
pub fn percent(ratio: f64) -> String {
    let p = (ratio - 1.0) * 100.0;
    // A rounded −0.0 reads as +0.0.
    let sign = if p <= -0.05 { "−" } else { "+" };
    if p.abs() < 10.0 {
        format!("{sign}{:.1}%", p.abs())
    } else {
        format!("{sign}{:.0}%", p.abs())
    }
}

/// A cost ratio with its 95% interval, all three in the estimate's form:
/// `+28% [+19%, +37%]`, `24× [19×, 30×]`, `0.41× [0.30×, 0.55×]`; where the
/// interval is too wide to say anything ([`Interval::informative`]), `not settled
/// (2 rounds)`, short enough for a line or a cell (the verdict says how many
/// rounds would settle it, [`rounds`]).
pub fn versus(ratio: &Interval) -> String {
    if !ratio.informative() {
        return format!("not settled ({} rounds)", ratio.n);
    }
    let show = if reads_as_factor(ratio.estimate) {
        factor
    } else {
        percent
    };
    format!(
        "{} [{}, {}]",
        show(ratio.estimate),
        show(ratio.low),
        show(ratio.high)
    )
}

/// The rounds an interval rests on and, when more would settle it, about how
/// many: `2 rounds; about 40 would settle it`, or that they vary too much for
/// more to help ([`MOST_ROUNDS`]).
pub fn rounds(ratio: &Interval) -> String {
    match ratio.rounds_to_settle() {
        Some(m) if m <= MOST_ROUNDS => format!("{} rounds; about {m} would settle it", ratio.n),
        Some(_) => format!(
            "{} rounds, which vary too much for more to settle it",
            ratio.n
        ),
        None => format!("{} rounds", ratio.n),
    }
}

/// `PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, …` without the
/// build details after " on ".
pub fn short_version(version: &str) -> String {
    version.split(" on ").next().unwrap_or(version).to_string()
}

/// A figure in its unit: times as durations, rates per second, byte rates in
/// bytes per second, counts as whole numbers.
pub fn figure(unit: Unit, value: f64) -> String {
    match unit {
        Unit::Time => duration_ns(value),
        Unit::Rate => rate(value),
        Unit::ByteRate => bytes_rate(value),
        Unit::Count => format!("{value:.0}"),
    }
}

/// A sentence or title from a lower-case phrase: `Round trip by message size`.
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn three_digits(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_units() {
        assert_eq!(duration_ns(850.0), "850 ns");
        assert_eq!(duration_ns(12_345.0), "12.3 µs");
        assert_eq!(duration_ns(4_560_000.0), "4.56 ms");
        assert_eq!(rate(21_400.0), "21.4k/s");
        assert_eq!(rate(1_200_000.0), "1.20M/s");
        assert_eq!(bytes_rate(2.31e9), "2.31 GB/s");
    }

    #[test]
    fn small_differences_read_as_percentages_large_ones_as_factors() {
        assert_eq!(relative(1.36), "+36%");
        assert_eq!(relative(0.958), "−4.2%");
        assert_eq!(relative(1.0), "+0.0%");
        assert_eq!(relative(0.9999), "+0.0%");
        assert_eq!(relative(1.999), "+100%");
        assert_eq!(relative(2.0), "2.0×");
        assert_eq!(relative(3.5), "3.5×");
        assert_eq!(relative(24.29), "24×");
        assert_eq!(relative(0.5), "0.50×");
        assert_eq!(relative(0.41), "0.41×");
        assert_eq!(relative(0.051), "0.051×");
    }

    fn interval(estimate: f64, low: f64, high: f64) -> Interval {
        Interval {
            estimate,
            low,
            high,
            n: 3,
        }
    }

    #[test]
    fn an_interval_reads_in_the_form_of_its_estimate() {
        assert_eq!(versus(&interval(1.36, 1.31, 1.40)), "+36% [+31%, +40%]");
        // A small estimate keeps percentages even where a bound is large.
        assert_eq!(versus(&interval(1.9, 1.5, 2.7)), "+90% [+50%, +170%]");
        assert_eq!(versus(&interval(24.29, 19.51, 30.23)), "24× [20×, 30×]");
        assert_eq!(versus(&interval(2.1, 1.5, 2.9)), "2.1× [1.5×, 2.9×]");
        assert_eq!(versus(&interval(0.41, 0.3, 0.55)), "0.41× [0.30×, 0.55×]");
        assert_eq!(versus(&interval(0.978, 0.79, 1.19)), "−2.2% [−21%, +19%]");
    }

    #[test]
    fn an_interval_too_wide_to_say_anything_is_not_settled_with_its_rounds() {
        let wide = Interval {
            estimate: 1.03,
            low: 0.004,
            high: 247.0,
            n: 2,
        };
        let shown = versus(&wide);
        assert!(shown.starts_with("not settled (2 rounds"), "{shown}");
        assert!(!shown.contains('['), "{shown}");
        // Just within the rule: printed with its bounds.
        let edge = Interval {
            estimate: 2.0,
            low: 1.0,
            high: 4.0,
            n: 8,
        };
        assert_eq!(versus(&edge), "2.0× [1.0×, 4.0×]");
    }

    #[test]
    fn a_duration_interval_shares_the_estimates_unit() {
        assert_eq!(
            duration_interval_ns(2_125_447.0, 1_170_000.0, 3_080_000.0),
            "2.13 [1.17, 3.08] ms"
        );
        assert_eq!(
            duration_interval_ns(1_200_000.0, 950_000.0, 1_450_000.0),
            "1.20 [0.95, 1.45] ms"
        );
        assert_eq!(
            duration_interval_ns(40_000.0, -5_000.0, 85_000.0),
            "40.0 [−5.00, 85.0] µs"
        );
    }
}
