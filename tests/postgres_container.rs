//! The PostgreSQL suite over the transports into a container: a second throwaway
//! cluster runs in a container's network beside the host's, every transport gets
//! its figures, and nothing of the run is left afterwards (no postgres process, no
//! docker-proxy, no host link or nftables table of its network). The test needs
//! root, iproute2, nftables and PostgreSQL's server programs; without them it says
//! so and returns. docker-proxy is measured where Docker's is installed.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn number(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, key| &v[key])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// Why a container's network cannot be built here, if it cannot.
fn no_network() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("a container's network needs root");
    }
    let installed = |p: &str| {
        ["/usr/sbin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(p).exists())
    };
    if !installed("ip") || !installed("nft") {
        return Some("iproute2 or nftables is not installed");
    }
    None
}

/// The tables of `nft list tables`.
fn tables() -> String {
    let out = std::process::Command::new("nft")
        .args(["list", "tables"])
        .output()
        .expect("nft runs");
    text(&out.stdout)
}

#[test]
fn a_cluster_in_a_container_is_measured_beside_the_hosts_and_nothing_is_left() {
    let test = "a_cluster_in_a_container_is_measured";
    if !postgres_installed(test) {
        return;
    }
    if let Some(why) = no_network() {
        eprintln!("SKIPPED {test}: {why}");
        return;
    }
    let mut transports = vec!["unix", "published", "bridge", "unix-shared"];
    let docker_proxy = Path::new("/usr/sbin/docker-proxy").exists();
    if docker_proxy {
        transports.push("docker-proxy");
    }
    let list = transports.join(",");
    let tmp = tempdir();
    let scratch = scratch(tmp.path());
    let json = tmp.path().join("out.json");
    let out = run(
        &scratch,
        &[
            "postgres",
            "--quick",
            "--trials",
            "2",
            "--experiments",
            "query,connect,auth,concurrent",
            "--auth-methods",
            "trust,md5",
            "--queries",
            "300,1200",
            "--connections",
            "20",
            "--clients",
            "2",
            "--duration",
            "300ms",
            "--transports",
            &list,
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "postgres failed: {stderr}");
    assert!(!stderr.contains("left out"), "{stderr}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let errors = schema_errors(&file);
    assert!(errors.is_empty(), "{errors:#?}");

    for (experiment, figure) in [
        ("postgres.query", "metrics.per_query_ns"),
        ("postgres.connect", "metrics.connect_ns.p50"),
        ("postgres.concurrent", "metrics.tps"),
    ] {
        let records = results(&file, experiment);
        let found: Vec<&str> = records
            .iter()
            .map(|r| r["transport"].as_str().unwrap())
            .collect();
        assert_eq!(found, transports, "{experiment}");
        for r in records {
            assert!(number(r, figure) > 0.0, "{experiment}: {r}");
            assert_eq!(r["server"]["throwaway"], true);
            // Paired with unix, round by round.
            if r["transport"] != "unix" {
                let against = &r["headline"]["vs_reference"]["reference"];
                assert_eq!(against, "unix", "{experiment}: {r}");
            }
        }
    }
    let query = results(&file, "postgres.query");
    let of = |t: &str| *query.iter().find(|r| r["transport"] == t).unwrap();
    let host = |t: &str| of(t)["server"]["host"].as_str().unwrap().to_string();
    // Two clusters: the host's, and the one in the container on its own addresses
    // and socket directory.
    assert_ne!(host("unix"), host("unix-shared"));
    assert!(host("unix-shared").starts_with(&scratch.display().to_string()));
    let bridge = host("bridge");
    assert!(
        bridge.starts_with("198.1") && bridge.ends_with(".10"),
        "{bridge}"
    );
    assert_eq!(of("bridge")["server"]["port"], "5432");
    assert_eq!(host("published"), "127.0.0.1");
    if docker_proxy {
        let roles = &of("docker-proxy")["metrics"]["cpu"]["roles"];
        assert!(
            roles["proxy"].is_object(),
            "docker-proxy not counted: {roles}"
        );
    }
    // Trust over the private sockets only, the host's and the shared one.
    let auth = results(&file, "postgres.auth");
    let over = |method: &str| -> Vec<&str> {
        auth.iter()
            .filter(|r| r["params"]["auth_method"] == method)
            .map(|r| r["transport"].as_str().unwrap())
            .collect()
    };
    assert_eq!(over("trust"), ["unix", "unix-shared"]);
    assert_eq!(over("md5"), transports);

    // Nothing left: the clusters (their directories and every process naming
    // them), and the network's link, table and docker-proxy, found by its address
    // 198.(18+a).b.10, network number 256a + b. Other runs on the machine keep
    // their own.
    assert_clean(&scratch);
    let octets: Vec<u16> = bridge.split('.').map(|o| o.parse().unwrap()).collect();
    let index = (octets[1] - 18) * 256 + octets[2];
    let links = text(
        &std::process::Command::new("ip")
            .args(["-o", "link"])
            .output()
            .unwrap()
            .stdout,
    );
    let link = format!("sbk{index}h");
    assert!(
        !links
            .split_whitespace()
            .any(|w| w.starts_with(&format!("{link}@")) || w == link),
        "{link} left: {links}"
    );
    let table = format!("sockbench_{index}");
    assert!(
        !tables()
            .lines()
            .any(|l| l.trim() == format!("table ip {table}")),
        "{table} left"
    );
    let server = format!("-container-ip {}.{}.{}.2 ", octets[0], octets[1], octets[2]);
    assert_eq!(
        processes_mentioning(&server),
        Vec::<u32>::new(),
        "docker-proxy left"
    );
}
