//! A one-line progress note on stderr, redrawn between measurements (never inside a
//! timed loop) and only when stderr is a terminal.

use std::io::{IsTerminal, Write};

pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Replaces the progress line.
    pub fn show(&self, text: &str) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{text}");
            let _ = err.flush();
        }
    }

    /// Removes the progress line, before a table is printed.
    pub fn clear(&self) {
        self.show("");
    }
}
