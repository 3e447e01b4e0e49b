//! Writing results out of the process. Today: the JSON result file.

pub mod json;
