//! One file per subcommand; `dispatch` picks the one the command line names.

mod compare;
mod report;
mod run;
mod serve;

use crate::cli::{Command, Invocation, RunArgs};
use crate::dir::Dir;
use crate::error::Interrupted;
use crate::export::progress::Progress;
use crate::export::stdout;
use crate::export::terminal::{block_text, legend_text};
use crate::families;
use crate::harness::Sink;
use crate::interrupt;
use crate::plan::Measuring;
use crate::postgres::redact;
use crate::report as content;
use crate::report::block::legend;
use crate::report::experiment::Family;
use crate::results::file::{self, Claim, JsonSink};
use crate::results::{ResultFile, ResultRecord};
use anyhow::{Context, Result};
use clap::{ArgMatches, FromArgMatches};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
    let command = ResultFile::new(redact::arguments(argv));
    let sink = match measuring.json.as_deref() {
        Some(path) => Some(JsonSink::create(path, Claim::Replace, command)?),
        None => None,
    };
    let mut session = Session::open(sink, measuring.quiet);
    let progress = session.progress.clone();
    let outcome = plan.measure(&progress, &mut session);
    session.finish(outcome)
}

/// Writes a rendered document to `output`, or to standard output. The file is
/// written like the result file: through its directory's descriptor, by renaming a
/// new file over an old one of this account, never over one of `inputs`, a device,
/// a FIFO, a link, or another account's file.
fn emit(text: &str, output: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(path) = output else {
        return stdout::print(text);
    };
    let refuse = |why: &str| {
        crate::error::usage(format!(
            "cannot write {}: {why}; choose another path for --output",
            path.display()
        ))
    };
    let (dir, name) = Dir::open_parent(path).map_err(|e| refuse(&e.to_string()))?;
    let before = file::replaceable(&dir, &name).map_err(|e| refuse(&e))?;
    if let Some(entry) = &before {
        let is_input = inputs.iter().any(|input| {
            std::fs::metadata(input).is_ok_and(|m| m.dev() == entry.dev && m.ino() == entry.ino)
        });
        if is_input {
            return Err(refuse(
                "it is one of the files being read, and would be lost",
            ));
        }
    }
    let (temp, temp_name) = file::scratch_file(&dir, &name, before.as_ref(), text.as_bytes())
        .map_err(|e| refuse(&e.to_string()))?;
    drop(temp);
    dir.rename(&temp_name, &name).map_err(|e| {
        let _ = dir.remove_file(&temp_name);
        refuse(&e.to_string())
    })
}

/// What a measuring command carries from one experiment to the next: the result
/// file being filled in and the progress bar.
pub struct Session {
    sink: Option<JsonSink>,
    pub progress: Progress,
    /// The notes that explain the tables printed so far, printed once at the end.
    legend: Vec<String>,
}

impl Session {
    /// A session saving into `sink` (checked already, so a bad path failed before
    /// any measuring); installs the signal handler.
    pub fn open(sink: Option<JsonSink>, quiet: bool) -> Session {
        interrupt::install();
        Session {
            sink,
            progress: Progress::new(quiet),
            legend: Vec::new(),
        }
    }

    /// The results measured so far.
    fn file(&self) -> Option<&ResultFile> {
        self.sink.as_ref().map(JsonSink::file)
    }

    /// Where the results were saved, once at least one experiment was.
    fn saved_to(&self) -> Option<PathBuf> {
        self.sink.as_ref().and_then(JsonSink::written_to)
    }

    /// Ends the session: an interruption (or a failure after a signal, which the
    /// signal caused) says what was kept.
    pub fn finish(self, outcome: Result<()>) -> Result<()> {
        let Err(e) = outcome else {
            return stdout::print(&legend_text(&self.legend));
        };
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
    /// a closed or full standard output loses nothing). When saving fails (a full
    /// disk), the table is printed all the same before the error ends the run, so
    /// what was measured is not lost.
    fn keep(&mut self, records: Result<Vec<ResultRecord>>) -> Result<()> {
        self.progress.clear();
        let records = records.map_err(|e| match interrupt::check() {
            Err(interrupted) => interrupted,
            Ok(()) => e,
        })?;
        let saved = match &mut self.sink {
            Some(sink) => sink.push(&records),
            None => Ok(()),
        };
        let blocks = content::blocks(&records, &families::catalog());
        for note in legend(&blocks) {
            if !self.legend.contains(&note) {
                self.legend.push(note);
            }
        }
        let tables: String = blocks.iter().map(block_text).collect();
        let printed = stdout::print(&format!("{tables}\n"));
        saved.context("the table above was measured but could not be saved")?;
        printed
    }
}
