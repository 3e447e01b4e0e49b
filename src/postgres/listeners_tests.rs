//! Another local account squats the throwaway cluster's names: the abstract socket
//! name and the port are known (from the postmaster's command line) before the
//! postmaster binds them. Played here by a listener of the test process itself,
//! which is neither the postmaster nor (when run as root) its account.

use super::account;
use super::cluster::Cluster;
use super::cluster_tests::binaries_or_skip;
use super::libpq::PgConn;
use super::listeners::check;
use crate::transport::Transport;
use std::io::Read;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

#[test]
fn a_squatted_abstract_name_gets_no_password_and_a_clear_refusal() {
    let Some(binaries) = binaries_or_skip("a_squatted_abstract_name") else {
        return;
    };
    let cluster =
        Cluster::start(&binaries, &[Transport::Unix, Transport::UnixAbstract], 1).expect("starts");
    let server_account = account::server_account().unwrap();
    let (pid, port) = (cluster.pid(), cluster.port());
    check(
        pid,
        server_account.as_ref(),
        port,
        false,
        cluster.abstract_name(),
    )
    .expect("the cluster's own names pass");

    let name = format!("sockbench-squat-{}", std::process::id());
    let socket = format!("{name}/.s.PGSQL.{port}");
    let squatter =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(socket.as_bytes()).unwrap())
            .unwrap();
    let e = check(pid, server_account.as_ref(), port, false, Some(&name))
        .expect_err("a squatter is refused");
    let line = e.to_string();
    assert!(
        line.contains(&format!(
            "someone else holds the abstract socket name @{socket}"
        )),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");

    // What the benchmark connections do if they meet a squatter anyway: libpq checks
    // the peer before it sends a byte (old code sent the startup message and then the
    // password to whoever answered).
    let params = cluster.params(Transport::UnixAbstract).unwrap();
    let e = PgConn::connect(&params.with(&[("host", &format!("@{name}"))]))
        .err()
        .expect("the squatter is not the server");
    assert!(e.to_string().contains("requirepeer"), "{e}");
    squatter.set_nonblocking(true).unwrap();
    let (mut accepted, _) = squatter.accept().expect("libpq did connect");
    let mut got = Vec::new();
    accepted.set_nonblocking(false).unwrap();
    accepted.read_to_end(&mut got).unwrap();
    assert!(got.is_empty(), "the squatter received {} bytes", got.len());
}

#[test]
fn another_listener_on_the_port_or_a_missing_address_is_refused() {
    let Some(binaries) = binaries_or_skip("another_listener_on_the_port") else {
        return;
    };
    let cluster = Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).expect("starts");
    let server_account = account::server_account().unwrap();
    let (pid, port) = (cluster.pid(), cluster.port());
    // The cluster listens on 127.0.0.1 only: ::1 is missing.
    let e = check(pid, server_account.as_ref(), port, true, None).expect_err("::1 missing");
    assert!(
        e.to_string()
            .contains(&format!("does not listen on ::1 port {port}")),
        "{e}"
    );
    // Someone else on ::1 (where the postmaster could not bind) would get the
    // connections to ::1.
    let Ok(_squatter) = std::net::TcpListener::bind(("::1", port)) else {
        eprintln!("SKIPPED the ::1 half of another_listener_on_the_port: no IPv6 loopback");
        return;
    };
    let e = check(pid, server_account.as_ref(), port, true, None).expect_err("a squatter");
    assert!(
        e.to_string()
            .contains(&format!("listens on ::1 port {port} besides sockbench's")),
        "{e}"
    );
}
