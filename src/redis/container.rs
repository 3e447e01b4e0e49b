//! A second throwaway `redis-server`, in a container (`crate::container`), for the
//! transports into one, and where each of them reaches it: the container's
//! addresses over the veth pair and the bridge (it listens on both), the host's
//! 127.0.0.1 through a DNAT rule or through `docker-proxy`, and its socket in its
//! directory, shared into the container, by the host's path.
//!
//! Who answers: the addresses are in a network namespace only sockbench's processes
//! are in, and the server checks its listeners there itself
//! (`listeners::check_inside`); a published port is held bound by sockbench for
//! the network's life and its DNAT rule sends every connection to the container
//! before any socket on the host could take it; `docker-proxy` is found holding
//! its port before it is used (`crate::container`), and is checked to run before
//! every trial (`suite.rs`), so a port it left is never written to; the socket's
//! peer is checked on every connection, as on the host's (`target.rs`).

use super::server::RedisServer;
use crate::container::{Crossing, Network};
use crate::transport::{Address, Endpoint, Transport};
use anyhow::{Context, Result};
use std::path::Path;

/// The port the server listens on in the container, whose network is sockbench's
/// alone: Redis's own.
const PORT: u16 = 6379;

/// The server, its network, and how each transport reaches it. The server is
/// stopped by its PID before its network goes.
pub struct RedisContainer {
    server: RedisServer,
    network: Network,
    routes: Vec<Route>,
}

/// Where one transport's client connects, and the `docker-proxy` in between.
struct Route {
    endpoint: Endpoint,
    proxy: Option<u32>,
}

impl RedisContainer {
    /// Builds the network and starts `program` in it for `transports`, each a
    /// transport into a container.
    pub fn start(program: &Path, transports: &[Transport]) -> Result<RedisContainer> {
        let mut network = Network::build()?;
        let addresses = [Crossing::Veth, Crossing::Bridge]
            .map(|c| network.server_address(c, PORT).ip())
            .to_vec();
        let program = program.to_path_buf();
        let server =
            network.inside(move || RedisServer::start_inside(&program, addresses, PORT))??;
        let mut routes = Vec::new();
        for &transport in transports {
            let crossing = transport
                .crossing()
                .with_context(|| format!("{transport} is no transport into a container"))?;
            let (address, proxy) = match network.way_in(crossing, PORT)? {
                Some(way) => (Address::Ip(way.address), way.proxy),
                None => (Address::Path(server.socket()), None),
            };
            let endpoint = Endpoint { transport, address };
            routes.push(Route { endpoint, proxy });
        }
        Ok(RedisContainer {
            server,
            network,
            routes,
        })
    }

    pub fn server(&self) -> &RedisServer {
        &self.server
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Where `transport` reaches the server.
    pub fn endpoint(&self, transport: Transport) -> Option<&Endpoint> {
        self.route(transport).map(|r| &r.endpoint)
    }

    /// The `docker-proxy` between `transport`'s client and the server.
    pub fn proxy(&self, transport: Transport) -> Option<u32> {
        self.route(transport).and_then(|r| r.proxy)
    }

    fn route(&self, transport: Transport) -> Option<&Route> {
        self.routes
            .iter()
            .find(|r| r.endpoint.transport == transport)
    }
}
