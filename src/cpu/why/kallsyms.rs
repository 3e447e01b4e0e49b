//! Kernel addresses to function names, from `/proc/kallsyms`, read once per
//! process: the text symbols sorted by address, looked up by binary search (the
//! symbol at or below an address is the function holding it).

use std::sync::OnceLock;

/// The kernel's text symbols, sorted by address.
#[derive(Debug, Default)]
pub struct Kallsyms {
    addrs: Vec<u64>,
    names: Vec<String>,
}

impl Kallsyms {
    /// Parses the text of `/proc/kallsyms` (`ffffffff81000000 T _stext`, with a
    /// `[module]` after the names of module symbols); keeps text symbols only.
    pub fn parse(text: &str) -> Kallsyms {
        let mut all: Vec<(u64, &str)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let addr = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                matches!(kind, "t" | "T" | "w" | "W").then_some((addr, name))
            })
            .collect();
        all.sort_by_key(|(addr, _)| *addr);
        Kallsyms {
            addrs: all.iter().map(|(a, _)| *a).collect(),
            names: all.iter().map(|(_, n)| n.to_string()).collect(),
        }
    }

    /// This kernel's symbols, read once; or, when `/proc/kallsyms` cannot be read
    /// or hides the addresses, why and what would show them ([`Kallsyms::read`]).
    pub fn get() -> Result<&'static Kallsyms, &'static str> {
        static KALLSYMS: OnceLock<Result<Kallsyms, String>> = OnceLock::new();
        KALLSYMS
            .get_or_init(|| {
                let kptr_restrict = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict")
                    .ok()
                    .and_then(|v| v.trim().parse().ok());
                Kallsyms::read(
                    std::fs::read_to_string("/proc/kallsyms"),
                    kptr_restrict,
                    rustix::process::geteuid().as_raw(),
                )
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The symbols of `text`, what reading `/proc/kallsyms` gave; or, when it gave
    /// none or only hidden addresses (all zero), why, for account `euid` with the
    /// sysctl `kernel.kptr_restrict` at `kptr_restrict`, and what would show them.
    /// At 2 the kernel hides its addresses from every account, root included; below
    /// that, from accounts without `CAP_SYSLOG` (root has it, unless a container
    /// takes it away).
    pub fn read(
        text: std::io::Result<String>,
        kptr_restrict: Option<u32>,
        euid: u32,
    ) -> Result<Kallsyms, String> {
        let text =
            text.map_err(|e| format!("/proc/kallsyms cannot be read ({e}), so no CPU by layer"))?;
        let symbols = Kallsyms::parse(&text);
        if symbols.has_addresses() {
            return Ok(symbols);
        }
        let hidden = "/proc/kallsyms hides the kernel's addresses";
        Err(match (kptr_restrict, euid) {
            (Some(2), 0) => format!(
                "{hidden} from every account, root included (kernel.kptr_restrict is 2), so no \
                 CPU by layer; to have it, run `sysctl kernel.kptr_restrict=1` (or 0) for as \
                 long as you measure"
            ),
            (Some(2), _) => format!(
                "{hidden} from every account (kernel.kptr_restrict is 2), so no CPU by layer; \
                 to have it, run as root with kernel.kptr_restrict at 1 (or 0)"
            ),
            (_, 0) => format!(
                "{hidden} even from root here (without CAP_SYSLOG, as in some containers), so \
                 no CPU by layer"
            ),
            _ => format!("{hidden} from this account, so no CPU by layer; run as root to have it"),
        })
    }

    /// Whether any symbol has a real address.
    pub fn has_addresses(&self) -> bool {
        self.addrs.last().is_some_and(|&a| a != 0)
    }

    /// The function holding `addr`: the last symbol at or below it.
    pub fn name(&self, addr: u64) -> Option<&str> {
        let i = self.addrs.partition_point(|&a| a <= addr);
        (i > 0 && self.addrs[i - 1] != 0).then(|| self.names[i - 1].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
ffffffff81000000 T _stext
ffffffff81002000 T tcp_sendmsg
ffffffff81001000 t do_syscall_64
ffffffff81001800 D some_data
ffffffffc0001000 t loop_fn\t[loop]
";

    #[test]
    fn an_address_belongs_to_the_text_symbol_at_or_below_it() {
        let k = Kallsyms::parse(FIXTURE);
        assert!(k.has_addresses());
        assert_eq!(k.name(0xffffffff81000010), Some("_stext"));
        assert_eq!(k.name(0xffffffff81001000), Some("do_syscall_64"));
        // some_data is not text: the address stays in do_syscall_64.
        assert_eq!(k.name(0xffffffff81001900), Some("do_syscall_64"));
        assert_eq!(k.name(0xffffffff81002abc), Some("tcp_sendmsg"));
        assert_eq!(k.name(0xffffffffc0001004), Some("loop_fn"));
        assert_eq!(k.name(0x1000), None);
    }

    const HIDDEN: &str = "0000000000000000 T _stext\n0000000000000000 T tcp_sendmsg\n";

    #[test]
    fn hidden_addresses_are_told() {
        let k = Kallsyms::parse(HIDDEN);
        assert!(!k.has_addresses());
        assert_eq!(k.name(0xffffffff81000000), None);
    }

    #[test]
    fn root_is_told_the_sysctl_and_others_to_run_as_root() {
        let read = |text: &str, kptr, euid| Kallsyms::read(Ok(text.to_string()), kptr, euid);
        assert!(read(FIXTURE, Some(2), 0).is_ok_and(|k| k.has_addresses()));
        let root = read(HIDDEN, Some(2), 0).unwrap_err();
        assert!(root.contains("kernel.kptr_restrict is 2"), "{root}");
        assert!(root.contains("sysctl kernel.kptr_restrict=1"), "{root}");
        assert!(!root.contains("run as root"), "{root}");
        let user = read(HIDDEN, Some(1), 1000).unwrap_err();
        assert!(user.contains("run as root"), "{user}");
        let user_at_2 = read(HIDDEN, Some(2), 1000).unwrap_err();
        assert!(
            user_at_2.contains("run as root with kernel.kptr_restrict at 1"),
            "{user_at_2}"
        );
        let contained = read(HIDDEN, Some(0), 0).unwrap_err();
        assert!(!contained.contains("run as root"), "{contained}");
        let unreadable = Kallsyms::read(Err(std::io::ErrorKind::NotFound.into()), None, 0);
        assert!(unreadable.unwrap_err().contains("cannot be read"));
    }
}
