//! What kind of server answers: PostgreSQL, CockroachDB, pgbouncer (a pool, or its
//! admin console), another pooler, or something else speaking the protocol.
//!
//! pgbouncer's admin console (database `pgbouncer`) reports `server_version` as
//! `1.18.0/bouncer` and runs only its own commands (`SHOW VERSION`, …; `SELECT
//! version()` is "invalid command"). A pgbouncer pool passes queries to
//! PostgreSQL and reports the server's own `server_version`, so it shows only in
//! the BackendKeyData it sends at startup: a number of its own, not the backend's
//! `pg_backend_pid()`. Whether that pooler is pgbouncer is then asked of its admin
//! console, with the same user (`SHOW VERSION`), where the user may log in.

use super::super::libpq::{ConnParams, PgConn};

/// The server's kind, as recorded (`ServerInfo::kind`).
#[derive(Debug, Clone, PartialEq)]
pub enum ServerKind {
    PostgreSql,
    CockroachDb,
    /// A pgbouncer pool, with what its admin console says (`PgBouncer 1.18.0`).
    PgBouncer(Option<String>),
    /// pgbouncer's admin console: no SQL runs there.
    PgBouncerAdmin(String),
    /// Another pooler between sockbench and PostgreSQL.
    Pooler,
    Other,
}

impl ServerKind {
    pub fn name(&self) -> &'static str {
        match self {
            ServerKind::PostgreSql => "postgresql",
            ServerKind::CockroachDb => "cockroachdb",
            ServerKind::PgBouncer(_) => "pgbouncer",
            ServerKind::PgBouncerAdmin(_) => "pgbouncer-admin",
            ServerKind::Pooler => "pooler",
            ServerKind::Other => "other",
        }
    }

    /// The pooler's own version, when one is known.
    pub fn pooler(&self) -> Option<String> {
        match self {
            ServerKind::PgBouncer(v) => v.clone(),
            ServerKind::PgBouncerAdmin(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// True when a pooler stands between sockbench and the server: what `SHOW`
    /// tells then describes the server behind it, not the pooler.
    pub fn pooled(&self) -> bool {
        matches!(self, ServerKind::PgBouncer(_) | ServerKind::Pooler)
    }
}

/// The kind behind `conn`, and what `version()` said (the admin console's `SHOW
/// VERSION` there). `params` reach the same place, for a probe of the admin console.
pub fn detect(conn: &PgConn, params: &ConnParams) -> (ServerKind, String) {
    let reported = conn.parameter(c"server_version").unwrap_or_default();
    if reported.ends_with("/bouncer") {
        let version = conn
            .query_value("SHOW VERSION")
            .unwrap_or_else(|_| format!("PgBouncer {}", reported.trim_end_matches("/bouncer")));
        return (ServerKind::PgBouncerAdmin(version.clone()), version);
    }
    let Ok(version) = conn.query_value("SELECT version()") else {
        return (ServerKind::Other, reported);
    };
    let kind = match version_kind(&version) {
        ServerKind::PostgreSql if pooled(conn) => match admin_console(params) {
            Some(v) => ServerKind::PgBouncer(v),
            None => ServerKind::Pooler,
        },
        other => other,
    };
    (kind, version)
}

/// From what `version()` says alone.
pub fn version_kind(version: &str) -> ServerKind {
    if version.contains("CockroachDB") {
        ServerKind::CockroachDb
    } else if version.starts_with("PostgreSQL") {
        ServerKind::PostgreSql
    } else {
        ServerKind::Other
    }
}

/// The backend's own process ID differs from the one the startup gave.
fn pooled(conn: &PgConn) -> bool {
    conn.query_value("SELECT pg_backend_pid()")
        .ok()
        .and_then(|pid| pid.parse::<i32>().ok())
        .is_some_and(|pid| pid != conn.backend_pid())
}

/// Whether pgbouncer's admin console is at the same place (`None`: it is not),
/// with its `SHOW VERSION` when it lets the user in. pgbouncer refuses a user that
/// is neither an admin nor a stats user with "not allowed"; PostgreSQL would say the
/// database does not exist.
fn admin_console(params: &ConnParams) -> Option<Option<String>> {
    let conn = match PgConn::connect(&params.with(&[("dbname", "pgbouncer")])) {
        Ok(conn) => conn,
        Err(e) => return e.to_string().contains("not allowed").then_some(None),
    };
    let reported = conn.parameter(c"server_version")?;
    if !reported.ends_with("/bouncer") {
        return None;
    }
    Some(Some(conn.query_value("SHOW VERSION").unwrap_or_else(
        |_| format!("PgBouncer {}", reported.trim_end_matches("/bouncer")),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_version() {
        assert_eq!(
            version_kind("PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64"),
            ServerKind::PostgreSql
        );
        assert_eq!(
            version_kind("CockroachDB CCL v23.1.0 (x86_64-pc-linux-gnu)"),
            ServerKind::CockroachDb
        );
        assert_eq!(version_kind("MySQL"), ServerKind::Other);
        assert_eq!(
            ServerKind::PgBouncerAdmin("PgBouncer 1.18.0".into()).name(),
            "pgbouncer-admin"
        );
    }
}
