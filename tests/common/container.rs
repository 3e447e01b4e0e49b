//! What a container's network may change on the host, read before and after a run:
//! the host's links, its nftables ruleset, its mounts and the sysctls a published
//! port could need.

use std::process::Command;
use std::time::{Duration, Instant};

/// The host as a run that builds a container's network could change it.
#[derive(Debug, PartialEq, Eq)]
pub struct HostNetwork {
    links: String,
    netns: String,
    rules: String,
    mounts: String,
    sysctls: Vec<(String, String)>,
}

impl HostNetwork {
    pub fn read() -> HostNetwork {
        let sysctls = [
            "conf/all/route_localnet",
            "conf/lo/route_localnet",
            "conf/default/route_localnet",
            "ip_forward",
        ]
        .into_iter()
        .map(|s| {
            let value =
                std::fs::read_to_string(format!("/proc/sys/net/ipv4/{s}")).unwrap_or_default();
            (s.to_string(), value.trim().to_string())
        })
        .collect();
        HostNetwork {
            // Names and flags only; counters and queue states come and go.
            links: said("ip", &["-o", "link", "show"])
                .lines()
                .filter_map(|l| l.split_once(" qdisc").map(|(head, _)| head.to_string()))
                .collect::<Vec<_>>()
                .join("\n"),
            netns: said("ip", &["netns", "list"]),
            rules: said("nft", &["list", "ruleset"]),
            mounts: std::fs::read_to_string("/proc/self/mounts").unwrap_or_default(),
            sysctls,
        }
    }

    /// Waits (at most 10 s: a namespace goes a moment after its last process)
    /// until the host is as `self` found it, and fails with what differs.
    pub fn assert_again(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now = HostNetwork::read();
            if now == *self {
                return;
            }
            if Instant::now() > deadline {
                assert_eq!(now, *self, "the host is not as it was");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The tables sockbench's networks made in the host's nftables ruleset
/// (`sockbench_N`).
pub fn sockbench_tables() -> Vec<String> {
    said("nft", &["list", "tables"])
        .lines()
        .filter(|l| {
            l.split_once("sockbench_")
                .is_some_and(|(_, n)| n.trim().parse::<u16>().is_ok())
        })
        .map(str::to_string)
        .collect()
}

/// Whether this machine can build a container's network as sockbench does; if
/// not, says why the test is skipped.
pub fn network_possible(test: &str) -> bool {
    // SAFETY: a plain syscall without arguments.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED {test}: a container's network needs root");
        return false;
    }
    for (program, package) in [("ip", "iproute2"), ("nft", "nftables")] {
        if !["/usr/sbin", "/sbin", "/usr/bin"]
            .iter()
            .any(|d| std::path::Path::new(d).join(program).is_file())
        {
            eprintln!("SKIPPED {test}: {program} is not installed (apt-get install {package})");
            return false;
        }
    }
    true
}

/// Whether Docker's userland proxy is installed where sockbench looks.
pub fn docker_proxy_installed() -> bool {
    std::path::Path::new("/usr/sbin/docker-proxy").is_file()
        || std::path::Path::new("/usr/bin/docker-proxy").is_file()
}

fn said(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
