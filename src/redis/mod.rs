//! The Redis family, its parts that do not depend on the result model: a throwaway
//! `redis-server` (`server.rs`, with its configuration in `config.rs`, its account
//! in `account.rs` and the checks of who answers in `listeners.rs`) and a minimal
//! RESP client for the timed loops (`resp.rs`).
//!
//! The experiments, their description and the family's entry in `families.rs`
//! come with the generic result model; until then nothing outside this folder uses
//! it but `lib.rs`.

pub mod account;
pub mod config;
mod listeners;
pub mod resp;
pub mod server;

pub use server::{alive, find_program, Server};

/// The prefix of a throwaway server's private directory, for the leftover sweep
/// (with [`alive`], which tells whether its server still runs).
pub const DIR_PREFIX: &str = "sockbench-redis-";
