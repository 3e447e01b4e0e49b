//! What the registry composes from the PostgreSQL family besides its command: its
//! quick plan for `sockbench run`, the directories its throwaway clusters leave
//! when a run is killed, and its redaction of passwords.

use super::args::PostgresArgs;
use super::bindir::Binaries;
use super::plan::PostgresPlan;
use crate::dir::Dir;
use crate::leftovers::{read_head, Kind};
use crate::plan::Measuring;
use crate::report::family::{Plan, Redaction};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// `postgres --quick` on a throwaway cluster, with `run`'s `--pg-bindir`. An
/// explicit `--pg-bindir` that is wrong is an error; PostgreSQL simply not being
/// installed only leaves the family out, in one line.
pub fn quick(run: &clap::ArgMatches) -> Result<Option<Box<dyn Plan>>> {
    // Declared in cli.rs's `RunArgs`, for this family only.
    let pg_bindir = run.get_one::<PathBuf>("pg_bindir").cloned();
    let plan = PostgresPlan::from_args(&PostgresArgs {
        measuring: Measuring::quick(),
        pg_bindir: pg_bindir.clone(),
        ..PostgresArgs::default()
    })?;
    match Binaries::find(pg_bindir.as_deref()) {
        Ok(_) => Ok(Some(Box::new(plan))),
        Err(_) if pg_bindir.is_none() => {
            eprintln!(
                "postgres: skipped, PostgreSQL's initdb and postgres were not found; install \
                 PostgreSQL (Debian/Ubuntu: apt-get install postgresql) or pass --pg-bindir DIR"
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A throwaway cluster's directory (`cluster.rs`), with its data directory in
/// `data/`.
pub const CLUSTER: Kind = Kind {
    prefix: "sockbench-pg-",
    alive: postmaster_running,
};

/// True when a PostgreSQL server still runs on the data directory `data` in `dir`:
/// its `postmaster.pid` names a process that exists.
fn postmaster_running(dir: &Dir) -> bool {
    let Ok(text) = dir
        .open_dir("data")
        .and_then(|data| read_head(&data, "postmaster.pid"))
    else {
        return false;
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
    else {
        return false;
    };
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Passwords in connection strings, found by libpq's own parse (`redact.rs`).
pub const REDACTION: Redaction = Redaction {
    argument: super::redact::argument,
    message: super::redact::message,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_cluster_is_alive_while_its_postmaster_pid_names_a_process() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        assert!(!postmaster_running(&dir), "no data directory");
        fs::create_dir(tmp.path().join("data")).unwrap();
        assert!(!postmaster_running(&dir), "no postmaster.pid");
        let pid = tmp.path().join("data/postmaster.pid");
        fs::write(&pid, format!("{}\n/some/data\n", std::process::id())).unwrap();
        assert!(postmaster_running(&dir));
        // Above the kernel's pid_max limit: no such process.
        fs::write(&pid, "4194305\n/some/data\n").unwrap();
        assert!(!postmaster_running(&dir));
        fs::write(&pid, "garbage\n").unwrap();
        assert!(!postmaster_running(&dir));
    }
}
