//! The ways to reach the servers under test: each transport of the throwaway
//! cluster, each URL the user named (or the server the caller's `PG*` variables
//! name), or each transport a `--server` (or the server the `PG*` variables name)
//! offers. Every target is connected to once
//! before any measurement, to learn the server's kind and version, where libpq
//! really went (socket or TCP, host, port) and whether TLS is in use, so that a bad
//! URL, a wrong password or a label that is not the truth fails at once with one
//! clear line.

mod discover;
mod kind;
mod service;
mod url;

pub use discover::{server_targets, ServerTargets};
pub use kind::{version_kind, ServerKind};
pub use url::{NamedUrl, UrlArg};

use super::cluster::Cluster;
use super::experiment::Target;
use super::libpq::{environment_defaults, parse_conninfo, ConnParams, PgConn, PgError};
use super::redact;
use crate::error::{usage, Unreachable};
use crate::postgres::keys::ServerInfo;
use crate::system::pg_environment;
use crate::transport::{SocketKind, TlsInfo, Transport, CERTIFICATE_KIND};
use anyhow::{bail, Context, Result};

/// The cluster's targets, one per transport.
#[cfg(test)]
pub fn cluster_targets(cluster: &Cluster, transports: &[Transport]) -> Result<Vec<Target>> {
    transports
        .iter()
        .map(|&t| cluster_target(cluster, t))
        .collect()
}

/// The cluster's target over transport `t` (into its container, from the client's
/// container where `t` says so).
pub fn cluster_target(cluster: &Cluster, t: Transport) -> Result<Target> {
    let params = cluster.params(t)?;
    let conn = {
        let _client = cluster.client_side(t)?;
        PgConn::connect(&params)
            .map_err(|e| anyhow::anyhow!("cannot connect to the throwaway cluster over {t}: {e}"))?
    };
    let target = describe(t.name(), params, &conn, Some(t))?;
    if target.tls.is_some() != (t == Transport::Tls) {
        bail!("the connection over {t} did not use TLS as expected");
    }
    if target.unix_socket != (t.kind() == SocketKind::Unix) {
        bail!("the connection over {t} did not reach the socket it names");
    }
    Ok(target)
}

/// The connection parameters of a user's server: the URI's (or conninfo's), plus
/// `gssencmode=disable` (unless given) so that connection timing is not spent
/// probing for GSSAPI encryption, over the caller's `PG*` variables (taken out of
/// the environment at start, see `system::pg_environment`) as libpq would use them.
///
/// As in libpq, a service (named by `service=` or `PGSERVICE`) wins over the other
/// variables: a variable whose keyword the service file sets is left out.
pub fn user_params(label: &str, uri: &str) -> Result<(ConnParams, Vec<(String, String)>)> {
    let pairs = parse_conninfo(uri).map_err(|e| {
        let e = redact::parse_error(&e.to_string(), uri);
        usage(format!("--url {label}: {e}; write it as psql takes it, e.g. postgres://foo@127.0.0.1:5432/foo?sslmode=require"))
    })?;
    let mut all = environment_defaults(|name| pg_environment::stashed(name).map(String::from));
    let named_service = |list: &[(String, String)]| {
        list.iter()
            .find(|(k, _)| k == "service")
            .map(|(_, v)| v.clone())
    };
    if let Some(name) = named_service(&pairs).or_else(|| named_service(&all)) {
        let set = service::keywords(&name).with_context(|| format!("--url {label}"))?;
        all.retain(|(k, _)| !set.contains(k));
    }
    all.extend([
        ("gssencmode".to_string(), "disable".to_string()),
        ("connect_timeout".to_string(), "10".to_string()),
    ]);
    all.extend(pairs.iter().cloned());
    Ok((ConnParams::new(all), pairs))
}

/// Connects to a user's server with `params` (whose own keywords, shown in
/// messages with the password hidden, are `pairs`).
pub fn connect_user(
    label: &str,
    params: &ConnParams,
    pairs: &[(String, String)],
) -> Result<PgConn> {
    let shown = redact::keywords(pairs);
    PgConn::connect(params).map_err(|e| {
        if let Some(why) = e.unreachable() {
            let option = if label == "--server" {
                "--server"
            } else if label.starts_with("--auth-url") {
                "--auth-url"
            } else if pairs.is_empty() {
                "PGHOST and PGPORT"
            } else {
                "--url"
            };
            let address = if pairs.is_empty() {
                "the address your PG* variables name".to_string()
            } else if label == "--server" || label == shown {
                shown
            } else {
                format!("{label} ({shown})")
            };
            return Unreachable {
                server: "PostgreSQL",
                address,
                why: why.to_string(),
                start: None,
                option,
            }
            .into();
        }
        let hint = if e.is_auth_failure() {
            "check the user and password"
        } else {
            "check that the server runs and the URL names it"
        };
        usage(format!("cannot connect to {label} ({shown}): {e}; {hint}"))
    })
}

/// A target for a user's server under the name `label`, which must be the truth
/// (see [`check_label`]).
pub fn user_target(label: &str, uri: &str) -> Result<Target> {
    let (params, pairs) = user_params(label, uri)?;
    let conn = connect_user(label, &params, &pairs)?;
    let target = describe(label, params, &conn, None)?;
    check_label(&target, Some(label))?;
    Ok(target)
}

/// A target for a user's server reached by `uri`, named `name` or, without one,
/// after what it reaches (`unix`, `tcp`, `tls`).
pub fn url_target(name: Option<&str>, uri: &str) -> Result<Target> {
    match name {
        Some(name) => user_target(name, uri),
        None => {
            let shown = if uri.is_empty() {
                "the server your PG* variables name".to_string()
            } else {
                redact::argument(uri)
            };
            let (params, pairs) = user_params(&shown, uri)?;
            let conn = connect_user(&shown, &params, &pairs)?;
            let mut target = describe("", params, &conn, None)?;
            target.label = reached(&target).to_string();
            Ok(target)
        }
    }
}

/// The kind of socket the connection of `target` reached, as libpq negotiated it.
pub fn reached_kind(target: &Target) -> SocketKind {
    if target.unix_socket {
        SocketKind::Unix
    } else if target.tls.is_some() {
        SocketKind::Tls
    } else {
        SocketKind::Tcp
    }
}

/// `unix`, `tls` or `tcp`: what the connection of `target` reached.
pub fn reached(target: &Target) -> &'static str {
    match reached_kind(target) {
        SocketKind::Unix => "unix",
        SocketKind::Tcp => "tcp",
        SocketKind::Tls => "tls",
        // A libpq connection is a stream: these are never reached.
        SocketKind::UnixSeqpacket
        | SocketKind::UnixDgram
        | SocketKind::Udp
        | SocketKind::UdpUnconnected => "other",
    }
}

/// The label is the truth: a target named after a transport (`unix`,
/// `unix-abstract`, `tcp`, `tcp6`, `tls`) really went that way, as libpq
/// negotiated it. Other names are the user's own and not checked.
pub fn check_label(target: &Target, given: Option<&str>) -> Result<()> {
    let label = given.unwrap_or(&target.label);
    let Ok(named) = label.parse::<Transport>() else {
        return Ok(());
    };
    let tls_version = target.tls.as_ref().map_or("", |t| t.version.as_str());
    let why = match (named.kind(), reached_kind(target)) {
        (SocketKind::Tcp, SocketKind::Tls) => format!(
            "negotiated TLS ({tls_version}): libpq's sslmode defaults to prefer; add \
             sslmode=disable to measure plain TCP, or name it tls"
        ),
        (SocketKind::Unix, SocketKind::Tcp | SocketKind::Tls) => {
            "reached the server over TCP, not a Unix socket; give the socket directory as \
             host (e.g. host=/var/run/postgresql), or name it tcp"
                .to_string()
        }
        (SocketKind::Tls, SocketKind::Tcp | SocketKind::Unix) => {
            "did not negotiate TLS; add sslmode=require (and reach it over TCP), or name it \
             after what it is"
                .to_string()
        }
        (SocketKind::Tcp, SocketKind::Unix) => {
            "reached the server over a Unix socket, not TCP; give host=127.0.0.1, or name \
             it unix"
                .to_string()
        }
        _ => return Ok(()),
    };
    Err(usage(format!("--url {label}: {why}")))
}

/// What connecting taught about a target.
fn describe(
    label: &str,
    params: ConnParams,
    conn: &PgConn,
    transport: Option<Transport>,
) -> Result<Target> {
    learn(label, params, conn, transport).map(|(target, _)| target)
}

/// A target and the kind of server behind it; `transport` is the throwaway
/// cluster's, `None` for a user's server.
fn learn(
    label: &str,
    params: ConnParams,
    conn: &PgConn,
    transport: Option<Transport>,
) -> Result<(Target, ServerKind)> {
    let throwaway = transport.is_some();
    let (kind, version) = if throwaway {
        let version = conn
            .query_value("SELECT version()")
            .map_err(|e: PgError| anyhow::anyhow!("{label}: {e}"))?;
        (version_kind(&version), version)
    } else {
        kind::detect(conn, &params)
    };
    if let ServerKind::PgBouncerAdmin(v) = &kind {
        return Err(usage(format!(
            "{} is pgbouncer's admin console ({v}), which runs only its own SHOW commands; \
             give the database of one of its pools instead",
            if label.is_empty() {
                "the server"
            } else {
                label
            }
        )));
    }
    let tls = conn.tls().map(|(version, cipher)| TlsInfo {
        version,
        cipher,
        certificate: if throwaway {
            CERTIFICATE_KIND.to_string()
        } else {
            "the server's own".to_string()
        },
    });
    let target = Target {
        label: label.to_string(),
        unix_socket: conn.over_unix_socket(),
        transport,
        params,
        tls,
        server: ServerInfo {
            kind: kind.name().to_string(),
            version,
            throwaway,
            host: conn.host(),
            port: conn.port(),
            pooler: kind.pooler(),
            password_storage: None,
        },
    };
    Ok((target, kind))
}

/// Names targets that were given no name and reached the same transport after
/// their host and port instead; refuses targets that still share a name.
pub fn name_apart(targets: &mut [Target], derived: &[bool]) -> Result<()> {
    let clash = |targets: &[Target], i: usize| {
        targets
            .iter()
            .enumerate()
            .any(|(j, t)| j != i && t.label == targets[i].label)
    };
    let renamed: Vec<usize> = (0..targets.len())
        .filter(|&i| derived[i] && clash(targets, i))
        .collect();
    for i in renamed {
        let s = &targets[i].server;
        targets[i].label = format!(
            "{}:{}",
            s.host.as_deref().unwrap_or("?"),
            s.port.as_deref().unwrap_or("?")
        );
    }
    if let Some(i) = (0..targets.len()).find(|&i| clash(targets, i)) {
        return Err(usage(format!(
            "two --url are both named {}; give each its own NAME=",
            targets[i].label
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(label: &str, host: &str, port: &str) -> Target {
        Target {
            label: label.into(),
            params: ConnParams::new([("host", host)]),
            tls: None,
            server: ServerInfo {
                kind: "postgresql".into(),
                version: "PostgreSQL 17".into(),
                throwaway: false,
                host: Some(host.into()),
                port: Some(port.into()),
                pooler: None,
                password_storage: None,
            },
            unix_socket: host.starts_with('/'),
            transport: None,
        }
    }

    #[test]
    fn derived_names_that_clash_become_host_and_port() {
        let mut targets = vec![
            target("tcp", "127.0.0.1", "5432"),
            target("tcp", "127.0.0.1", "6432"),
            target("unix", "/tmp", "5432"),
        ];
        name_apart(&mut targets, &[true, true, true]).unwrap();
        let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["127.0.0.1:5432", "127.0.0.1:6432", "unix"]);
        // The same server twice, unnamed: each needs a NAME.
        let mut same = vec![target("tcp", "h", "1"), target("tcp", "h", "1")];
        let e = name_apart(&mut same, &[true, true]).unwrap_err();
        assert!(e.to_string().contains("give each its own NAME="), "{e}");
        // A given name is kept; the derived one moves aside.
        let mut mixed = vec![target("tcp", "h", "1"), target("tcp", "h", "2")];
        name_apart(&mut mixed, &[false, true]).unwrap();
        assert_eq!(
            (mixed[0].label.as_str(), mixed[1].label.as_str()),
            ("tcp", "h:2")
        );
    }

    #[test]
    fn labels_named_after_a_transport_must_be_what_libpq_reached() {
        let mut t = target("tcp", "127.0.0.1", "5432");
        t.tls = Some(TlsInfo {
            version: "TLSv1.3".into(),
            cipher: "TLS_AES_256_GCM_SHA384".into(),
            certificate: "the server's own".into(),
        });
        let e = check_label(&t, None).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("negotiated TLS (TLSv1.3)"), "{e}");
        assert!(e.to_string().contains("sslmode=disable"), "{e}");
        assert!(check_label(&t, Some("tls")).is_ok());
        assert!(check_label(&t, Some("mine")).is_ok());
        let e = check_label(&target("tls", "127.0.0.1", "1"), None).unwrap_err();
        assert!(e.to_string().contains("did not negotiate TLS"), "{e}");
        let e = check_label(&target("unix", "127.0.0.1", "1"), None).unwrap_err();
        assert!(e.to_string().contains("not a Unix socket"), "{e}");
        let e = check_label(&target("tcp", "/tmp", "1"), None).unwrap_err();
        assert!(e.to_string().contains("over a Unix socket, not TCP"), "{e}");
    }

    #[test]
    fn malformed_urls_are_usage_errors_and_unreachable_ones_failures() {
        let e = user_target("bad", "postgres://foo@127.0.0.1:notaport/foo")
            .err()
            .unwrap();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        // Port 1 on loopback: nothing listens there.
        let e = user_target("gone", "postgres://foo:pw@127.0.0.1:1/foo?sslmode=disable")
            .err()
            .unwrap();
        assert_eq!(crate::error::exit_code(&e), 1, "{e}");
        assert!(!e.to_string().contains("pw"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        let e = url_target(None, "host=127.0.0.1 port=1 password=pw sslmode=disable")
            .err()
            .unwrap();
        assert_eq!(crate::error::exit_code(&e), 1, "{e}");
        assert!(!e.to_string().contains("pw"), "{e}");
    }
}
