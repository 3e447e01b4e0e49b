//! The throwaway server's sockets, checked before a password is sent: the Unix
//! socket's peer and every loopback listener on its ports are the server process,
//! running as the server account.
//!
//! A port found free is free for anyone, so another local account can bind it
//! first; `redis-server` then fails to start (it exits when a `bind` fails, and
//! [`super::server`] tries other ports), but a listener on `0.0.0.0` or one that
//! appears later must not get the password either. The socket directory is the
//! server account's own (0700); its peer is checked on every connection
//! [`super::server::RedisServer::connect`] opens, as libpq's `requirepeer` does for the
//! PostgreSQL family.

use crate::system::peers::{self, Peer};
use anyhow::{bail, Context, Result};
use std::net::{IpAddr, Ipv4Addr};

/// Checks that the peer of a Unix-socket connection is the server process `pid`
/// running as `uid`.
pub fn check_peer(peer: Peer, pid: u32, uid: u32) -> Result<()> {
    if peer.uid != uid || peer.pid != pid {
        bail!(
            "the Redis socket is held by process {} (uid {}), not sockbench's redis-server \
             (process {pid}, uid {uid}); nothing was sent to it",
            peer.pid,
            peer.uid
        );
    }
    Ok(())
}

/// Checks that the server process `pid` (running as `uid`) and nobody else
/// listens on `port` on loopback or on every address, and that it listens on
/// 127.0.0.1.
pub fn check_port(pid: u32, uid: u32, port: u16) -> Result<()> {
    // Listeners on other addresses never get sockbench's connections.
    let (listeners, foreign) =
        peers::loopback_listeners(port, pid, uid).context("cannot read /proc/net/tcp")?;
    if let Some(other) = foreign {
        bail!(
            "another program (uid {}) listens on {} port {port} besides sockbench's \
             redis-server: another local account bound it first; nothing was sent to it. Stop \
             that program and run again",
            other.uid,
            other.addr
        );
    }
    let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if !listeners.iter().any(|l| l.addr == localhost) {
        bail!("redis-server does not listen on 127.0.0.1 port {port}; see its log");
    }
    Ok(())
}

/// Checks that in the network namespace of the server process `pid` (running as
/// `uid`), a container's, nobody else listens on `port`, and that the server
/// listens on each of `addresses` there. The host's `/proc/net/tcp` does not show
/// that namespace: the server's own `/proc/PID/net/tcp` does.
///
/// No other account can be in it: sockbench made it and holds it by descriptors
/// only (no name in `/run/netns`), entering it takes CAP_SYS_ADMIN, and the only
/// processes ever in it are this server and the `ip` commands that wired it. The
/// check is one read, and would say so should that change.
pub fn check_inside(pid: u32, uid: u32, port: u16, addresses: &[IpAddr]) -> Result<()> {
    let listeners: Vec<peers::TcpListener> = peers::tcp_listeners_of(pid)
        .with_context(|| format!("cannot read /proc/{pid}/net/tcp"))?
        .into_iter()
        .filter(|l| l.port == port)
        .collect();
    if let Some(other) = listeners
        .iter()
        .find(|l| l.uid != uid || !peers::holds(pid, l.inode))
    {
        bail!(
            "another program (uid {}) listens on {} port {port} in the container besides \
             sockbench's redis-server; nothing was sent to it",
            other.uid,
            other.addr
        );
    }
    if let Some(missing) = addresses
        .iter()
        .find(|&&a| !listeners.iter().any(|l| l.addr == a))
    {
        bail!(
            "redis-server does not listen on {missing} port {port} in the container; see its log"
        );
    }
    Ok(())
}

/// Two different ports on 127.0.0.1 that were free a moment ago.
pub fn free_ports() -> Result<(u16, u16)> {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").context("cannot find a free port");
    let (a, b) = (bind()?, bind()?);
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_of_another_account_or_process_is_refused() {
        let ours = Peer { pid: 10, uid: 103 };
        assert!(check_peer(ours, 10, 103).is_ok());
        let e = check_peer(Peer { pid: 11, uid: 103 }, 10, 103).unwrap_err();
        assert!(e.to_string().contains("nothing was sent"), "{e}");
        assert!(check_peer(Peer { pid: 10, uid: 0 }, 10, 103).is_err());
    }

    #[test]
    fn a_port_held_by_another_process_is_refused() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        let uid = crate::dir::euid();
        check_port(me, uid, port).unwrap();
        // The same listener, said to belong to another server process.
        let e = check_port(me + 1, uid, port).unwrap_err();
        assert!(e.to_string().contains("another program"), "{e}");
        drop(listener);
        let e = check_port(me, uid, port).unwrap_err();
        assert!(e.to_string().contains("does not listen"), "{e}");
    }

    #[test]
    fn listeners_are_read_in_the_servers_own_namespace() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (me, uid) = (std::process::id(), crate::dir::euid());
        let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
        check_inside(me, uid, port, &[localhost]).unwrap();
        // Another process in the same namespace: the listener is not its own.
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let e = check_inside(other.id(), uid, port, &[]);
        let _ = (other.kill(), other.wait());
        let e = e.unwrap_err();
        assert!(e.to_string().contains("another program"), "{e}");
        let elsewhere = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
        let e = check_inside(me, uid, port, &[localhost, elsewhere]).unwrap_err();
        assert!(e.to_string().contains("198.18.0.2"), "{e}");
    }
}
