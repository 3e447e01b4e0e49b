//! Numbers formatted for tables: durations, rates and relative differences.

use crate::results::metric::Unit;
use crate::stats::Interval;

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

/// The extra time compared with the fastest: `fastest`, `+47%`, `+1.2%`.
pub fn vs_fastest(relative: f64) -> String {
    let percent = relative * 100.0;
    if percent < 0.05 {
        "fastest".into()
    } else if percent < 10.0 {
        format!("+{percent:.1}%")
    } else {
        format!("+{percent:.0}%")
    }
}

/// A ratio as extra time in percent: `+28%`, `-4.2%`, `+0.0%`.
pub fn percent(ratio: f64) -> String {
    let p = (ratio - 1.0) * 100.0;
    let sign = if p < 0.0 { "-" } else { "+" };
    if p.abs() < 10.0 {
        format!("{sign}{:.1}%", p.abs())
    } else {
        format!("{sign}{:.0}%", p.abs())
    }
}

/// A ratio with its interval: `+28% [+19%, +37%]`.
pub fn versus(ratio: &Interval) -> String {
    format!(
        "{} [{}, {}]",
        percent(ratio.estimate),
        percent(ratio.low),
        percent(ratio.high)
    )
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
        assert_eq!(vs_fastest(0.0), "fastest");
        assert_eq!(vs_fastest(0.47), "+47%");
        assert_eq!(vs_fastest(0.012), "+1.2%");
    }
}
