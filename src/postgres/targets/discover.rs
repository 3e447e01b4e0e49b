//! `--server URI`: "here is my server, compare its transports". One connection asks
//! the server where it listens (`unix_socket_directories`, `port`,
//! `listen_addresses`, `ssl`); the same database and user are then reached over its
//! Unix socket, over TCP with `sslmode=disable` and over TLS with
//! `sslmode=require`, as targets `unix`, `tcp` and `tls`. What the server does not
//! offer, or its pg_hba.conf refuses, is skipped with one line each.
//!
//! Each transport must reach the same server, and the user's password goes only
//! where the user sent it or to this machine's sockets and loopback held by the
//! server's own account. The socket is tried only when the URI reached this machine
//! (a socket, or a loopback address), with libpq's `requirepeer` naming the account
//! that answered there, so a socket another account holds gets nothing; when the URI
//! reached a socket, TCP is tried only on a loopback address, and only when the port
//! there is held by that same account (wherever `listen_addresses` says the server
//! also listens); and every target's postmaster start time must be the URI's.

use super::super::experiment::PgTarget;
use super::super::libpq::Conn;
use super::{check_label, connect_user, describe, learn, reached, user_params, ServerKind};
use crate::error::usage;
use crate::system::account::user_name;
use crate::system::peers;
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
    let owner = server_uid(&conn, &base);
    let mut skipped = Vec::new();
    let mut wanted: Vec<(&str, Option<String>, &str, Option<String>)> = Vec::new();

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
        Some(dir) if local => match owner.and_then(user_name) {
            Some(name) => wanted.push(("unix", Some(dir), "disable", Some(name))),
            None => skipped.push(
                "unix: skipped: sockbench cannot tell which account runs the server, so it \
                 cannot check who holds its socket before sending your password; give the \
                 socket yourself with --url 'host=DIR …'"
                    .into(),
            ),
        },
        Some(_) => skipped.push(format!(
            "unix: skipped: {} is not on this machine's loopback, so its Unix socket is not \
             reachable from here",
            place(&base)
        )),
        None => {}
    }
    let tcp_host = if base.unix_socket {
        let list = setting("listen_addresses").unwrap_or_else(|_| "localhost".into());
        loopback_tcp(&list, port.as_deref(), owner).map_err(|why| skipped.push(why))
    } else {
        Ok(base.server.host.clone().unwrap_or_default())
    };
    if let Ok(host) = tcp_host {
        wanted.push(("tcp", Some(host.clone()), "disable", None));
        if setting("ssl").is_ok_and(|v| v == "off") {
            skipped.push("tls: skipped: the server has ssl = off".into());
        } else {
            wanted.push(("tls", Some(host), "require", None));
        }
    }
    drop(conn);
    let mut targets = Vec::new();
    for (label, host, sslmode, peer) in wanted {
        let host = host.unwrap_or_default();
        let mut keywords = vec![
            ("host", host.as_str()),
            ("hostaddr", ""),
            ("sslmode", sslmode),
        ];
        if let Some(p) = &port {
            keywords.push(("port", p.as_str()));
        }
        if let Some(name) = &peer {
            keywords.push(("requirepeer", name.as_str()));
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

/// The account that runs the server the URI reached: the one behind its Unix socket,
/// or the one account listening on its loopback port.
fn server_uid(conn: &Conn, base: &PgTarget) -> Option<u32> {
    if let Some(uid) = conn.peer_uid() {
        return Some(uid);
    }
    if !base.server.host.as_deref().is_some_and(is_loopback) {
        return None;
    }
    loopback_owner(base.server.port.as_deref()?.parse().ok()?)
}

/// The one account listening on `port` where a connection to loopback arrives (a
/// loopback address, or every address); `None` when none or several do.
fn loopback_owner(port: u16) -> Option<u32> {
    let uids: std::collections::BTreeSet<u32> = peers::tcp_listeners(port)
        .ok()?
        .into_iter()
        .filter(|l| l.addr.is_loopback() || l.addr.is_unspecified())
        .map(|l| l.uid)
        .collect();
    match uids.len() {
        1 => uids.first().copied(),
        _ => None,
    }
}

/// The loopback address where a server reached over its socket also takes TCP, and
/// whose port is held by the server's account (`owner`); else the line that says
/// why TCP is skipped. `list` is its `listen_addresses`.
fn loopback_tcp(list: &str, port: Option<&str>, owner: Option<u32>) -> Result<String, String> {
    let Some(host) = tcp_address(list) else {
        return Err(if list.trim().is_empty() {
            "tcp, tls: skipped: the server listens on no TCP address (listen_addresses is empty)"
                .into()
        } else {
            format!(
                "tcp, tls: skipped: the server listens on no loopback address \
                 (listen_addresses = {}), and sockbench sends your password only to this \
                 machine's sockets and loopback",
                crate::units::shown(list)
            )
        });
    };
    let held_by = port.and_then(|p| p.parse().ok()).and_then(loopback_owner);
    match (held_by, owner) {
        (Some(holder), Some(server)) if holder == server => Ok(host),
        (holder, _) => Err(format!(
            "tcp, tls: skipped: port {} on loopback is held by {}, not by the account \
             behind the server's socket{}",
            port.unwrap_or("?"),
            holder.map_or("no single account".into(), |uid| format!("uid {uid}")),
            owner.map_or(String::new(), |uid| format!(" (uid {uid})"))
        )),
    }
}

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
/// `listen_addresses`); `None` when it listens on no loopback address (another
/// address, a host name, or a name that only resolves elsewhere is never used).
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
        addresses
            .iter()
            .find_map(|a| {
                a.parse::<std::net::IpAddr>()
                    .ok()
                    .filter(|ip| ip.is_loopback())
            })
            .map(|ip| ip.to_string())
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
        assert_eq!(tcp_address("127.0.0.2").as_deref(), Some("127.0.0.2"));
        // Where the server says it listens is not where a password goes, unless
        // that is this machine's loopback.
        for elsewhere in [
            "10.0.0.5",
            "169.254.169.254",
            "db.example",
            "10.0.0.1, ::2",
            "",
        ] {
            assert_eq!(tcp_address(elsewhere), None, "{elsewhere}");
        }
    }
}
