//! Every suggestion sockbench prints after a verdict (`--trials N`, `--placement
//! …`) is a change the command that measured accepts: for a run of each family and
//! each way of reaching its server (throwaway, `--url`, `--server`), the command
//! saved in its result file, changed as each suggestion of its context says, goes
//! through the real command-line parser and the family's own checks; and what the
//! run printed suggests only those, and its whole command lines parse.

mod common;

use common::redis::{redis_installed, UserRedis, USER_PASSWORD};
use common::user_server::{UserServer, APP_PASSWORD};
use common::*;
use sockbench::cli::{parse_from, Invocation};
use sockbench::cpu::affinity::Placement;
use sockbench::report::verdict::caveats::{Origin, Suggestion};
use std::path::Path;

/// One measured run: its saved command line, what the records say of it, what it
/// printed.
struct Ran {
    command: Vec<String>,
    origin: Origin,
    printed: String,
}

/// Runs `sockbench ARGS --json FILE` with `env` and reads what it saved.
fn ran(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let tmp = tempdir();
    let json = tmp.path().join("out.json");
    let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
        .args(args)
        .arg("--json")
        .arg(&json)
        .envs(env.iter().copied())
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs");
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{args:?}: {printed}");
    let file = load(&json);
    Ran {
        command: file.command.clone(),
        origin: Origin::of(&file.results, &sockbench::families::catalog()),
        printed,
    }
}

fn load(path: &Path) -> sockbench::results::ResultFile {
    let catalog = sockbench::families::catalog();
    sockbench::results::load(path, |id| catalog.find(id).map(|e| e.declared()))
        .expect("a result file")
}

/// `command` with `change` applied as a person would: the option it names taken
/// out (with its value), then given as suggested.
fn applied(command: &[String], change: &[String]) -> Vec<String> {
    let option = &change[0];
    let mut out = vec!["sockbench".to_string()];
    let mut args = command.iter();
    while let Some(a) = args.next() {
        if a == option {
            args.next();
        } else if !a.starts_with(&format!("{option}=")) {
            out.push(a.clone());
        }
    }
    out.extend(change.iter().cloned());
    out
}

/// Ok when `argv` parses and its family accepts it; else what refused it.
fn accepted(argv: &[String]) -> Result<(), String> {
    match parse_from(argv) {
        Ok(Invocation::Family(family, matches)) => (family.plan)(&matches)
            .map(|_| ())
            .map_err(|e| format!("{e:#}")),
        Ok(Invocation::Builtin(_)) => Err("not a family's command".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Every suggestion of the run's context is accepted by its command; so is every
/// `--trials N` and `--placement LIST` it printed, and it printed only those.
fn check(ran: &Ran) {
    // The commands printed whole (`sockbench report FILE …`, continued on the next
    // line after ` \` as in a shell) parse as they are.
    let printed = after_estimate(&ran.printed);
    let mut lines = printed.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with("sockbench ") {
            let mut command = line.to_string();
            while let Some(head) = command.strip_suffix(" \\") {
                command = format!("{head} {}", lines.next().unwrap_or_default());
            }
            let argv: Vec<&str> = command.split_whitespace().collect();
            if let Err(e) = parse_from(&argv) {
                panic!("printed `{command}` does not parse: {e}");
            }
        }
    }
    let possible = ran.origin.suggestions(30);
    for s in &possible {
        let argv = applied(&ran.command, &s.args());
        if let Err(e) = accepted(&argv) {
            panic!("{s} is refused after {:?}: {e}", ran.command);
        }
    }
    for option in ["--trials", "--placement"] {
        let mut rest = ran.printed.as_str();
        while let Some(at) = rest.find(&format!("{option} ")) {
            rest = &rest[at + option.len() + 1..];
            let value: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == ',')
                .collect();
            let change = vec![option.to_string(), value];
            let argv = applied(&ran.command, &change);
            if let Err(e) = accepted(&argv) {
                panic!("printed {change:?} is refused after {:?}: {e}", ran.command);
            }
            if option == "--placement" {
                assert!(
                    possible.iter().any(|s| s.args() == change),
                    "printed {change:?}, not a suggestion of {:?}",
                    ran.origin
                );
            }
        }
    }
}

const QUICK: [&str; 4] = ["--quick", "--trials", "2", "--quiet"];

#[test]
fn sockets_runs_suggest_what_their_command_takes() {
    let own = ran(
        &[
            &["sockets", "--workloads", "pingpong", "--sizes", "64"],
            &QUICK[..],
        ]
        .concat(),
        &[],
    );
    assert!(own.origin.pinnable, "{:?}", own.origin);
    // Its own server: on one CPU unless told otherwise.
    assert_eq!(own.origin.placements, [Placement::Same], "{}", own.printed);
    check(&own);

    // Placed freely when asked: both pinned placements are suggested.
    let free = ran(
        &[
            &["sockets", "--workloads", "pingpong", "--sizes", "64"],
            &QUICK[..],
            &["--placement", "free"],
        ]
        .concat(),
        &[],
    );
    assert!(
        free.printed.contains("--placement same,split"),
        "{}",
        free.printed
    );
    check(&free);

    // Pinned both ways already: neither placement is suggested again.
    let pinned = ran(
        &[
            &["sockets", "--workloads", "pingpong", "--sizes", "64"],
            &QUICK[..],
            &["--placement", "same,split"],
        ]
        .concat(),
        &[],
    );
    assert!(
        !pinned
            .origin
            .suggestions(30)
            .iter()
            .any(|s| matches!(s, Suggestion::Placement(_))),
        "{:?}",
        pinned.origin
    );
    assert!(
        !pinned.printed.contains("--placement"),
        "{}",
        pinned.printed
    );
    check(&pinned);

    let tmp = tempdir();
    let socket = format!("unix:{}", tmp.path().join("sb.sock").display());
    let (_server, addrs) = start_serve(tmp.path(), &[socket]);
    let theirs = ran(
        &[
            &["sockets", "--workloads", "pingpong", "--sizes", "64"],
            &QUICK[..],
            &["--server", &addrs[0]],
        ]
        .concat(),
        &[],
    );
    check(&theirs);
}

#[test]
fn redis_runs_suggest_what_their_command_takes() {
    let Some(program) = redis_installed("redis_runs_suggest_what_their_command_takes") else {
        return;
    };
    let args = [&["redis", "--experiments", "ping"], &QUICK[..]].concat();
    let own = ran(&args, &[]);
    assert!(own.origin.pinnable, "{:?}", own.origin);
    check(&own);

    let server = UserRedis::start(&program);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let theirs = ran(
        &[&args[..], &["--url", &url]].concat(),
        &[("REDISCLI_AUTH", USER_PASSWORD)],
    );
    // Found on this machine, the user's server is counted and left where it runs
    // unless a placement is asked for, which its command then accepts.
    assert!(theirs.origin.pinnable, "{:?}", theirs.origin);
    assert_eq!(
        theirs.origin.placements,
        [Placement::Free],
        "{:?}",
        theirs.origin
    );
    check(&theirs);
}

#[test]
fn postgres_runs_suggest_what_their_command_takes() {
    if !postgres_installed("postgres_runs_suggest_what_their_command_takes") {
        return;
    }
    let args = [
        &["postgres", "--experiments", "query", "--queries", "200,400"],
        &QUICK[..],
    ]
    .concat();
    let own = ran(&args, &[]);
    assert!(own.origin.pinnable, "{:?}", own.origin);
    check(&own);

    let server = UserServer::start();
    let password = [("PGPASSWORD", APP_PASSWORD)];
    let url = server.tcp_uri("sslmode=disable");
    let by_url = ran(&[&args[..], &["--url", &url]].concat(), &password);
    check(&by_url);
    let by_server = ran(
        &[&args[..], &["--server", &server.tcp_uri("")]].concat(),
        &password,
    );
    check(&by_server);
}
