//! What a person sees in the terminal: result tables and progress.

mod format;
pub mod pg_table;
pub mod progress;
pub mod table;
