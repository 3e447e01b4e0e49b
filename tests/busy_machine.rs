//! A run on a machine kept busy: the test loads every CPU sockbench may use with
//! busy loops of its own, and the run still ends within 1.5 times the time it said
//! it expected, saying that the machine was busy.

mod common;

use common::*;
use std::time::{Duration, Instant};

/// Seconds in a length of time as sockbench prints it: `750 ms`, `8.5 s`,
/// `1 min 10 s`, `1 h 5 min`.
fn seconds(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut total = 0.0;
    for pair in words.chunks(2) {
        let [number, unit] = pair else { return None };
        let n: f64 = number.parse().ok()?;
        total += n * match *unit {
            "ms" => 1e-3,
            "s" => 1.0,
            "min" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
    }
    Some(total)
}

/// The expected seconds in the line printed before measuring.
fn expected(stderr: &str) -> Option<f64> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("sockbench expects about "))?;
    let rest = line.strip_prefix("sockbench expects about ")?;
    seconds(&rest[..rest.find(" (")?])
}

#[test]
fn printed_lengths_of_time_read_back() {
    assert_eq!(seconds("750 ms"), Some(0.75));
    assert_eq!(seconds("8.5 s"), Some(8.5));
    assert_eq!(seconds("1 min 10 s"), Some(70.0));
    assert_eq!(
        expected("x\nsockbench expects about 1 min 2 s (at most 2 min if …): …\n"),
        Some(62.0)
    );
}

#[test]
fn a_busy_machine_keeps_the_run_within_one_and_a_half_times_its_estimate() {
    let tmp = tempdir();
    let json = tmp.path().join("busy.json");
    let loops = load_every_cpu();
    // Let the loops take the CPUs before the run looks.
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--quick",
            "--trials",
            "3",
            "--transports",
            "unix,tcp",
            "--workloads",
            "stream",
            "--write-sizes",
            "64KiB",
            "-t",
            "700ms",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let took = start.elapsed().as_secs_f64();
    drop(loops);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // The estimate is folded to 80 columns: unfold it.
    let stderr = stderr.replace("\n  ", " ");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let estimate = expected(&stderr).unwrap_or_else(|| panic!("no estimate printed:\n{stderr}"));
    // 3 rounds and up to 4 counting rounds of 2 trials of 0.7 s, and setup.
    assert!((4.0..30.0).contains(&estimate), "{estimate} s\n{stderr}");
    assert!(
        stderr.contains("3 rounds of 2 trials (6 trials) of 700 ms"),
        "{stderr}"
    );
    assert!(
        took <= 1.5 * estimate,
        "took {took:.1} s, estimate {estimate} s\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("The host was busy:"),
        "the busy machine is not said:\n{stdout}"
    );
    // Without a time limit every trial would have run three times.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let trials: Vec<&serde_json::Value> = file["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["trials"].as_array().unwrap())
        .collect();
    assert!(
        trials
            .iter()
            .any(|t| t["disturbed"] == true || t["reruns"].is_u64()),
        "no trial saw the load"
    );
    assert_eq!(schema_errors(&file), Vec::<String>::new());
}
