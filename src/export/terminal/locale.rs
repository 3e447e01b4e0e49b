//! What characters a screen may show: whether the locale is UTF-8, and text spelt
//! in ASCII for a screen whose locale is not.

/// Whether the locale's characters are UTF-8, as the C library decides: the first
/// of `LC_ALL`, `LC_CTYPE` and `LANG` that is set and not empty names the locale,
/// and none means `C`, which is ASCII.
pub fn utf8_locale(var: impl Fn(&str) -> Option<String>) -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .into_iter()
        .find_map(|name| var(name).filter(|v| !v.is_empty()))
        .is_some_and(|locale| {
            let locale = locale.to_ascii_lowercase();
            locale.contains("utf-8") || locale.contains("utf8")
        })
}

/// `text` in ASCII: the signs sockbench prints spelt out (`µs` as `us`, `×` as
/// `x`, `±` as `+/-`), any other character beyond ASCII as `?`.
pub fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            'µ' | 'μ' => out.push('u'),
            '–' | '—' | '−' | '‐' | '‑' => out.push('-'),
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '×' => out.push('x'),
            '±' => out.push_str("+/-"),
            '≈' | '∼' => out.push('~'),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '…' => out.push_str("..."),
            '·' | '•' => out.push('-'),
            '²' => out.push('2'),
            '³' => out.push('3'),
            '°' => out.push_str(" deg"),
            '‘' | '’' => out.push('\''),
            '“' | '”' => out.push('"'),
            '\u{a0}' | '\u{2009}' | '\u{202f}' => out.push(' '),
            _ => out.push('?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locale_decides_ascii_as_the_c_library_does() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(utf8_locale(env(&[("LANG", "en_US.UTF-8")])));
        assert!(utf8_locale(env(&[("LANG", "de_DE.utf8")])));
        assert!(!utf8_locale(env(&[])));
        assert!(!utf8_locale(env(&[("LANG", "C")])));
        // LC_ALL wins over LANG; an empty one is skipped.
        assert!(!utf8_locale(env(&[("LC_ALL", "C"), ("LANG", "C.UTF-8")])));
        assert!(utf8_locale(env(&[("LC_ALL", ""), ("LANG", "C.UTF-8")])));
        assert!(!utf8_locale(env(&[
            ("LC_CTYPE", "POSIX"),
            ("LANG", "C.UTF-8")
        ])));
    }

    #[test]
    fn signs_are_spelt_in_ascii() {
        assert_eq!(
            ascii("72.6 µs – 2.1× ± 5% → ok"),
            "72.6 us - 2.1x +/- 5% -> ok"
        );
        assert_eq!(ascii("R² ≈ 1 … 日"), "R2 ~ 1 ... ?");
    }
}
