//! Tests against a real throwaway cluster. They need PostgreSQL's server programs
//! (CI installs them); without them they say so and return.

use super::bindir::Binaries;
use super::cluster::Cluster;
use super::hba::AuthMethod;
use super::libpq::PgConn;
use crate::postgres::keys::*;
use crate::transport::Transport;

/// The binaries, or `None` after saying why the test is skipped.
pub fn binaries_or_skip(test: &str) -> Option<Binaries> {
    match Binaries::find(None) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e:#}");
            None
        }
    }
}

fn process_alive(pid: u32) -> bool {
    // Signal 0 checks existence; a zombie would still count, but the cluster reaps it.
    // SAFETY: kill with signal 0 only checks that the process exists; it sends nothing.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

#[test]
fn auth_switch_really_switches_and_cleanup_is_complete() {
    let Some(binaries) = binaries_or_skip("auth_switch_really_switches") else {
        return;
    };
    let mut cluster = Cluster::start(
        &binaries,
        &[Transport::Unix, Transport::Tcp, Transport::Tls],
        1,
    )
    .expect("cluster starts");
    let (pid, dir) = (cluster.pid().unwrap(), cluster.dir().to_path_buf());
    assert!(process_alive(pid));

    let tcp = cluster.params(Transport::Tcp).unwrap();
    let unix = cluster.params(Transport::Unix).unwrap();
    let wrong = |p: &super::libpq::ConnParams| p.with(&[("password", "not-the-password")]);
    // As made: md5 on every transport.
    let e = PgConn::connect(&wrong(&unix))
        .err()
        .expect("a wrong password refused");
    assert!(e.is_auth_failure(), "{e}");
    for method in [
        AuthMethod::Scram,
        AuthMethod::Md5,
        AuthMethod::Password,
        AuthMethod::Trust,
    ] {
        cluster.set_auth(method).unwrap();
        let right = if method == AuthMethod::Trust {
            &unix
        } else {
            &tcp
        };
        PgConn::connect(right).unwrap_or_else(|e| panic!("{method}: right password refused: {e}"));
        if method == AuthMethod::Trust {
            PgConn::connect(&wrong(&unix)).expect("trust accepts any password on the socket");
            assert!(
                PgConn::connect(&tcp).is_err(),
                "trust is never offered over TCP"
            );
        } else {
            let e = PgConn::connect(&wrong(&tcp))
                .err()
                .unwrap_or_else(|| panic!("{method} accepted a wrong password"));
            assert!(e.is_auth_failure(), "{method}: {e}");
            // As --url gives it: one line, exit code 2, the password not shown.
            let url = format!(
                "postgres://foo:not-the-password@127.0.0.1:{}/foo?sslmode=disable",
                cluster.port()
            );
            let e = super::targets::user_target("tcp", &url)
                .err()
                .expect("refused");
            assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
            let text = format!("{e:#}");
            assert!(
                text.contains("password") && !text.contains("not-the-password"),
                "{text}"
            );
            assert!(!text.contains('\n'), "{text}");
        }
    }
    cluster.set_auth(AuthMethod::Peer).unwrap();
    PgConn::connect(&wrong(&unix)).expect("peer ignores the password on the Unix socket");
    assert!(PgConn::connect(&tcp).is_err(), "peer mode refuses TCP");

    let tls = PgConn::connect(&cluster.params(Transport::Tls).unwrap());
    assert!(tls.is_err(), "still in peer mode, TCP is refused");
    cluster.set_auth(super::hba::STANDING).unwrap();
    let tls = PgConn::connect(&cluster.params(Transport::Tls).unwrap()).unwrap();
    let (version, _cipher) = tls.tls().expect("sslmode=require encrypts");
    assert!(version.starts_with("TLS"), "{version}");
    assert!(PgConn::connect(&unix).unwrap().tls().is_none());
    drop(tls);

    drop(cluster);
    assert!(!process_alive(pid), "postmaster {pid} still running");
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn a_cluster_in_a_container_runs_there_and_admits_foo_as_the_hosts_does() {
    let test = "a_cluster_in_a_container_runs_there";
    let Some(binaries) = binaries_or_skip(test) else {
        return;
    };
    if let Some(why) = crate::container::Network::missing(crate::container::Crossing::Veth) {
        eprintln!("SKIPPED {test}: {why}");
        return;
    }
    let transports = [Transport::Tcp, Transport::Veth, Transport::UnixShared];
    let mut clusters = Cluster::start_all(&binaries, &transports, 1).expect("clusters start");
    assert_eq!(clusters.len(), 2);
    assert!(clusters[0].serves(Transport::Tcp) && !clusters[0].serves(Transport::Veth));
    assert!(clusters[1].serves(Transport::Veth) && clusters[1].serves(Transport::UnixShared));
    assert!(clusters[1].params(Transport::Tcp).is_err());
    let pids: Vec<u32> = clusters.iter().map(|c| c.pid().unwrap()).collect();
    let dirs: Vec<_> = clusters.iter().map(|c| c.dir().to_path_buf()).collect();
    // The host's postmaster in the host's namespaces, the other in the container's.
    let ns = |pid: u32, kind: &str| std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).unwrap();
    let me = std::process::id();
    for kind in ["net", "mnt"] {
        assert_eq!(ns(pids[0], kind), ns(me, kind), "{kind}");
        assert_ne!(ns(pids[1], kind), ns(me, kind), "{kind}");
    }

    let inside = &mut clusters[1];
    let veth = inside.params(Transport::Veth).unwrap();
    let shared = inside.params(Transport::UnixShared).unwrap();
    assert_eq!(veth.get("port").as_deref(), Some("5432"));
    // The shared socket is opened by the host's path, its peer checked.
    let account = super::account::server_account().unwrap();
    let expected = account.map_or_else(super::account::current_user_name, |a| a.name);
    assert_eq!(shared.get("requirepeer"), Some(expected));
    let socket_dir = inside.socket_dir().display().to_string();
    assert_eq!(shared.get("host"), Some(socket_dir));
    assert!(PgConn::connect(&shared).unwrap().over_unix_socket());
    let wrong = |p: &super::libpq::ConnParams| p.with(&[("password", "not-the-password")]);
    let e = PgConn::connect(&wrong(&veth))
        .err()
        .expect("a wrong password refused");
    assert!(e.is_auth_failure(), "{e}");
    // Trust through the shared private directory only, never over the network.
    inside.set_auth(AuthMethod::Trust).unwrap();
    PgConn::connect(&wrong(&shared)).expect("trust on the shared socket");
    assert!(
        PgConn::connect(&veth).is_err(),
        "trust is never offered over TCP"
    );
    inside.set_auth(super::hba::STANDING).unwrap();
    PgConn::connect(&veth).expect("md5 again");

    drop(clusters);
    for (pid, dir) in pids.into_iter().zip(dirs) {
        assert!(!process_alive(pid), "postmaster {pid} still running");
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

#[test]
fn user_urls_are_measured_and_their_passwords_never_written() {
    let Some(binaries) = binaries_or_skip("user_urls_are_measured") else {
        return;
    };
    let cluster = Cluster::start(
        &binaries,
        &[Transport::Unix, Transport::Tcp, Transport::Tls],
        1,
    )
    .expect("cluster starts");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("mine.json");
    let url = |sslmode: &str| {
        format!(
            "postgres://foo:{}@127.0.0.1:{}/foo?sslmode={sslmode}",
            cluster.password(),
            cluster.port()
        )
    };
    let argv: Vec<String> = [
        "postgres",
        "--url",
        &format!("plain={}", url("disable")),
        "--url",
        &format!("encrypted={}", url("require")),
        "--auth-url",
        &format!("md5={}", url("require")),
        "--experiments",
        "query,connect,auth",
        "--trials",
        "1",
        "--queries",
        "200,800",
        "--connections",
        "5",
        "--json",
        json.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let invocation =
        crate::cli::parse_from(std::iter::once("sockbench".to_string()).chain(argv.clone()))
            .unwrap();
    crate::command::dispatch(invocation, argv).expect("the run succeeds");

    let written = std::fs::read_to_string(&json).unwrap();
    assert!(!written.contains(cluster.password()), "password written");
    let file: crate::results::ResultFile = serde_json::from_str(&written).unwrap();
    let labels: Vec<(&str, &str)> = file
        .results
        .iter()
        .map(|r| (r.experiment.as_str(), r.transport.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("postgres.query", "plain"),
            ("postgres.query", "encrypted"),
            ("postgres.connect", "plain"),
            ("postgres.connect", "encrypted"),
            ("postgres.auth", "tls"),
        ]
    );
    let auth = file.results.last().unwrap();
    assert_eq!(auth.params.get(AUTH_METHOD).as_deref(), Some("md5"));
    assert_eq!(auth.metrics.get(AUTH_NS), None, "no trust to take it over");
    for r in &file.results[..4] {
        let server = r.server.as_ref().unwrap();
        assert!(!server.throwaway && server.kind == "postgresql");
        assert_eq!(r.tls.is_some(), r.transport == "encrypted");
        assert_eq!(
            r.params.get(AUTH_METHOD),
            None,
            "method unknown on a user's server"
        );
    }
}

/// Sessions the server has seen end in database `foo`, once the count is steady at
/// `expected` (the statistics arrive as backends exit), or what it is after 5 s.
fn sessions_reaching(cluster: &Cluster, before: u64, expected: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let now: u64 = cluster
            .admin_value("SELECT sessions FROM pg_stat_database WHERE datname = 'foo'")
            .parse()
            .unwrap();
        if now - before >= expected || std::time::Instant::now() > deadline {
            return now - before;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn connect_per_transaction_opens_one_connection_per_transaction() {
    use super::experiment::concurrent::{trial, RunSpec};
    let Some(binaries) = binaries_or_skip("connect_per_transaction") else {
        return;
    };
    let cluster = Cluster::start(
        &binaries,
        &[Transport::Unix, Transport::Tcp, Transport::Tls],
        1,
    )
    .expect("cluster starts");
    let targets = super::targets::cluster_targets(&cluster, &[Transport::Unix]).unwrap();
    let mut load = RunSpec {
        clients: 2,
        threads: 1,
        duration: std::time::Duration::from_millis(300),
        warmup: std::time::Duration::from_millis(100),
        script: crate::postgres::script::Script::default_select(),
        connect_per_transaction: false,
        protocol: crate::postgres::libpq::Protocol::Simple,
        rate: None,
        latency_limit: None,
        progress: None,
        per_command: false,
    };
    // The one session that looked at the server when the target was made.
    let mut before = sessions_reaching(&cluster, 0, 1);
    for per_transaction in [false, true] {
        load.connect_per_transaction = per_transaction;
        let result = trial(&targets[0], &load, &mut crate::cpu::Meter::times(&[])).unwrap();
        let opened = result.metrics.get(CONNECTIONS).unwrap();
        let seen = sessions_reaching(&cluster, before, opened);
        // A client may be inside a handshake when the window ends: the server may
        // have counted that session or not, so they may differ by one per client.
        let in_flight = if per_transaction { load.clients } else { 0 };
        assert!(
            seen.abs_diff(opened) <= u64::from(in_flight),
            "the server saw {seen} sessions, sockbench opened {opened}"
        );
        // Those still in flight end later, on the server's count.
        before = sessions_reaching(&cluster, 0, before + seen + u64::from(in_flight));
        if per_transaction {
            // Every counted transaction had its own session; warm-up ones came on top.
            assert!(
                opened > result.count && result.count > 10,
                "{opened} for {}",
                result.count
            );
        } else {
            assert_eq!(opened, 2, "one connection per client");
            assert!(result.count > 10);
        }
    }
}

#[test]
fn an_auth_url_is_checked_against_what_the_server_asks() {
    use super::preflight::auth_is;
    let Some(binaries) = binaries_or_skip("an_auth_url_is_checked") else {
        return;
    };
    let mut cluster =
        Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).expect("cluster starts");
    cluster.set_auth(AuthMethod::Scram).unwrap();
    let url = format!(
        "postgres://foo:{}@127.0.0.1:{}/foo?sslmode=disable",
        cluster.password(),
        cluster.port()
    );
    let target = super::targets::user_target("tcp", &url).unwrap();
    auth_is(&target, AuthMethod::Scram).expect("scram is what the server asks");
    for (named, says) in [
        (AuthMethod::Trust, "asked for a password"),
        (AuthMethod::Md5, "SCRAM"),
        (AuthMethod::Password, "SCRAM"),
    ] {
        let e = auth_is(&target, named).expect_err("a mismatch");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains(says), "{named}: {e}");
    }
    cluster.set_auth(AuthMethod::Trust).unwrap();
    let socket = format!(
        "host={} port={} user=foo dbname=foo",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let target = super::targets::user_target("unix", &socket).unwrap();
    let e = auth_is(&target, AuthMethod::Scram).expect_err("trust is no scram");
    assert!(e.to_string().contains("did not ask for a password"), "{e}");
}

/// A COPY puts a connection in a state where libpq hands out the same result for
/// ever: both ways of reading results end at once with one line instead of spinning.
#[test]
fn a_copy_ends_with_one_line_instead_of_spinning() {
    use super::libpq::{TxOutcome, COPY_REFUSED};
    use std::time::{Duration, Instant};
    let Some(binaries) = binaries_or_skip("a_copy_ends_with_one_line") else {
        return;
    };
    let cluster = Cluster::start(&binaries, &[Transport::Unix], 1).expect("cluster starts");
    let params = cluster.params(Transport::Unix).unwrap();
    for sql in [
        c"COPY (SELECT 1) TO STDOUT",
        c"CREATE TEMP TABLE t (a int); COPY t FROM STDIN",
    ] {
        // The blocking path (the script's first run, the experiments' setup), on a
        // thread of its own: on failure it spins, and the test must still end.
        let (done, got) = std::sync::mpsc::channel();
        let blocking = params.clone();
        std::thread::spawn(move || {
            let conn = PgConn::connect(&blocking).unwrap();
            let _ = done.send(conn.exec(sql).err().map(|e| e.to_string()));
        });
        let e = got
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{sql:?}: still waiting after 10 s"));
        assert_eq!(e.as_deref(), Some(COPY_REFUSED), "{sql:?}");

        // The non-blocking path of the concurrent clients.
        let conn = PgConn::connect(&params).unwrap();
        conn.send(sql).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let outcome = loop {
            match conn.receive() {
                Ok(TxOutcome::Pending) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                other => break other,
            }
        };
        let e = outcome.err().unwrap_or_else(|| panic!("{sql:?}: no error"));
        assert_eq!(e.to_string(), COPY_REFUSED, "{sql:?}");
    }
}
