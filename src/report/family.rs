//! A server family as the registry (`families.rs`) sees it: what it measures, its
//! command, and what the rest of sockbench composes from every family instead of
//! knowing any by name: its part of the default `sockbench run`, the temporary
//! directories it may leave behind, and how its secrets are hidden.
//!
//! Every field is a plain value or function, so a family is one `static` in its
//! folder and one line in `families.rs`.

use super::experiment::Description;
use crate::harness::{Progress, Sink};
use crate::leftovers::DirKind;
use crate::transport::Transport;

/// A server family: the servers sockbench measures one way (its own socket server;
/// PostgreSQL), with the transports it can reach them over, its experiments and its
/// command. Each family folder declares one; `families.rs` lists them.
pub struct Family {
    /// Its name: its command, and the first part of its experiments' ids.
    pub name: &'static str,
    /// The transports its managed server listens on and its client can use.
    pub transports: &'static [Transport],
    /// What the system facts call the server it measures (`PostgreSQL`), when it
    /// measures a server of its own kind; its version is then a fact of every report.
    pub server: Option<&'static str>,
    /// Its experiments, in the order reports list them.
    pub experiments: &'static [&'static Description],
    /// Its command line: about, help and arguments (which flatten the arguments
    /// every measuring command shares, `Measuring`).
    pub command: fn() -> clap::Command,
    /// Validates its command's arguments into a plan, before anything starts.
    pub plan: fn(&clap::ArgMatches) -> anyhow::Result<Box<dyn Plan>>,
    /// Its part of the default `sockbench run`, if it has one.
    pub run: Option<RunPart>,
    /// The kinds of private temporary directory it makes, for the sweep of the ones
    /// a killed run left (`leftovers`).
    pub leftovers: &'static [DirKind],
    /// How its secrets are kept out of the result file and error messages, if its
    /// arguments can hold any.
    pub redaction: Option<Redaction>,
}

/// A family's part of the default `sockbench run`: its words in `run`'s help and
/// in the top-level help, its own options of `run`, and its quick plan. `cli.rs`
/// composes them, so a new family edits no `cli.rs`.
#[derive(Clone, Copy)]
pub struct RunPart {
    /// What it is called in a list of the suites `run` measures (`PostgreSQL`,
    /// `nginx in front of an app server`).
    pub suite: &'static str,
    /// Its sentence in `run`'s help: what it measures in the default run, and when
    /// (e.g. only where its server is installed).
    pub says: &'static str,
    /// Adds its own options to `run` (PostgreSQL's `--pg-bindir`), which only its
    /// [`Quick`] reads.
    pub options: fn(clap::Command) -> clap::Command,
    /// Its quick plan.
    pub plan: Quick,
}

/// A family's quick plan for `sockbench run`, from the arguments of `run` (its
/// `ArgMatches`: an option of `run` that belongs to one family, such as
/// `--pg-bindir`, is declared by that family's [`RunPart::options`] and read only
/// by it). `Ok(None)`
/// means the family is skipped because its server is not installed; the family has
/// then printed one line on stderr saying so and how to install it. An error (e.g.
/// an option of `run` pointing where there is no server) ends the run before
/// anything is measured.
pub type Quick = fn(&clap::ArgMatches) -> anyhow::Result<Option<Box<dyn Plan>>>;

/// How a family hides its secrets (e.g. a password in a connection string).
#[derive(Clone, Copy)]
pub struct Redaction {
    /// One command-line argument as it may be saved in the result file or shown.
    pub argument: fn(&str) -> String,
    /// An error message that may quote arguments of the command line (`argv`), as
    /// it may be shown.
    pub message: fn(&str, &[String]) -> String,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redaction")
    }
}

/// A family's validated plan: it starts its managed server (or finds the user's),
/// runs its experiments through the harness, hands each to the sink as it finishes,
/// and stops the server whichever way it ends.
pub trait Plan {
    fn measure(&self, progress: &dyn Progress, sink: &mut dyn Sink) -> anyhow::Result<()>;
    /// How many experiments it will hand to the sink, for the progress line.
    fn experiments(&self) -> usize;
    /// How long it is expected to take: its setup and each experiment's trials,
    /// the same [`Timing`](crate::harness::estimate::Timing) its schedules run by.
    fn estimate(&self) -> crate::harness::estimate::Estimate;
    /// True when it prints lines of its own on stderr while it measures (pgbench's
    /// `-P`): the progress line, redrawn in place, is then not drawn.
    fn prints_progress(&self) -> bool {
        false
    }
    /// True when what it was asked for is printed only in the full tables
    /// (pgbench's `-r`: a time per command of the script), which are then printed
    /// as `--tables` would.
    fn full_tables(&self) -> bool {
        false
    }
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Family {
    /// Refuses, in one line, a transport the family cannot measure.
    pub fn check_transports(&self, asked: &[Transport]) -> Result<(), String> {
        match asked.iter().find(|t| !self.transports.contains(t)) {
            None => Ok(()),
            Some(t) => Err(format!(
                "{} cannot be measured over {t}; choose from {}",
                self.name,
                self.transports
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static UNIX_ONLY: Family = Family {
        name: "unixonly",
        transports: &[Transport::Unix],
        server: None,
        experiments: &[],
        command: || clap::Command::new("unixonly"),
        plan: |_| anyhow::bail!("not measured in this test"),
        run: None,
        leftovers: &[],
        redaction: None,
    };

    #[test]
    fn a_transport_the_family_does_not_support_is_refused_by_name() {
        assert_eq!(UNIX_ONLY.check_transports(&[Transport::Unix]), Ok(()));
        let err = UNIX_ONLY
            .check_transports(&[Transport::Unix, Transport::Tcp6])
            .unwrap_err();
        assert_eq!(
            err,
            "unixonly cannot be measured over tcp6; choose from unix"
        );
    }
}
