//! The ways to reach the servers under test: each transport of the throwaway
//! cluster, or each URL the user named. Every target is connected to once before any
//! measurement, to learn the server version and whether TLS is really in use, and
//! so that a bad URL or a wrong password fails at once with one clear line.

use super::cluster::Cluster;
use super::experiment::PgTarget;
use super::libpq::{environment_defaults, parse_conninfo, Conn, ConnParams, PgError};
use super::redact;
use crate::error::usage;
use crate::results::ServerInfo;
use crate::system::pg_environment;
use crate::transport::{TlsInfo, Transport, CERTIFICATE_KIND};
use anyhow::{bail, Result};
use std::str::FromStr;

/// `NAME=URI` from the command line: a user's server and the name its results get.
#[derive(Debug, Clone)]
pub struct NamedUrl {
    pub name: String,
    pub uri: String,
}

impl FromStr for NamedUrl {
    type Err = String;
    fn from_str(s: &str) -> Result<NamedUrl, String> {
        match s.split_once('=') {
            Some((name, uri)) if is_name(name) && !uri.is_empty() => Ok(NamedUrl {
                name: name.to_string(),
                uri: uri.to_string(),
            }),
            Some((name, _)) if name.len() > MAX_NAME && plain(name) => Err(format!(
                "the NAME of NAME=URI is {} characters long; use at most {MAX_NAME}",
                name.len()
            )),
            _ => Err(format!(
                "expected NAME=URI with a plain NAME (letters, digits, '-', '_', '.'; at most \
                 {MAX_NAME}), e.g. tcp=postgres://foo@127.0.0.1/foo, got '{}'",
                crate::units::shown(&redact::argument(s))
            )),
        }
    }
}

/// The longest NAME a result is filed under.
const MAX_NAME: usize = 64;

/// A name for results: short, and no part of a URI (so a bare URI with a query
/// string is not split at its first `=` into a "name").
fn is_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len()) && plain(name)
}

fn plain(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The cluster's targets, one per transport.
pub fn cluster_targets(cluster: &Cluster, transports: &[Transport]) -> Result<Vec<PgTarget>> {
    transports
        .iter()
        .map(|&t| {
            let params = cluster.params(t)?;
            let conn = Conn::connect(&params).map_err(|e| {
                anyhow::anyhow!("cannot connect to the throwaway cluster over {t}: {e}")
            })?;
            let target = describe(t.name(), params, &conn, true)?;
            if target.tls.is_some() != (t == Transport::Tls) {
                bail!("the connection over {t} did not use TLS as expected");
            }
            Ok(target)
        })
        .collect()
}

/// A target for a user's server. Its connection parameters are the URI's, plus
/// `gssencmode=disable` (unless given) so that connection timing is not spent
/// probing for GSSAPI encryption, over the caller's `PG*` variables (taken out of
/// the environment at start, see `system::pg_environment`) as libpq would use them.
///
/// One difference from libpq: a service named by `PGSERVICE` fills keywords after
/// the other variables here, where libpq lets the service file win over them.
pub fn user_target(label: &str, uri: &str) -> Result<PgTarget> {
    let pairs = parse_conninfo(uri).map_err(|e| {
        let e = redact::parse_error(&e.to_string(), uri);
        usage(format!("--url {label}: {e}; write it as psql takes it, e.g. postgres://foo@127.0.0.1:5432/foo?sslmode=require"))
    })?;
    let mut all = environment_defaults(|name| pg_environment::stashed(name).map(String::from));
    all.extend([
        ("gssencmode".to_string(), "disable".to_string()),
        ("connect_timeout".to_string(), "10".to_string()),
    ]);
    all.extend(pairs.iter().cloned());
    let params = ConnParams::new(all);
    let shown = redact::keywords(&pairs);
    let conn = Conn::connect(&params).map_err(|e| {
        let hint = if e.is_auth_failure() {
            "check the user and password"
        } else {
            "check that the server runs and the URL names it"
        };
        usage(format!("cannot connect to {label} ({shown}): {e}; {hint}"))
    })?;
    describe(label, params, &conn, false)
}

fn describe(label: &str, params: ConnParams, conn: &Conn, throwaway: bool) -> Result<PgTarget> {
    let version = conn
        .query_value("SELECT version()")
        .map_err(|e: PgError| anyhow::anyhow!("{label}: {e}"))?;
    let tls = conn.tls().map(|(version, cipher)| TlsInfo {
        version,
        cipher,
        certificate: if throwaway {
            CERTIFICATE_KIND.to_string()
        } else {
            "the server's own".to_string()
        },
    });
    Ok(PgTarget {
        label: label.to_string(),
        unix_socket: conn.over_unix_socket(),
        params,
        tls,
        server: ServerInfo {
            kind: server_kind(&version).to_string(),
            version,
            throwaway,
        },
    })
}

/// `postgresql`, `cockroachdb` or `other`, from what `version()` says.
pub fn server_kind(version: &str) -> &'static str {
    if version.contains("CockroachDB") {
        "cockroachdb"
    } else if version.starts_with("PostgreSQL") {
        "postgresql"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_version() {
        assert_eq!(
            server_kind("PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64"),
            "postgresql"
        );
        assert_eq!(
            server_kind("CockroachDB CCL v23.1.0 (x86_64-pc-linux-gnu)"),
            "cockroachdb"
        );
        assert_eq!(server_kind("MySQL"), "other");
    }

    #[test]
    fn names_are_plain_and_errors_hide_passwords() {
        let named: NamedUrl = "tls=postgres://foo@h/db?sslmode=require".parse().unwrap();
        assert_eq!(
            (named.name.as_str(), named.uri.as_str()),
            ("tls", "postgres://foo@h/db?sslmode=require")
        );
        for bad in [
            "postgres://foo:secret@h/db?sslmode=require",
            "postgres://foo:secret@h",
            "=postgres://foo:secret@h",
            "a b=host=h password=secret",
        ] {
            let e = bad.parse::<NamedUrl>().expect_err(bad);
            assert!(!e.contains("secret"), "{e}");
        }
        let long = format!("{}=postgres://foo@h/db", "n".repeat(65));
        let e = long.parse::<NamedUrl>().expect_err("65 characters");
        assert!(e.contains("65 characters long; use at most 64"), "{e}");
        assert!(format!("{}=postgres://foo@h/db", "n".repeat(64))
            .parse::<NamedUrl>()
            .is_ok());
    }

    #[test]
    fn malformed_and_unreachable_urls_are_usage_errors() {
        let e = user_target("bad", "postgres://foo@127.0.0.1:notaport/foo")
            .err()
            .unwrap();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        // Port 1 on loopback: nothing listens there.
        let e = user_target("gone", "postgres://foo:pw@127.0.0.1:1/foo?sslmode=disable")
            .err()
            .unwrap();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        assert!(!e.to_string().contains("pw"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}
