//! What a person reads on the terminal: at 80 columns no line wraps, a locale that is
//! not UTF-8 gets ASCII, a pipe or `NO_COLOR` gets no escape codes, a measuring
//! command prints one line per case and ends with its verdict, and `--json -` puts
//! only JSON on standard output.

mod common;

use common::*;
use serde_json::Value;

const FIXTURES: [&str; 4] = [
    "tests/fixtures/run.json",
    "tests/fixtures/sockets.json",
    "tests/fixtures/sweep.json",
    "tests/fixtures/placed.json",
];

/// sockbench from the crate root in a UTF-8 locale, `env` set on top.
fn report(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = assert_cmd::Command::cargo_bin("sockbench").expect("binary built");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("COLUMNS")
        .env("LANG", "C.UTF-8")
        .args(args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.assert().success();
    text(&out.get_output().stdout)
}

/// The lines wider than `width` characters (not bytes: `µ` and `│` are one each).
fn too_wide(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.chars().count() > width)
        .map(String::from)
        .collect()
}

#[test]
fn reports_fit_80_columns_and_narrower() {
    for file in FIXTURES {
        for width in ["80", "60"] {
            let out = report(&["report", file], &[("COLUMNS", width)]);
            let n: usize = width.parse().unwrap();
            assert_eq!(too_wide(&out, n), Vec::<String>::new(), "{file} at {width}");
            assert!(out.contains("vs unix, 95% interval") || out.contains("unix"));
        }
    }
    // Without COLUMNS, a pipe gets 80 columns; a wide COLUMNS keeps tables on one
    // line per row, which 80 columns cannot.
    let piped = report(&["report", FIXTURES[0]], &[]);
    assert_eq!(too_wide(&piped, 80), Vec::<String>::new());
    let wide = report(&["report", FIXTURES[0]], &[("COLUMNS", "200")]);
    assert!(!too_wide(&wide, 100).is_empty(), "nothing uses 200 columns");
    assert!(wide.lines().count() < piped.lines().count());
}

#[test]
fn a_locale_that_is_not_utf8_gets_ascii() {
    for locale in [("LANG", "C"), ("LC_ALL", "POSIX")] {
        let out = report(&["report", FIXTURES[0], FIXTURES[3]], &[locale]);
        let foreign: Vec<&str> = out.lines().filter(|l| !l.is_ascii()).collect();
        assert_eq!(foreign, Vec::<&str>::new(), "{locale:?}");
        assert!(out.contains("+---") && out.contains(" us"), "{out}");
    }
    let utf8 = report(
        &["report", FIXTURES[0]],
        &[("LC_CTYPE", "en_US.utf8"), ("LANG", "C")],
    );
    assert!(utf8.contains("µs") && utf8.contains('┌'));
}

#[test]
fn a_pipe_gets_no_escape_codes() {
    for env in [&[][..], &[("NO_COLOR", "1")][..]] {
        let out = report(&["report", FIXTURES[0]], env);
        assert!(!out.contains('\u{1b}'), "{env:?}");
    }
}

/// A cheap real run: two transports, one size, one round, at 80 columns.
fn measured(scratch: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = assert_cmd::Command::from_std(sockbench(scratch));
    cmd.env("COLUMNS", "80")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .args([
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--transports",
            "unix,tcp",
            "--workloads",
            "pingpong,stream",
            "--sizes",
            "64",
        ])
        .args(extra)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("sockbench runs")
}

#[test]
fn a_run_prints_a_line_per_case_fits_80_columns_and_ends_with_its_verdict() {
    let tmp = tempdir();
    let json = tmp.path().join("out.json");
    let out = measured(tmp.path(), &["--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(too_wide(&stdout, 80), Vec::<String>::new(), "{stdout}");
    // One line per case, no boxed tables.
    assert!(!stdout.contains('┌'), "{stdout}");
    let case = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("64 B"))
        .unwrap_or_else(|| panic!("no line for 64 B in:\n{stdout}"));
    assert!(case.contains("unix ") && case.contains(" tcp "), "{case}");
    // The verdict comes last, after where the results are.
    let verdict = stdout.find("Verdict").expect("a verdict");
    let saved = stdout
        .find("Results saved to")
        .expect("where the results are");
    assert!(saved < verdict, "{stdout}");
    assert!(
        stdout[verdict..].contains("Raw round trips (64 B messages, raw socket, on one CPU):"),
        "{stdout}"
    );
}

#[test]
fn json_to_stdout_is_pure_json_and_the_tables_go_to_stderr() {
    let tmp = tempdir();
    let out = measured(tmp.path(), &["--json", "-", "--tables"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    assert_eq!(experiments(&file), ["sockets.pingpong", "sockets.stream"]);
    assert!(!tmp.path().join("-").exists());
    let stderr = text(&out.stderr);
    assert_eq!(too_wide(&stderr, 80), Vec::<String>::new(), "{stderr}");
    assert!(
        stderr.contains("sockets.pingpong — ") && stderr.contains('┌'),
        "{stderr}"
    );
    assert!(stderr.contains("How to read these tables:"), "{stderr}");
    let verdict = stderr.find("Verdict").expect("a verdict on stderr");
    assert!(stderr.find("How to read").unwrap() < verdict);
}

#[test]
fn a_terminal_gets_a_bold_heading_unless_no_color() {
    // `script` runs the command on a pseudo-terminal.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` (util-linux) to give the command a terminal");
        return;
    }
    let on_terminal = |no_color: &str| {
        let bin = assert_cmd::cargo::cargo_bin("sockbench");
        let command = format!(
            "NO_COLOR={no_color} {} report tests/fixtures/sockets.json",
            bin.display()
        );
        let out = std::process::Command::new("script")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("LANG", "C.UTF-8")
            .env("COLUMNS", "80")
            .args(["-qec", &command, "/dev/null"])
            .output()
            .expect("script runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert!(on_terminal("").contains("\u{1b}[1mtests/fixtures/sockets.json"));
    assert!(!on_terminal("1").contains('\u{1b}'));
}
