//! Where PostgreSQL's server programs live.
//!
//! Looked up in the order a user would expect: `--pg-bindir`, then what `pg_config
//! --bindir` says, then the newest `/usr/lib/postgresql/*/bin` (Debian and Ubuntu keep
//! the real programs there; `/usr/bin` only has wrapper scripts), then `PATH`.

use crate::error::usage;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to say when no PostgreSQL is installed.
pub const INSTALL_HINT: &str = "install PostgreSQL (Debian/Ubuntu: apt-get install postgresql), \
     pass --pg-bindir DIR, or measure a running server with --url";

/// The server programs sockbench runs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
}

impl Binaries {
    pub fn initdb(&self) -> PathBuf {
        self.dir.join("initdb")
    }

    pub fn postgres(&self) -> PathBuf {
        self.dir.join("postgres")
    }

    /// Finds the programs; a usage error says what is missing and what to do.
    pub fn find(explicit: Option<&Path>) -> Result<Binaries> {
        if let Some(dir) = explicit {
            if !dir.is_dir() {
                return Err(usage(format!(
                    "--pg-bindir {}: no such directory; point it at the directory holding \
                     PostgreSQL's initdb and postgres",
                    dir.display()
                )));
            }
            return complete(dir).map(|dir| Binaries { dir }).ok_or_else(|| {
                usage(format!(
                    "--pg-bindir {}: no initdb and postgres programs there; point it at the \
                     directory holding them (e.g. /usr/lib/postgresql/15/bin)",
                    dir.display()
                ))
            });
        }
        candidates()?
            .into_iter()
            .find_map(|dir| complete(&dir))
            .map(|dir| Binaries { dir })
            .ok_or_else(|| {
                usage(format!(
                    "PostgreSQL's server programs (initdb, postgres) were not found; {INSTALL_HINT}"
                ))
            })
    }
}

/// `dir` when it holds both programs.
fn complete(dir: &Path) -> Option<PathBuf> {
    let runnable = |name: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    (runnable("initdb") && runnable("postgres")).then(|| dir.to_path_buf())
}

/// Where to look, in order; an error when `pg_config` hangs (or on Ctrl-C).
fn candidates() -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    let mut pg_config = Command::new("pg_config");
    pg_config.arg("--bindir");
    let said = crate::subprocess::ask(&mut pg_config, crate::subprocess::ASK_LIMIT)
        .context("looking for PostgreSQL's programs (--pg-bindir DIR names them)")?;
    if let Some(out) = said.filter(|out| out.status.success()) {
        dirs.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    }
    dirs.extend(newest_first(Path::new("/usr/lib/postgresql")));
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    Ok(dirs)
}

/// `ROOT/NN/bin` for every numeric version NN, newest first.
fn newest_first(root: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let major = name.split('.').next()?.parse().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_newest_first() {
        let root = tempfile::tempdir().unwrap();
        for v in ["9.6", "15", "13", "notes"] {
            std::fs::create_dir_all(root.path().join(v).join("bin")).unwrap();
        }
        let found = newest_first(root.path());
        let names: Vec<_> = found
            .iter()
            .map(|p| {
                p.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["15", "13", "9.6"]);
    }

    #[test]
    fn a_directory_without_the_programs_is_refused() {
        let empty = tempfile::tempdir().unwrap();
        let e = Binaries::find(Some(empty.path())).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("no initdb"), "{e}");
    }
}
