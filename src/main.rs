//! sockbench: should an application talk to its local server over a Unix domain
//! socket or over loopback TCP (with or without TLS), and by how much does it
//! matter? This file only wires the command line to the commands and turns errors
//! into one line and an exit code.

use sockbench::{cli, command, error, postgres};
use std::process::ExitCode;

fn main() -> ExitCode {
    // First, while there is one thread: see `system::pg_environment`.
    sockbench::system::pg_environment::stash();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let invocation = match cli::parse_from(std::env::args_os()) {
        Ok(invocation) => invocation,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let message = one_line(&e.render().to_string());
            eprintln!("{}", postgres::redact::message(&message, &argv));
            return ExitCode::from(2);
        }
    };
    match command::dispatch(invocation, argv.clone()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = error::exit_code(&e);
            if code != 0 {
                eprintln!(
                    "error: {}",
                    postgres::redact::message(&format!("{e:#}"), &argv)
                );
            }
            ExitCode::from(code)
        }
    }
}

/// clap's message without its usage block, on one line.
fn one_line(rendered: &str) -> String {
    let message = rendered
        .split("\n\n")
        .next()
        .unwrap_or(rendered)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    format!("{message} (see --help)")
}
