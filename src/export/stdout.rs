//! Standard output that may be a closed pipe or a full disk.
//!
//! `println!` panics when stdout is gone (`sockbench … | head -1`). Here a closed pipe
//! becomes [`StdoutClosed`], which ends the command quietly (everything finished was
//! saved before it was printed), and any other failure, such as a full disk, one
//! error line and a non-zero exit.

use super::terminal::Stream;
use crate::error::StdoutClosed;
use anyhow::Result;
use std::io::Write;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::anyhow!("cannot write to standard output: {e}")),
    }
}

/// Writes `text` to `stream`: standard output as [`print`] does, or standard error,
/// where the words for a person go while standard output carries the result file.
pub fn print_on(stream: Stream, text: &str) -> Result<()> {
    match stream {
        Stream::Stdout => print(text),
        Stream::Stderr => {
            let mut err = std::io::stderr().lock();
            err.write_all(text.as_bytes())
                .and_then(|()| err.flush())
                .map_err(|e| anyhow::anyhow!("cannot write to standard error: {e}"))
        }
    }
}
