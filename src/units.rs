//! Byte sizes as people type them (`64`, `4KiB`, `1M`) and as tables show them.

/// Parses a byte count: a whole number with an optional unit B, K/KiB, M/MiB
/// (binary multiples; case-insensitive).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    if digits.is_empty() {
        return Err(format!(
            "size '{text}' is not a number of bytes; write e.g. 64, 4KiB, 1MiB"
        ));
    }
    let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        _ => {
            return Err(format!(
                "size '{text}' has an unknown unit; use B, KiB or MiB"
            ))
        }
    };
    let value: u64 = digits.parse().map_err(|_| {
        format!("size '{text}' is not a number of bytes; write e.g. 64, 4KiB, 1MiB")
    })?;
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size '{text}' is too large"))
}

/// Parses a count such as `5000`, `5k`, `0.5M` or `2M` (decimal multipliers).
pub fn parse_count(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let bad = || format!("count '{text}' is not a whole number; write e.g. 5000, 10k, 0.5M");
    let (number, multiplier) = match trimmed.char_indices().last() {
        Some((i, 'k' | 'K')) => (&trimmed[..i], 1e3),
        Some((i, 'm' | 'M')) => (&trimmed[..i], 1e6),
        _ => (trimmed, 1.0),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let count = value * multiplier;
    if !count.is_finite() || count < 1.0 || count.fract() != 0.0 || count > 1e12 {
        return Err(bad());
    }
    Ok(count as u64)
}

/// Parses a duration such as `10s`, `500ms`, `2m` or `10` (seconds).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let trimmed = text.trim();
    let bad = || format!("duration '{text}' is not understood; write e.g. 10s, 500ms, 2m");
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1e3,
        "m" | "min" => value * 60.0,
        _ => return Err(bad()),
    };
    if !(0.001..=86_400.0).contains(&seconds) {
        return Err(format!("duration '{text}' must be between 1ms and 24h"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// Formats a count compactly: `5000`, `500k`, `2M`.
pub fn format_count(n: u64) -> String {
    if n >= 1_000_000 && n % 100_000 == 0 {
        format!("{}M", n as f64 / 1e6)
    } else if n >= 100_000 && n % 1_000 == 0 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// Formats a byte count compactly: `64 B`, `4 KiB`, `1.5 MiB`.
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    let scaled = |unit: u64, name: &str| {
        if bytes % unit == 0 {
            format!("{} {name}", bytes / unit)
        } else {
            format!("{:.1} {name}", bytes as f64 / unit as f64)
        }
    };
    match bytes {
        b if b >= MIB => scaled(MIB, "MiB"),
        b if b >= KIB => scaled(KIB, "KiB"),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_with_units() {
        use std::time::Duration;
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5h").is_err());
    }

    #[test]
    fn counts_with_decimal_multipliers() {
        assert_eq!(parse_count("5000"), Ok(5000));
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("0.5M"), Ok(500_000));
        assert!(parse_count("0").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("lots").is_err());
        assert_eq!(format_count(500_000), "500k");
        assert_eq!(format_count(2_000_000), "2M");
        assert_eq!(format_count(1_500_000), "1.5M");
        assert_eq!(format_count(5000), "5000");
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("64B"), Ok(64));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert!(parse_size("4GiB").is_err());
        assert!(parse_size("many").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_size(64), "64 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1 << 20), "1 MiB");
        assert_eq!(format_size(1536), "1.5 KiB");
    }
}
