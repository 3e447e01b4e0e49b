//! A throwaway cluster on a shared machine: while it runs, another local account must
//! not reach it at all — not as its superuser, and not as the benchmark role either
//! (which could change what is measured) — whichever authentication method the auth
//! experiment has switched to.
//!
//! The hostile client is `psql` run as `nobody`, which knows no password and has no
//! access to the private socket directory; it tries every way in the cluster offers
//! (TCP, TCP with TLS, the abstract socket, the socket directory) as the
//! administering role, as `postgres`, and as the benchmark role.

use super::cluster::Cluster;
use super::cluster_tests::binaries_or_skip;
use super::hba::{AuthMethod, ADMIN_ROLE, ROLE};
use crate::transport::Transport;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// What one connection attempt as another account got.
#[derive(Debug)]
enum Attempt {
    /// Refused, with libpq's message.
    Refused(String),
    /// Connected; `is_superuser` as the server reports it.
    Connected { superuser: String },
}

struct Stranger {
    psql: std::path::PathBuf,
    uid: u32,
    gid: u32,
}

impl Stranger {
    fn psql(&self, conninfo: &str, sql: &str) -> std::process::Output {
        Command::new(&self.psql)
            .args(["-X", "-At", "-d", conninfo, "-c", sql])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", "/nonexistent")
            .env("PGPASSFILE", "/nonexistent")
            .env("PGCONNECT_TIMEOUT", "5")
            .current_dir("/")
            .uid(self.uid)
            .gid(self.gid)
            .output()
            .expect("psql runs")
    }

    /// Connects as `conninfo` says; when that works, also tries to run a program that
    /// would create `marker`.
    fn attempt(&self, conninfo: &str, marker: &Path) -> Attempt {
        let first = self.psql(conninfo, "SELECT current_setting('is_superuser')");
        if !first.status.success() {
            return Attempt::Refused(String::from_utf8_lossy(&first.stderr).into_owned());
        }
        let program = format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", marker.display());
        let _ = self.psql(conninfo, &program);
        let _ = self.psql(conninfo, "SELECT pg_read_file('postgresql.conf', 0, 10)");
        Attempt::Connected {
            superuser: String::from_utf8_lossy(&first.stdout).trim().to_string(),
        }
    }
}

fn nobody() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("nobody").unwrap();
    // SAFETY: getpwnam returns NULL or a pointer to a static entry, read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: non-null, as checked above.
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

/// PostgreSQL's programs and `psql` run as `nobody`, or `None` after saying why the
/// test is skipped (no PostgreSQL, or not root, so no other account to act as).
fn stranger_or_skip(test: &str) -> Option<(super::bindir::Binaries, Stranger)> {
    let binaries = binaries_or_skip(test)?;
    // SAFETY: a plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED {test}: needs root to act as 'nobody'");
        return None;
    }
    let (uid, gid) = nobody().expect("a 'nobody' account");
    let stranger = Stranger {
        psql: binaries.dir.join("psql"),
        uid,
        gid,
    };
    assert!(
        stranger.psql.exists(),
        "{} missing",
        stranger.psql.display()
    );
    Some((binaries, stranger))
}

#[test]
fn another_local_account_never_reaches_any_role() {
    let Some((binaries, stranger)) =
        stranger_or_skip("another_local_account_never_reaches_any_role")
    else {
        return;
    };
    let marks = tempfile::tempdir().unwrap();
    std::fs::set_permissions(marks.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let marker = marks.path().join("ran-a-program");

    let mut cluster = Cluster::start(
        &binaries,
        &[
            Transport::Unix,
            Transport::UnixAbstract,
            Transport::Tcp,
            Transport::Tls,
        ],
        1,
    )
    .expect("cluster starts");
    let port = cluster.port();
    let ways = [
        ("tcp", format!("host=127.0.0.1 port={port} sslmode=disable")),
        ("tls", format!("host=127.0.0.1 port={port} sslmode=require")),
        (
            "unix-abstract",
            format!("host=@{} port={port}", cluster.abstract_name().unwrap()),
        ),
        (
            "unix",
            format!("host={} port={port}", cluster.socket_dir().display()),
        ),
    ];
    // Trust is never offered while an abstract socket listens.
    let e = cluster.set_auth(AuthMethod::Trust).unwrap_err();
    assert!(e.to_string().contains("abstract socket"), "{e}");
    let mut server_asked = 0;
    for method in AuthMethod::ALL.into_iter().filter(|m| !m.private_only()) {
        cluster.set_auth(method).unwrap();
        for (way, base) in &ways {
            for role in [ADMIN_ROLE, "postgres", ROLE] {
                let conninfo = format!("{base} user={role} dbname={ROLE}");
                match stranger.attempt(&conninfo, &marker) {
                    Attempt::Refused(why) => {
                        // The attempt reached the server, which asked for what
                        // 'nobody' does not have.
                        if why.contains("password") || why.contains("authentication failed") {
                            server_asked += 1;
                        }
                    }
                    Attempt::Connected { superuser } => panic!(
                        "{method} over {way}: 'nobody' logged in as {role} (superuser: {superuser})"
                    ),
                }
                assert!(
                    !marker.exists(),
                    "{method} over {way} as {role}: 'nobody' ran a program as the server account"
                );
            }
        }
    }
    assert!(
        server_asked > 0,
        "no attempt ever reached the server's authentication; the test proves nothing"
    );
}

/// Trust, where it is offered (the private socket directory, no abstract socket),
/// lets no other account in either: TCP asks nothing but is refused, and the
/// directory cannot be opened.
#[test]
fn trust_is_offered_to_no_other_account() {
    let Some((binaries, stranger)) = stranger_or_skip("trust_is_offered_to_no_other_account")
    else {
        return;
    };
    let marks = tempfile::tempdir().unwrap();
    let marker = marks.path().join("ran-a-program");
    let mut cluster = Cluster::start(
        &binaries,
        &[Transport::Unix, Transport::Tcp, Transport::Tls],
        1,
    )
    .expect("cluster starts");
    cluster.set_auth(AuthMethod::Trust).unwrap();
    // sockbench itself is let in through its directory, without a password.
    let own = cluster.params(Transport::Unix).unwrap();
    super::libpq::PgConn::connect(&own.with(&[("password", "")])).expect("trust over the socket");
    let port = cluster.port();
    for (way, base) in [
        ("tcp", format!("host=127.0.0.1 port={port} sslmode=disable")),
        ("tls", format!("host=127.0.0.1 port={port} sslmode=require")),
        (
            "unix",
            format!("host={} port={port}", cluster.socket_dir().display()),
        ),
    ] {
        let conninfo = format!("{base} user={ROLE} dbname={ROLE}");
        match stranger.attempt(&conninfo, &marker) {
            Attempt::Refused(why) => assert!(
                why.contains("pg_hba.conf rejects") || why.contains("Permission denied"),
                "trust over {way}: {why}"
            ),
            Attempt::Connected { .. } => panic!("trust over {way}: 'nobody' logged in as {ROLE}"),
        }
    }
}

/// Abstract sockets (`@…` in /proc/net/unix) of the server listening on `port`.
fn abstract_sockets_of(port: u16) -> Vec<String> {
    let suffix = format!("/.s.PGSQL.{port}");
    std::fs::read_to_string("/proc/net/unix")
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(7))
        .filter(|path| path.starts_with('@') && path.ends_with(&suffix))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_abstract_socket_exists_only_when_measured() {
    let Some(binaries) = binaries_or_skip("the_abstract_socket_exists_only_when_measured") else {
        return;
    };
    let without = Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).unwrap();
    assert_eq!(
        abstract_sockets_of(without.port()),
        Vec::<String>::new(),
        "an abstract socket although unix-abstract is not measured"
    );
    drop(without);
    let with = Cluster::start(&binaries, &[Transport::UnixAbstract], 1).unwrap();
    let name = with
        .abstract_name()
        .expect("a name when measured")
        .to_string();
    assert_eq!(
        abstract_sockets_of(with.port()),
        [format!("@{name}/.s.PGSQL.{}", with.port())]
    );
}

/// The server account can read its processes' environment (/proc/PID/environ): the
/// cluster's programs get none of sockbench's, which may hold the caller's secrets.
#[test]
fn the_server_gets_none_of_the_callers_environment() {
    let Some(binaries) = binaries_or_skip("the_server_gets_none_of_the_callers_environment") else {
        return;
    };
    let ours: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .collect();
    assert!(
        ours.iter().any(|n| n == "PATH"),
        "the test runs with no PATH; it proves nothing"
    );
    let cluster = Cluster::start(&binaries, &[Transport::Unix], 1).expect("cluster starts");
    let pid = cluster.pid().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let theirs: Vec<String> = environ
        .split(|&b| b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let inherited: Vec<&String> = theirs
        .iter()
        .filter(|v| ours.iter().any(|n| v.starts_with(&format!("{n}="))))
        .collect();
    assert_eq!(
        inherited,
        Vec::<&String>::new(),
        "the postmaster inherited sockbench's environment"
    );
}
