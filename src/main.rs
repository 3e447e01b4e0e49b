//! sockbench: should an application talk to its local server over a Unix domain
//! socket or over loopback TCP (with or without TLS), and by how much does it
//! matter? This file only wires the command line to the commands and turns errors
//! into one line and an exit code.

use sockbench::{cli, command, error, families, units};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether descriptor 1 was closed when the process started (`>&-`). The Rust
/// runtime opens /dev/null on a closed standard descriptor before `main`, so every
/// table would vanish and the command end with success; this is looked at earlier,
/// by a constructor that the C runtime calls before the Rust runtime starts.
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD only reads the flags of a descriptor number; any is safe to ask.
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

fn main() -> ExitCode {
    // First, while there is one thread: see `system::pg_environment`.
    sockbench::system::pg_environment::stash();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if STDOUT_CLOSED_AT_START.load(Ordering::Relaxed) {
        eprintln!(
            "error: standard output is closed; give sockbench somewhere to write (a terminal, \
             a file, a pipe, or /dev/null)"
        );
        return ExitCode::FAILURE;
    }
    raise_open_file_limit();
    let invocation = match cli::parse_from(std::env::args_os()) {
        Ok(invocation) => invocation,
        // --help and --version: a failed write (a full disk) is an error like any
        // other output's; a reader that closed the pipe early (`| head`) is not.
        Err(e) if !e.use_stderr() => {
            return match e.print().and_then(|()| std::io::stdout().flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write to standard output: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Err(e) => {
            let message = one_line(&e.render().to_string());
            eprintln!("{}", shown(&message, &argv));
            return ExitCode::from(2);
        }
    };
    match command::dispatch(invocation, argv.clone()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = error::exit_code(&e);
            if code != 0 {
                eprintln!("error: {}", shown(&format!("{e:#}"), &argv));
            }
            ExitCode::from(code)
        }
    }
}

/// An error line as it may be printed: no secret of the command line in it (each
/// family hides its own), no word of it longer than `units::SHOWN_CHARS` (a value
/// the user pasted, or a part of one, is echoed cut), and no character a terminal
/// would act on (a server's reply or a file name may hold escape sequences).
fn shown(message: &str, argv: &[String]) -> String {
    let line = units::shorten_words(&families::redact_message(message, argv));
    units::printable(&line).into_owned()
}

/// Raises the soft limit on open files to the hard one, as the clients of a large
/// `--clients` each hold a socket (and the server child inherits the limit); the
/// plans refuse a count that still does not fit.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write only the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// clap's message without its usage block, on one line, keeping its tip when it
/// has one ("a similar subcommand exists: 'postgres'" for `postgress`).
fn one_line(rendered: &str) -> String {
    let mut paragraphs = rendered.split("\n\n");
    let first = paragraphs.next().unwrap_or(rendered);
    let tips = paragraphs.filter(|p| p.trim_start().starts_with("tip:"));
    let message = std::iter::once(first)
        .chain(tips)
        .map(|p| {
            p.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!("{message} (see --help)")
}
