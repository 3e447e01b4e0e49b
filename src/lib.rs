//! sockbench as a library: the harness, the server families, the result model,
//! the report and its formats. `main.rs` only wires the command line to
//! [`command::dispatch`]; integration tests and benches use the rest directly.
//! `ARCHITECTURE.md` describes the layers.

pub mod cli;
pub mod command;
pub(crate) mod container;
pub mod cpu;
pub(crate) mod dir;
pub mod error;
pub mod export;
pub mod families;
pub mod harness;
pub(crate) mod input;
pub(crate) mod interrupt;
pub(crate) mod leftovers;
pub(crate) mod mounts;
pub mod names;
pub(crate) mod plan;
pub mod postgres;
pub(crate) mod proxy;
pub(crate) mod redis;
pub mod report;
pub mod results;
pub(crate) mod sockets;
pub mod stats;
pub(crate) mod subprocess;
pub mod system;
pub(crate) mod timestamp;
pub mod transport;
pub mod units;
pub(crate) mod wait;
