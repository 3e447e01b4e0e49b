//! Finding `redis-server` and asking it its version.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `redis-server` on `PATH` (or in /usr/bin, /usr/local/bin), if installed.
pub fn find_program() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/usr/local/bin".into()])
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
}

/// The version `program --version` reports (`7.0.15`), for the server's facts.
pub fn version(program: &Path) -> Result<String> {
    let out = Command::new(program)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {} --version", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(&text).with_context(|| {
        format!(
            "{} --version said {:?}, with no version in it",
            program.display(),
            text.trim()
        )
    })
}

/// `7.0.15` from `Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 …`.
fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_what_the_program_says() {
        let said =
            "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=e08d\n";
        assert_eq!(parse_version(said).as_deref(), Some("7.0.15"));
        assert_eq!(parse_version("redis-server: no such option"), None);
        let Some(program) = find_program() else {
            eprintln!("skipped: redis-server is not installed");
            return;
        };
        let found = version(&program).unwrap();
        assert!(found.starts_with(|c: char| c.is_ascii_digit()), "{found}");
    }
}
