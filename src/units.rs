//! Byte sizes as people type them (`64`, `4KiB`, `1M`) and as tables show them,
//! and text from elsewhere as it may reach a terminal.

use std::borrow::Cow;

/// Parses a byte count: a whole number with an optional unit B, K/KiB, M/MiB
/// (binary multiples; case-insensitive).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    if below_zero(trimmed) {
        return Err(format!(
            "size '{}' is below zero; write e.g. 64, 4KiB, 1MiB",
            shown(text)
        ));
    }
    if digits.is_empty() {
        return Err(format!(
            "size '{}' is not a number of bytes; write e.g. 64, 4KiB, 1MiB",
            shown(text)
        ));
    }
    let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        _ => {
            return Err(format!(
                "size '{}' has an unknown unit; use B, KiB or MiB",
                shown(text)
            ))
        }
    };
    // Only digits are left, so the parse fails only by overflow.
    digits
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(multiplier))
        .ok_or_else(|| format!("size '{}' is too large", shown(text)))
}

/// Parses a count such as `5000`, `5k`, `0.5M` or `2M` (decimal multipliers), from
/// 1 to `most`.
pub fn parse_count(text: &str, most: u64) -> Result<u64, String> {
    let trimmed = text.trim();
    let (number, multiplier) = match trimmed.char_indices().last() {
        Some((i, 'k' | 'K')) => (&trimmed[..i], 1e3),
        Some((i, 'm' | 'M')) => (&trimmed[..i], 1e6),
        _ => (trimmed, 1.0),
    };
    let count = number.parse::<f64>().map(|v| v * multiplier);
    match count {
        Ok(count) if count.is_finite() && count.fract() == 0.0 => {
            if count < 1.0 || count > most as f64 {
                Err(format!(
                    "count '{}' is out of range; use 1 to {}",
                    shown(text),
                    format_count(most)
                ))
            } else {
                Ok(count as u64)
            }
        }
        _ => Err(format!(
            "count '{}' is not a whole number; write e.g. 5000, 10k, 0.5M",
            shown(text)
        )),
    }
}

/// Parses the value of a whole-number option (`10`); anything else is refused with
/// what the option takes: a value below zero, a fraction or a word, or one too large
/// for it. (The option's own range, such as 1 to 1000 rounds, is checked later.)
pub fn parse_whole<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    let trimmed = text.trim();
    if below_zero(trimmed) {
        return Err("takes a whole number such as 10, not one below zero".into());
    }
    // The largest of the unsigned types' maxima that `T` holds.
    let most = [u64::MAX, u32::MAX.into(), u16::MAX.into(), u8::MAX.into()]
        .into_iter()
        .find(|&n| T::try_from(n).is_ok())
        .unwrap_or(0);
    match trimmed.parse::<u64>() {
        Ok(n) => T::try_from(n).map_err(|_| format!("takes a whole number up to {most}")),
        Err(_) if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("takes a whole number up to {most}"))
        }
        Err(_) => Err("takes a whole number such as 10".into()),
    }
}

/// True for a number below zero, with or without a unit (`-5`, `-0.5`, `-3s`).
fn below_zero(text: &str) -> bool {
    text.strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

/// How much of a text from the user an error message echoes.
pub const SHOWN_CHARS: usize = 80;

/// `text` as an error message echoes it: its first [`SHOWN_CHARS`] characters, and
/// `…` when there were more, so a pasted file or a runaway value stays one line.
pub fn shown(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]).into(),
        None => text.into(),
    }
}

/// `text` with every character a terminal acts on instead of showing (see
/// [`hidden`]; newlines too: this is for one line or one cell) shown as a
/// Rust-style escape such as `\u{1b}`. Every text sockbench did not write itself
/// (a server's error reply, a libpq message, a result file, a path or a value the
/// user gave) goes through this before it reaches a terminal: an escape sequence
/// in it would otherwise move the cursor, rewrite what was printed or set the
/// window title, and a bidirectional control would show it in another order.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped_where(text, hidden)
}

/// The same for a multi-line document (an SVG chart), whose newlines stay.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escaped_where(text, |c| c != '\n' && hidden(c))
}

fn escaped_where(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if escaped(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Characters a terminal acts on instead of showing: C0 and C1 controls (the
/// escape character among them), and the bidirectional controls: embeddings and
/// overrides, isolates, and the left-to-right, right-to-left and Arabic marks.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
        )
}

/// The longest word the last guard leaves whole: longer than [`SHOWN_CHARS`], so
/// the paths sockbench names in its own messages (result files, temporary
/// directories) are not cut, while a runaway value still is.
const LONGEST_WORD: usize = 4 * SHOWN_CHARS;

/// Every word of `line` longer than [`LONGEST_WORD`] characters cut, with `…`: the
/// last guard, for messages that echo a value (or a part of one, such as a host
/// inside a URL) without passing it through [`shown`].
pub fn shorten_words(line: &str) -> String {
    line.split(' ')
        .map(|w| match w.char_indices().nth(LONGEST_WORD) {
            Some((cut, _)) => format!("{}…", &w[..cut]),
            None => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a duration such as `10s`, `500ms`, `2m`, `1h` or `10` (seconds).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let trimmed = text.trim();
    let bad = || {
        format!(
            "duration '{}' is not understood; write e.g. 10s, 500ms, 2m",
            shown(text)
        )
    };
    if below_zero(trimmed) {
        return Err(format!(
            "duration '{}' is below zero; use 1ms to 24h",
            shown(text)
        ));
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1e3,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    if !(0.001..=86_400.0).contains(&seconds) {
        return Err(format!(
            "duration '{}' is out of range; use 1ms to 24h",
            shown(text)
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// Formats a length of time for a person: `75 ms`, `1.5 s`, `45 s`, `1 min 10 s`,
/// `1 h 5 min`.
pub fn format_wall(seconds: f64) -> String {
    let s = seconds.max(0.0);
    if s < 1.0 {
        return format!("{} ms", (s * 1e3).round() as u64);
    }
    if s < 10.0 {
        let tenths = (s * 10.0).round() / 10.0;
        return if tenths.fract() == 0.0 {
            format!("{tenths:.0} s")
        } else {
            format!("{tenths:.1} s")
        };
    }
    let whole = s.round() as u64;
    match whole {
        w if w < 60 => format!("{w} s"),
        w if w < 3_600 => match w % 60 {
            0 => format!("{} min", w / 60),
            r => format!("{} min {r} s", w / 60),
        },
        w => match (w % 3_600).div_ceil(60) {
            0 => format!("{} h", w / 3_600),
            m => format!("{} h {m} min", w / 3_600),
        },
    }
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

/// `digits` with thousands separated: `10,000`.
pub fn thousands(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a byte count compactly: `64 B`, `4 KiB`, `1.5 MiB`.
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    let scaled = |unit: u64, name: &str| {
        if bytes % unit == 0 {
            format!("{} {name}", bytes / unit)
        } else if (bytes * 10) % unit == 0 {
            format!("{:.1} {name}", bytes as f64 / unit as f64)
        } else {
            // Not a tenth of a unit (UDP's 65,507 B): the bytes themselves.
            format!("{} B", thousands(&bytes.to_string()))
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
    fn lengths_of_time_for_a_person() {
        assert_eq!(format_wall(0.075), "75 ms");
        assert_eq!(format_wall(1.5), "1.5 s");
        assert_eq!(format_wall(5.0), "5 s");
        assert_eq!(format_wall(45.2), "45 s");
        assert_eq!(format_wall(70.0), "1 min 10 s");
        assert_eq!(format_wall(120.0), "2 min");
        assert_eq!(format_wall(3_900.0), "1 h 5 min");
    }

    #[test]
    fn durations_with_units() {
        use std::time::Duration;
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("25h")
            .unwrap_err()
            .contains("out of range; use 1ms to 24h"));
    }

    #[test]
    fn counts_with_decimal_multipliers() {
        assert_eq!(parse_count("5000", 1 << 40), Ok(5000));
        assert_eq!(parse_count("10k", 1 << 40), Ok(10_000));
        assert_eq!(parse_count("0.5M", 1 << 40), Ok(500_000));
        assert_eq!(parse_count("1M", 1_000_000), Ok(1_000_000));
        assert!(parse_count("1.5", 1 << 40)
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_count("lots", 1 << 40)
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(format_count(500_000), "500k");
        assert_eq!(format_count(2_000_000), "2M");
        assert_eq!(format_count(1_500_000), "1.5M");
        assert_eq!(format_count(5000), "5000");
    }

    #[test]
    fn counts_out_of_range_say_the_range() {
        for (text, most) in [("0", 1_000_000), ("1e15", 1_000_000), ("2M", 1_000_000)] {
            let e = parse_count(text, most).unwrap_err();
            assert!(e.contains("out of range; use 1 to 1M"), "{text}: {e}");
        }
        assert!(parse_count("1e12", 100_000_000).is_err());
    }

    #[test]
    fn long_values_are_cut_when_shown() {
        let long = "h".repeat(70_000);
        let cut = shown(&long);
        assert_eq!(cut.chars().count(), SHOWN_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(shown("short"), "short");
        let line = shorten_words(&format!("cannot reach 'host={long}': no such host"));
        assert!(line.len() < LONGEST_WORD + 100, "{line}");
        let path = format!("/{}/out.json", "d".repeat(150));
        assert!(shorten_words(&format!("cannot write {path}")).contains(&path));
        assert!(
            line.ends_with(": no such host") || line.contains("no such host"),
            "{line}"
        );
        // Characters, not bytes: a long run of 'é' is cut on a character boundary.
        assert_eq!(shown(&"é".repeat(100)).chars().count(), SHOWN_CHARS + 1);
    }

    #[test]
    fn values_below_zero_are_called_so() {
        assert_eq!(parse_whole::<u32>("10"), Ok(10));
        assert_eq!(parse_whole::<u64>("0"), Ok(0));
        for (text, says) in [
            ("-5", "not one below zero"),
            ("-0.5", "not one below zero"),
            ("1.5", "such as 10"),
            ("ten", "such as 10"),
            ("4294967296", "up to 4294967295"),
        ] {
            let e = parse_whole::<u32>(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert!(parse_size("-5").unwrap_err().contains("below zero"));
        assert!(parse_duration("-3s").unwrap_err().contains("below zero"));
        assert!(parse_count("-5", 100).unwrap_err().contains("out of range"));
    }

    #[test]
    fn escapes_are_shown_not_sent() {
        assert_eq!(printable("tcp"), "tcp");
        assert_eq!(printable("µs ± 5%"), "µs ± 5%");
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(
            printable("x\u{9b}y\u{202e}z\n"),
            "x\\u{9b}y\\u{202e}z\\u{a}"
        );
        assert_eq!(printable_lines("<a>\u{1b}\n</a>"), "<a>\\u{1b}\n</a>");
        // Every bidirectional control, and nothing printable near them.
        for c in [
            '\u{202a}', '\u{202d}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{61c}',
        ] {
            let shown = printable(&format!("a{c}b")).into_owned();
            assert_eq!(shown, format!("a{}b", c.escape_unicode()));
        }
        for c in ['\u{2029}', '\u{200d}', 'ي', '\u{2070}'] {
            assert_eq!(printable(&c.to_string()), c.to_string());
        }
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
        assert_eq!(format_size(65_507), "65,507 B");
        assert_eq!(format_size(212_960), "212,960 B");
    }
}
