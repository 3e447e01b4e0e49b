//! The kernel's network settings that change what loopback connections cost.

use super::read_trimmed;
use std::fs;
use std::path::Path;

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

/// Whether a client's TIME_WAIT ports to `dest` are reused for new connections:
/// everywhere with 1, only to a loopback address with 2 (the default), so not to
/// a container's address over a veth pair or a bridge; read in the calling
/// thread's network namespace.
pub fn reuses_time_wait_to(dest: std::net::SocketAddr) -> bool {
    match tcp_tw_reuse() {
        Some(1) => true,
        Some(2) => dest.ip().is_loopback(),
        _ => false,
    }
}

/// Sockets in TIME_WAIT towards `dest` in the calling thread's network namespace:
/// the ports a new connection there cannot take while they are not reused.
pub fn time_wait_to(dest: std::net::SocketAddr) -> Option<u64> {
    const TIME_WAIT: &str = "06";
    let table = if dest.is_ipv4() { "tcp" } else { "tcp6" };
    let text = fs::read_to_string(format!("/proc/thread-self/net/{table}")).ok()?;
    let count = text
        .lines()
        .skip(1)
        .filter(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            fields.get(3) == Some(&TIME_WAIT)
                && fields
                    .get(2)
                    .and_then(|r| r.split_once(':'))
                    .is_some_and(|(ip, port)| {
                        super::peers::parse_address(ip) == Some(dest.ip())
                            && u16::from_str_radix(port, 16) == Ok(dest.port())
                    })
        })
        .count();
    Some(count as u64)
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

/// nf_conntrack publishes its table size once loaded; unknown when `/proc/sys/net`
/// itself cannot be read.
pub fn conntrack_active() -> Option<bool> {
    if !Path::new("/proc/sys/net").exists() {
        return None;
    }
    Some(Path::new("/proc/sys/net/netfilter/nf_conntrack_count").exists())
}

/// Kernel TLS lives in the `tls` module: loaded, built in or shipped as a module
/// for this kernel, or missing. Unknown when the kernel's module tree is not there
/// to look in.
pub fn kernel_tls() -> Option<String> {
    if Path::new("/sys/module/tls").exists() {
        return Some("loaded".into());
    }
    let release = read_trimmed("/proc/sys/kernel/osrelease")?;
    let modules = Path::new("/lib/modules").join(release);
    if !modules.exists() {
        return None;
    }
    let builtin = fs::read_to_string(modules.join("modules.builtin"))
        .is_ok_and(|list| list.lines().any(|l| l.ends_with("net/tls/tls.ko")));
    let shipped = fs::read_dir(modules.join("kernel/net/tls")).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("tls.ko")))
    });
    Some(
        if builtin || shipped {
            "available"
        } else {
            "absent"
        }
        .into(),
    )
}
