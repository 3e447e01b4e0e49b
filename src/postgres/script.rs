//! The transaction the concurrent clients run: SQL commands from a file, each ending
//! with `;`, sent one after the other. This is the subset of pgbench's script format
//! that plain SQL needs; pgbench's backslash meta-commands (`\set`, …) are refused
//! with a clear message rather than sent to the server.

use crate::error::usage;
use anyhow::Result;
use std::ffi::CString;
use std::path::Path;

/// Far larger than any transaction script a benchmark runs.
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// The default transaction, the `select1.sql` of pgbench comparisons.
pub const DEFAULT: &str = "SELECT 1";

/// The commands of a script file.
pub fn load(path: &Path) -> Result<Vec<CString>> {
    let text = crate::input::read_text(path, MAX_SCRIPT_BYTES).map_err(|e| {
        usage(format!(
            "--script {}: {e}; give a readable file of SQL commands",
            path.display()
        ))
    })?;
    parse(&text).map_err(|e| usage(format!("--script {}: {e}", path.display())))
}

/// Splits script text into commands: lines are joined until one ends with `;`;
/// blank lines and `--` comment lines are skipped.
pub fn parse(text: &str) -> Result<Vec<CString>, String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("--") {
            continue;
        }
        if line.starts_with('\\') {
            return Err(format!(
                "line {}: pgbench meta-commands such as '{}' are not supported; use plain SQL",
                number + 1,
                line.split_whitespace().next().unwrap_or(line)
            ));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
        if line.ends_with(';') {
            commands.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        commands.push(current);
    }
    if commands.is_empty() {
        return Err("no SQL commands in it".into());
    }
    commands
        .into_iter()
        .map(|c| CString::new(c).map_err(|_| "it contains a NUL byte".to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_end_with_semicolons() {
        let got = parse("-- warm\nSELECT 1;\n\nSELECT\n  2;\nSELECT 3").unwrap();
        let got: Vec<&str> = got.iter().map(|c| c.to_str().unwrap()).collect();
        assert_eq!(got, ["SELECT 1;", "SELECT 2;", "SELECT 3"]);
    }

    #[test]
    fn meta_commands_and_empty_scripts_are_refused() {
        assert!(parse("\\set aid random(1, 10)\nSELECT 1;")
            .unwrap_err()
            .contains("meta-commands"));
        assert!(parse("-- nothing\n").is_err());
    }
}
