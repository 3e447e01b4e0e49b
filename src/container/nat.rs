//! `published`: the server's port on the host's 127.0.0.1, as `docker run -p`
//! makes it without the userland proxy: a DNAT rule for connections made on the
//! host (hook `output`), and masquerade on the way out of the veth pair, in an
//! nftables table of sockbench's own (`sockbench_N`, N the network's number).
//!
//! The table belongs to the socket of an `nft -i` session ([`nft::Session`]), so
//! it goes with the run however the run ends. Where the kernel (before 5.12) or
//! nft knows no owner, the table is made without one, marked with the run for the
//! next run's sweep.

use super::{nft, sweep, tool};
use anyhow::{Context, Result};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};

/// What starts the name of every nftables table sockbench makes.
pub const TABLE_PREFIX: &str = "sockbench_";

/// The table of one network, removed on drop.
pub struct Nat {
    table: String,
    link: String,
    session: nft::Session,
    /// Whether the table belongs to the session's socket.
    owned: bool,
    /// Host port and where it goes; each host port held bound so that no other
    /// program takes it while the rule sends its connections to the container.
    rules: Vec<(TcpListener, SocketAddr)>,
}

impl Nat {
    pub fn new(index: u16, link: &str) -> Result<Nat> {
        let mut nat = Nat {
            table: format!("{TABLE_PREFIX}{index}"),
            link: link.to_string(),
            session: nft::Session::start()?,
            owned: true,
            rules: Vec::new(),
        };
        if let Err(e) = nat.load() {
            // Not answered (a Ctrl-C, a hang): nothing to say about owners.
            if !nat.session.running() {
                return Err(e);
            }
            nat.owned = false;
            nat.load()?;
        }
        Ok(nat)
    }

    /// Adds a rule from a free port of 127.0.0.1 to `to`; returns the host's address.
    pub fn publish(&mut self, to: SocketAddr) -> Result<SocketAddr> {
        let held = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .context("cannot find a free port on 127.0.0.1 to publish")?;
        let from = held.local_addr()?;
        self.rules.push((held, to));
        if let Err(e) = self.load() {
            self.rules.pop();
            return Err(e);
        }
        Ok(from)
    }

    /// The table as one transaction: made if missing, removed, made again whole.
    fn load(&mut self) -> Result<()> {
        let t = &self.table;
        let flags = if self.owned { "flags owner; " } else { "" };
        let table = format!(
            "{t} {{ {flags}comment \"{}\"; }}",
            sweep::mark_of_this_run(t)
        );
        let mut script = format!(
            "add table ip {table}; delete table ip {t}; add table ip {table}; \
             add chain ip {t} output {{ type nat hook output priority -100; policy accept; }}; \
             add chain ip {t} postrouting {{ type nat hook postrouting priority 100; policy accept; }}; \
             add rule ip {t} postrouting oifname \"{}\" ip saddr 127.0.0.0/8 masquerade",
            self.link
        );
        for (held, to) in &self.rules {
            let port = held.local_addr()?.port();
            script += &format!(
                "; add rule ip {t} output ip daddr 127.0.0.1 tcp dport {port} dnat to {to}"
            );
        }
        self.session.run(&script, true)
    }
}

impl Drop for Nat {
    fn drop(&mut self) {
        let delete = format!("delete table ip {}", self.table);
        // A session that ended early took an owned table with it; one not owned
        // stays until deleted.
        if self.session.run(&delete, false).is_err() && !self.owned {
            let _ = tool::undo("nft", &["delete", "table", "ip", &self.table]);
        }
        self.session.end();
    }
}
