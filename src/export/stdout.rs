//! Standard output that may be a closed pipe or a full disk.
//!
//! `println!` panics when stdout is gone (`sockbench … | head -1`). Here a closed pipe
//! becomes [`StdoutClosed`], which ends the command quietly (everything finished was
//! saved before it was printed), and any other failure, such as a full disk, one
//! error line and a non-zero exit.

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
