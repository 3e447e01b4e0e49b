//! A container's network, built from the kernel's parts the way Docker builds one,
//! with no image and no daemon: the server in network and mount namespaces of its
//! own, reached
//! - by its address over a veth pair from the host (`veth`, a container reached by
//!   its address),
//! - from a client namespace over a Linux bridge (`bridge`, app container to
//!   database container on compose's default network; the bridge is in a namespace
//!   of its own, so the host sees none of it),
//! - from the host's 127.0.0.1 through a DNAT rule in an nftables table of
//!   sockbench's (`published`, `docker run -p` without the userland proxy),
//! - from the host's 127.0.0.1 through Docker's `docker-proxy` (`docker-proxy`, what
//!   `-p` means for a client on 127.0.0.1 under Docker's defaults),
//! - by a Unix socket in a directory the host shares into its mounts
//!   (`unix-shared`, a bind-mounted socket directory).
//!
//! Addresses are from RFC 2544's benchmarking range, 198.18.0.0/15, a /24 per
//! network, on links sockbench makes: nothing is routed off the machine. The one
//! host setting changed (`route_localnet`, for DNAT from 127.0.0.1) is on the host's
//! end of sockbench's own veth pair, and goes with it.
//!
//! What a killed run cannot remove goes without it: the namespaces with their
//! last process (every server sockbench starts dies with it), the veth pair with
//! its namespace, and the nftables table with the netlink socket it belongs to
//! (`nft.rs`). Where the kernel cannot tie a table to a socket, the table stays,
//! and the next run's [`sweep`] removes it (and a host link whose run is gone,
//! should one outlive it), if it carries the mark of a sockbench run.

mod docker_proxy;
mod nat;
mod nft;
mod ns;
mod sweep;
mod tool;

pub use ns::{share_here, ClientSide, Shared};
pub use sweep::sweep;

use anyhow::{bail, Context, Result};
use ns::{Inside, NetNs};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::Path;

/// How a client reaches the server in the container (a transport's place,
/// `Place::Container` of the transports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Crossing {
    Veth,
    Bridge,
    Published,
    DockerProxy,
    Shared,
}

/// What starts the name of the host's end of every veth pair sockbench makes,
/// followed by the network's number and `h`.
const LINK_PREFIX: &str = "sbk";
/// How many networks the benchmarking range holds, a /24 each.
const NETWORKS: u16 = 512;

/// A container's network, removed on drop.
pub struct Network {
    index: u16,
    host: NetNs,
    client: NetNs,
    /// The bridge's namespace.
    switch: NetNs,
    inside: Inside,
    nat: Option<nat::Nat>,
    proxies: Vec<docker_proxy::DockerProxy>,
}

impl Network {
    /// Why a network cannot be built here (not root, no `ip`, no namespaces),
    /// or, for `crossing`, what it needs that is missing (`nft`, `docker-proxy`).
    pub fn missing(crossing: Crossing) -> Option<String> {
        if rustix::process::geteuid().as_raw() != 0 {
            return Some("a container's network needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN)".into());
        }
        let program = match crossing {
            Crossing::Published => Some(("nft", "nftables")),
            Crossing::DockerProxy => Some(("docker-proxy", "docker.io")),
            Crossing::Veth | Crossing::Bridge | Crossing::Shared => None,
        };
        for (program, package) in [("ip", "iproute2")].into_iter().chain(program) {
            if tool::find(program).is_none() {
                return Some(format!(
                    "{program} is not installed (Debian package {package})"
                ));
            }
        }
        None
    }

    /// Builds the namespaces, links, addresses and the bridge. A step that fails
    /// undoes the ones before it.
    pub fn build() -> Result<Network> {
        let host = NetNs::current()?;
        let server = NetNs::new()?;
        let client = NetNs::new()?;
        let switch = NetNs::new()?;
        let index = claim_link(&server)?;
        let inside = match Inside::start(&server) {
            Ok(inside) => inside,
            Err(e) => {
                let _ = tool::undo("ip", &["link", "del", &link_name(index)]);
                return Err(e);
            }
        };
        // From here on, dropping the network removes what there is of it.
        let network = Network {
            index,
            host,
            client,
            switch,
            inside,
            nat: None,
            proxies: Vec::new(),
        };
        network.wire(&server)?;
        Ok(network)
    }

    /// Addresses, routes and the bridge, once the host's link is claimed.
    fn wire(&self, server: &NetNs) -> Result<()> {
        let host_link = link_name(self.index);
        let (host_addr, veth_addr) = (self.address(1), self.address(2));
        tool::ip(&["addr", "add", &format!("{host_addr}/30"), "dev", &host_link])?;
        tool::ip(&["link", "set", &host_link, "up"])?;
        std::fs::write(
            format!("/proc/sys/net/ipv4/conf/{host_link}/route_localnet"),
            "1",
        )
        .context("cannot let the host's end of the veth pair carry 127.0.0.1")?;
        server.run(|| -> Result<()> {
            tool::ip(&["addr", "add", &format!("{veth_addr}/30"), "dev", "eth0"])?;
            tool::ip(&["link", "set", "eth0", "up"]).map(drop)
        })??;
        // The bridge: in its own namespace, a port to the server and one to the
        // client, as docker0 has one per container.
        self.switch.run(|| -> Result<()> {
            tool::ip(&["link", "add", "br0", "type", "bridge"])?;
            for (port, peer, ns) in [
                ("to-server", "eth1", server),
                ("to-client", "eth0", &self.client),
            ] {
                tool::ip(&[
                    "link",
                    "add",
                    port,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    peer,
                    "netns",
                    &ns.path(),
                ])?;
                tool::ip(&["link", "set", port, "master", "br0"])?;
                tool::ip(&["link", "set", port, "up"])?;
            }
            tool::ip(&["link", "set", "br0", "up"]).map(drop)
        })??;
        let on_bridge = [
            (server, "eth1", self.address(10)),
            (&self.client, "eth0", self.address(11)),
        ];
        for (ns, link, addr) in on_bridge {
            ns.run(|| -> Result<()> {
                tool::ip(&["addr", "add", &format!("{addr}/29"), "dev", link])?;
                tool::ip(&["link", "set", link, "up"]).map(drop)
            })??;
        }
        Ok(())
    }

    /// The address `last` in this network's /24.
    fn address(&self, last: u8) -> Ipv4Addr {
        let [a, b] = self.index.to_be_bytes();
        Ipv4Addr::new(198, 18 + a, b, last)
    }

    /// Where the server listens for `crossing` (inside the container) on `port`:
    /// its end of the veth pair, or its port on the bridge.
    pub fn server_address(&self, crossing: Crossing, port: u16) -> SocketAddr {
        let last = if crossing == Crossing::Bridge { 10 } else { 2 };
        SocketAddr::V4(SocketAddrV4::new(self.address(last), port))
    }

    /// Runs `f` inside the container: a server it starts is in the container's
    /// network and mounts, and dies with the network.
    pub fn inside<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> Result<R> {
        self.inside.run(f)
    }

    /// Where a client on the host connects to reach the server's `port` over
    /// `crossing`: the container's own address, or the host's port published to
    /// it (by a DNAT rule, or through a `docker-proxy`); `None` for the shared
    /// socket, which is a path, not an address.
    pub fn way_in(&mut self, crossing: Crossing, port: u16) -> Result<Option<WayIn>> {
        let (address, proxy) = match crossing {
            Crossing::Veth | Crossing::Bridge => (self.server_address(crossing, port), None),
            Crossing::Published => (self.publish(port)?, None),
            Crossing::DockerProxy => {
                let (address, pid) = self.docker_proxy(port)?;
                (address, Some(pid))
            }
            Crossing::Shared => return Ok(None),
        };
        Ok(Some(WayIn { address, proxy }))
    }

    /// Publishes the server's `port` on the host's 127.0.0.1 through a DNAT rule,
    /// returning the host's address; the port is held for the network's life.
    pub fn publish(&mut self, port: u16) -> Result<SocketAddr> {
        let to = self.server_address(Crossing::Veth, port);
        let nat = match &mut self.nat {
            Some(nat) => nat,
            None => self
                .nat
                .insert(nat::Nat::new(self.index, &link_name(self.index))?),
        };
        nat.publish(to)
    }

    /// Publishes the server's `port` on the host's 127.0.0.1 through a
    /// `docker-proxy` process, returning the host's address and the proxy's PID.
    fn docker_proxy(&mut self, port: u16) -> Result<(SocketAddr, u32)> {
        let proxy = docker_proxy::DockerProxy::start(self.server_address(Crossing::Veth, port))?;
        let found = (proxy.address(), proxy.pid());
        self.proxies.push(proxy);
        Ok(found)
    }

    /// Moves the calling thread into the client's container until the guard is
    /// dropped: a connection it makes then crosses the bridge.
    pub fn client_side(&self) -> Result<ClientSide<'_>> {
        ClientSide::enter(&self.client, &self.host)
    }
}

/// Where a client on the host connects to reach a server in the container.
pub struct WayIn {
    pub address: SocketAddr,
    /// The `docker-proxy` on the way, for a port published through one.
    pub proxy: Option<u32>,
}

impl Drop for Network {
    fn drop(&mut self) {
        self.proxies.clear();
        // The table before the link its rules send connections to.
        self.nat.take();
        self.inside.end();
        let _ = tool::undo("ip", &["link", "del", &link_name(self.index)]);
    }
}

/// The name of the host's end of network `index`'s veth pair.
fn link_name(index: u16) -> String {
    format!("{LINK_PREFIX}{index}h")
}

/// Claims a free network: the first of the range, from a random start, whose
/// host link can be made (a name in use is another run's). The link's alias is
/// this run's mark, for the sweep.
fn claim_link(server: &NetNs) -> Result<u16> {
    let mut start = [0u8; 2];
    openssl::rand::rand_bytes(&mut start).context("OpenSSL's random generator")?;
    let start = u16::from_be_bytes(start) % NETWORKS;
    for step in 0..NETWORKS {
        let index = (start + step) % NETWORKS;
        let name = link_name(index);
        if Path::new("/sys/class/net").join(&name).exists() {
            continue;
        }
        let made = tool::ip(&[
            "link",
            "add",
            &name,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            &server.path(),
        ]);
        match made {
            Ok(_) => {
                let alias = sweep::mark_of_this_run(&name);
                if let Err(e) = tool::ip(&["link", "set", &name, "alias", &alias]) {
                    let _ = tool::undo("ip", &["link", "del", &name]);
                    return Err(e);
                }
                return Ok(index);
            }
            Err(e) if !e.to_string().contains("exists") => return Err(e),
            Err(_) => {}
        }
    }
    bail!("every network of 198.18.0.0/15 is in use by other sockbench runs")
}

#[cfg(test)]
mod tests;
