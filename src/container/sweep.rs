//! What a killed run leaves of its networks, removed by the next: the nftables
//! table of a network whose host link is gone, and a host link whose run is gone
//! (its alias names the run: PID and start time, so a reused PID does not count).

use super::{nat::TABLE_PREFIX, tool, LINK_PREFIX};
use std::path::Path;

/// The alias given to the host's link of every network this run makes.
pub fn alias_of_this_run() -> String {
    let pid = std::process::id();
    format!(
        "sockbench run {pid} {}",
        crate::leftovers::start_time(pid).unwrap_or(0)
    )
}

/// Removes what killed runs left; returns how many links and tables. Nothing is
/// done, or looked at, without root.
pub fn sweep() -> usize {
    if rustix::process::geteuid().as_raw() != 0 || tool::find("ip").is_none() {
        return 0;
    }
    let mut removed = 0;
    for (name, alias) in host_links() {
        if run_gone(&alias) && tool::ip(&["link", "del", &name]).is_ok() {
            removed += 1;
        }
    }
    // No table without nf_tables loaded; listing would load it. A kernel with no
    // loadable modules (no /proc/modules) has it built in or not at all, and
    // shows no /sys/module entry for it.
    let loaded =
        Path::new("/sys/module/nf_tables").exists() || !Path::new("/proc/modules").exists();
    if tool::find("nft").is_none() || !loaded {
        return removed;
    }
    let Ok(tables) = tool::run("nft", &["list", "tables", "ip"]) else {
        return removed;
    };
    for table in tables.lines().filter_map(|l| l.strip_prefix("table ip ")) {
        let Some(index) = table.strip_prefix(TABLE_PREFIX) else {
            continue;
        };
        let link = Path::new("/sys/class/net").join(format!("{LINK_PREFIX}{index}h"));
        if index.parse::<u16>().is_ok()
            && !link.exists()
            && tool::run("nft", &["delete", "table", "ip", table]).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The host links named as sockbench names them, with their aliases.
fn host_links() -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir("/sys/class/net") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            name.strip_prefix(LINK_PREFIX)
                .and_then(|rest| rest.strip_suffix('h'))
                .is_some_and(|n| n.parse::<u16>().is_ok())
        })
        .filter_map(|name| {
            let alias = std::fs::read_to_string(format!("/sys/class/net/{name}/ifalias")).ok()?;
            Some((name, alias.trim().to_string()))
        })
        .collect()
}

/// True when `alias` names a sockbench run that no longer runs; false for an
/// alias sockbench did not write.
fn run_gone(alias: &str) -> bool {
    let mut fields = alias
        .strip_prefix("sockbench run ")
        .unwrap_or("")
        .split(' ');
    match (
        fields.next().and_then(|p| p.parse::<u32>().ok()),
        fields.next().and_then(|s| s.parse::<u64>().ok()),
    ) {
        (Some(pid), Some(start)) => crate::leftovers::start_time(pid) != Some(start),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_names_a_run_gone_only_when_it_is_gone() {
        assert!(!run_gone(&alias_of_this_run()));
        assert!(run_gone(&format!("sockbench run {} 1", std::process::id())));
        assert!(!run_gone("uplink to the office"));
        assert!(!run_gone("sockbench run x y"));
    }
}
