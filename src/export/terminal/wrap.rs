//! Plain text in lines of a width: wrapped at spaces with an indent, and measured.
//!
//! These work on text already shown for the screen (printable, ASCII where it must
//! be), counting characters, so a line's width is what the terminal shows.

/// `text` wrapped at spaces to `width` columns (characters), the first line after
/// `first` and the others after `rest`; a word longer than a line is cut.
pub(super) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut indent = first.chars().count();
    let mut used = indent;
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        let needed = word.len() + usize::from(!empty);
        if !empty && used + needed > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = rest.to_string();
            indent = rest.chars().count();
            used = indent;
            empty = true;
        }
        // A word longer than a whole line is cut where the line ends.
        while used + word.len() > width && width > indent {
            let room = width - used;
            line.extend(word.drain(..room));
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            indent = rest.chars().count();
            used = indent;
        }
        if !empty {
            line.push(' ');
            used += 1;
        }
        used += word.len();
        line.extend(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// The widest line of `text`, in characters.
pub(super) fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_with_an_indent() {
        let text = wrap("aaa bbb ccc ddd", 9, "  ", "    ");
        assert_eq!(text, "  aaa bbb\n    ccc\n    ddd\n");
        assert_eq!(wrap("abcdefghij", 6, "", " "), "abcdef\n ghij\n");
        assert_eq!(wrap("", 10, "- ", "  "), "-\n");
    }
}
