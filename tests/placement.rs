//! Placement on the user's own servers: a PostgreSQL server's backends pinned with
//! the client by default, a Redis server pinned only when `--placement` asks and
//! put back on its CPUs after (finished or interrupted); three runs of each agree
//! with each other within their intervals, and what a wakeup across CPUs costs is
//! measured and said.

mod common;

use common::redis::*;
use common::user_server::*;
use common::*;
use serde_json::Value;
use sockbench::cpu::affinity;
use std::time::Duration;

/// The 0.975 quantile of Student's t, for the few degrees of freedom a run has.
fn t975(df: u64) -> f64 {
    const T: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    T[(df.clamp(1, 30) - 1) as usize]
}

/// Every comparison's ratio in a result file: (experiment, case, transport) →
/// (ln estimate, standard error of the log).
fn ratios(file: &Value) -> Vec<(String, f64, f64)> {
    file["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let ratio = &r["headline"]["vs_reference"]["ratio"];
            let (e, lo, hi, n) = (
                ratio["estimate"].as_f64()?,
                ratio["low"].as_f64()?,
                ratio["high"].as_f64()?,
                ratio["n"].as_u64()?,
            );
            let key = format!("{} {} {}", r["experiment"], r["params"], r["transport"]);
            let se = (hi.ln() - lo.ln()) / 2.0 / t975(n - 1);
            Some((key, e.ln(), se))
        })
        .collect()
}

/// How many of the pairs of runs' estimates differ beyond their intervals
/// (|z| > 1.96), of how many pairs.
fn disagreements(files: &[Value]) -> (usize, usize) {
    let all: Vec<Vec<(String, f64, f64)>> = files.iter().map(ratios).collect();
    let (mut apart, mut pairs) = (0, 0);
    for i in 0..all.len() {
        for j in i + 1..all.len() {
            for (key, a, sa) in &all[i] {
                let Some((_, b, sb)) = all[j].iter().find(|(k, _, _)| k == key) else {
                    continue;
                };
                pairs += 1;
                if ((a - b) / (sa * sa + sb * sb).sqrt()).abs() > 1.96 {
                    apart += 1;
                }
            }
        }
    }
    (apart, pairs)
}

/// Whether three runs agree: no figure of one run four times another's (a
/// machine shared with other work moves absolute times by up to about 2×).
/// Placed as a wakeup across CPUs decided, the same figure swung 8× from run to
/// run. How many pairs of estimates lie apart beyond their intervals is printed,
/// not asserted: it is a statistical target, measured on a quiet machine.
fn agree(files: &[Value]) {
    let (apart, pairs) = disagreements(files);
    eprintln!("cross-run: {apart} of {pairs} pairs of runs apart beyond their intervals");
    assert!(pairs >= 3, "{pairs} pairs");
    let all: Vec<Vec<(String, f64, f64)>> = files.iter().map(headlines).collect();
    for (key, first, _) in &all[0] {
        let seen: Vec<f64> = all
            .iter()
            .filter_map(|run| run.iter().find(|(k, _, _)| k == key).map(|h| h.1))
            .collect();
        let (low, high) = seen
            .iter()
            .fold((*first, *first), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(high / low < 4.0, "{key}: {seen:?} from run to run");
    }
}

/// Every record's headline figure: (experiment, case, transport) → estimate.
fn headlines(file: &Value) -> Vec<(String, f64, f64)> {
    file["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let estimate = r["headline"]["interval"]["estimate"].as_f64()?;
            let key = format!("{} {} {}", r["experiment"], r["params"], r["transport"]);
            Some((key, estimate, 0.0))
        })
        .collect()
}

/// Every record was measured as `placement` says (`None`: free, which records
/// name no placement), and counted the server's CPU.
fn placed_and_counted(file: &Value, placement: Option<&str>) {
    for r in file["results"].as_array().unwrap() {
        assert_eq!(
            r["params"]["placement"].as_str(),
            placement,
            "{}",
            r["experiment"]
        );
        let counted = r["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !t["cpu"]["server"].is_null())
            .count();
        assert!(counted > 0, "no server CPU in {}: {r}", r["experiment"]);
    }
}

/// The machine's wakeup across CPUs is in the file, and when the verdict speaks
/// of it, it quotes that figure.
fn wakeup_said_as_measured(file: &Value, stdout: &str) {
    let across = &file["system"]["wakeup"]["across_ns"];
    let estimate = across["estimate"].as_f64().expect("a wakeup measured");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(at) = flat.find("Where client and server run weighs more") {
        // Three significant figures, as every time is said (7.05, 14.7, 102).
        let us = estimate / 1000.0;
        let shown = match us {
            u if u < 10.0 => format!("{u:.2}"),
            u if u < 100.0 => format!("{u:.1}"),
            u => format!("{u:.0}"),
        };
        assert!(
            flat[at..].contains(&format!("takes {shown} [")),
            "the line quotes another figure than {shown} µs: {flat}"
        );
    }
}

#[test]
fn postgres_server_backends_are_pinned_and_three_runs_agree() {
    if !postgres_installed("postgres_server_backends_are_pinned") {
        return;
    }
    let server = UserServer::start();
    let tmp = tempdir();
    let mut files = Vec::new();
    for run in 0..3 {
        let json = tmp.path().join(format!("run-{run}.json"));
        let out = assert_cmd::Command::from_std(sockbench(tmp.path()))
            .args([
                "postgres",
                "--quick",
                "--experiments",
                "query,rows",
                "--quiet",
            ])
            .args(["--server", &server.tcp_uri(""), "--json"])
            .arg(&json)
            .env("PGPASSWORD", APP_PASSWORD)
            .timeout(Duration::from_secs(300))
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(schema_errors(&file), Vec::<String>::new());
        // The default: client and backend on one CPU, the backend's CPU counted.
        placed_and_counted(&file, Some("same"));
        wakeup_said_as_measured(&file, &stdout);
        files.push(file);
    }
    agree(&files);
}

/// The main thread's CPUs of process `pid`.
fn cpus(pid: u32) -> Vec<usize> {
    affinity::cpus_of(pid as i32).unwrap()
}

#[test]
fn a_redis_server_is_pinned_only_when_asked_and_put_back() {
    let Some(program) = redis_installed("a_redis_server_is_pinned_only_when_asked") else {
        return;
    };
    let allowed = affinity::allowed().to_vec();
    if allowed.len() < 2 {
        eprintln!("SKIPPED: needs two CPUs to tell a pinned server from its own CPUs");
        return;
    }
    let server = UserRedis::start(&program);
    let pid = server.pid().unwrap();
    // The user keeps their server on the last CPU; sockbench must leave it there.
    let theirs = vec![*allowed.last().unwrap()];
    affinity::pin_process(pid, &theirs).unwrap();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let tcp = format!("tcp=redis://127.0.0.1:{}", server.port);
    let unix = format!("unix=unix://{}", server.socket.display());
    let auth = [("REDISCLI_AUTH", USER_PASSWORD)];
    let run = |json: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["redis", "--url", &tcp, "--url", &unix];
        args.extend(["--experiments", "ping", "--quick", "--quiet", "--json"]);
        args.push(json.to_str().unwrap());
        args.extend(extra);
        Watched::start(&scratch, &args, &auth).finish(Duration::from_secs(240))
    };

    // Free by default: counted, never placed.
    let json = tmp.path().join("free.json");
    let done = run(&json, &[]);
    assert!(done.status.success(), "{}", done.stderr);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    placed_and_counted(&file, None);
    assert_eq!(
        cpus(pid),
        theirs,
        "the server was moved under free placement"
    );
    wakeup_said_as_measured(&file, &done.stdout);

    // Asked to pin: three runs agree, and the server is back on its CPU after each.
    let mut files = Vec::new();
    for n in 0..3 {
        let json = tmp.path().join(format!("same-{n}.json"));
        let done = run(&json, &["--placement", "same"]);
        assert!(done.status.success(), "{}", done.stderr);
        assert!(
            done.stderr.contains("put back on its CPUs after"),
            "{}",
            done.stderr
        );
        assert_eq!(cpus(pid), theirs, "the server was not put back");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(schema_errors(&file), Vec::<String>::new());
        placed_and_counted(&file, Some("same"));
        files.push(file);
    }
    agree(&files);

    // Interrupted while the server is pinned: put back all the same.
    let json = tmp.path().join("interrupted.json");
    let mut args = vec!["redis", "--url", &tcp, "--url", &unix];
    args.extend([
        "--experiments",
        "ping",
        "--trials",
        "200",
        "--placement",
        "split",
    ]);
    args.extend(["--json", json.to_str().unwrap()]);
    let mut watched = Watched::start(&scratch, &args, &auth);
    let moved = watched.until(Duration::from_secs(60), |_| cpus(pid) != theirs);
    watched.signal(libc::SIGINT);
    let done = watched.finish(Duration::from_secs(60));
    assert!(moved, "the server was never pinned: {}", done.stderr);
    assert!(!done.status.success());
    assert_eq!(
        cpus(pid),
        theirs,
        "not put back after Ctrl-C: {}",
        done.stderr
    );
}
