//! `--server URI`: "here is my server, compare its transports". One connection asks
//! the server where it listens (`unix_socket_directories`, `port`,
//! `listen_addresses`, `ssl`); the same database and user are then reached over its
//! Unix socket, over TCP with `sslmode=disable` and over TLS with
//! `sslmode=require`, as targets `unix`, `tcp` and `tls`. What the server does not
//! offer, or its pg_hba.conf refuses, is skipped with one line each.
//!
//! Each transport must reach the same server: its socket is tried only when the URI
//! reached this machine (a socket, or a loopback address), so the user's password
//! never goes to another local server, and every target's postmaster start time
//! must be the URI's.

use super::super::experiment::PgTarget;
use super::super::libpq::Conn;
use super::{check_label, connect_user, describe, learn, reached, user_params, ServerKind};
use crate::error::usage;
use anyhow::Result;

/// The targets of `--server uri`, and a line for each transport skipped.
pub fn server_targets(uri: &str) -> Result<(Vec<PgTarget>, Vec<String>)> {
    let (params, pairs) = user_params("--server", uri)?;
    let conn = connect_user("--server", &params, &pairs)?;
    let (mut base, kind) = learn("--server", params.clone(), &conn, None)?;
    base.label = reached(&base).to_string();
    if kind != ServerKind::PostgreSql {
        let why = if kind.pooled() {
            "whose settings describe the server behind it"
        } else {
            "where PostgreSQL's settings may not exist"
        };
        let line = format!(
            "--server: {} is {}, {why}; measuring it only as given, as {}",
            place(&base),
            kind.name(),
            base.label
        );
        return Ok((vec![base], vec![line]));
    }
    let setting = |name: &str| conn.query_value(&format!("SHOW {name}"));
    let port = setting("port").ok().or(base.server.port.clone());
    let started = conn.query_value(STARTED).ok();
    let mut skipped = Vec::new();
    let mut wanted: Vec<(&str, Option<String>, &str)> = Vec::new();

    let unix_host = match setting("unix_socket_directories") {
        Ok(dirs) => match dirs.split(',').map(str::trim).find(|d| !d.is_empty()) {
            Some(dir) => Some(dir.to_string()),
            None => {
                skipped.push("unix: skipped: the server listens on no Unix socket".into());
                None
            }
        },
        Err(_) if base.unix_socket => base.server.host.clone(),
        Err(_) => {
            skipped.push(format!(
                "unix: skipped: the server does not show unix_socket_directories to {} \
                 (grant it pg_read_all_settings, or give the socket as host=DIR in the URI)",
                params.get("user").unwrap_or_else(|| "this user".into())
            ));
            None
        }
    };
    let local = base.unix_socket || base.server.host.as_deref().is_some_and(is_loopback);
    match unix_host {
        Some(dir) if local => wanted.push(("unix", Some(dir), "disable")),
        Some(_) => skipped.push(format!(
            "unix: skipped: {} is not on this machine's loopback, so its Unix socket is not \
             reachable from here",
            place(&base)
        )),
        None => {}
    }
    let tcp_host = if base.unix_socket {
        match setting("listen_addresses") {
            Ok(list) => tcp_address(&list),
            Err(_) => Some("127.0.0.1".to_string()),
        }
    } else {
        base.server.host.clone()
    };
    match tcp_host {
        Some(host) => {
            wanted.push(("tcp", Some(host.clone()), "disable"));
            if setting("ssl").is_ok_and(|v| v == "off") {
                skipped.push("tls: skipped: the server has ssl = off".into());
            } else {
                wanted.push(("tls", Some(host), "require"));
            }
        }
        None => skipped.push(
            "tcp, tls: skipped: the server listens on no TCP address (listen_addresses is empty)"
                .into(),
        ),
    }
    drop(conn);
    let mut targets = Vec::new();
    for (label, host, sslmode) in wanted {
        let host = host.unwrap_or_default();
        let mut keywords = vec![
            ("host", host.as_str()),
            ("hostaddr", ""),
            ("sslmode", sslmode),
        ];
        if let Some(p) = &port {
            keywords.push(("port", p.as_str()));
        }
        let params = params.with(&keywords);
        match Conn::connect(&params) {
            Ok(conn) if conn.query_value(STARTED).ok() != started => skipped.push(format!(
                "{label}: skipped: it reached another server than {} (a different postmaster \
                 start time)",
                place(&base)
            )),
            Ok(conn) => {
                let target = describe(label, params, &conn, None)?;
                check_label(&target, None)?;
                targets.push(target);
            }
            Err(e) => skipped.push(format!("{label}: skipped: {e}")),
        }
    }
    if targets.is_empty() {
        return Err(usage(format!(
            "--server: no transport of {} could be reached: {}",
            place(&base),
            skipped.join("; ")
        )));
    }
    Ok((targets, skipped))
}

/// When the server started: the same on every transport of one server.
const STARTED: &str = "SELECT pg_postmaster_start_time()::text";

/// A host name or address of this machine's loopback.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Where a target went: `host:port` or `socket directory:port`.
fn place(target: &PgTarget) -> String {
    let s = &target.server;
    format!(
        "{}:{}",
        s.host.as_deref().unwrap_or("?"),
        s.port.as_deref().unwrap_or("?")
    )
}

/// The loopback address to reach a server listening on `list` (PostgreSQL's
/// `listen_addresses`), else its first address; `None` when it listens on none.
fn tcp_address(list: &str) -> Option<String> {
    let addresses: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    if addresses
        .iter()
        .any(|a| matches!(*a, "*" | "0.0.0.0" | "127.0.0.1" | "localhost"))
    {
        Some("127.0.0.1".into())
    } else if addresses.iter().any(|a| matches!(*a, "::" | "::1")) {
        Some("::1".into())
    } else {
        addresses.first().map(|a| a.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_are_this_machine() {
        for host in ["localhost", "127.0.0.1", "127.3.0.9", "::1"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["db.example", "10.0.0.5", "::2", ""] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn listen_addresses_prefer_loopback() {
        assert_eq!(tcp_address("*").as_deref(), Some("127.0.0.1"));
        assert_eq!(
            tcp_address("10.0.0.5, localhost").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(tcp_address("::").as_deref(), Some("::1"));
        assert_eq!(tcp_address("10.0.0.5").as_deref(), Some("10.0.0.5"));
        assert_eq!(tcp_address(""), None);
    }
}
