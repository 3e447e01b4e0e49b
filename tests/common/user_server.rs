//! A PostgreSQL cluster set up as a user would set up their own: `initdb` as the
//! `postgres` account (when the tests run as root; else as the current user) into a
//! temporary directory, its own `postgresql.conf` with a port on 127.0.0.1, a Unix
//! socket in a private directory, `ssl = on` with a self-signed certificate, and a
//! `pg_hba.conf` admitting the password role `app` (no superuser) with
//! scram-sha-256, and the superuser `postgres` only on the private socket directory
//! (trust there, which only the server account and root can reach). The postmaster
//! is started directly, stopped by its PID and the directory removed on drop, also
//! when a test panics.
//!
//! Nothing of sockbench's own cluster code is used: this is the server a user
//! points sockbench at.

use sockbench::postgres::libpq::{ConnParams, PgConn};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The password role, its database, and its password.
pub const APP_USER: &str = "app";
pub const APP_DB: &str = "app";
pub const APP_PASSWORD: &str = "app-secret-4711";

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct UserServerOptions {
    /// `ssl = on` with a self-signed certificate (else `ssl = off`).
    pub ssl: bool,
    /// The pg_hba.conf line type for `app` over TCP: `host`, `hostssl` or `hostnossl`.
    pub tcp_hba: &'static str,
    /// The pg_hba.conf method for `app`: `scram-sha-256`, `md5`, `password`, `trust`.
    pub app_method: &'static str,
    /// A directory listed first in `unix_socket_directories`: one where the server
    /// may not be able to make its socket (another account's), so that what the
    /// server says of where it listens is not true, a name that is no absolute path
    /// (the server takes it for a directory in its data directory, made for it), or a standard
    /// directory such as `/var/run/postgresql`. Every socket is made 0700 (`unix_socket_permissions`),
    /// so in a directory other accounts may enter, only the server's account and
    /// root reach the superuser's trust line.
    pub first_socket_dir: Option<PathBuf>,
}

impl Default for UserServerOptions {
    fn default() -> Self {
        UserServerOptions {
            ssl: true,
            tcp_hba: "host",
            app_method: "scram-sha-256",
            first_socket_dir: None,
        }
    }
}

/// A running user server; stopped (by PID) and removed on drop.
pub struct UserServer {
    pub port: u16,
    /// The private socket directory (0700, the server account's).
    pub socket_dir: PathBuf,
    /// The data directory.
    pub data: PathBuf,
    child: Option<Child>,
    // Last: removed after the server stopped.
    dir: tempfile::TempDir,
}

/// The directory of `initdb` and `postgres`: the newest /usr/lib/postgresql/*/bin.
pub fn bindir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

/// The uid and gid to run the server programs as: `postgres` when root, else ours.
fn server_ids() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam returns NULL or a static entry, read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !entry.is_null(),
        "running as root needs a 'postgres' account"
    );
    // SAFETY: non-null, as checked.
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

fn chown(path: &Path, ids: Option<(u32, u32)>) {
    if let Some((uid, gid)) = ids {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

fn as_server(cmd: &mut Command, ids: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = ids {
        cmd.uid(uid).gid(gid);
    }
    // A user's own server: none of the caller's PG* variables steer it.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            cmd.env_remove(name);
        }
    }
    cmd.current_dir("/")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl UserServer {
    /// A server with the default options (ssl on, scram for `app` on any TCP line).
    pub fn start() -> UserServer {
        UserServer::start_with(UserServerOptions::default())
    }

    /// Sets up and starts a server; panics (after cleaning up) when it cannot.
    pub fn start_with(options: UserServerOptions) -> UserServer {
        let bin = bindir().expect("PostgreSQL's initdb under /usr/lib/postgresql");
        let ids = server_ids();
        let dir = tempfile::Builder::new()
            .prefix("sockbench-userpg-")
            .tempdir_in("/tmp")
            .unwrap();
        // The top passes the server account through; data and sock are its own.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let data = dir.path().join("data");
        let socket_dir = dir.path().join("sock");
        for d in [&data, &socket_dir] {
            std::fs::create_dir(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
            chown(d, ids);
        }
        let log = dir.path().join("initdb.log");
        let status = as_server(&mut Command::new(bin.join("initdb")), ids)
            .args(["-D", data.to_str().unwrap(), "-U", "postgres", "-E", "UTF8"])
            .args(["--auth-local=trust", "--auth-host=reject", "--no-sync"])
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "initdb failed; see {}", log.display());
        let mut server = UserServer {
            port: 0,
            socket_dir,
            data,
            child: None,
            dir,
        };
        server.configure(&options, ids);
        server.launch(&bin, ids);
        server.admin(&format!(
            "CREATE ROLE {APP_USER} LOGIN PASSWORD '{APP_PASSWORD}'"
        ));
        server.admin(&format!("CREATE DATABASE {APP_DB} OWNER {APP_USER}"));
        server
    }

    fn write(&self, name: &str, text: &str, ids: Option<(u32, u32)>) {
        let path = self.data.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        chown(&path, ids);
    }

    fn configure(&mut self, o: &UserServerOptions, ids: Option<(u32, u32)>) {
        if o.ssl {
            let cert =
                rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
                    .unwrap();
            self.write("server.crt", &cert.cert.pem(), ids);
            self.write("server.key", &cert.signing_key.serialize_pem(), ids);
        }
        let hba = format!(
            "# TYPE  DATABASE USER      ADDRESS       METHOD\n\
             local   all      postgres                trust\n\
             local   all      {APP_USER}                   {m}\n\
             {t:<7}    all      {APP_USER}       127.0.0.1/32  {m}\n",
            m = o.app_method,
            t = o.tcp_hba,
        );
        self.write("pg_hba.conf", &hba, ids);
        if let Some(relative) = o.first_socket_dir.as_ref().filter(|d| d.is_relative()) {
            let made = self.data.join(relative);
            std::fs::create_dir(&made).unwrap();
            std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o700)).unwrap();
            chown(&made, ids);
        }
        let mut conf = std::fs::read_to_string(self.data.join("postgresql.conf")).unwrap();
        conf.push_str(&format!(
            "\n# the user's settings\nlisten_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}{}'\nunix_socket_permissions = 0700\n\
             ssl = {}\nfsync = off\nmax_connections = 60\n\
             password_encryption = 'scram-sha-256'\n",
            o.first_socket_dir
                .as_ref()
                .map_or(String::new(), |d| format!("{}, ", d.display())),
            self.socket_dir.display(),
            if o.ssl { "on" } else { "off" }
        ));
        self.write("postgresql.conf", &conf, ids);
    }

    fn launch(&mut self, bin: &Path, ids: Option<(u32, u32)>) {
        for _ in 0..3 {
            self.port = free_port();
            let log = self.dir.path().join("postgres.log");
            let child = as_server(&mut Command::new(bin.join("postgres")), ids)
                .args(["-D", self.data.to_str().unwrap()])
                .args(["-c", &format!("port={}", self.port)])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .process_group(0)
                .spawn()
                .unwrap();
            self.child = Some(child);
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if self.admin_params().ping() {
                    return;
                }
                let exited = self.child.as_mut().unwrap().try_wait().unwrap().is_some();
                if exited {
                    break;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            self.stop();
            assert!(
                text.contains("Address already in use"),
                "the user server did not start: {text}"
            );
        }
        panic!("no free port for the user server after 3 tries");
    }

    /// The superuser over the private socket directory (trust).
    pub fn admin_params(&self) -> ConnParams {
        ConnParams::new([
            ("host", self.socket_dir.display().to_string()),
            ("port", self.port.to_string()),
            ("user", "postgres".into()),
            ("dbname", "postgres".into()),
            ("sslmode", "disable".into()),
            ("connect_timeout", "10".into()),
        ])
    }

    /// Runs `sql` as the superuser; returns the first value ("" when none).
    pub fn admin(&self, sql: &str) -> String {
        let conn = PgConn::connect(&self.admin_params()).expect("superuser connects");
        conn.query_value(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// `postgres://app@127.0.0.1:PORT/app` plus `?query` when `query` is not empty
    /// (no password: give it with PGPASSWORD or a passfile).
    pub fn tcp_uri(&self, query: &str) -> String {
        let q = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!("postgres://{APP_USER}@127.0.0.1:{}/{APP_DB}{q}", self.port)
    }

    /// The key=value conninfo of `app` over the socket directory (no password).
    pub fn socket_conninfo(&self) -> String {
        format!(
            "host={} port={} user={APP_USER} dbname={APP_DB}",
            self.socket_dir.display(),
            self.port
        )
    }

    /// A private temporary path for files a test writes (a passfile, a service
    /// file), removed with the server.
    pub fn scratch_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// The server's directory (data, sock, logs).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The postmaster's PID.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Stops the postmaster: SIGINT (fast shutdown), then SIGQUIT, then SIGKILL,
    /// by its PID, and reaps it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            super::stop_child(
                &mut child,
                &[
                    (libc::SIGINT, Duration::from_secs(10)),
                    (libc::SIGQUIT, Duration::from_secs(5)),
                    (libc::SIGKILL, Duration::from_secs(5)),
                ],
            );
        }
    }
}

impl Drop for UserServer {
    fn drop(&mut self) {
        self.stop();
    }
}
