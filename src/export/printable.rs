//! Text from a result file shown on a terminal: a result file can come from anyone,
//! and an escape sequence in a transport name or a system fact would otherwise
//! reach the terminal raw (moving the cursor, rewriting what was printed, setting
//! the window title). Control characters and the bidirectional overrides are shown
//! as escapes instead.

use std::borrow::Cow;

/// `text` with every control character (newlines too: this is for one line or one
/// cell) shown as a Rust-style escape such as `\u{1b}`.
pub fn printable(text: &str) -> Cow<'_, str> {
    shown(text, hidden)
}

/// The same for a multi-line document (an SVG chart), whose newlines stay.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    shown(text, |c| c != '\n' && hidden(c))
}

fn shown(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
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
/// escape character among them) and the bidirectional embeddings and isolates.
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
