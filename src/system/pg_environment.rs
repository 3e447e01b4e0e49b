//! The caller's `PG*` variables, taken out of the process environment before
//! anything else runs.
//!
//! libpq reads `PGHOST`, `PGHOSTADDR`, `PGOPTIONS`, `PGSERVICE`, … for every keyword
//! a connection leaves unset, and PostgreSQL's programs read `PGDATA`, `PGPORT`, …
//! too. A throwaway cluster is sockbench's own: nothing of the caller's
//! environment may steer its connections or its server. A user's server (`--url`),
//! though, is reached as psql would reach it, so the values are kept here and given
//! back, as keyword defaults, to those connections only (`postgres/targets.rs`).
//!
//! Left in the environment: the variables libpq reads without a keyword of their
//! own, which only locate the service file (`PGSERVICEFILE`, `PGSYSCONFDIR`) or
//! message translations (`PGLOCALEDIR`). Without a service name, which only a
//! keyword or `PGSERVICE` (taken out) gives, the service file is never read, so they
//! are inert for the throwaway cluster; a user's `--url` that names a service still
//! finds its file. Programs sockbench starts get no environment at all
//! (`postgres/process.rs`).

use std::sync::OnceLock;

/// Read only through a libpq function that has no keyword: kept in the environment.
const KEPT: &[&str] = &["PGSERVICEFILE", "PGSYSCONFDIR", "PGLOCALEDIR"];

static STASH: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Takes every `PG*` variable but [`KEPT`] out of the environment and keeps it.
/// Call first thing in `main`, while the process has one thread: changing the
/// environment races with any other thread reading it.
pub fn stash() {
    let taken: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            (name.starts_with("PG") && !KEPT.contains(&name.as_str()))
                .then(|| (name, value.to_string_lossy().into_owned()))
        })
        .collect();
    for (name, _) in &taken {
        std::env::remove_var(name);
    }
    let _ = STASH.set(taken);
}

/// The value a stashed variable had (`None` when it was unset, or nothing was
/// stashed, as in library tests).
pub fn stashed(name: &str) -> Option<&'static str> {
    STASH
        .get()?
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The variables that choose which server libpq reaches. Set without `--url` or
/// `--server`, they name the server to measure. `PGUSER`, `PGDATABASE`,
/// `PGPASSWORD`, `PGPASSFILE`, `PGSSLMODE` and the like only say how to log in or
/// talk to whichever server that is, and are often set for everyday use; alone,
/// libpq would reach the default socket, a server nobody named, so they do not
/// count (the throwaway cluster, which reads none of them, is measured then).
pub const SERVER_VARIABLES: [&str; 4] = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGSERVICE"];

/// The [`SERVER_VARIABLES`] the caller set (to a non-empty value).
pub fn naming_a_server() -> Vec<&'static str> {
    SERVER_VARIABLES
        .into_iter()
        .filter(|name| stashed(name).is_some_and(|v| !v.is_empty()))
        .collect()
}

/// Every stashed variable's name, in the caller's order.
pub fn stashed_names() -> Vec<&'static str> {
    STASH
        .get()
        .map(|all| all.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default()
}
