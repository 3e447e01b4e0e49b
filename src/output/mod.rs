//! What a person sees in the terminal: result tables and progress.

mod format;
pub mod progress;
pub mod table;
