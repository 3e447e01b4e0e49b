//! A real network, built and removed: every crossing carries a connection, and the
//! host's links, nftables ruleset and mounts are as they were afterwards, and
//! `nft -i` left no history file where a missing `HOME` would put it.

use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};

/// What the host shows of its network and mounts, and nft's history file.
fn host_state() -> (String, String, String, Option<u64>) {
    let links = tool::ip(&["-o", "link", "show"]).unwrap_or_default();
    let rules = tool::run("nft", &["list", "ruleset"]).unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let history = std::fs::metadata("/.nft.history").ok().map(|m| m.len());
    (links, rules, mounts, history)
}

/// Echoes one byte on each connection `listener` accepts, `n` times.
fn echo(listener: TcpListener, n: usize) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for _ in 0..n {
            let (mut s, _) = listener.accept().unwrap();
            let mut b = [0];
            s.read_exact(&mut b).unwrap();
            s.write_all(&b).unwrap();
        }
    })
}

fn round_trip(mut s: impl Read + Write) {
    s.write_all(b"x").unwrap();
    let mut b = [0];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"x");
}

#[test]
fn every_crossing_carries_a_connection_and_nothing_is_left() {
    let needs = [Crossing::Veth, Crossing::Published].map(Network::missing);
    if let Some(why) = needs.iter().flatten().next() {
        eprintln!("skipped: {why}");
        return;
    }
    let before = host_state();
    {
        let mut network = Network::build().unwrap();
        let veth = network.server_address(Crossing::Veth, 7000);
        let bridge = network.server_address(Crossing::Bridge, 7000);
        let listeners = network
            .inside(move || (TcpListener::bind(veth), TcpListener::bind(bridge)))
            .unwrap();
        let (veth_l, bridge_l) = (listeners.0.unwrap(), listeners.1.unwrap());
        // Bound in the container: the host has no such address.
        assert!(TcpListener::bind(veth).is_err());
        let on_veth = echo(veth_l, 2);
        let on_bridge = echo(bridge_l, 1);

        round_trip(TcpStream::connect(veth).unwrap());
        let published = network.publish(7000).unwrap();
        assert!(published.ip().is_loopback(), "{published}");
        round_trip(TcpStream::connect(published).unwrap());
        on_veth.join().unwrap();

        // The bridge is reached from the client's container only.
        {
            let _client = network.client_side().unwrap();
            round_trip(TcpStream::connect(bridge).unwrap());
        }
        on_bridge.join().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s.sock");
        assert!(
            share_here(dir.path()).is_err(),
            "shared outside the container"
        );
        let (shared, in_container) = (dir.path().to_path_buf(), sock.clone());
        let unix = network
            .inside(move || {
                share_here(&shared).unwrap().keep();
                let mounts = std::fs::read_to_string("/proc/thread-self/mounts").unwrap();
                (UnixListener::bind(in_container), mounts)
            })
            .unwrap();
        assert!(
            unix.1.contains(&dir.path().display().to_string()),
            "not shared"
        );
        let unix = unix.0.unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = unix.accept().unwrap();
            let mut b = [0];
            s.read_exact(&mut b).unwrap();
            s.write_all(&b).unwrap();
        });
        round_trip(UnixStream::connect(&sock).unwrap());
        server.join().unwrap();
    }
    assert_eq!(host_state(), before);
}
