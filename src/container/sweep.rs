//! What a killed run leaves of its networks, removed by the next: the nftables
//! table of a network the kernel could not tie to the run (`nat.rs`), and a host
//! link, should one outlive its run.
//!
//! Only what sockbench marked as its own goes: a table's comment or a link's alias
//! names the run that made it (PID and start time, so a reused PID does not count)
//! and carries a seal over the object's name, the run and this boot. An
//! administrator's table or link that merely reads like sockbench's (`ip
//! sockbench_77`, an alias written by hand or copied from another link) has no
//! seal that fits, and stays. Making either needs CAP_NET_ADMIN, so no other
//! account can plant one; the seal is there against lookalikes, not secrets.

use super::{nat::TABLE_PREFIX, tool, LINK_PREFIX};

/// The mark this run gives `object` (a table's or a link's name): the comment of
/// its tables and the alias of its host links.
pub fn mark_of_this_run(object: &str) -> String {
    let pid = std::process::id();
    mark(object, pid, crate::leftovers::start_time(pid).unwrap_or(0))
}

/// The mark of `object` made by process `pid` started at `start`.
fn mark(object: &str, pid: u32, start: u64) -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let sealed = format!("sockbench {} {object} {pid} {start}", boot.trim());
    let seal: String = openssl::sha::sha256(sealed.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sockbench run {pid} {start} {seal}")
}

/// Removes what killed runs left; returns how many links and tables. Nothing is
/// done, or looked at, without root.
pub fn sweep() -> usize {
    if rustix::process::geteuid().as_raw() != 0 || tool::find("ip").is_none() {
        return 0;
    }
    let mut removed = 0;
    for (name, alias) in host_links() {
        if left_by_a_gone_run(&name, &alias) && tool::ip(&["link", "del", &name]).is_ok() {
            removed += 1;
        }
    }
    if tool::find("nft").is_none() || !nf_tables_present() {
        return removed;
    }
    let Ok(tables) = tool::run("nft", &["list", "tables", "ip"]) else {
        return removed;
    };
    for table in tables.lines().filter_map(|l| l.strip_prefix("table ip ")) {
        let named = table
            .strip_prefix(TABLE_PREFIX)
            .is_some_and(|index| index.parse::<u16>().is_ok());
        if !named {
            continue;
        }
        let Ok(listing) = tool::run("nft", &["-t", "list", "table", "ip", table]) else {
            continue;
        };
        if comment_of(&listing).is_some_and(|c| left_by_a_gone_run(table, c))
            && tool::run("nft", &["delete", "table", "ip", table]).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The table's own comment in nft's listing of it (a chain's is indented further).
fn comment_of(listing: &str) -> Option<&str> {
    listing
        .lines()
        .find_map(|l| l.strip_prefix("\tcomment \"")?.strip_suffix('"'))
}

/// Whether nf_tables is in the kernel already: built in, or a module loaded. A
/// module not loaded holds no table, and listing the tables would load it.
fn nf_tables_present() -> bool {
    let Ok(modules) = std::fs::read_to_string("/proc/modules") else {
        return true; // no loadable modules: built in or absent, nothing to load
    };
    if modules.lines().any(|l| l.starts_with("nf_tables ")) {
        return true;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    std::fs::read_to_string(format!("/lib/modules/{}/modules.builtin", release.trim()))
        .is_ok_and(|list| list.lines().any(|l| l.ends_with("/nf_tables.ko")))
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

/// True when `mark` is the one a sockbench run that no longer runs gave `object`;
/// false for a mark sockbench did not write for it.
fn left_by_a_gone_run(object: &str, mark_found: &str) -> bool {
    let mut fields = mark_found
        .strip_prefix("sockbench run ")
        .unwrap_or("")
        .split(' ');
    match (
        fields.next().and_then(|p| p.parse::<u32>().ok()),
        fields.next().and_then(|s| s.parse::<u64>().ok()),
    ) {
        (Some(pid), Some(start)) => {
            mark(object, pid, start) == mark_found
                && crate::leftovers::start_time(pid) != Some(start)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_names_a_run_gone_only_when_it_is_gone_and_sockbench_wrote_it() {
        let pid = std::process::id();
        assert!(!left_by_a_gone_run("sbk7h", &mark_of_this_run("sbk7h")));
        assert!(left_by_a_gone_run("sbk7h", &mark("sbk7h", pid, 1)));
        // Written for another link, by hand, or by sockbench before marks were sealed.
        assert!(!left_by_a_gone_run("sbk8h", &mark("sbk7h", pid, 1)));
        assert!(!left_by_a_gone_run(
            "sbk7h",
            &format!("sockbench run {pid} 1")
        ));
        assert!(!left_by_a_gone_run(
            "sbk7h",
            &format!("sockbench run {pid} 1 0123456789abcdef")
        ));
        assert!(!left_by_a_gone_run("sbk7h", "uplink to the office"));
        assert!(!left_by_a_gone_run("sbk7h", "sockbench run x y"));
    }

    #[test]
    fn the_table_comment_is_read_from_the_table_not_its_chains() {
        let listing = "table ip sockbench_3 { # progname nft\n\tflags owner\n\
                       \tcomment \"sockbench run 1 2 ab\"\n\n\tchain output {\n\
                       \t\tcomment \"other\"\n\t}\n}";
        assert_eq!(comment_of(listing), Some("sockbench run 1 2 ab"));
        let chain_only = "table ip sockbench_3 {\n\tchain output {\n\t\tcomment \"x\"\n\t}\n}";
        assert_eq!(comment_of(chain_only), None);
    }

    /// Runs `f` on a thread in a new network namespace, with sysfs mounted for it
    /// in mounts of its own (so `/sys/class/net` lists that namespace's links):
    /// what `f` makes there goes with the thread, whether it passes or panics.
    fn in_a_network_of_its_own<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: a plain syscall; CLONE_NEWNET moves this thread alone.
                assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0);
                crate::mounts::enter_private().unwrap();
                // SAFETY: valid NUL-terminated strings and a null data pointer; the
                // mount is made in this thread's private mount namespace.
                let mounted = unsafe {
                    libc::mount(
                        c"sysfs".as_ptr(),
                        c"/sys".as_ptr(),
                        c"sysfs".as_ptr(),
                        0,
                        std::ptr::null(),
                    )
                };
                assert_eq!(mounted, 0, "{}", std::io::Error::last_os_error());
                f()
            })
            .join()
            .unwrap()
        })
    }

    #[test]
    fn the_sweep_removes_only_what_a_gone_run_marked_as_its_own() {
        if rustix::process::geteuid().as_raw() != 0 {
            eprintln!("skipped: making tables and links needs root");
            return;
        }
        if let Some(program) = ["ip", "nft"].into_iter().find(|p| tool::find(p).is_none()) {
            eprintln!("skipped: {program} is not installed");
            return;
        }
        let pid = std::process::id();
        // This PID with another start time: a run that is gone.
        let gone = |object: &str| mark(object, pid, 1);
        let (removed, tables, links) = in_a_network_of_its_own(|| {
            let nft = |script: String| tool::run("nft", &[&script]).unwrap();
            let link = |name: &str, alias: &str| {
                let peer = name.replace("sbk", "peer");
                tool::ip(&["link", "add", name, "type", "veth", "peer", "name", &peer]).unwrap();
                tool::ip(&["link", "set", name, "alias", alias]).unwrap();
            };
            // An administrator's table named like sockbench's, with no link; a
            // link whose alias reads like sockbench's; a mark copied from another
            // table.
            nft("add table ip sockbench_76".into());
            link("sbk77h", &format!("sockbench run {pid} 1"));
            let copied = gone("sockbench_78");
            nft(format!(
                "add table ip sockbench_79 {{ comment \"{copied}\"; }}"
            ));
            // What gone runs left, and a table of this run's, which runs.
            nft(format!(
                "add table ip sockbench_78 {{ comment \"{copied}\"; }}"
            ));
            link("sbk78h", &gone("sbk78h"));
            let running = mark_of_this_run("sockbench_80");
            nft(format!(
                "add table ip sockbench_80 {{ comment \"{running}\"; }}"
            ));
            let removed = sweep();
            let tables = tool::run("nft", &["list", "tables", "ip"]).unwrap();
            (removed, tables, tool::ip(&["-o", "link", "show"]).unwrap())
        });
        let tables: Vec<&str> = tables.lines().collect();
        assert_eq!(
            tables,
            [
                "table ip sockbench_76",
                "table ip sockbench_79",
                "table ip sockbench_80"
            ]
        );
        assert!(links.contains("sbk77h"), "{links}");
        assert!(!links.contains("sbk78h"), "{links}");
        assert_eq!(removed, 2);
    }
}
