//! `sockbench serve`: the server alone, until Ctrl-C or SIGTERM.

use crate::cli::ServeArgs;
use crate::interrupt;
use crate::sockets::server;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::Duration;

pub fn run(args: &ServeArgs) -> Result<()> {
    interrupt::install();
    let bound = server::bind_all(&args.listen)?;
    let socket_files: Vec<_> = bound
        .iter()
        .filter_map(|b| b.endpoint.path().cloned())
        .collect();
    {
        let mut out = std::io::stdout().lock();
        for b in &bound {
            writeln!(out, "listening {}", b.endpoint)?;
        }
        writeln!(out, "ready")?;
        out.flush()?;
    }
    server::spawn_all(bound).context("cannot start the server threads")?;
    while !interrupt::interrupted() {
        std::thread::sleep(Duration::from_millis(50));
    }
    for path in socket_files {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
