//! The system a result was measured on, as rows of facts: shown first in a report,
//! and side by side in a comparison.

use crate::cpu::load::{CpuLoad, RETRIES};
use crate::cpu::why::Clock;
use crate::report::block::Block;
use crate::report::experiment::Catalog;
use crate::report::format::{duration_interval_ns, duration_ns, short_version};
use crate::results::outside::{Host, OutsideLoad};
use crate::results::ResultFile;

/// Whether the machine was quiet before the run: `quiet (others 0.02 CPUs, steal
/// 0.00)`, or `busy (…)`.
fn quiet(load: Option<CpuLoad>) -> String {
    load.map_or_else(
        || "not recorded".into(),
        |l| {
            let word = if l.disturbed() { "busy" } else { "quiet" };
            format!(
                "{word} (other processes {:.2} CPUs, steal {:.2})",
                l.outside_cpus, l.steal_cpus
            )
        },
    )
}

/// The host before the run and, when trials then found it busy, that too, so a
/// quiet start is never the whole story: `quiet (…); busy during 56 of 471 trials`.
fn at_start(o: &OutsideLoad) -> String {
    let start = quiet(o.at_start);
    let busy_start = o.at_start.is_some_and(|l| l.disturbed());
    match o.busy_trials {
        0 => start,
        n if busy_start => format!("{start}, and during {n} of {} trials", o.trials),
        n => format!("{start}; busy during {n} of {} trials", o.trials),
    }
}

/// The host while the trials ran: `busy: 56 of 471 trials ran again, 3 still
/// disturbed after 3 tries; other processes 0.41 CPUs on average, steal 0.00`.
fn while_measuring(o: &OutsideLoad) -> String {
    if !o.during_known() {
        return "not recorded".into();
    }
    let word = match o.host() {
        Host::BusyDuring => "busy",
        _ => "quiet",
    };
    let again = match o.busy_trials {
        0 => format!("no trial of {} ran again", o.trials),
        n => format!(
            "{n} of {} trials ran again, {} still disturbed after {} tries",
            o.trials,
            o.disturbed,
            RETRIES + 1
        ),
    };
    let mean = o.mean.map_or(String::new(), |m| {
        format!(
            "; other processes {:.2} CPUs on average, steal {:.2}",
            m.outside_cpus, m.steal_cpus
        )
    });
    format!("{word}: {again}{mean}")
}

/// What the kernel's account of the counting trials could use: `9 tracepoints,
/// call chains sampled over 5 counting trials by cpu-clock, …`, or that there was
/// none.
fn kernel_account(file: &ResultFile) -> String {
    let whys: Vec<&crate::cpu::why::Why> = file
        .results
        .iter()
        .filter_map(|r| r.counters.as_ref()?.why.as_ref())
        .collect();
    let Some(tracepoints) = whys.iter().map(|w| w.tracepoints.len()).max() else {
        return "none (not permitted, or not recorded)".into();
    };
    let trials = whys
        .iter()
        .map(|w| w.client.sampled_trials())
        .max()
        .unwrap_or(0);
    if trials == 0 {
        return format!("{tracepoints} tracepoints, no call chains");
    }
    // Files from before say no clock: they sampled cpu-clock.
    let clock = whys.iter().find_map(|w| w.clock).unwrap_or(Clock::CpuClock);
    let over = match trials {
        1 => "in one counting trial".to_string(),
        n => format!("over {n} counting trials"),
    };
    format!(
        "{tracepoints} tracepoints, call chains sampled {over} by {}",
        sampling(clock)
    )
}

/// How samples were taken, and what that does to the layers.
pub fn sampling(clock: Clock) -> &'static str {
    match clock {
        Clock::Cycles => {
            "the CPU's cycle counter (a non-maskable interrupt: each sample \
                          lands where the CPU was)"
        }
        Clock::CpuClock => {
            "the cpu-clock timer (no hardware counter here): a tick due \
                            while interrupts are off is taken where they come back on, so \
                            that time is counted there, mostly in the scheduler"
        }
    }
}

/// The facts of a result file, each as (name, value); unknown facts say so.
pub fn facts(file: &ResultFile, catalog: &Catalog) -> Vec<(&'static str, String)> {
    let s = &file.system;
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let number = |v: Option<u64>| v.map_or_else(|| "unknown".into(), |n| n.to_string());
    let outside = file.outside_load();
    let mut facts = vec![
        ("CPU", or_unknown(&s.cpu_model)),
        ("host at start", at_start(&outside)),
        ("host while measuring", while_measuring(&outside)),
        (
            "CPU counters",
            s.cpu_counters
                .map_or("not recorded".into(), |c| c.to_string()),
        ),
        ("kernel account", kernel_account(file)),
        ("logical cores", s.logical_cores.to_string()),
        (
            "memory",
            s.memory_bytes.map_or_else(
                || "unknown".into(),
                |b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
            ),
        ),
        ("kernel", or_unknown(&s.kernel)),
        ("OS", or_unknown(&s.os)),
        (
            "virtualization",
            s.virtualization
                .clone()
                .unwrap_or_else(|| "none seen".into()),
        ),
        ("cpuidle driver", or_unknown(&s.cpuidle_driver)),
        ("round trip on 1 CPU / 2", wakeup(file)),
        (
            "frequency governor",
            s.cpu_governor
                .clone()
                .unwrap_or_else(|| "not exposed".into()),
        ),
        ("net.ipv4.tcp_tw_reuse", number(s.tcp_tw_reuse)),
        (
            "ephemeral ports",
            s.ephemeral_ports
                .map_or_else(|| "unknown".into(), |[lo, hi]| format!("{lo}–{hi}")),
        ),
        ("net.core.somaxconn", number(s.somaxconn)),
        (
            "conntrack",
            match s.conntrack_active {
                Some(true) => "active".into(),
                Some(false) => "not loaded".into(),
                None => "unknown".into(),
            },
        ),
        ("kernel TLS", or_unknown(&s.kernel_tls)),
        ("OpenSSL", s.openssl_version.clone()),
    ];
    facts.extend(server_versions(file, catalog));
    facts.extend([
        (
            "sockbench",
            format!("{} ({})", file.sockbench_version, file.sockbench_commit),
        ),
        (
            "command",
            format!("sockbench {}", file.command.join(" "))
                .trim_end()
                .to_string(),
        ),
    ]);
    facts
}

/// What running client and server on two CPUs adds to a round trip, as measured
/// after the run's first experiment.
fn wakeup(file: &ResultFile) -> String {
    let Some(w) = file.system.wakeup else {
        return "not measured".into();
    };
    let across = &w.across_ns;
    format!(
        "{} / {}: two CPUs add {}",
        duration_ns(w.same_ns.estimate),
        duration_ns(w.split_ns.estimate),
        duration_interval_ns(across.estimate, across.low, across.high)
    )
}

/// The version of each kind of server a family measures, as its records say, with
/// every product behind it (`1.22.1; app: sockbench 0.1.0, gunicorn 20.1.0`).
fn server_versions(file: &ResultFile, catalog: &Catalog) -> Vec<(&'static str, String)> {
    let version = |family: &str| {
        let servers: Vec<&crate::results::Server> = (file.results.iter())
            .filter(|r| catalog.family_of(r) == Some(family))
            .filter_map(|r| r.server.as_ref())
            .collect();
        let Some(first) = servers.first() else {
            return "not measured".into();
        };
        let mut behind: Vec<(&str, String)> = Vec::new();
        for p in servers.iter().flat_map(|s| &s.behind) {
            let product = (
                p.role.as_str(),
                format!("{} {}", p.name, short_version(&p.version)),
            );
            if !behind.contains(&product) {
                behind.push(product);
            }
        }
        let mut said = short_version(&first.version);
        let mut roles: Vec<&str> = Vec::new();
        for (role, _) in &behind {
            if !roles.contains(role) {
                roles.push(role);
            }
        }
        for role in roles {
            let products: Vec<&str> = (behind.iter())
                .filter(|(r, _)| *r == role)
                .map(|(_, p)| p.as_str())
                .collect();
            said.push_str(&format!("; {role}: {}", products.join(", ")));
        }
        said
    };
    (catalog.servers().iter())
        .map(|s| (s.product, version(s.family)))
        .collect()
}

/// The facts as a two-column table.
pub fn block(file: &ResultFile, catalog: &Catalog) -> Block {
    Block::facts(
        "system",
        vec!["fact".into(), "value".into()],
        facts(file, catalog)
            .into_iter()
            .map(|(k, v)| vec![k.to_string(), v])
            .collect(),
    )
}
