//! Finding `redis-server` and asking it its version.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `redis-server` on `PATH` (or in /usr/bin, /usr/local/bin), if installed.
pub fn find_program() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/usr/local/bin".into()])
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
}

/// The version `program --version` reports (`7.0.15`), for the server's facts;
/// `None` when it cannot be run or names none. One that hangs is an error within
/// a few seconds (`subprocess::ask`), as is a Ctrl-C meanwhile.
pub fn version(program: &Path) -> Result<Option<String>> {
    let mut command = Command::new(program);
    command.arg("--version").env_clear();
    let Some(answer) = crate::subprocess::ask(&mut command, crate::subprocess::ASK_LIMIT)? else {
        return Ok(None);
    };
    Ok(parse_version(&String::from_utf8_lossy(&answer.stdout)))
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
        let found = version(&program).unwrap().expect("a version");
        assert!(found.starts_with(|c: char| c.is_ascii_digit()), "{found}");
    }
}
