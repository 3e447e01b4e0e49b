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
