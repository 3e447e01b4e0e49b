//! Which keywords a libpq service sets, so that a user's server named by a service
//! is reached with libpq's precedence: the URI's own keywords, then the service
//! file's, then the caller's `PG*` variables.
//!
//! sockbench hands the caller's variables to libpq as keywords (they are taken out
//! of the environment at start, `system/pg_environment.rs`), and a keyword always
//! wins over a service file; so a variable whose keyword the service sets is left
//! out. The files are found as libpq finds them: `PGSERVICEFILE`, else
//! `~/.pg_service.conf`; and, when the service is not there, `pg_service.conf` in
//! `PGSYSCONFDIR`, else in the directory `pg_config --sysconfdir` names.

use crate::error::usage;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Far larger than any service file.
const MAX_BYTES: u64 = 1 << 20;

/// The keywords the section `[service]` sets, from the first file that has it;
/// empty when no file has it (libpq then refuses the service itself). A file libpq
/// would read on its way that is not a regular file of a sane size (a FIFO, which
/// would block libpq's read for ever, `/dev/zero`, which it would read for ever) is
/// a usage error that names it; a `pg_config` that hangs (or a Ctrl-C while it
/// runs) is an error too.
pub fn keywords(service: &str) -> anyhow::Result<Vec<String>> {
    let user = match std::env::var_os("PGSERVICEFILE") {
        Some(file) => Some(("PGSERVICEFILE", PathBuf::from(file))),
        None => std::env::var_os("HOME")
            .map(|h| ("the service file", Path::new(&h).join(".pg_service.conf"))),
    };
    let system = || -> anyhow::Result<_> {
        let dir = match std::env::var_os("PGSYSCONFDIR") {
            Some(dir) => Some(PathBuf::from(dir)),
            None => sysconfdir()?,
        };
        Ok(dir.map(|d| ("the system's service file", d.join("pg_service.conf"))))
    };
    // The system's file only when the user's lacks the service, as libpq.
    if let Some(keys) = user
        .map(|(n, f)| section_in(n, &f, service))
        .transpose()?
        .flatten()
    {
        return Ok(keys);
    }
    if let Some(keys) = system()?
        .map(|(n, f)| section_in(n, &f, service))
        .transpose()?
        .flatten()
    {
        return Ok(keys);
    }
    Ok(Vec::new())
}

/// The keywords of `[service]` in `file` (called `name` in messages); `None` when
/// the file is not there (libpq passes it over) or has no such section.
fn section_in(name: &str, file: &Path, service: &str) -> anyhow::Result<Option<Vec<String>>> {
    if std::fs::metadata(file).is_err() {
        return Ok(None);
    }
    let text = crate::input::read_text(file, MAX_BYTES).map_err(|why| {
        usage(format!(
            "{name} {} cannot be read as a service file ({why}), and libpq would wait on it \
             or read it without end; point it at your service file",
            crate::units::shown(&file.display().to_string())
        ))
    })?;
    Ok(section(&text, service))
}

/// libpq's own configuration directory, as `pg_config` reports it.
fn sysconfdir() -> anyhow::Result<Option<PathBuf>> {
    let mut pg_config = std::process::Command::new("pg_config");
    pg_config.arg("--sysconfdir");
    let said = crate::subprocess::ask(&mut pg_config, crate::subprocess::ASK_LIMIT)
        .context("looking for libpq's service file")?;
    let dir = said
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok());
    Ok(dir.map(|d| PathBuf::from(d.trim())))
}

/// The keywords of `[service]` in a service file's text, or `None` without it.
fn section(text: &str, service: &str) -> Option<Vec<String>> {
    let mut inside = false;
    let mut found = false;
    let mut keys = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if found {
                break;
            }
            inside = name == service;
            found = inside;
            continue;
        }
        if inside {
            if let Some((key, _)) = line.split_once('=') {
                keys.push(key.trim().to_string());
            }
        }
    }
    found.then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn a_section_gives_its_keywords_and_only_its_own() {
        let text = "# mine\n[other]\nport=1\n\n[app]\n host=/tmp\nport = 5433\n# user=x\n[later]\nuser=y\n";
        assert_eq!(section(text, "app").unwrap(), ["host", "port"]);
        assert_eq!(section(text, "other").unwrap(), ["port"]);
        assert!(section(text, "missing").is_none());
        assert_eq!(section("[empty]\n", "empty").unwrap(), Vec::<String>::new());
    }
}
