//! The machine itself: CPU, memory, operating system and what it runs inside.

use super::read_trimmed;
use std::fs;
use std::path::Path;

pub fn cpu_model() -> Option<String> {
    let info = fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

pub fn memory_bytes() -> Option<u64> {
    meminfo("MemTotal:")
}

/// Memory the kernel could give a new program now without swapping.
pub fn available_memory_bytes() -> Option<u64> {
    meminfo("MemAvailable:")
}

fn meminfo(key: &str) -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub fn os_release() -> Option<String> {
    let text = fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// A virtual machine shows the `hypervisor` CPU flag, and often names its maker in
/// the DMI tables; a container leaves a marker file or tells PID 1 through its
/// environment. Both can hold at once (a container in a VM).
pub fn virtualization() -> Option<String> {
    let mut found = Vec::new();
    let flagged = fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| {
        info.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
    });
    if flagged {
        let maker = [
            "/sys/class/dmi/id/sys_vendor",
            "/sys/class/dmi/id/product_name",
        ]
        .iter()
        .filter_map(|p| read_trimmed(p))
        .collect::<Vec<_>>()
        .join(" ");
        found.push(if maker.is_empty() {
            "virtual machine".to_string()
        } else {
            format!("virtual machine ({maker})")
        });
    }
    if let Some(kind) = container() {
        found.push(format!("container ({kind})"));
    }
    (!found.is_empty()).then(|| found.join(", "))
}

fn container() -> Option<String> {
    if Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if Path::new("/run/.containerenv").exists() {
        return Some("podman".into());
    }
    let environ = fs::read("/proc/1/environ").ok()?;
    environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"container="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}
