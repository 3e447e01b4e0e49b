//! One file per subcommand; `dispatch` picks the one the command line names.

mod postgres;
mod serve;
mod sockets;

use crate::cli::{Cli, Command, SocketsArgs};
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
