//! One file per subcommand; `dispatch` picks the one the command line names.

mod compare;
mod completions;
mod man;
mod report;
mod run;
mod serve;

use crate::cli::{Command, Invocation, RunArgs};
use crate::dir::Dir;
use crate::error::Interrupted;
use crate::export::progress::ProgressLine;
use crate::export::stdout;
use crate::export::terminal::{Screen, Stream, LEGEND};
use crate::families;
use crate::harness::estimate::Estimate;
use crate::harness::Sink;
use crate::interrupt;
use crate::leftovers;
use crate::plan::Measuring;
use crate::report as content;
use crate::report::block::legend;
use crate::report::family::Family;
use crate::report::verdict;
use crate::results::file::{self, Claim, JsonSink};
use crate::results::{ResultFile, ResultRecord};
use crate::system::System;
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
        Some(Command::Completions(args)) => completions::run(&args),
        Some(Command::Man(args)) => man::run(&args),
        None => run::run(&RunArgs::default(), argv),
    }
}

/// A family's command: its plan is checked, then measured into a session whose
/// records are saved and printed as each experiment finishes.
fn measure(family: &Family, matches: &ArgMatches, argv: Vec<String>) -> Result<()> {
    let plan = (family.plan)(matches)?;
    let measuring = Measuring::from_arg_matches(matches)?;
    let command = ResultFile::new(families::redact_arguments(argv));
    let system = command.system.clone();
    let sink = match measuring.output.json.as_deref() {
        Some(path) => Some(JsonSink::create(path, Claim::Replace, command)?),
        None => None,
    };
    sweep_leftovers();
    let mut session = Session::open(
        sink,
        system,
        Printing {
            quiet: measuring.output.quiet || plan.prints_progress(),
            tables: measuring.output.tables || plan.full_tables(),
            experiments: Some(plan.experiments()),
        },
    );
    let progress = session.progress.clone();
    foretell(&progress, Estimate::of_command([plan.estimate()]));
    let outcome = plan.measure(&progress, &mut session);
    session.finish(outcome)
}

/// Says on stderr, when the first experiment begins, how long the command expects
/// to take (a command that fails before then prints only its error).
fn foretell(progress: &ProgressLine, estimate: Estimate) {
    let line = crate::export::progress::estimate_line(&estimate);
    // Folded to the width of standard error, as everything else shown there.
    let shown = Screen::of(Stream::Stderr).wrap(&line, "", "  ");
    progress.foretell(shown.trim_end().to_string());
}

/// Removes the temporary directories that killed runs left, of every kind a family
/// makes, and what they left of a container's network, before this run makes its own.
fn sweep_leftovers() {
    leftovers::sweep_temp(&families::leftover_kinds());
    crate::container::sweep();
}

/// Writes a rendered document to `output`, or to standard output. The file is
/// written like the result file: through its directory's descriptor, by renaming a
/// new file over an old one of this account, never over one of `inputs`, a device,
/// a FIFO, a link, or another account's file.
fn emit(text: &str, output: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(path) = output else {
        return stdout::print(text);
    };
    // Emphasis is for a terminal: a file gets none. (Text from result files has
    // every escape character escaped, so these are the terminal renderer's own.)
    let text = &text.replace("\x1b[1m", "").replace("\x1b[0m", "");
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
/// file being filled in, the records measured, the progress line, and where the
/// words for a person go.
pub struct Session {
    sink: Option<JsonSink>,
    pub progress: ProgressLine,
    /// Every record measured, for the verdict at the end (kept whether or not a
    /// result file is written).
    records: Vec<ResultRecord>,
    /// The notes that explain what was printed so far, printed once at the end.
    legend: Vec<String>,
    /// Standard output, or standard error when standard output carries the result
    /// file (`--json -`).
    stream: Stream,
    screen: Screen,
    /// Full tables per experiment rather than one line per case.
    tables: bool,
    /// The machine measured on, for the verdict's account of placement.
    system: System,
}

/// How a measuring command prints.
pub struct Printing {
    pub quiet: bool,
    pub tables: bool,
    /// The experiments it will measure, when known, for the progress line.
    pub experiments: Option<usize>,
}

impl Session {
    /// A session saving into `sink` (checked already, so a bad path failed before
    /// any measuring); installs the signal handler.
    pub fn open(sink: Option<JsonSink>, system: System, printing: Printing) -> Session {
        interrupt::install();
        let stream = if sink.as_ref().is_some_and(JsonSink::to_stdout) {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        Session {
            sink,
            progress: ProgressLine::new(printing.quiet, printing.experiments),
            records: Vec::new(),
            legend: Vec::new(),
            stream,
            screen: Screen::of(stream),
            tables: printing.tables,
            system,
        }
    }

    /// Where the results were saved, once at least one experiment was.
    fn saved_to(&self) -> Option<PathBuf> {
        self.sink.as_ref().and_then(JsonSink::written_to)
    }

    /// Prints `text` for a person.
    fn say(&self, text: &str) -> Result<()> {
        stdout::print_on(self.stream, text)
    }

    /// What closes a run: the notes, where the results are, and the verdict last,
    /// since it is the answer.
    fn closing(&self, interrupted: bool) -> String {
        // The notes explain the tables; the lines of a run without them need only
        // the verdict's own account of its percentages.
        let mut text = if self.tables {
            self.screen.legend(&self.legend, LEGEND)
        } else {
            String::new()
        };
        if let Some(path) = self.saved_to() {
            let path = path.display();
            let screen = &self.screen;
            text.push_str(&screen.wrap(
                &format!("Results saved to {path}; render them with:"),
                "",
                "  ",
            ));
            text.push_str(&screen.command(&format!("sockbench report {path}")));
            text.push_str(&screen.command(&format!(
                "sockbench report {path} --format html --output report.html"
            )));
            text.push('\n');
        }
        if interrupted {
            text.push_str(&self.screen.wrap(
                "Interrupted: this verdict covers only the experiments that finished.",
                "",
                "  ",
            ));
        }
        let lines = verdict::lines(&self.records, &self.system, &families::catalog());
        text.push_str(&self.screen.paragraphs(&verdict::text(
            &lines,
            &self.records,
            &families::catalog(),
        )));
        text
    }

    /// Ends the session: the closing words and, with `--json -`, the result file on
    /// standard output. An interruption (or a failure after a signal, which the
    /// signal caused) says what was kept, after the verdict of what finished.
    pub fn finish(self, outcome: Result<()>) -> Result<()> {
        self.progress.clear();
        if let Err(e) = &outcome {
            if e.chain().all(|c| !c.is::<Interrupted>()) && !interrupt::interrupted() {
                return outcome;
            }
        }
        let interrupted = outcome.is_err();
        let finished = !self.records.is_empty();
        let to_stdout = self.sink.as_ref().filter(|s| s.to_stdout());
        let mut said = Ok(());
        if finished {
            said = self.say(&self.closing(interrupted));
            if let Some(sink) = to_stdout {
                said = stdout::print(&sink.json()?).and(said);
            }
        }
        if !interrupted {
            return said;
        }
        let kept = match (&self.sink, self.saved_to()) {
            (Some(_), _) if to_stdout.is_some() && finished => {
                Some("the experiments that finished are on standard output".into())
            }
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
    /// Ends one experiment: clears the progress line, turns a failure after a signal
    /// into the interruption it is, saves the records and then prints them (so a
    /// closed or full standard output loses nothing): one line per case, or the full
    /// tables with `--tables`. When saving fails (a full disk), they are printed all
    /// the same before the error ends the run, so what was measured is not lost.
    fn keep(&mut self, records: Result<Vec<ResultRecord>>) -> Result<()> {
        self.progress.finished();
        let records = records.map_err(|e| match interrupt::check() {
            Err(interrupted) => interrupted,
            Ok(()) => e,
        })?;
        if self.records.is_empty() {
            // Between experiments, where nothing is timed, and only once a server
            // answered: a run that fails at its first server ends at once.
            self.system.wakeup = crate::cpu::wakeup::measure();
        }
        let wakeup = self.system.wakeup;
        let saved = match &mut self.sink {
            Some(sink) => sink
                .update(|f| f.system.wakeup = wakeup)
                .and_then(|()| sink.push(&records)),
            None => Ok(()),
        };
        let blocks = content::blocks(&records, &families::catalog());
        for note in legend(&blocks) {
            if !self.legend.contains(&note) {
                self.legend.push(note);
            }
        }
        let shown: String = if self.tables {
            blocks
                .iter()
                .map(|b| format!("{}\n", self.screen.block(b)))
                .collect()
        } else {
            format!("{}\n", self.screen.summary(&records))
        };
        self.records.extend(records);
        let printed = self.say(&shown);
        saved.context("the results above were measured but could not be saved")?;
        printed
    }
}
