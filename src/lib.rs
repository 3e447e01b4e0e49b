//! sockbench as a library: the harness, the server families, the result model,
//! the report and its formats. `main.rs` only wires the command line to
//! [`command::dispatch`]; integration tests and benches use the rest directly.
//! `ARCHITECTURE.md` describes the layers.

pub mod cli;
pub mod command;
pub mod cpu;
pub mod dir;
pub mod error;
pub mod export;
pub mod families;
pub mod harness;
pub mod input;
pub mod interrupt;
pub mod leftovers;
pub mod names;
pub mod plan;
pub mod postgres;
pub mod redis;
pub mod report;
pub mod results;
pub mod sockets;
pub mod stats;
pub mod subprocess;
pub mod system;
pub mod timestamp;
pub mod transport;
pub mod units;
