//! `bench/compare-sockperf.sh` runs end to end against Debian's sockperf and
//! sockbench, one short round on one CPU: a line per path (tcp, veth, bridge,
//! published, and udp: UDP on loopback) with both tools' round trips and their
//! ratio, and afterwards the host as it was: its links, named network namespaces and
//! nftables ruleset, and nothing of the script's left running. Without sockperf, ip
//! or nft installed the test says so and returns (CI installs them).

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The script's default paths (its TRANSPORTS, not set here).
const PATHS: [&str; 5] = ["tcp", "veth", "bridge", "published", "udp"];

/// Where Debian installs `program`, if it does.
fn installed(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .any(|dir| Path::new(dir).join(program).is_file())
}

fn said(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
    text(&out.stdout)
}

/// Whether `name` is a network of a sockbench run (`sbk<N>h`, a table
/// `sockbench_<N>`): another run of sockbench, on a shared machine, makes and removes
/// its own while this test runs; its own tests check those. The script's twin
/// (`sbk511h`, `sockbench_bench`) is not one.
fn another_runs(name: &str, alias: Option<&str>) -> bool {
    let numbered = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = name.strip_prefix("sockbench_") {
        return numbered(n);
    }
    let is_run_link = name
        .strip_prefix("sbk")
        .and_then(|rest| rest.strip_suffix('h'))
        .is_some_and(numbered);
    is_run_link && alias.is_some_and(|a| a.starts_with("sockbench run "))
}

/// What the host shows of its network: links, named namespaces, the nftables
/// ruleset, less other sockbench runs' networks.
fn host_network() -> (Vec<String>, String, Vec<String>) {
    let links = said("ip", &["-o", "link", "show"])
        .lines()
        .filter(|line| {
            let name = line.split(": ").nth(1).unwrap_or("");
            let name = name.split('@').next().unwrap_or(name);
            let alias = line.split_once("alias ").map(|(_, a)| a.trim());
            !another_runs(name, alias)
        })
        .map(str::to_string)
        .collect();
    let namespaces = said("ip", &["netns", "list"]);
    // The ruleset table by table: a table's block runs from its `table` line to the
    // next (blank lines between its chains included).
    let mut tables: Vec<String> = Vec::new();
    for line in said("nft", &["list", "ruleset"]).lines() {
        match tables.last_mut() {
            Some(table) if !line.starts_with("table ") => {
                table.push('\n');
                table.push_str(line);
            }
            _ => tables.push(line.to_string()),
        }
    }
    tables.retain(|t| {
        let name = t.lines().next().unwrap_or("").split_whitespace().nth(2);
        !name.is_some_and(|n| another_runs(n, None))
    });
    (links, namespaces, tables)
}

#[test]
fn compare_sockperf_prints_a_ratio_per_path_and_leaves_the_host_as_found() {
    for program in ["sockperf", "ip", "nft"] {
        if !installed(program) {
            eprintln!(
                "SKIPPED compare_sockperf: {program} is not installed \
                 (apt-get install sockperf iproute2 nftables)"
            );
            return;
        }
    }
    let tmp = tempdir();
    let before = host_network();
    let env = [
        ("ROUNDS", "1"),
        ("PLACEMENTS", "same"),
        ("TRIALS", "2"),
        ("SOCKPERF_TIME", "1"),
    ];
    let out = bench_script(
        "compare-sockperf.sh",
        tmp.path(),
        &env,
        Duration::from_secs(240),
    );
    assert!(out.contains("RTT/2"), "the conversion is not said:\n{out}");
    for path in PATHS {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().take(3).eq(["1", "same", path]))
            .unwrap_or_else(|| panic!("no {path} pair in:\n{out}"));
        let rtts: Vec<f64> = line
            .split_whitespace()
            .filter_map(|w| w.strip_suffix("µs")?.parse().ok())
            .take(2)
            .collect();
        assert_eq!(rtts.len(), 2, "{line}");
        assert!(rtts.iter().all(|&r| r > 0.5 && r < 100_000.0), "{line}");
        let ratio: f64 = line.split_whitespace().nth(5).unwrap().parse().unwrap();
        assert!((ratio - rtts[1] / rtts[0]).abs() < 0.01, "{line}");
        let summary = out
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(["same", path]))
            .unwrap_or_else(|| panic!("no {path} summary in:\n{out}"));
        assert!(
            summary.contains(&format!("{ratio:.3} ({ratio:.3}-{ratio:.3})")),
            "{summary}"
        );
    }
    // The namespaces' holders, the port held for publishing and the sockperf servers
    // all name the script's directory in TMPDIR.
    let marker = tmp.path().to_str().unwrap();
    assert_eq!(
        processes_mentioning(marker),
        Vec::<u32>::new(),
        "left running"
    );
    assert_eq!(leftovers(tmp.path()), Vec::<std::path::PathBuf>::new());
    let after = host_network();
    assert_eq!(before.0, after.0, "links differ");
    assert_eq!(before.1, after.1, "named network namespaces differ");
    assert_eq!(before.2, after.2, "nftables ruleset differs");
}
