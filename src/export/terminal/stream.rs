//! The screen behind a stream, as the system tells it: the width from `COLUMNS` or
//! the terminal, the locale, and whether emphasis may be used.

use super::locale::utf8_locale;
use super::Screen;
use std::io::IsTerminal;
use std::os::fd::AsRawFd;

/// The width of a screen nobody measured: output into a pipe or a file. Eighty
/// columns read everywhere (a pager, a mail, an issue, a CI log) and keep the
/// output the same whoever runs the command; `COLUMNS` overrides it.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrower than this, a `COLUMNS` or a terminal is taken as this.
const MIN_WIDTH: usize = 30;

/// The stream a [`Screen`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Screen {
    /// The screen behind `stream`: width from `COLUMNS`, else the terminal's, else
    /// [`DEFAULT_WIDTH`]; ASCII unless the locale is UTF-8; emphasis only on a
    /// terminal without `NO_COLOR`.
    pub fn of(stream: Stream) -> Screen {
        let terminal = match stream {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        };
        let fd = match stream {
            Stream::Stdout => std::io::stdout().as_raw_fd(),
            Stream::Stderr => std::io::stderr().as_raw_fd(),
        };
        let width = columns_variable()
            .or_else(|| terminal.then(|| terminal_width(fd)).flatten())
            .unwrap_or(DEFAULT_WIDTH);
        Screen {
            width: width.max(MIN_WIDTH),
            ascii: !utf8_locale(|name| std::env::var(name).ok()),
            emphasis: terminal
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb"),
        }
    }
}

/// `COLUMNS`, when set to a number.
fn columns_variable() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

/// The width of the terminal on `fd`.
fn terminal_width(fd: std::os::fd::RawFd) -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes only into the winsize struct it is given.
    let got = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (got == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
