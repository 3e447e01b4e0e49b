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

    /// This kernel's symbols, read once; `None` when `/proc/kallsyms` cannot be
    /// read or hides the addresses (all zero: `kptr_restrict`, no privilege).
    pub fn get() -> Option<&'static Kallsyms> {
        static KALLSYMS: OnceLock<Option<Kallsyms>> = OnceLock::new();
        KALLSYMS
            .get_or_init(|| {
                let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
                Some(Kallsyms::parse(&text)).filter(Kallsyms::has_addresses)
            })
            .as_ref()
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

    #[test]
    fn hidden_addresses_are_told() {
        let k = Kallsyms::parse("0000000000000000 T _stext\n0000000000000000 T tcp_sendmsg\n");
        assert!(!k.has_addresses());
        assert_eq!(k.name(0xffffffff81000000), None);
    }
}
