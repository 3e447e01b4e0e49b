//! Facts about the machine, recorded with every result so figures can be explained
//! and compared across machines.
//!
//! Everything is read from `/proc`, `/sys` and `/etc/os-release`; a fact that cannot
//! be read is recorded as absent rather than guessed.

pub(crate) mod account;
mod machine;
pub use machine::available_memory_bytes;
mod network;
pub(crate) mod peers;
pub mod pg_environment;

pub use network::{
    ephemeral_ports, loopback_reuses_time_wait, reuses_time_wait_to, time_wait_count, time_wait_to,
};

use crate::cpu::load::CpuLoad;
use serde::{Deserialize, Serialize};

/// The machine a result was measured on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct System {
    pub cpu_model: Option<String>,
    pub logical_cores: u64,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    /// What the machine runs inside, e.g. `virtual machine, container (docker)`;
    /// absent on bare metal.
    pub virtualization: Option<String>,
    /// The cpuidle driver (`intel_idle`, `haltpoll`, …): how deep idle CPUs sleep,
    /// which decides what a wake-up costs.
    pub cpuidle_driver: Option<String>,
    /// The frequency governor of CPU 0, when the machine exposes one.
    pub cpu_governor: Option<String>,
    pub openssl_version: String,
    /// `net.ipv4.tcp_tw_reuse`: 0 off, 1 on, 2 loopback only.
    pub tcp_tw_reuse: Option<u64>,
    /// `net.ipv4.ip_local_port_range`, the ephemeral ports clients draw from.
    pub ephemeral_ports: Option<[u32; 2]>,
    /// `net.core.somaxconn`, the cap on a listening socket's backlog.
    pub somaxconn: Option<u64>,
    /// Whether connection tracking is loaded: it then sees every loopback TCP packet.
    pub conntrack_active: Option<bool>,
    /// Kernel TLS: `loaded`, `available` (a module not loaded yet) or `absent`.
    pub kernel_tls: Option<String>,
    /// What the rest of the machine did over a short wait before the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_at_start: Option<CpuLoad>,
    /// Which CPU counters sockbench could use: `perf_event` (with instructions),
    /// `perf_event without instructions`, or `proc` (times only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_counters: Option<crate::cpu::counters::CountedBy>,
    /// What a round trip costs with client and server on one CPU and on two,
    /// measured after the first experiment: what placement alone changes on
    /// this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeup: Option<crate::cpu::wakeup::Wakeup>,
}

/// How long the machine is watched before a run, to say whether it was quiet.
const QUIET_CHECK: std::time::Duration = std::time::Duration::from_millis(300);

impl System {
    pub fn read() -> System {
        System {
            cpu_model: machine::cpu_model(),
            logical_cores: std::thread::available_parallelism()
                .map(|n| n.get() as u64)
                .unwrap_or(1),
            memory_bytes: machine::memory_bytes(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            os: machine::os_release(),
            virtualization: machine::virtualization(),
            cpuidle_driver: read_trimmed("/sys/devices/system/cpu/cpuidle/current_driver"),
            cpu_governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            openssl_version: openssl::version::version().to_string(),
            tcp_tw_reuse: network::tcp_tw_reuse(),
            ephemeral_ports: ephemeral_ports(),
            somaxconn: read_trimmed("/proc/sys/net/core/somaxconn").and_then(|s| s.parse().ok()),
            conntrack_active: network::conntrack_active(),
            kernel_tls: network::kernel_tls(),
            load_at_start: crate::cpu::load::sample(QUIET_CHECK),
            cpu_counters: Some(crate::cpu::counters::available()),
            // Measured once the first experiment has run (`Session`), not here:
            // a command that fails on its first server answers at once.
            wakeup: None,
        }
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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
        assert!(system.somaxconn.is_some_and(|n| n > 0));
        assert!(
            system.conntrack_active.is_some(),
            "/proc/sys/net is readable"
        );
    }
}
