//! The throwaway cluster's sockets, checked once it is ready: every name other
//! accounts can reach is held by the postmaster itself.
//!
//! The port and the abstract socket's name are on the postmaster's command line
//! before it binds them, and a port found free is free for anyone, so another local
//! account can bind one first. PostgreSQL then only logs the failure and listens on
//! what it did get, and a client would talk to the squatter (and send it the role's
//! password). The private socket directory cannot be squatted (0700); the benchmark
//! connections over Unix sockets carry libpq's `requirepeer` as well
//! (`Cluster::params`), and this check names the culprit in one line before any
//! password is sent.

use super::account::Account;
use crate::system::peers;
use anyhow::{bail, Context, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Checks that the postmaster `pid` (running as `account`, or as sockbench's own
/// account for `None`) and nobody else listens on `port` on 127.0.0.1 (and ::1 when
/// `tcp6`), and on the abstract socket `abstract_name` when there is one.
pub fn check(
    pid: Option<u32>,
    account: Option<&Account>,
    port: u16,
    tcp6: bool,
    abstract_name: Option<&str>,
) -> Result<()> {
    let pid = pid.context("the PostgreSQL server is not running")?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = account.map_or_else(|| unsafe { libc::geteuid() }, |a| a.uid);
    if let Some(directory) = abstract_name {
        // PostgreSQL names its socket in an abstract "directory" as in a real one.
        let name = format!("{directory}/.s.PGSQL.{port}");
        match peers::abstract_listener(&name) {
            Ok(peer) if peer.pid == pid => {}
            Ok(peer) => bail!(
                "someone else holds the abstract socket name @{name} (process {}, uid {}), not \
                 sockbench's PostgreSQL server: another local account bound it first; nothing was \
                 sent to it. Stop that process, or leave out unix-abstract",
                peer.pid,
                peer.uid
            ),
            Err(e) => bail!(
                "the PostgreSQL server does not listen on its abstract socket @{name} ({e}); see \
                 its log"
            ),
        }
    }
    let mut measured = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    if tcp6 {
        measured.push(IpAddr::V6(Ipv6Addr::LOCALHOST));
    }
    // Listeners on other addresses never get sockbench's connections.
    let (listeners, foreign) =
        peers::loopback_listeners(port, pid, uid).context("cannot read /proc/net/tcp")?;
    if let Some(other) = foreign {
        bail!(
            "another program (uid {}) listens on {} port {port} besides sockbench's PostgreSQL \
             server: another local account bound it first; nothing was sent to it. Stop that \
             program and run again",
            other.uid,
            other.addr
        );
    }
    for addr in measured {
        if !listeners.iter().any(|l| l.addr == addr) {
            bail!(
                "the PostgreSQL server does not listen on {addr} port {port} (another program may \
                 have held the address when it started); run again"
            );
        }
    }
    Ok(())
}
