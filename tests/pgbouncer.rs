//! sockbench against a real pgbouncer in front of a user server: detected,
//! recorded and measured; its admin console refused in one line.

mod common;

use common::pgbouncer::*;
use common::user_server::*;
use common::*;
use sockbench::postgres::libpq::{Conn, ConnParams};

#[test]
fn explore() {
    if !postgres_installed("explore") {
        return;
    }
    let Some(program) = pgbouncer_installed("explore") else {
        return;
    };
    let server = UserServer::start();
    let bouncer = PgBouncer::start(&program, &server, "scram-sha-256");
    for db in ["app", "pgbouncer"] {
        let conn = Conn::connect(&ConnParams::new([
            ("host", "127.0.0.1".to_string()),
            ("port", bouncer.port.to_string()),
            ("user", APP_USER.into()),
            ("dbname", db.into()),
            ("password", APP_PASSWORD.into()),
            ("sslmode", "disable".into()),
        ]))
        .unwrap();
        for p in [
            c"server_version",
            c"application_name",
            c"server_encoding",
            c"client_encoding",
            c"is_superuser",
            c"session_authorization",
            c"integer_datetimes",
            c"standard_conforming_strings",
            c"DateStyle",
            c"TimeZone",
        ] {
            eprintln!("{db} {p:?} = {:?}", conn.parameter(p));
        }
        eprintln!("{db} pid {}", conn.backend_pid());
        for q in [
            "SELECT version()",
            "SHOW VERSION",
            "SELECT pg_backend_pid()",
            "SELECT 1",
            "SHOW port",
            "SHOW unix_socket_directories",
            "SELECT inet_server_port()",
        ] {
            eprintln!("{db} {q}: {:?}", conn.query_value(q));
        }
    }
}
