//! `bench/compare-wrk.sh` runs end to end against a real nginx, wrk and
//! sockbench, one short round: a pair through nginx and one straight to the app
//! server, each with both tools' rates and their ratio, and nothing left running.
//! Without nginx or wrk installed the test says so and returns (CI installs both).

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;

#[test]
fn compare_wrk_prints_both_rates_and_their_ratio() {
    for program in ["/usr/sbin/nginx", "/usr/bin/wrk"] {
        if !Path::new(program).is_file() {
            eprintln!(
                "SKIPPED compare_wrk: {program} is not installed (apt-get install nginx wrk)"
            );
            return;
        }
    }
    let tmp = tempdir();
    // The twin's directory is made in TMPDIR, and nginx's account passes through.
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let env = [
        ("ROUNDS", "1"),
        ("DURATION", "1"),
        ("PLACEMENTS", "pinned"),
        ("TRANSPORTS", "unix"),
        ("CONNECTIONS", "1"),
    ];
    let out = bench_script("compare-wrk.sh", tmp.path(), &env, Duration::from_secs(120));
    for target in ["nginx  unix", "direct tcp"] {
        let line = out
            .lines()
            .find(|l| l.starts_with("1 ") && l.contains(target))
            .unwrap_or_else(|| panic!("no {target} pair in:\n{out}"));
        let rates: Vec<f64> = line
            .split_whitespace()
            .filter_map(|w| w.strip_suffix("/s")?.parse().ok())
            .collect();
        assert_eq!(rates.len(), 2, "{line}");
        assert!(rates.iter().all(|&r| r > 100.0), "{line}");
        let ratio: f64 = line.split_whitespace().nth(7).unwrap().parse().unwrap();
        assert!((ratio - rates[1] / rates[0]).abs() < 0.01, "{line}");
    }
    // The twin's nginx and app server name their directory in TMPDIR.
    let marker = tmp.path().to_str().unwrap();
    assert_eq!(
        processes_mentioning(marker),
        Vec::<u32>::new(),
        "left running"
    );
    assert_eq!(leftovers(tmp.path()), Vec::<std::path::PathBuf>::new());
}
