//! The kinds of failure `main` turns into distinct exit codes.
//!
//! Bad input (exit 2) is told apart from a failure while measuring (exit 1) and from
//! an interrupted run (exit 130), so scripts can react to each.

/// The exit codes as `--help` lists them. NOTE: [`exit_code`] and `main` decide
/// them; a change there changes this text (and the README's).
pub const EXIT_CODES: &str = "Exit codes:\n  \
    0    success, also when the reader of standard output closes it early (`| head`)\n  \
    1    a failure while measuring, reading or writing, or no server where one was named\n  \
    2    bad input or usage: the line printed says what to change\n  \
    130  interrupted (Ctrl-C, SIGTERM or SIGHUP); what finished is kept\n\
    (`serve` runs until interrupted, and then ends with 0).";

/// The user asked for something that cannot be done; the message says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Nothing answers at the address of a server named on the command line (or by
/// the environment): the same words and the same exit code (1, a failure to reach
/// what is measured) for every family.
#[derive(Debug, thiserror::Error)]
#[error(
    "no {server} server answers at {address} ({why}); start one there{}, or give {option} \
     the address where one listens",
    .start.as_deref().map(|s| format!(" (`{s}`)")).unwrap_or_default()
)]
pub struct Unreachable {
    /// Which server: `PostgreSQL`, `Redis`, `sockbench`.
    pub server: &'static str,
    /// Where it was looked for, as the user gave it (secrets hidden).
    pub address: String,
    /// What the system said.
    pub why: String,
    /// The command that starts one there, when sockbench knows it.
    pub start: Option<String>,
    /// What names the address: `--url`, `--server`, `PGHOST and PGPORT`.
    pub option: &'static str,
}

impl Unreachable {
    /// What the system said of a connection where nothing listens; `None` for any
    /// other failure (a server that answered and then failed is not unreachable).
    pub fn why(e: &std::io::Error) -> Option<&'static str> {
        match e.kind() {
            std::io::ErrorKind::ConnectionRefused => Some("connection refused"),
            std::io::ErrorKind::NotFound => Some("no such socket"),
            std::io::ErrorKind::AddrNotAvailable => Some("address not available"),
            _ => None,
        }
    }
}

/// The run was interrupted (Ctrl-C, SIGTERM or SIGHUP); `kept` says what was saved.
#[derive(Debug, Default, thiserror::Error)]
#[error("interrupted{}", .kept.as_deref().map(|k| format!("; {k}")).unwrap_or_default())]
pub struct Interrupted {
    pub kept: Option<String>,
}

/// Standard output was closed by its reader (e.g. `| head`): the command ends
/// quietly, with success, having saved what it finished.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct StdoutClosed;

/// The process exit code for an error.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    for cause in error.chain() {
        if cause.is::<StdoutClosed>() {
            return 0;
        }
        if cause.is::<Unreachable>() {
            return 1;
        }
        if cause.is::<UsageError>() {
            return 2;
        }
        if cause.is::<Interrupted>() {
            return 130;
        }
    }
    1
}

/// Shorthand for a [`UsageError`] wrapped in `anyhow`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}
