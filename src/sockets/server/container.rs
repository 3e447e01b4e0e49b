//! sockbench's server in a container (`crate::container`), and where each
//! transport into it reaches it.

use super::child::ServerProcess;
use crate::container::{Crossing, Network};
use crate::transport::{Address, Endpoint, Transport};
use anyhow::{Context, Result};
use std::net::SocketAddr;

/// The port the server listens on in the container, whose network is sockbench's.
const PORT: u16 = 7000;

/// The server, its network, and how each transport reaches it. The server is
/// stopped before its network is removed.
pub struct Contained {
    server: ServerProcess,
    network: Network,
    reached: Vec<Reached>,
}

/// Where one transport's client connects, and the process in between, if any.
pub struct Reached {
    pub endpoint: Endpoint,
    pub between: Option<u32>,
}

impl Contained {
    /// Builds the network and starts the server in it for `transports`, each a
    /// transport into a container.
    pub fn start(transports: &[Transport]) -> Result<Contained> {
        let mut network = Network::build()?;
        let wanted = |c: &[Crossing]| {
            transports
                .iter()
                .any(|t| t.crossing().is_some_and(|x| c.contains(&x)))
        };
        let mut tcp: Vec<SocketAddr> = Vec::new();
        if wanted(&[Crossing::Veth, Crossing::Published, Crossing::DockerProxy]) {
            tcp.push(network.server_address(Crossing::Veth, PORT));
        }
        if wanted(&[Crossing::Bridge]) {
            tcp.push(network.server_address(Crossing::Bridge, PORT));
        }
        let unix = wanted(&[Crossing::Shared]);
        let server = network.inside(move || ServerProcess::start_inside(&tcp, unix))??;
        let socket = server.endpoints().iter().find_map(Endpoint::path).cloned();
        let mut reached = Vec::new();
        for &transport in transports {
            let crossing = transport
                .crossing()
                .with_context(|| format!("{transport} is no transport into a container"))?;
            let (address, between) = match network.way_in(crossing, PORT)? {
                Some(way) => (Address::Ip(way.address), way.proxy),
                None => (
                    Address::Path(socket.clone().context("the server made no Unix socket")?),
                    None,
                ),
            };
            let endpoint = Endpoint { transport, address };
            reached.push(Reached { endpoint, between });
        }
        Ok(Contained {
            server,
            network,
            reached,
        })
    }

    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    /// How `transport` reaches the server.
    pub fn reached(&self, transport: Transport) -> Option<&Reached> {
        self.reached
            .iter()
            .find(|r| r.endpoint.transport == transport)
    }
}
