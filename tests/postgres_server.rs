//! sockbench pointed at a user's own PostgreSQL server (`common::user_server`):
//! a bare URI, a key=value conninfo, the caller's PG* variables (a service file
//! included), `--server` comparing the server's transports, and the label checked
//! against what libpq negotiated. The tests need PostgreSQL's server programs (CI
//! installs them); without them they say so and return.

mod common;

use common::user_server::*;
use common::*;
use sockbench::postgres::libpq::{Conn, ConnParams};

#[test]
fn the_user_server_fixture_is_set_up_as_a_user_would() {
    if !postgres_installed("the_user_server_fixture") {
        return;
    }
    let server = UserServer::start();
    let app = |sslmode: &str, host: &str| {
        ConnParams::new([
            ("host", host.to_string()),
            ("port", server.port.to_string()),
            ("user", APP_USER.into()),
            ("dbname", APP_DB.into()),
            ("password", APP_PASSWORD.into()),
            ("sslmode", sslmode.into()),
        ])
    };
    let tls = Conn::connect(&app("require", "127.0.0.1")).expect("app over tls");
    assert!(tls.tls().is_some());
    let plain = Conn::connect(&app("disable", "127.0.0.1")).expect("app over tcp");
    assert!(plain.tls().is_none());
    let socket = Conn::connect(&app("disable", server.socket_dir.to_str().unwrap())).unwrap();
    assert!(socket.over_unix_socket());
    assert_eq!(
        socket
            .query_value("SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user")
            .unwrap(),
        "false"
    );
    let wrong = ConnParams::new([
        ("host", "127.0.0.1".to_string()),
        ("port", server.port.to_string()),
        ("user", APP_USER.into()),
        ("dbname", APP_DB.into()),
        ("password", "wrong".into()),
    ]);
    assert!(Conn::connect(&wrong).err().unwrap().is_auth_failure());
    // The superuser is not admitted over TCP.
    let su = ConnParams::new([
        ("host", "127.0.0.1".to_string()),
        ("port", server.port.to_string()),
        ("user", "postgres".into()),
        ("sslmode", "disable".into()),
    ]);
    assert!(Conn::connect(&su).is_err());
    assert_eq!(server.admin("SHOW ssl"), "on");
    let (dir, pid) = (server.dir().to_path_buf(), server.pid().unwrap());
    drop(server);
    assert!(!dir.exists());
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}
