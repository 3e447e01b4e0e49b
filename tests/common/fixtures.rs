//! The committed result files in `tests/fixtures/`, and `sockbench report` or
//! `sockbench compare` run on them (or on an edited copy) from the crate root.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

pub const RUN: &str = "tests/fixtures/run.json";
pub const SOCKETS: &str = "tests/fixtures/sockets.json";
/// PostgreSQL concurrent clients at 1, 2 and 4.
pub const SWEEP: &str = "tests/fixtures/sweep.json";
/// A format-3 run: `sockets --quick --placement same,split --transports unix,tcp
/// --workloads connect,pingpong --sizes 64`, with CPU counts and placements.
pub const PLACED: &str = "tests/fixtures/placed.json";

/// sockbench run from the crate root, so file names in headings are stable.
pub fn sockbench(args: &[&str]) -> assert_cmd::assert::Assert {
    sockbench_at(args, None)
}

/// The same on a screen `columns` wide (80 in a pipe without).
pub fn sockbench_at(args: &[&str], columns: Option<&str>) -> assert_cmd::assert::Assert {
    let mut cmd = Command::cargo_bin("sockbench").expect("binary built");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("COLUMNS");
    if let Some(columns) = columns {
        cmd.env("COLUMNS", columns);
    }
    cmd.args(args).assert()
}

/// Standard output of a command that must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = sockbench(args).success();
    super::text(&out.get_output().stdout)
}

/// A copy of the run fixture changed by `edit`, written into `dir`.
pub fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(run_path()).unwrap()).unwrap();
    edit(&mut file);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

/// Where the run fixture is, whatever the working directory.
pub fn run_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN)
}
