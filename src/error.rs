//! The kinds of failure `main` turns into distinct exit codes.
//!
//! Bad input (exit 2) is told apart from a failure while measuring (exit 1) and from
//! an interrupted run (exit 130), so scripts can react to each.

/// The exit codes as `--help` lists them. NOTE: [`exit_code`] and `main` decide
/// them; a change there changes this text (and the README's).
pub const EXIT_CODES: &str = "Exit codes:\n  \
    0    success, also when the reader of standard output closes it early (`| head`)\n  \
    1    a failure while measuring, reading or writing\n  \
    2    bad input or usage: the line printed says what to change\n  \
    130  interrupted (Ctrl-C, SIGTERM or SIGHUP); what finished is kept\n\
    (`serve` runs until interrupted, and then ends with 0).";

/// The user asked for something that cannot be done; the message says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

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
