//! One file per subcommand; `dispatch` picks the one the command line names.

mod compare;
mod report;
mod run;
mod serve;

use crate::cli::{Command, Invocation, RunArgs};
use crate::error::Interrupted;
use crate::export::progress::Progress;
use crate::export::stdout;
use crate::export::terminal::block_text;
use crate::families;
use crate::harness::Sink;
use crate::interrupt;
use crate::plan::Measuring;
use crate::postgres::redact;
use crate::report as content;
use crate::report::experiment::Family;
use crate::results::file::{Claim, JsonSink};
use crate::results::{ResultFile, ResultRecord};
use anyhow::Result;
use clap::{ArgMatches, FromArgMatches};
use std::path::Path;

/// Runs the command; with none, `run` with its defaults.
pub fn dispatch(invocation: Invocation, argv: Vec<String>) -> Result<()> {
    let cli = match invocation {
        Invocation::Family(family, matches) => return measure(family, &matches, argv),
        Invocation::Builtin(cli) => cli,
    };
    match cli.command {
        Some(Command::Run(args)) => run::run(&args, argv),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        None => run::run(&RunArgs::default(), argv),
    }
}

/// A family's command: its plan is checked, then measured into a session whose
/// records are saved and printed as each experiment finishes.
fn measure(family: &Family, matches: &ArgMatches, argv: Vec<String>) -> Result<()> {
    let plan = (family.plan)(matches)?;
    let measuring = Measuring::from_arg_matches(matches)?;
    let json = measuring.json.as_deref().map(|p| (p, Claim::Replace));
    let mut session = Session::open(json, redact::arguments(argv), measuring.quiet)?;
    let progress = session.progress.clone();
    let outcome = plan.measure(&progress, &mut session);
    session.finish(outcome)
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
        None => stdout::print(text),
    }
}

/// What a measuring command carries from one experiment to the next: the result
/// file being filled in and the progress bar.
pub struct Session {
    sink: Option<JsonSink>,
    pub progress: Progress,
}

impl Session {
    /// Checks that the result file can be written at `json` (so a bad path fails
    /// before any measuring) and installs the signal handler.
    pub fn open(
        json: Option<(&Path, Claim)>,
        command: Vec<String>,
        quiet: bool,
    ) -> Result<Session> {
        interrupt::install();
        let sink = match json {
            Some((path, claim)) => Some(JsonSink::create(path, claim, ResultFile::new(command))?),
            None => None,
        };
        Ok(Session {
            sink,
            progress: Progress::new(quiet),
        })
    }

    /// The results measured so far.
    fn file(&self) -> Option<&ResultFile> {
        self.sink.as_ref().map(JsonSink::file)
    }

    /// Where the results were saved, once at least one experiment was.
    fn saved_to(&self) -> Option<&Path> {
        self.sink.as_ref().and_then(JsonSink::written_to)
    }

    /// Ends the session: an interruption (or a failure after a signal, which the
    /// signal caused) says what was kept.
    pub fn finish(self, outcome: Result<()>) -> Result<()> {
        let Err(e) = outcome else { return Ok(()) };
        if e.chain().all(|c| !c.is::<Interrupted>()) && !interrupt::interrupted() {
            return Err(e);
        }
        let kept = match (&self.sink, self.saved_to()) {
            (_, Some(path)) => Some(format!(
                "the experiments that finished are saved in {}",
                path.display()
            )),
            (Some(_), None) => {
                Some("no experiment had finished; no result file was written".into())
            }
            (None, None) => None,
        };
        Err(Interrupted { kept }.into())
    }
}

impl Sink for Session {
    /// Ends one experiment: clears the progress bar, turns a failure after a signal
    /// into the interruption it is, saves the records and then prints the table (so
    /// a closed or full standard output loses nothing).
    fn keep(&mut self, records: Result<Vec<ResultRecord>>) -> Result<()> {
        self.progress.clear();
        let records = records.map_err(|e| match interrupt::check() {
            Err(interrupted) => interrupted,
            Ok(()) => e,
        })?;
        if let Some(sink) = &mut self.sink {
            sink.push(&records)?;
        }
        let tables: String = content::blocks(&records, &families::catalog())
            .iter()
            .map(block_text)
            .collect();
        stdout::print(&format!("{tables}\n"))
    }
}
