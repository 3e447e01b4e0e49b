//! `sockbench completions SHELL`: a completion script for the whole command line,
//! the families' commands and options included, since it is generated from the same
//! `cli::command()` that parses the arguments.

use crate::cli::CompletionsArgs;
use crate::export::stdout;
use anyhow::Result;

pub fn run(args: &CompletionsArgs) -> Result<()> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sockbench", &mut script);
    stdout::print(&String::from_utf8_lossy(&script))
}
