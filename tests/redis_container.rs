//! `sockbench redis` over the transports into a container (src/container/, issue
//! 32): a second throwaway `redis-server`, started in a container's network and
//! mounts beside the host's, gives figures on veth, bridge, published, docker-proxy
//! (when installed) and unix-shared, paired with unix on the host, each counted
//! against the server that answered it; afterwards, and after a Ctrl-C, nothing
//! of the run is left: no redis-server, docker-proxy, veth link, nftables table
//! or directory. Root only (a container's network needs it), with redis-server,
//! `ip` and `nft` installed; otherwise the tests say so and return.
//!
//! Other runs may build networks of their own on this machine meanwhile, so what
//! is checked is that none of this run's is left: its links are the `sbk` links
//! whose alias names its process, and its tables are those of their networks.

mod common;

use common::redis::*;
use common::*;
use serde_json::Value;
use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

const EXPERIMENTS: [&str; 5] = [
    "redis.ping",
    "redis.get",
    "redis.pipeline",
    "redis.connect",
    "redis.concurrent",
];
/// How long a whole quick run may take on a busy 2-core machine.
const QUICK_RUN: Duration = Duration::from_secs(400);
const DOCKER_PROXY: &str = "/usr/sbin/docker-proxy";

/// Lets one test of this file run sockbench at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The transports measured: the host's unix as the reference, and every one
/// into a container this machine can build.
fn transports() -> Vec<&'static str> {
    let mut all = vec!["unix", "veth", "bridge", "published", "unix-shared"];
    if Path::new(DOCKER_PROXY).exists() {
        all.push("docker-proxy");
    }
    all
}

/// Why a container's network cannot be built here, if it cannot.
fn cannot_build(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let why = if unsafe { libc::geteuid() } != 0 {
        Some("not root")
    } else if !["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .iter()
        .any(|p| Path::new(p).exists())
    {
        Some("ip (iproute2) is not installed")
    } else if nft(&["--version"]).is_none() {
        Some("nft (nftables) is not installed")
    } else {
        None
    };
    if let Some(why) = why {
        eprintln!("SKIPPED {test}: {why}");
    }
    why.is_some()
}

/// What `nft ARGS` printed, if it ran.
fn nft(args: &[&str]) -> Option<String> {
    let out = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"]
        .iter()
        .find(|p| Path::new(p).exists())
        .and_then(|p| Command::new(p).args(args).output().ok())?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The `sbk` links of `ip -o link` whose alias names sockbench process `pid`, by
/// their network's number.
fn links_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let marker = format!("alias sockbench run {pid} ");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&marker))
        .filter_map(|l| {
            let name = l.split(": ").nth(1)?.split('@').next()?;
            let index = name.strip_prefix("sbk")?.strip_suffix('h')?;
            Some(index.to_string())
        })
        .collect()
}

/// The `sockbench_` tables `nft list tables` shows.
fn tables() -> Vec<String> {
    nft(&["list", "tables"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|t| t.starts_with("sockbench_"))
        .map(String::from)
        .collect()
}

/// A run watched while it goes on: the networks it made, its docker-proxy.
struct Seen {
    networks: Vec<String>,
    proxies: Vec<Process>,
}

/// Watches `run` until it ends (or `done` says so), noting what it made.
fn watch(run: &mut Watched, within: Duration, done: impl Fn() -> bool) -> Seen {
    let seen = RefCell::new(Seen {
        networks: Vec::new(),
        proxies: Vec::new(),
    });
    run.until(within, |w| {
        let mut seen = seen.borrow_mut();
        for n in links_of(w.pid()) {
            if !seen.networks.contains(&n) {
                seen.networks.push(n);
            }
        }
        for p in children_named(w.pid(), "docker-proxy") {
            if !seen.proxies.contains(&p) {
                seen.proxies.push(p);
            }
        }
        done()
    });
    seen.into_inner()
}

/// Nothing of the run is left: no server, proxy, link, table or directory.
fn assert_nothing_left(done: &Finished, seen: &Seen, pid: u32, scratch: &Path) {
    done.assert_nothing_left(scratch);
    assert_eq!(leftovers(scratch), Vec::<std::path::PathBuf>::new());
    let proxies: Vec<&Process> = seen.proxies.iter().filter(|p| p.running()).collect();
    assert!(proxies.is_empty(), "docker-proxy left running: {proxies:?}");
    assert_eq!(links_of(pid), Vec::<String>::new(), "sbk links left");
    let tables = tables();
    for n in &seen.networks {
        let table = format!("sockbench_{n}");
        assert!(!tables.contains(&table), "{table} left in {tables:?}");
    }
}

fn number(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, key| &v[key])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

#[test]
fn every_experiment_runs_on_every_transport_into_a_container_and_nothing_is_left() {
    let test = "every_experiment_runs_on_every_transport_into_a_container";
    let Some(program) = redis_installed(test) else {
        return;
    };
    if cannot_build(test) {
        return;
    }
    let _turn = one_at_a_time();
    let transports = transports();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let list = transports.join(",");
    let mut run = Watched::start(
        &scratch,
        &[
            "redis",
            "--quick",
            "--transports",
            &list,
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    let pid = run.pid();
    let seen = watch(&mut run, QUICK_RUN, || false);
    let done = run.finish(QUICK_RUN);
    assert!(done.status.success(), "redis failed: {}", done.stderr);
    assert!(!done.stderr.contains("left out"), "{}", done.stderr);

    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(schema_errors(&file), Vec::<String>::new());
    assert_eq!(experiments(&file), EXPERIMENTS);
    let version = version_of(&program);
    for e in EXPERIMENTS {
        let records = results(&file, e);
        let cases = if e == "redis.get" { 3 } else { 1 };
        assert_eq!(records.len(), cases * transports.len(), "{e}");
        for t in &transports {
            assert!(
                records.iter().any(|r| r["transport"] == *t),
                "no {e} on {t}"
            );
        }
        for r in records {
            let (t, s) = (r["transport"].as_str().unwrap(), &r["server"]);
            assert_eq!(s["kind"], "redis", "{r}");
            assert_eq!(s["throwaway"], true, "{r}");
            assert_eq!(s["version"], version.as_str(), "{r}");
            // Counted against the server that answered (the other one, idle,
            // would show next to nothing per operation).
            let server = number(r, "metrics.cpu.server.cpu_ns");
            assert!(server > 200.0, "{e} on {t}: server {server} ns per op");
            let proxy = r["metrics"]["cpu"]["roles"]["proxy"]["cpu_ns"].as_f64();
            assert_eq!(proxy.is_some(), t == "docker-proxy", "{e} on {t}: {r}");
            assert!(proxy.is_none_or(|ns| ns > 200.0), "{e} on {t}: {r}");
            if t != "unix" {
                let ratio = number(r, "headline.vs_reference.ratio.estimate");
                assert!((0.2..20.0).contains(&ratio), "{e} on {t}: {ratio}");
            }
            let figure = match e {
                "redis.connect" => number(r, "metrics.latency_ns.p50"),
                "redis.pipeline" => number(r, "metrics.per_command_ns"),
                _ => number(r, "metrics.rtt_ns.p50"),
            };
            assert!((100.0..1e9).contains(&figure), "{e} on {t}: {figure} ns");
        }
    }

    assert_eq!(
        done.servers.len(),
        2,
        "a redis-server on the host and one in the container: {:?}",
        done.servers
    );
    assert_eq!(seen.networks.len(), 1, "one network: {:?}", seen.networks);
    let proxies = usize::from(transports.contains(&"docker-proxy"));
    assert_eq!(seen.proxies.len(), proxies, "{:?}", seen.proxies);
    assert_nothing_left(&done, &seen, pid, &scratch);
}

#[test]
fn ctrl_c_leaves_no_server_link_or_table_of_the_container() {
    let test = "ctrl_c_leaves_no_server_link_or_table_of_the_container";
    let Some(_) = redis_installed(test) else {
        return;
    };
    if cannot_build(test) {
        return;
    }
    let _turn = one_at_a_time();
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let list = transports().join(",");
    let mut run = Watched::start(
        &scratch,
        &[
            "redis",
            "--quick",
            "--transports",
            &list,
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    let pid = run.pid();
    let json_at = json.clone();
    let seen = watch(&mut run, QUICK_RUN, move || {
        std::fs::read_to_string(&json_at).is_ok_and(|t| t.contains("redis.ping"))
    });
    assert_eq!(run.servers.len(), 2, "{:?}", run.servers);
    assert_eq!(seen.networks.len(), 1, "{:?}", seen.networks);
    let table = format!("sockbench_{}", seen.networks[0]);
    assert!(tables().contains(&table), "{table} while it runs");
    run.signal(libc::SIGINT);
    let done = run.finish(Duration::from_secs(60));
    assert_eq!(done.status.code(), Some(130), "{}", done.stderr);
    assert!(done.stderr.contains("interrupted"), "{}", done.stderr);
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    assert_nothing_left(&done, &seen, pid, &scratch);
}
