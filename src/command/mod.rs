//! One file per subcommand; `dispatch` picks the one the command line names.

mod postgres;
mod serve;
mod sockets;

use crate::cli::{Cli, Command, SocketsArgs};
use crate::export::json::JsonSink;
use crate::interrupt;
use crate::output::progress::Progress;
use crate::results::ResultRecord;
use anyhow::Result;

/// Runs the command; with none, the default sockets suite.
pub fn dispatch(cli: Cli, argv: Vec<String>) -> Result<()> {
    match cli.command {
        Some(Command::Sockets(args)) => sockets::run(&args, argv),
        Some(Command::Postgres(args)) => postgres::run(&args, argv),
        Some(Command::Serve(args)) => serve::run(&args),
        None => sockets::run(&default_sockets_args(), argv),
    }
}

fn default_sockets_args() -> SocketsArgs {
    use clap::Parser;
    #[derive(Parser)]
    struct Defaults {
        #[command(flatten)]
        args: SocketsArgs,
    }
    Defaults::parse_from(["sockbench"]).args
}

/// Ends one experiment: clears the progress line, turns a failure after Ctrl-C into
/// the interruption it is, prints the table and saves the records.
fn keep(
    records: Result<Vec<ResultRecord>>,
    progress: &Progress,
    sink: &mut Option<JsonSink>,
    table: impl FnOnce(&[ResultRecord]) -> String,
) -> Result<()> {
    progress.clear();
    let records = records.map_err(|e| match interrupt::check() {
        Err(interrupted) => anyhow::Error::new(interrupted),
        Ok(()) => e,
    })?;
    println!("{}", table(&records));
    if let Some(sink) = sink {
        sink.push(&records)?;
    }
    Ok(())
}
