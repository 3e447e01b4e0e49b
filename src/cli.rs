//! The command line as clap sees it: raw values, help text and examples. The
//! commands of the server families come from the families themselves (see
//! `families.rs`); turning arguments into a validated plan happens in each family's
//! `plan.rs`.

use crate::export::Format;
use crate::families::FAMILIES;
use crate::report::experiment::Family;
use crate::report::family::RunPart;
use crate::transport::Endpoint;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// What `--version` and `-V` print after the name: the version and the commit built
/// from (`build.rs`; `-modified` when the checkout had uncommitted changes).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SOCKBENCH_COMMIT"),
    ")"
);

/// Measures Unix domain sockets against loopback TCP and TLS on this machine.
#[derive(Debug, Parser)]
#[command(
    name = "sockbench",
    version = VERSION,
    about,
    // The long help and `run`'s help name the families' suites: `command()`.
    after_help = "Examples:\n  \
                  sockbench\n  \
                  sockbench report sockbench-results/*.json --format html --output report.html\n  \
                  sockbench compare laptop.json server.json --format markdown\n  \
                  sockbench sockets --quick\n  \
                  sockbench postgres --quick --json pg.json\n  \
                  sockbench redis --quick\n  \
                  sockbench sockets --transports unix,tcp --workloads pingpong --sizes 1,64,1MiB\n  \
                  sockbench serve --listen unix:/tmp/sb.sock --listen tcp:127.0.0.1:7000"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Everything in about 2½ minutes: the quick suites of every family, a verdict,
    /// and a result file (the default command).
    ///
    /// Client and server are pinned to one CPU, a different one each round (the
    /// result's `placement` is `same`): placed freely, a round trip on a small
    /// machine is fast or slow by where the scheduler put the two, which differs
    /// between the transports of one round and from run to run. To measure other
    /// placements, run a family's command with `--quick --placement free,split`.
    Run(RunArgs),
    /// Run the sockbench server alone, e.g. for a client on another host.
    Serve(ServeArgs),
    /// Render saved result files (or directories of them) as terminal tables,
    /// Markdown, one HTML page, CSV or JSON.
    Report(ReportArgs),
    /// Two or more result files side by side: system facts, then each headline
    /// figure on every file, whether it changed from the first, and whether the gap
    /// between the transports changed.
    Compare(CompareArgs),
    /// Print a shell completion script to standard output.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to standard output, or write one page per
    /// command into a directory.
    Man(ManArgs),
}

/// `run`'s own arguments; each family adds its own ([`RunPart::options`]).
#[derive(Debug, Default, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub output: crate::plan::Output,
}

/// The top-level long help: what sockbench measures, and what `run` runs.
fn long_about() -> String {
    format!(
        "Measures how much a Unix domain socket saves over loopback TCP and TLS on this \
         machine: for opening connections, for small round trips, for bulk transfer and \
         under many clients.\n\n\
         With no command, runs `sockbench run`: the quick suites of {} (each where its \
         server is installed), a verdict, and a result file under sockbench-results/.",
        list(&run_parts().map(|r| r.suite).collect::<Vec<_>>(), ", ")
    )
}

/// `run`'s help after its options: what it runs, family by family, and how long.
fn run_after_help() -> String {
    format!(
        "Examples:\n  \
         sockbench run\n  \
         sockbench run --json laptop.json --quiet\n\n\
         Runs {}. It takes about 2½ minutes on a quiet 2-core machine (153 s measured, \
         four counting trials for the kernel's account included) and longer when other \
         work shares the cores. One line per case prints as each experiment finishes (the \
         full tables with --tables, or later with `sockbench report FILE`), the verdict at \
         the end. The result file is rewritten after every experiment, so an interrupted \
         run keeps what finished, and prints the verdict of what finished.",
        list(&run_parts().map(|r| r.says).collect::<Vec<_>>(), "; ")
    )
}

/// The families' parts of `run`, in their order.
fn run_parts() -> impl Iterator<Item = &'static RunPart> {
    FAMILIES.iter().filter_map(|f| f.run.as_ref())
}

/// `a`, `a and b`, `a, b and c` (with `between` `, `; `; ` when the items hold
/// commas themselves: `a; b; and c`).
fn list(items: &[&str], between: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] if between == ", " => format!("{} and {last}", rest.join(between)),
        [rest @ .., last] => format!("{}{between}and {last}", rest.join(between)),
    }
}

/// How `report` and `compare` render, and where to.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,

    /// Write to PATH instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench report sockbench-results/2026-11-22T10-00-00Z.json\n  \
    sockbench report run.json --format markdown --output RESULTS.md\n  \
    sockbench report a.json b.json --format html --output report.html\n  \
    sockbench report sockbench-results/ --format csv --output results.csv\n\n\
    A directory stands for every *.json file in it, in name order. CSV has one row per \
    record and figure (headline, ratio to the reference, CPU per operation); JSON is the \
    whole report with its numbers.")]
pub struct ReportArgs {
    /// Result files written by sockbench (--json), or directories of them
    /// (sockbench-results/).
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub render: RenderArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench compare laptop.json server.json\n  \
    sockbench compare laptop.json server.json cloud.json --format markdown\n  \
    sockbench compare before.json after.json --format html --output compare.html\n\n\
    The first file (A) is the baseline. Figures are matched by experiment, transport \
    and parameters. For each, every other file's time per operation over A's (rates \
    inverted: above 1 is slower), and for each transport against the reference (unix), \
    its paired ratio in every file and how it changed from A: did the unix-vs-tcp gap \
    change?")]
pub struct CompareArgs {
    /// The first result file (System A, the baseline).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,

    /// The second result file (System B).
    #[arg(value_name = "B.json")]
    pub b: PathBuf,

    /// More result files (C, D, …), a column each.
    #[arg(value_name = "C.json")]
    pub more: Vec<PathBuf>,

    #[command(flatten)]
    pub render: RenderArgs,
}

impl CompareArgs {
    /// Every file, A first.
    pub fn files(&self) -> Vec<&std::path::Path> {
        [&self.a, &self.b]
            .into_iter()
            .chain(&self.more)
            .map(PathBuf::as_path)
            .collect()
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Addresses: unix:/path, unix-abstract:NAME, tcp:127.0.0.1:PORT, \
    tcp:[::1]:PORT, tls:127.0.0.1:PORT (port 0 picks a free one).\n\
    The server prints 'listening ADDR' for each address, then 'ready', and serves until \
    interrupted.\n\n\
    Examples:\n  sockbench serve --listen unix:/tmp/sb.sock --listen tls:127.0.0.1:7443\n  \
    sockbench serve --http --listen unix:/tmp/app.sock --listen tcp:127.0.0.1:0"
)]
pub struct ServeArgs {
    /// Address to listen on (repeatable).
    #[arg(long = "listen", value_name = "ADDR", required = true)]
    pub listen: Vec<Endpoint>,
    /// Serve HTTP instead: sockbench's own app server, which answers GET /?size=N
    /// with N bytes (0 to 1 MiB); on tls addresses HTTPS, its certificate made at
    /// start, its TLS sessions resumable.
    #[arg(long)]
    pub http: bool,
    /// As root, with --http: hand the Unix sockets to this account (mode 0600) and
    /// run the server as it.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub account: Option<String>,
    /// With --http: let at most N connections wait to be accepted on each address
    /// (the listen backlog; the kernel lets one more wait, and caps N at
    /// net.core.somaxconn) [default: as many as the kernel allows].
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..=65_535))]
    pub backlog: Option<u32>,
    /// Read a secret (32 hexadecimal digits, one line) from standard input: a
    /// datagram request that does not carry it starts no session. The server that
    /// `sockbench sockets` starts for itself gets one.
    #[arg(long, hide = true, conflicts_with = "http")]
    pub secret_on_stdin: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench completions bash > /etc/bash_completion.d/sockbench\n  \
    sockbench completions zsh > ~/.zfunc/_sockbench\n  \
    sockbench completions fish > ~/.config/fish/completions/sockbench.fish")]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench man | man -l -\n  \
    sockbench man --output /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Write sockbench.1 and one page per command (sockbench-sockets.1, …) into DIR
    /// instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// What the command line asks for: a command of sockbench's own, or a family's.
pub enum Invocation {
    Builtin(Cli),
    Family(&'static Family, ArgMatches),
}

/// The whole command line: sockbench's own commands, and one per server family
/// listed right after `run`.
pub fn command() -> clap::Command {
    let mut command = Cli::command().long_about(long_about());
    command = command.mut_subcommand("run", |run| {
        run_parts().fold(run.after_help(run_after_help()), |run, part| {
            (part.options)(run)
        })
    });
    for (i, family) in FAMILIES.iter().enumerate() {
        command = command.subcommand((family.command)().display_order(i + 1));
    }
    let builtins = ["serve", "report", "compare", "completions", "man"];
    for (i, name) in builtins.into_iter().enumerate() {
        command = command.mut_subcommand(name, |c| c.display_order(FAMILIES.len() + 1 + i));
    }
    let after_help = match command.get_after_help() {
        Some(examples) => format!("{examples}\n\n{}", crate::error::EXIT_CODES),
        None => crate::error::EXIT_CODES.to_string(),
    };
    numbers_as_values(command.after_help(after_help))
}

/// Every option that takes a value takes one that looks like a negative number too
/// (sockbench has no flag that does), so `--trials -5` is refused by what the option
/// takes rather than as an unknown argument `-5`; a list of numbers or sizes (a
/// comma-separated option without a fixed set of values) takes any value starting
/// with `-`, as `--rows -5,10` is no number; and every whole-number option, of
/// every command present and to come, says which values it takes.
fn numbers_as_values(command: clap::Command) -> clap::Command {
    use std::any::TypeId;
    command
        .mut_args(|arg| {
            if arg.is_positional() || !arg.get_action().takes_values() {
                return arg;
            }
            let list_of_numbers =
                arg.get_value_delimiter().is_some() && arg.get_possible_values().is_empty();
            let arg = arg
                .allow_negative_numbers(true)
                .allow_hyphen_values(list_of_numbers);
            let parser = arg.get_value_parser().type_id();
            if parser == TypeId::of::<u32>() {
                arg.value_parser(crate::units::parse_whole::<u32>)
            } else if parser == TypeId::of::<u64>() {
                arg.value_parser(crate::units::parse_whole::<u64>)
            } else {
                arg
            }
        })
        .mut_subcommands(numbers_as_values)
}

/// Parses `argv` (with the program name first).
pub fn parse_from(
    argv: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Result<Invocation, clap::Error> {
    let matches = command().try_get_matches_from(argv)?;
    if let Some((name, sub)) = matches.subcommand() {
        if let Some(family) = FAMILIES.iter().find(|f| f.name == name) {
            return Ok(Invocation::Family(family, sub.clone()));
        }
    }
    Cli::from_arg_matches(&matches).map(Invocation::Builtin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_every_family_that_has_a_part_in_it() {
        // As one line: the help is wrapped to the terminal's width.
        let flat = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let help = flat(command().render_long_help().to_string());
        let run = flat(
            command()
                .find_subcommand_mut("run")
                .expect("run")
                .render_long_help()
                .to_string(),
        );
        for part in run_parts() {
            assert!(help.contains(part.suite), "{} not in:\n{help}", part.suite);
            let start: String = part.says.chars().take(20).collect();
            assert!(run.contains(&start), "{start} not in:\n{run}");
        }
        // A family's own option of `run` is `run`'s.
        assert!(run.contains("--pg-bindir"), "{run}");
    }

    #[test]
    fn lists_read_as_sentences() {
        assert_eq!(list(&["a"], ", "), "a");
        assert_eq!(list(&["a", "b"], "; "), "a and b");
        assert_eq!(list(&["a", "b", "c"], ", "), "a, b and c");
        assert_eq!(list(&["a, x", "b", "c"], "; "), "a, x; b; and c");
    }
}
