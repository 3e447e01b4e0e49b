//! The sockets family into a container's network, for real, as root: every path
//! (veth, bridge, published, docker-proxy where installed, unix-shared) carries
//! round trips and connections beside the host's Unix socket, with the kernel's
//! count of packets where a packet is sent; the host's links, namespaces,
//! nftables ruleset, mounts and sysctls are as before after a run, after Ctrl-C
//! and after a failure half-way; after SIGKILL the NAT table goes with the run
//! and its port reaches whatever binds it next. Without root the paths are left
//! out in one line each and the rest runs. Without `ip` or `nft` the tests say so
//! and return (CI installs both).
//!
//! The runs take turns ([`one_at_a_time`]): the host's state is compared whole.

mod common;

use common::container::{docker_proxy_installed, network_possible, sockbench_tables, HostNetwork};
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Every path into the container this machine has, and the host's Unix socket.
fn every_path() -> String {
    let mut paths = "unix,veth,bridge,published,unix-shared".to_string();
    if docker_proxy_installed() {
        paths += ",docker-proxy";
    }
    paths
}

fn load(json: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// The kernel's count of `event` per operation on the client's side.
fn events(record: &Value, event: &str) -> Option<f64> {
    record["counters"]["why"]["client"]["events"][event].as_f64()
}

#[test]
fn every_path_into_a_container_is_measured_and_the_host_is_left_as_found() {
    if !network_possible("every_path_into_a_container_is_measured") {
        return;
    }
    let _turn = one_at_a_time();
    let before = HostNetwork::read();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let paths = every_path();
    let out = run(
        &scratch,
        &[
            "sockets",
            "--quick",
            "--trials",
            "2",
            "--workloads",
            "pingpong,connect",
            "--sizes",
            "64",
            "--transports",
            &paths,
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = load(&json);
    for experiment in ["sockets.pingpong", "sockets.connect"] {
        let records = results(&file, experiment);
        for path in paths.split(',') {
            let record = records
                .iter()
                .find(|r| r["transport"] == path)
                .unwrap_or_else(|| panic!("no {experiment} over {path}"));
            let median = record["headline"]["spread"]["median"].as_f64().unwrap();
            assert!(median > 0.0, "{experiment} over {path}: {median}");
            // Through a network device a packet goes out on every send; a Unix
            // socket sends none, shared into a container or not.
            if let Some(sent) = events(record, "packets_sent") {
                match path {
                    // Less than one packet per thousand operations: the machine's
                    // own traffic, counted on the client's CPU.
                    "unix" | "unix-shared" => assert!(sent < 0.01, "{path}: {sent}"),
                    _ => assert!(sent >= 1.0, "{experiment} over {path}: {sent} packets"),
                }
            }
        }
    }
    // docker-proxy's CPU is counted as a role of the server side of its own.
    if docker_proxy_installed() {
        let record = results(&file, "sockets.pingpong")
            .into_iter()
            .find(|r| r["transport"] == "docker-proxy")
            .unwrap();
        let roles = &record["counters"]["roles"];
        assert!(roles["proxy"]["cpu_ns"].as_f64().unwrap() > 0.0, "{roles}");
    }
    let stdout = text(&out.stdout);
    for path in ["veth", "bridge", "published", "unix-shared"] {
        assert!(stdout.contains(path), "{path} not shown:\n{stdout}");
    }
    assert_clean(&scratch);
    before.assert_again();
}

#[test]
fn ctrl_c_mid_trial_removes_the_network() {
    if !network_possible("ctrl_c_mid_trial_removes_the_network") {
        return;
    }
    let _turn = one_at_a_time();
    let before = HostNetwork::read();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let args = [
        "sockets",
        "--workloads",
        "pingpong,stream",
        "--sizes",
        "64",
        "--trials",
        "4",
        "--transports",
        "veth,bridge,published,unix-shared",
    ];
    let mut child = start_then_wait_for(&scratch, &json, "sockets.pingpong", &args);
    assert!(!sockbench_tables().is_empty(), "no NAT table while running");
    signal(&child.0, libc::SIGINT);
    let status = wait_for_exit(&mut child, "sockbench did not stop after Ctrl-C");
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_clean(&scratch);
    before.assert_again();
}

/// Deletes, on drop, the tables a killed run left, should a test find them
/// (each named with the port its rule took, so no later run's table of the same
/// name goes).
struct TablesLeft(Vec<(String, u16)>);

impl Drop for TablesLeft {
    fn drop(&mut self) {
        for (table, port) in &self.0 {
            let name = table.trim_start_matches("table ip ");
            let listing = Command::new("nft")
                .args(["list", "table", "ip", name])
                .output()
                .map(|o| text(&o.stdout))
                .unwrap_or_default();
            if listing.contains(&format!("dport {port} ")) {
                let _ = Command::new("nft")
                    .args(["delete", "table", "ip", name])
                    .output();
            }
        }
    }
}

/// The host port a NAT table's rule publishes.
fn published_port(table: &str) -> u16 {
    let name = table.trim_start_matches("table ip ");
    let listing = Command::new("nft")
        .args(["list", "table", "ip", name])
        .output()
        .unwrap();
    let listing = text(&listing.stdout);
    listing
        .split_once("tcp dport ")
        .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no published port in {listing}"))
}

#[test]
fn after_sigkill_the_nat_table_goes_with_the_run_and_its_port_is_free() {
    if !network_possible("after_sigkill_the_nat_table_goes_with_the_run") {
        return;
    }
    let _turn = one_at_a_time();
    let before = HostNetwork::read();
    let tables_before = sockbench_tables();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let args = [
        "sockets",
        "--workloads",
        "pingpong,stream",
        "--sizes",
        "64",
        "--trials",
        "4",
        "--transports",
        "veth,published",
    ];
    let mut child = start_then_wait_for(&scratch, &json, "sockets.pingpong", &args);
    let tables: Vec<String> = sockbench_tables()
        .into_iter()
        .filter(|t| !tables_before.contains(t))
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    let port = published_port(&tables[0]);
    let _left = TablesLeft(vec![(tables[0].clone(), port)]);
    signal(&child.0, libc::SIGKILL);
    let _ = child.0.wait();
    // The table went with the socket it belongs to, however the run ended.
    let deadline = Instant::now() + Duration::from_secs(3);
    while sockbench_tables().contains(&tables[0]) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !sockbench_tables().contains(&tables[0]),
        "a killed run left {}",
        tables[0]
    );
    // A program that binds the port now gets its connections.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).unwrap();
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut client = TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap();
    let (mut accepted, _) = listener.accept().unwrap();
    client.write_all(b"x").unwrap();
    let mut byte = [0];
    accepted.read_exact(&mut byte).unwrap();
    assert_eq!(&byte, b"x");
    drop((client, accepted, listener));
    // The next run removes the killed run's directory.
    let next = run(
        &scratch,
        &[
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--workloads",
            "connect",
            "--transports",
            "unix",
        ],
    );
    assert!(next.status.success(), "{}", text(&next.stderr));
    assert_clean(&scratch);
    before.assert_again();
}

#[test]
fn a_failure_half_way_leaves_the_host_as_found() {
    if !network_possible("a_failure_half_way_leaves_the_host_as_found") {
        return;
    }
    let _turn = one_at_a_time();
    let before = HostNetwork::read();
    let tmp = tempdir();
    // Too long for the server's socket path in the container: the network exists
    // by the time the server finds out.
    let long = scratch(tmp.path()).join("d".repeat(90));
    std::fs::create_dir(&long).unwrap();
    let out = run(
        &long,
        &[
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--workloads",
            "connect",
            "--transports",
            "veth,published,unix-shared",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = after_estimate(&stderr);
    assert_eq!(said.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(said.contains("TMPDIR"), "{stderr}");
    assert_clean(&long);
    before.assert_again();
}

#[test]
fn without_root_the_paths_into_a_container_are_left_out_in_one_line() {
    if !network_possible("without_root_the_paths_into_a_container_are_left_out") {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    for d in [tmp.path(), open.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    let json = open.join("out.json");
    let out = sockbench(&open)
        .args([
            "sockets",
            "--quick",
            "--trials",
            "1",
            "--workloads",
            "connect",
        ])
        .args(["--transports", "unix,veth,published", "--json"])
        .arg(&json)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for path in ["veth", "published"] {
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with(&format!("sockets: {path} left out")))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].contains("needs root"), "{stderr}");
    }
    let file = load(&json);
    let measured: Vec<&Value> = results(&file, "sockets.connect")
        .into_iter()
        .map(|r| &r["transport"])
        .collect();
    assert_eq!(measured, ["unix"]);
    // Alone, nothing is left to measure: one line, and bad input.
    let out = sockbench(&open)
        .args(["sockets", "--quick", "--transports", "veth"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("needs root"));
}
