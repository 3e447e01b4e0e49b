//! PostgreSQL: a throwaway cluster sockbench runs itself (or the user's servers),
//! reached through libpq, and the experiments of the PostgreSQL suite.

pub mod account;
pub mod bindir;
pub mod cluster;
#[cfg(test)]
pub mod cluster_tests;
pub mod experiment;
pub mod hba;
pub mod libpq;
pub mod preflight;
mod process;
pub mod redact;
pub mod script;
#[cfg(test)]
mod security_tests;
pub mod suite;
pub mod targets;
