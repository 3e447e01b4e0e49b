//! What a person sees: result tables laid out once as blocks, and progress.

pub mod block;
pub mod columns;
pub mod format;
pub mod pg_table;
pub mod printable;
pub mod progress;
pub mod stdout;
pub mod table;
