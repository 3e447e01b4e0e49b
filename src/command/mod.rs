//! One file per subcommand; `dispatch` picks the one the command line names.

mod compare;
mod postgres;
mod report;
mod run;
mod serve;
mod sockets;

use crate::cli::{Cli, Command, RunArgs};
use crate::export::json::JsonSink;
use crate::interrupt;
use crate::output::progress::Progress;
use crate::results::{ResultFile, ResultRecord};
use anyhow::Result;
use std::path::Path;

/// Runs the command; with none, `run` with its defaults.
pub fn dispatch(cli: Cli, argv: Vec<String>) -> Result<()> {
    match cli.command {
        Some(Command::Run(args)) => run::run(&args, argv),
        Some(Command::Sockets(args)) => sockets::run(&args, argv),
        Some(Command::Postgres(args)) => postgres::run(&args, argv),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        None => run::run(
            &RunArgs {
                json: None,
                quiet: false,
                pg_bindir: None,
            },
            argv,
        ),
    }
}

/// Writes a rendered document to `output`, or to standard output.
fn emit(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            crate::error::usage(format!(
                "cannot write {}: {e}; choose a writable path for --output",
                path.display()
            ))
        }),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth a message.
            let _ = out.write_all(text.as_bytes());
            Ok(())
        }
    }
}

/// What a measuring command carries from one experiment to the next: the result
/// file being filled in and the progress bar.
pub struct Session {
    sink: Option<JsonSink>,
    pub progress: Progress,
}

impl Session {
    /// Starts the result file at `json` (written at once, so a bad path fails before
    /// any measuring) and installs the Ctrl-C handler.
    pub fn open(json: Option<&Path>, command: Vec<String>, quiet: bool) -> Result<Session> {
        interrupt::install();
        let sink = match json {
            Some(path) => Some(JsonSink::create(path, ResultFile::new(command))?),
            None => None,
        };
        Ok(Session {
            sink,
            progress: Progress::new(quiet),
        })
    }

    /// Ends one experiment: clears the progress bar, turns a failure after Ctrl-C into
    /// the interruption it is, prints the table and saves the records.
    fn keep(
        &mut self,
        records: Result<Vec<ResultRecord>>,
        table: impl FnOnce(&[ResultRecord]) -> String,
    ) -> Result<()> {
        self.progress.clear();
        let records = records.map_err(|e| match interrupt::check() {
            Err(interrupted) => anyhow::Error::new(interrupted),
            Ok(()) => e,
        })?;
        println!("{}", table(&records));
        if let Some(sink) = &mut self.sink {
            sink.push(&records)?;
        }
        Ok(())
    }

    /// Records the PostgreSQL server's version among the system facts.
    fn note_postgres_version(&mut self, version: &str) -> Result<()> {
        match &mut self.sink {
            Some(sink) => sink.update(|f| f.system.postgres_version = Some(version.to_string())),
            None => Ok(()),
        }
    }

    /// The result file as written so far.
    fn file(&self) -> Option<&ResultFile> {
        self.sink.as_ref().map(JsonSink::file)
    }
}
