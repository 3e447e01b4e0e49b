//! The Redis family, its parts that do not depend on the result model: a throwaway
//! `redis-server` (`server.rs`, with its configuration in `config.rs`, its account
//! in `account.rs`, the checks of who answers in `listeners.rs`, and finding the
//! program in `program.rs`) and a minimal RESP client for the timed loops
//! (`resp.rs`).
//!
//! The experiments, their description and the family's entry in `families.rs`
//! come with the generic result model; until then nothing outside this folder uses
//! it but `lib.rs`.

pub mod account;
pub mod config;
mod listeners;
pub mod program;
pub mod resp;
pub mod server;

pub use program::{find_program, version};
pub use server::Server;

use server::SERVER_DIR;
use std::io::Read;

/// The prefix of a throwaway server's private directory, for the leftover sweep
/// (with [`alive`], which tells whether its server still runs).
pub const DIR_PREFIX: &str = "sockbench-redis-";

/// True when a `redis-server` still runs from the private directory `dir` (by its
/// pid file, which only the server account can write), for the leftover sweep.
pub fn alive(dir: &crate::dir::Dir) -> bool {
    let Ok(file) = dir
        .open_dir(SERVER_DIR)
        .and_then(|srv| srv.open_read(config::PID_FILE))
    else {
        return false;
    };
    let mut text = String::new();
    if file.take(64).read_to_string(&mut text).is_err() {
        return false;
    }
    let Ok(pid) = text.trim().parse::<u32>() else {
        return false;
    };
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("redis"))
}
