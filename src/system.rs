//! Facts about the machine, recorded with every result so figures can be explained
//! and compared across machines.
//!
//! Everything is read from `/proc`, `/sys` and `/etc/os-release`; a fact that cannot
//! be read is recorded as absent rather than guessed.

use serde::{Deserialize, Serialize};
use std::fs;

/// The machine a result was measured on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct System {
    pub cpu_model: Option<String>,
    pub logical_cores: u64,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub openssl_version: String,
    /// `net.ipv4.tcp_tw_reuse`: 0 off, 1 on, 2 loopback only.
    pub tcp_tw_reuse: Option<u64>,
    /// `net.ipv4.ip_local_port_range`, the ephemeral ports clients draw from.
    pub ephemeral_ports: Option<[u32; 2]>,
}

impl System {
    pub fn read() -> System {
        System {
            cpu_model: cpu_model(),
            logical_cores: std::thread::available_parallelism()
                .map(|n| n.get() as u64)
                .unwrap_or(1),
            memory_bytes: memory_bytes(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            os: os_release(),
            openssl_version: openssl::version::version().to_string(),
            tcp_tw_reuse: tcp_tw_reuse(),
            ephemeral_ports: ephemeral_ports(),
        }
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn cpu_model() -> Option<String> {
    let info = fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn memory_bytes() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn os_release() -> Option<String> {
    let text = fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// `net.ipv4.tcp_tw_reuse`, which decides whether a client may reuse a port still in
/// TIME_WAIT for a new connection.
pub fn tcp_tw_reuse() -> Option<u64> {
    read_trimmed("/proc/sys/net/ipv4/tcp_tw_reuse")?
        .parse()
        .ok()
}

/// Whether TIME_WAIT ports on loopback are reused (1 everywhere, 2 loopback only).
pub fn loopback_reuses_time_wait() -> bool {
    matches!(tcp_tw_reuse(), Some(1 | 2))
}

pub fn ephemeral_ports() -> Option<[u32; 2]> {
    let text = read_trimmed("/proc/sys/net/ipv4/ip_local_port_range")?;
    let mut parts = text.split_whitespace().map(|p| p.parse().ok());
    Some([parts.next()??, parts.next()??])
}

/// Sockets now in TIME_WAIT, IPv4 and IPv6, machine-wide.
pub fn time_wait_count() -> Option<u64> {
    const TIME_WAIT: &str = "06";
    let mut count = 0;
    let mut read_any = false;
    for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(path) else {
            continue;
        };
        read_any = true;
        count += text
            .lines()
            .skip(1)
            .filter(|l| l.split_whitespace().nth(3) == Some(TIME_WAIT))
            .count() as u64;
    }
    read_any.then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_machine() {
        let system = System::read();
        assert!(system.logical_cores >= 1);
        assert!(system.kernel.is_some(), "Linux always has osrelease");
        assert!(system.openssl_version.contains("OpenSSL"));
        let [low, high] = system.ephemeral_ports.expect("port range readable");
        assert!(low < high);
    }
}
