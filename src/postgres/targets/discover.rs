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
//! that answered there, so a socket another account holds gets nothing; a directory
//! the server names counts only when it is an absolute path or an `@` name, as libpq
//! takes anything else for a host to reach over TCP, where `requirepeer` means
//! nothing. When the URI reached a socket, TCP is tried only on a loopback address,
//! and only when the port there is held by that same account (wherever
//! `listen_addresses` says the server also listens); and every target's postmaster
//! start time must be the URI's.

use super::super::experiment::Target;
use super::super::libpq::{ConnParams, PgConn};
use super::{check_label, connect_user, describe, learn, reached, user_params, ServerKind};
use crate::error::usage;
use crate::system::account::user_name;
use crate::system::peers;
use anyhow::Result;

/// What `--server` (or the caller's `PG*` variables, compared the same way)
/// found: the connection the URI made, the targets derived from it, and a line for
/// each transport skipped or found by searching.
pub struct ServerTargets {
    pub reached: Target,
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
}

/// Where a Unix socket directory tried came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirFound {
    /// The server's `unix_socket_directories`, which the role may read.
    Setting,
    /// The socket directory the URI itself reached.
    Reached,
    /// A standard directory ([`STANDARD_DIRS`]) holding a socket with the server's port.
    Standard,
    /// The server's `postmaster.pid`, in the data directory its process works in.
    PostmasterFile,
}

/// Where PostgreSQL's packages and its own default put the socket.
const STANDARD_DIRS: [&str; 3] = ["/var/run/postgresql", "/run/postgresql", "/tmp"];

/// The targets of `--server uri` (with `from_environment`, of the server the
/// caller's `PG*` variables name, `uri` empty).
pub fn server_targets(uri: &str, from_environment: bool) -> Result<ServerTargets> {
    let label = if from_environment {
        "the server your PG* variables name"
    } else {
        "--server"
    };
    let (params, pairs) = user_params(label, uri)?;
    let conn = connect_user(label, &params, &pairs)?;
    let (mut base, kind) = learn(label, params.clone(), &conn, None)?;
    base.label = reached(&base).to_string();
    if kind != ServerKind::PostgreSql {
        return Ok(as_given(label, base, kind));
    }
    let port = (conn.query_value("SHOW port").ok()).or(base.server.port.clone());
    let started = conn.query_value(STARTED).ok();
    let owner = server_uid(&conn, &base);
    let user = conn
        .user()
        .or_else(|| params.get("user"))
        .unwrap_or_else(|| "this user".into());
    let mut found = Found::default();
    let server = Connected {
        conn: &conn,
        base: &base,
        port: port.as_deref(),
        owner,
        user: &user,
    };
    let unix_dirs = server.socket_dirs(&mut found);
    let unix_peer = socket_holder(&unix_dirs, owner, &mut found.notes);
    let wanted = server.loopback(&mut found.notes);
    drop(conn);
    let reach = Reach {
        params: &params,
        port: port.as_deref(),
        started: started.as_deref(),
        base: &base,
    };
    let mut targets = Vec::new();
    if let Some(peer) = unix_peer {
        targets.extend(reach.unix_target(unix_dirs, &peer, &user, &mut found)?);
    }
    let mut notes = found.notes;
    for (label, host, sslmode) in wanted {
        match reach.target(label, &host, sslmode, None)? {
            Ok(target) => targets.push(target),
            Err(why) => notes.push(format!("{label}: skipped: {why}")),
        }
    }
    if targets.is_empty() {
        return Err(usage(format!(
            "{label}: no transport of {} could be reached: {}",
            place(&base),
            notes.join("; ")
        )));
    }
    Ok(ServerTargets {
        reached: base,
        targets,
        notes,
    })
}

/// A server that is not PostgreSQL itself (a pooler, or a server of another
/// kind), measured only over the connection given.
fn as_given(label: &str, base: Target, kind: ServerKind) -> ServerTargets {
    let why = if kind.pooled() {
        "whose settings describe the server behind it"
    } else {
        "where PostgreSQL's settings may not exist"
    };
    let line = format!(
        "{label}: {} is {}, {why}; measuring it only as given, as {}",
        place(&base),
        kind.name(),
        base.label
    );
    ServerTargets {
        targets: vec![base.clone()],
        reached: base,
        notes: vec![line],
    }
}

/// What the search for a server's transports has to say: the lines for the
/// run (what was skipped and why), and the socket directories tried in vain.
#[derive(Default)]
struct Found {
    notes: Vec<String>,
    tried: Vec<String>,
}

/// A user's PostgreSQL server, connected, as the search for its other
/// transports sees it.
struct Connected<'a> {
    conn: &'a PgConn,
    /// The target the URI reached.
    base: &'a Target,
    port: Option<&'a str>,
    /// The account that runs the server, when sockbench can tell.
    owner: Option<u32>,
    /// The role connected, as messages name it.
    user: &'a str,
}

impl Connected<'_> {
    fn setting(&self, name: &str) -> Result<String, crate::postgres::libpq::PgError> {
        self.conn.query_value(&format!("SHOW {name}"))
    }

    /// Where the socket is: the setting, else the socket the URI reached, else
    /// what a role that may not read the setting can find on this machine.
    fn socket_dirs(&self, found: &mut Found) -> Vec<(String, DirFound)> {
        let base = self.base;
        let local = base.unix_socket || base.server.host.as_deref().is_some_and(is_loopback);
        match self.setting("unix_socket_directories") {
            Ok(dirs) if dirs.split(',').all(|d| d.trim().is_empty()) => {
                found
                    .notes
                    .push("unix: skipped: the server listens on no Unix socket".into());
                Vec::new()
            }
            _ if !local => {
                found.notes.push(format!(
                    "unix: skipped: {} is not on this machine's loopback, so its Unix socket \
                     is not reachable from here",
                    place(base)
                ));
                Vec::new()
            }
            Ok(dirs) => setting_dirs(&dirs, &mut found.notes)
                .into_iter()
                .next()
                .map(|d| (d, DirFound::Setting))
                .into_iter()
                .collect(),
            Err(_) if base.unix_socket => base
                .server
                .host
                .clone()
                .map(|h| (h, DirFound::Reached))
                .into_iter()
                .collect(),
            Err(_) => {
                let dirs = search(self.conn, self.port, self.owner, &mut found.tried);
                if dirs.is_empty() {
                    found.notes.push(not_found(self.user, &found.tried));
                }
                dirs
            }
        }
    }

    /// The loopback TCP address to measure tcp and tls on, with each one's
    /// sslmode: the host the URI reached, or on a socket the server's
    /// `listen_addresses`.
    fn loopback(&self, notes: &mut Vec<String>) -> Vec<(&'static str, String, &'static str)> {
        let tcp_host = if self.base.unix_socket {
            let list = self
                .setting("listen_addresses")
                .unwrap_or_else(|_| "localhost".into());
            loopback_tcp(&list, self.port, self.owner).map_err(|why| notes.push(why))
        } else {
            Ok(self.base.server.host.clone().unwrap_or_default())
        };
        let Ok(host) = tcp_host else {
            return Vec::new();
        };
        let mut wanted = vec![("tcp", host.clone(), "disable")];
        if self.setting("ssl").is_ok_and(|v| v == "off") {
            notes.push("tls: skipped: the server has ssl = off".into());
        } else {
            wanted.push(("tls", host, "require"));
        }
        wanted
    }
}

/// The socket directories of the server's `unix_socket_directories`, in its order:
/// only absolute paths and `@` names (abstract sockets), as libpq takes any other
/// entry for a host name or address to reach over TCP, where the password would go
/// to whatever the server named. Each entry left out gets a line in `notes`.
fn setting_dirs(setting: &str, notes: &mut Vec<String>) -> Vec<String> {
    let (dirs, others): (Vec<&str>, Vec<&str>) = setting
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .partition(|d| is_socket_dir(d));
    for other in others {
        notes.push(format!(
            "unix: skipped {} of unix_socket_directories: it is no absolute path or @name, \
             so libpq would take it for a host to reach over TCP",
            crate::units::shown(other)
        ));
    }
    dirs.into_iter().map(String::from).collect()
}

/// A host libpq reaches as a Unix socket: a directory's absolute path, or an
/// abstract socket's `@` name.
fn is_socket_dir(host: &str) -> bool {
    host.starts_with('/') || host.starts_with('@')
}

/// The account that must hold the server's socket, when there is a socket to
/// reach and sockbench can tell who runs the server: without it, a socket is
/// never sent a password.
fn socket_holder(
    dirs: &[(String, DirFound)],
    owner: Option<u32>,
    notes: &mut Vec<String>,
) -> Option<String> {
    if dirs.is_empty() {
        return None;
    }
    let name = owner.and_then(user_name);
    if name.is_none() {
        notes.push(
            "unix: skipped: sockbench cannot tell which account runs the server, so it \
             cannot check who holds its socket before sending your password; give the \
             socket yourself with --url 'host=DIR …'"
                .into(),
        );
    }
    name
}

impl Reach<'_> {
    /// The server's Unix socket target: the first directory in `dirs` where the
    /// same server answers, its socket held by `peer`.
    fn unix_target(
        &self,
        dirs: Vec<(String, DirFound)>,
        peer: &str,
        user: &str,
        found: &mut Found,
    ) -> Result<Option<Target>> {
        for (dir, source) in dirs {
            match (
                self.target("unix", &dir, "disable", Some(peer))?,
                found_by(source),
            ) {
                (Ok(target), how) => {
                    if let Some(how) = how {
                        found.notes.push(format!(
                            "unix: found the server's socket in {dir}, {how} (the server does \
                             not show unix_socket_directories to {user}); it answers as the \
                             same server, held by its account {peer}"
                        ));
                    }
                    return Ok(Some(target));
                }
                (Err(why), Some(how)) => found.tried.push(format!("{dir}, {how}: {why}")),
                (Err(why), None) => {
                    found.notes.push(format!("unix: skipped: {why}"));
                    return Ok(None);
                }
            }
        }
        if !found.tried.is_empty() {
            found.notes.push(not_found(user, &found.tried));
        }
        Ok(None)
    }
}

/// How a socket directory found by searching was found, as the line that keeps it
/// says; `None` for one the server or the URI named.
fn found_by(found: DirFound) -> Option<&'static str> {
    match found {
        DirFound::Setting | DirFound::Reached => None,
        DirFound::Standard => Some("a standard directory"),
        DirFound::PostmasterFile => Some("named in its postmaster.pid"),
    }
}

/// The line that says the socket was not found: what was tried, and what to do.
fn not_found(user: &str, tried: &[String]) -> String {
    format!(
        "unix: skipped: the server does not show unix_socket_directories to {user}, and \
         its socket was not found ({}); grant {user} pg_read_all_settings, or give the \
         socket as host=DIR in the URI",
        tried.join("; ")
    )
}

/// The socket directories a role that may not read `unix_socket_directories` can
/// find for the server on `port`, in the order to try them: the standard
/// directories holding a socket with that port, then the one the server's
/// `postmaster.pid` names (readable through the working directory of this
/// connection's backend, which is the data directory, by root or the server's
/// account). Each is only a candidate: it is kept only if it reaches the same
/// postmaster, held by the server's account. What gave nothing goes to `tried`.
fn search(
    conn: &PgConn,
    port: Option<&str>,
    owner: Option<u32>,
    tried: &mut Vec<String>,
) -> Vec<(String, DirFound)> {
    let Some(port) = port else {
        tried.push("the server's port is not known".into());
        return Vec::new();
    };
    let mut found: Vec<(String, DirFound)> = Vec::new();
    let mut seen = Vec::new();
    for dir in STANDARD_DIRS {
        let socket = std::path::Path::new(dir).join(format!(".s.PGSQL.{port}"));
        let is_socket = std::fs::symlink_metadata(&socket)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()));
        // /var/run is /run on most systems: the same socket once.
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.into());
        if is_socket && !seen.contains(&real) {
            seen.push(real);
            found.push((dir.to_string(), DirFound::Standard));
        }
    }
    if found.is_empty() {
        tried.push(format!(
            "no .s.PGSQL.{port} in {}",
            STANDARD_DIRS.join(", ")
        ));
    }
    match postmaster_file_dir(conn, port, owner) {
        Ok(dir) if found.iter().any(|(d, _)| *d == dir) => {}
        Ok(dir) => found.push((dir, DirFound::PostmasterFile)),
        Err(why) => tried.push(why),
    }
    found
}

/// The first socket directory in the server's `postmaster.pid` (its fifth line),
/// read in the working directory of this connection's backend, when that process
/// is the server's account's and the file names the server's port.
fn postmaster_file_dir(conn: &PgConn, port: &str, owner: Option<u32>) -> Result<String, String> {
    let pid: u32 = conn
        .query_value("SELECT pg_backend_pid()")
        .ok()
        .and_then(|p| p.parse().ok())
        .ok_or("the server did not give its backend's process id")?;
    let process = format!("/proc/{pid}");
    // A server in another PID namespace (a container) numbers its processes
    // otherwise: the process here must at least be the server's account's.
    let uid = std::fs::metadata(&process)
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .map_err(|_| format!("its backend, process {pid}, is not visible here"))?;
    if owner.is_some_and(|o| o != uid) {
        return Err(format!(
            "process {pid} here is not the server's account's, so its postmaster.pid is not known"
        ));
    }
    let text = std::fs::read_to_string(format!("{process}/cwd/postmaster.pid"))
        .map_err(|e| format!("its postmaster.pid is not readable here ({e})"))?;
    postmaster_socket_dir(&text, port)
}

/// The first socket directory of a `postmaster.pid` (lines: process id, data
/// directory, start time, port, socket directory, listen address, …), when it
/// names `port`.
fn postmaster_socket_dir(text: &str, port: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    if lines.get(3) != Some(&port) {
        return Err(format!("its postmaster.pid does not name port {port}"));
    }
    match lines.get(4).filter(|d| !d.is_empty()) {
        Some(dir) if is_socket_dir(dir) => Ok(dir.to_string()),
        Some(dir) => Err(format!(
            "its postmaster.pid names {}, no absolute path or @name",
            crate::units::shown(dir)
        )),
        None => Err("its postmaster.pid names no socket directory".into()),
    }
}

/// What every derived target of one server shares: the URI's parameters, the port,
/// the postmaster's start time and the target the URI reached.
struct Reach<'a> {
    params: &'a ConnParams,
    port: Option<&'a str>,
    started: Option<&'a str>,
    base: &'a Target,
}

impl Reach<'_> {
    /// The target `label` at `host` with `sslmode` (and the socket's holder
    /// `peer`), or why it is skipped: it must reach the same postmaster.
    fn target(
        &self,
        label: &str,
        host: &str,
        sslmode: &str,
        peer: Option<&str>,
    ) -> Result<Result<Target, String>> {
        let mut keywords = vec![("host", host), ("hostaddr", ""), ("sslmode", sslmode)];
        if let Some(p) = self.port {
            keywords.push(("port", p));
        }
        if let Some(name) = peer {
            keywords.push(("requirepeer", name));
        }
        let params = self.params.with(&keywords);
        match PgConn::connect(&params) {
            Ok(conn) if conn.query_value(STARTED).ok().as_deref() != self.started => {
                Ok(Err(format!(
                    "it reached another server than {} (a different postmaster start time)",
                    place(self.base)
                )))
            }
            Ok(conn) => {
                let target = describe(label, params, &conn, None)?;
                check_label(&target, None)?;
                Ok(Ok(target))
            }
            Err(e) => Ok(Err(e.to_string())),
        }
    }
}

/// When the server started: the same on every transport of one server.
const STARTED: &str = "SELECT pg_postmaster_start_time()::text";

/// The account that runs the server the URI reached: the one behind its Unix socket,
/// or the one account listening on its loopback port.
fn server_uid(conn: &PgConn, base: &Target) -> Option<u32> {
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
fn place(target: &Target) -> String {
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
    fn postmaster_pid_names_the_socket_directory_of_its_port() {
        let file = "4242\n/srv/pg/data\n1764000000\n5433\n/var/run/postgresql\n*\n  \
                    5433001  1\nready   \n";
        assert_eq!(
            postmaster_socket_dir(file, "5433").as_deref(),
            Ok("/var/run/postgresql")
        );
        let e = postmaster_socket_dir(file, "5432").unwrap_err();
        assert!(e.contains("does not name port 5432"), "{e}");
        // A server without a Unix socket leaves the line empty.
        let none = "4242\n/srv/pg/data\n1764000000\n5433\n\n*\n";
        let e = postmaster_socket_dir(none, "5433").unwrap_err();
        assert!(e.contains("names no socket directory"), "{e}");
        let host = "4242\n/srv/pg/data\n1764000000\n5433\n169.254.169.254\n*\n";
        let e = postmaster_socket_dir(host, "5433").unwrap_err();
        assert!(e.contains("169.254.169.254, no absolute path"), "{e}");
        assert!(postmaster_socket_dir("", "5433").is_err());
    }

    #[test]
    fn only_paths_and_at_names_of_the_setting_are_socket_directories() {
        let mut notes = Vec::new();
        let dirs = setting_dirs(
            "169.254.169.254, /var/run/postgresql, @abstract, relative/dir",
            &mut notes,
        );
        assert_eq!(dirs, ["/var/run/postgresql", "@abstract"]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        for (note, entry) in notes.iter().zip(["169.254.169.254", "relative/dir"]) {
            assert!(
                note.starts_with(&format!("unix: skipped {entry} of unix_socket_directories")),
                "{note}"
            );
        }
        // A host name, or a server listening on no socket, leaves nothing to try.
        let mut notes = Vec::new();
        assert!(setting_dirs("db.example", &mut notes).is_empty());
        assert_eq!(notes.len(), 1);
        let mut notes = Vec::new();
        assert!(setting_dirs(" , ", &mut notes).is_empty());
        assert!(notes.is_empty(), "{notes:?}");
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
