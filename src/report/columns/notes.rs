//! The notes under a table on how to read it and how sure it is: the legend shared
//! by every table (noisy ranges, the comparison row, where CPU per operation comes
//! from) and each table's certainty (outside load, where unpinned client and server
//! ran, comparisons not settled).

use super::distinct;
use crate::cpu::affinity::Placement;
use crate::cpu::Cost;
use crate::report::experiment::placement;
use crate::results::ResultRecord;

/// Where the CPU figures came from, and what the server side covers.
fn cost_note(records: &[ResultRecord]) -> String {
    let counted: Vec<&Cost> = records.iter().filter_map(|r| r.counters.as_ref()).collect();
    let counters = if counted.is_empty() {
        "; no kernel counters here (perf_event_paranoid or privileges), so no switches, \
         migrations or instructions"
    } else if counted.iter().any(|c| c.client.instructions_user.is_some()) {
        "; instructions, context switches and migrations from kernel counters \
         (perf_event_open) in one counting trial after the rounds"
    } else {
        "; context switches and migrations from kernel counters (perf_event_open) in one \
         counting trial after the rounds; instructions: this machine exposes no hardware \
         counters"
    };
    format!(
        "CPU/op: the timed loop's CPU time ÷ its operations, median over rounds, from \
         getrusage and /proc, with the kernel's share in percent; the server side is the server process with every thread \
         and process it starts{counters}"
    )
}

/// How many trials ran under outside load, when any did.
fn load_note(records: &[ResultRecord]) -> Option<String> {
    let trials = records.iter().flat_map(|r| &r.trials);
    let rerun = trials.clone().filter(|t| t.reruns > 0).count();
    let cut = trials.clone().filter(|t| t.cut).count();
    let disturbed = trials.filter(|t| t.disturbed).count();
    let stopped = match cut {
        0 => String::new(),
        n => format!(" ({n} with fewer: reruns stopped at the time limit)"),
    };
    (rerun + disturbed > 0).then(|| {
        format!(
            "outside load: {rerun} trial(s) ran again because other processes used the CPUs; \
             {disturbed} still disturbed after {} tries{stopped}",
            crate::cpu::load::RETRIES + 1
        )
    })
}

/// Where unpinned client and server ran: how often they shared a CPU, which is
/// what an unpinned round trip mostly shows.
fn where_note(records: &[ResultRecord]) -> Option<String> {
    let (shared, of) = shared_cpu(records)?;
    Some(format!(
        "placed freely: client and server shared one CPU in {shared} of {of} trials \
         (--placement same,split measures them pinned)"
    ))
}

/// Of the trials placed freely whose CPUs were seen, how many ran client and
/// server on one CPU, and of how many; none when no such trial was seen.
pub fn shared_cpu(records: &[ResultRecord]) -> Option<(usize, usize)> {
    let free: Vec<bool> = records
        .iter()
        .filter(|r| placement(&r.params).is_none_or(|p| p == Placement::Free))
        .flat_map(|r| &r.trials)
        .filter_map(|t| {
            let cost = t.metrics.cpu.as_ref()?;
            let client = cost.client_cpu?;
            (!cost.server_cpus.is_empty()).then(|| cost.server_cpus == [client])
        })
        .collect();
    (!free.is_empty()).then(|| (free.iter().filter(|s| **s).count(), free.len()))
}

/// How to read the comparison row, the one relative figure of every table.
pub const VERSUS_NOTE: &str = "vs unix (or the first transport), 95% CI: time per \
     operation over the reference's — TLS's over tcp's where tcp was measured (\"tls: \
     tcp\"), as everywhere sockbench compares TLS — as the geometric mean of each round's \
     ratio (rates turned into time per operation first), with its 95% confidence \
     interval; +36% is 36% more time, −4.2% less, 24× twenty-four times the time, 0.41× \
     under half; an interval that holds +0% means no clear difference, and one whose \
     upper end is more than 4 times its lower reads \"not settled (N rounds)\". extra \
     CPU/op: the same comparison's extra CPU time per operation, client and server \
     together, as the mean of the rounds' differences with its 95% interval (the \
     verdict's and the why's figure)";

/// The note every table carries when a range was wide.
pub const NOISY_NOTE: &str = "~ marks a range over trials wider than 10% of the median: noisy";

/// The legend of a family that negotiated TLS: the version and cipher first, then
/// [`legend`].
pub fn legend_with_tls(records: &[ResultRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(tls) = records.iter().find_map(|r| r.tls.as_ref()) {
        notes.push(format!(
            "tls: {} {}, {} certificate",
            tls.version, tls.cipher, tls.certificate
        ));
    }
    notes.extend(legend(records));
    notes
}

/// How to read the figures every experiment's table shares: noisy ranges, what
/// the intervals are, where CPU per operation comes from. Shown once per document.
pub fn legend(records: &[ResultRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    if records.iter().any(|r| r.headline.noisy) {
        notes.push(NOISY_NOTE.into());
    }
    if records.iter().any(|r| r.headline.vs_reference.is_some()) {
        notes.push(VERSUS_NOTE.into());
    }
    if records.iter().any(|r| r.metrics.cpu.is_some()) {
        notes.push(cost_note(records));
    }
    if records
        .iter()
        .any(|r| r.counters.as_ref().is_some_and(|c| c.why.is_some()))
    {
        notes.push(why_note(records));
    }
    notes
}

/// How to read the "why" rows.
pub const WHY_NOTE: &str = "why: what the kernel did per operation, client and server \
     together, counted from its tracepoints in the counting trials: packets handed to a \
     network device (the loopback device here; a Unix socket uses none), system calls, \
     network softirqs (NET_RX and NET_TX), wakeups, and for TCP the segments received \
     with data and without (pure ACKs); most CPU in: the layers that held the largest \
     shares of the CPU time, from samples with kernel call chains, ± the 95% interval \
     of the share over the counting trials";

/// [`WHY_NOTE`] and how the samples were taken (a file from before says no clock:
/// it sampled cpu-clock).
fn why_note(records: &[ResultRecord]) -> String {
    let clock = records
        .iter()
        .find_map(|r| r.counters.as_ref()?.why.as_ref()?.clock)
        .unwrap_or(crate::cpu::why::Clock::CpuClock);
    format!(
        "{WHY_NOTE}, taken by {}",
        crate::report::system::sampling(clock)
    )
}

/// The notes on how sure this table's figures are: trials under outside load,
/// where unpinned client and server ran, and which comparisons are not settled.
pub fn certainty_notes(records: &[ResultRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(load_note(records));
    notes.extend(where_note(records));
    let names = distinct(
        records
            .iter()
            .filter(|r| r.headline.vs_reference.is_some() && !r.headline.settled),
        |r| r.transport.clone(),
    );
    if !names.is_empty() {
        notes.push(format!(
            "wider than ±5% (more rounds would narrow it): {}",
            names.join(", ")
        ));
    }
    notes
}
