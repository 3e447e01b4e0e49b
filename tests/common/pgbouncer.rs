//! A real pgbouncer in front of a user server (`user_server.rs`), run as the
//! server account with its configuration in a temporary directory, listening on a
//! loopback port; stopped by its PID and removed on drop.

use super::user_server::{UserServer, APP_DB, APP_PASSWORD, APP_USER};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct PgBouncer {
    pub port: u16,
    child: Option<Child>,
    // Last: removed after pgbouncer stopped.
    dir: tempfile::TempDir,
}

/// pgbouncer's program, when installed.
pub fn pgbouncer_installed(test: &str) -> Option<PathBuf> {
    let found = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        eprintln!("SKIPPED {test}: pgbouncer is not installed (Debian package pgbouncer)");
    }
    found
}

impl PgBouncer {
    /// pgbouncer on 127.0.0.1, pool `app` to `server` over its socket, auth_type
    /// `auth_type` (scram-sha-256 or plain) with `app` in its auth_file; with
    /// `stats_user`, `app` may also read the admin console (database `pgbouncer`).
    pub fn start(
        program: &std::path::Path,
        server: &UserServer,
        auth_type: &str,
        stats_user: bool,
    ) -> PgBouncer {
        let ids = {
            let meta = std::fs::metadata(&server.data).unwrap();
            std::os::unix::fs::MetadataExt::uid(&meta)
        };
        let gid = std::os::unix::fs::MetadataExt::gid(&std::fs::metadata(&server.data).unwrap());
        let mut dir = tempfile::Builder::new()
            .prefix("sockbench-pgbouncer-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(dir.path(), Some(ids), Some(gid)).unwrap();
        let users = dir.path().join("userlist.txt");
        std::fs::write(&users, format!("\"{APP_USER}\" \"{APP_PASSWORD}\"\n")).unwrap();
        std::fs::set_permissions(&users, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&users, Some(ids), Some(gid)).unwrap();
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let ini = dir.path().join("pgbouncer.ini");
            std::fs::write(
                &ini,
                format!(
                    "[databases]\n{APP_DB} = host={} port={} dbname={APP_DB}\n\n\
                     [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
                     unix_socket_dir =\nauth_type = {auth_type}\nauth_file = {}\n\
                     stats_users = {}\npool_mode = session\nmax_client_conn = 100\n\
                     default_pool_size = 20\nlogfile = {}\npidfile =\n",
                    server.socket_dir.display(),
                    server.port,
                    users.display(),
                    if stats_user { APP_USER } else { "" },
                    dir.path().join("pgbouncer.log").display(),
                ),
            )
            .unwrap();
            std::os::unix::fs::chown(&ini, Some(ids), Some(gid)).unwrap();
            let mut cmd = Command::new(program);
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                cmd.uid(ids).gid(gid);
            }
            let child = cmd
                .arg(&ini)
                .current_dir("/")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap();
            let mut bouncer = PgBouncer {
                port,
                child: Some(child),
                dir,
            };
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return bouncer;
                }
                if bouncer
                    .child
                    .as_mut()
                    .unwrap()
                    .try_wait()
                    .unwrap()
                    .is_some()
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            let log = std::fs::read_to_string(bouncer.dir.path().join("pgbouncer.log"))
                .unwrap_or_default();
            bouncer.stop();
            assert!(
                log.contains("Address already in use"),
                "pgbouncer did not start: {log}"
            );
            dir = std::mem::replace(&mut bouncer.dir, tempfile::tempdir().unwrap());
        }
        panic!("no free port for pgbouncer after 3 tries");
    }

    /// `postgres://app@127.0.0.1:PORT/DB?sslmode=disable` (no password).
    pub fn uri(&self, db: &str) -> String {
        format!(
            "postgres://{APP_USER}@127.0.0.1:{}/{db}?sslmode=disable",
            self.port
        )
    }

    /// Stops pgbouncer by its PID (SIGINT, then SIGKILL) and reaps it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let wait = Duration::from_secs(5);
            super::stop_child(&mut child, &[(libc::SIGINT, wait), (libc::SIGKILL, wait)]);
        }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        self.stop();
    }
}
