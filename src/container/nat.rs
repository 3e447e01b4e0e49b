//! `published`: the server's port on the host's 127.0.0.1, as `docker run -p`
//! makes it without the userland proxy: a DNAT rule for connections made on the
//! host (hook `output`), and masquerade on the way out of the veth pair, in an
//! nftables table of sockbench's own (`sockbench_N`, N the network's number).

use super::{sweep, tool};
use anyhow::{Context, Result};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};

/// What starts the name of every nftables table sockbench makes.
pub const TABLE_PREFIX: &str = "sockbench_";

/// The table of one network, removed on drop.
pub struct Nat {
    table: String,
    link: String,
    /// Host port and where it goes; each host port held bound so that no other
    /// program takes it while the rule sends its connections to the container.
    rules: Vec<(TcpListener, SocketAddr)>,
}

impl Nat {
    pub fn new(index: u16, link: &str) -> Result<Nat> {
        let nat = Nat {
            table: format!("{TABLE_PREFIX}{index}"),
            link: link.to_string(),
            rules: Vec::new(),
        };
        nat.load()?;
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
    fn load(&self) -> Result<()> {
        let t = &self.table;
        let table = format!("{t} {{ comment \"{}\"; }}", sweep::mark_of_this_run(t));
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
        tool::run("nft", &[&script]).map(|_| ())
    }
}

impl Drop for Nat {
    fn drop(&mut self) {
        let _ = tool::undo("nft", &["delete", "table", "ip", &self.table]);
    }
}
