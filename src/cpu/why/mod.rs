//! Why an operation costs what it does, in the kernel's own words: how many times
//! each kernel event fired per operation (system calls, packets through the
//! loopback device, receive softirqs, wakeups, socket buffers, TCP segments), from
//! tracepoints counted with `perf_event_open`, and where its CPU time went by layer
//! (system-call entry, socket layer, Unix sockets, TCP, IP, loopback device,
//! scheduler, memory copy, TLS, the rest of user space, other kernel), from
//! `cpu-clock` samples with kernel call chains symbolised from `/proc/kallsyms`.
//!
//! Both run only in the counting trials, next to the CPU counters, for the client
//! and for the server with every thread and process it starts. Never in the
//! measured rounds: sampling costs an interrupt every period, which would be
//! timed. One counting trial's split between layers moves by 15-20 points from
//! one trial to the next (where a timer interrupt lands relative to the loop), far
//! more than its sample count alone says, so every case runs several counting
//! trials (`COUNTING_ROUNDS` in the harness), and each layer's CPU time carries
//! the Student t interval of its mean over them ([`LayerTime`]).

pub(crate) mod collect;
pub(crate) mod events;
pub(crate) mod kallsyms;
pub(crate) mod layers;
pub(crate) mod sampler;
mod samples;
mod scale;
pub(crate) mod tracepoints;
mod trials;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

crate::named! {
    /// A kernel event counted per operation. The names are the keys of
    /// [`KernelAccount::events`] in result files.
    pub enum Event as "kernel event" {
        /// `raw_syscalls:sys_enter`.
        Syscalls = "syscalls",
        /// Packets handed to a network device: `net:net_dev_xmit`.
        PacketsSent = "packets_sent",
        /// Packets a device passed up the stack: `net:netif_receive_skb`. On
        /// loopback the receive softirq runs in the sender's context (raised by
        /// its `send`), so a packet counts as received on the side that sent it.
        PacketsReceived = "packets_received",
        /// `irq:softirq_entry` for NET_RX.
        NetRxSoftirqs = "net_rx_softirqs",
        /// `irq:softirq_entry` for NET_TX.
        NetTxSoftirqs = "net_tx_softirqs",
        /// Tasks woken: `sched:sched_waking`, counted on the waker.
        Wakeups = "wakeups",
        /// Socket buffers freed after use: `skb:consume_skb`.
        SkbConsumed = "skb_consumed",
        /// Socket buffers dropped or freed on an error path: `skb:kfree_skb`.
        SkbFreed = "skb_freed",
        /// Socket buffers copied to user space: `skb:skb_copy_datagram_iovec`.
        SkbCopies = "skb_copies",
        /// TCP segments received with data: `tcp:tcp_probe` with `data_len > 0`.
        TcpDataSegments = "tcp_data_segments",
        /// TCP segments received without data (pure ACKs): `tcp:tcp_probe` with
        /// `data_len == 0`.
        TcpPureAcks = "tcp_pure_acks",
    }
}

crate::named! {
    /// Where a sample's CPU time is attributed. The names are the keys
    /// of [`KernelAccount::layers`] in result files.
    pub enum Layer as "layer" {
        /// System-call entry and exit.
        Syscall = "syscall",
        /// The socket layer common to every family.
        Socket = "socket",
        /// Unix domain sockets.
        Unix = "unix",
        /// TCP.
        Tcp = "tcp",
        /// IP.
        Ip = "ip",
        /// The loopback device and the receive softirq.
        Loopback = "loopback",
        /// A container's links: the bridge and veth pairs.
        Bridge = "bridge",
        /// Netfilter's hooks: connection tracking and NAT.
        Netfilter = "netfilter",
        /// The scheduler: sleeping, waking, switching.
        Scheduler = "scheduler",
        /// Copying between user and kernel memory.
        Copy = "copy",
        /// TLS: user-space crypto (libssl, libcrypto).
        Tls = "tls",
        /// The rest of user space.
        User = "user",
        /// The rest of the kernel.
        OtherKernel = "other kernel",
    }
}

/// The kernel's account of one side's operations, per operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelAccount {
    /// Events per operation by [`Event`] name (the mean over the counting trials);
    /// an event this kernel does not offer is absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<String, f64>,
    /// Samples by [`Layer`] name, one count per counting trial, in the trials'
    /// order (every layer has as many as any other); samples inside perf's own
    /// functions (the cost of counting) are left out. A file from before counted
    /// one trial: a plain number.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "samples::per_trial"
    )]
    pub layer_samples: BTreeMap<String, Vec<u64>>,
    /// CPU time per operation by [`Layer`] name with its interval over the
    /// counting trials (filled in when the trials become a record).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub layers: BTreeMap<String, LayerTime>,
    /// Samples left out of `layer_samples` because their call chain was in perf's
    /// own functions (the tracepoint counters' cost), over all counting trials.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples_left_out: u64,
    /// Samples the kernel could not write, its buffers being full.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples_lost: u64,
}

/// One layer's CPU time per operation, ns: the mean over the counting trials of
/// the layer's share of that trial's samples times the side's CPU time per
/// operation in the measured rounds, and the 95% Student t interval of that mean
/// (`low` at least zero). No interval with fewer than two sampled trials, nor in
/// a file from before, where a layer was a plain number.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "samples::LayerTimeForm")]
pub struct LayerTime {
    pub ns: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
}

impl LayerTime {
    /// A figure without an interval.
    pub fn plain(ns: f64) -> LayerTime {
        LayerTime {
            ns,
            low: None,
            high: None,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl KernelAccount {
    /// Events per operation of `event`, when counted.
    pub fn event(&self, event: Event) -> Option<f64> {
        self.events.get(event.name()).copied()
    }

    /// CPU ns per operation in `layer` (the mean over the counting trials), when
    /// sampled.
    pub fn layer(&self, layer: Layer) -> Option<f64> {
        self.layer_time(layer).map(|t| t.ns)
    }

    /// `layer`'s CPU time per operation with its interval, when sampled.
    pub fn layer_time(&self, layer: Layer) -> Option<LayerTime> {
        self.layers.get(layer.name()).copied()
    }

    /// How many counting trials sampled this side.
    pub fn sampled_trials(&self) -> usize {
        self.layer_samples.values().map(Vec::len).max().unwrap_or(0)
    }

    /// CPU ns per operation by layer in each counting trial: the trial's share of
    /// its samples times the side's CPU time per operation (the sum of `layers`).
    /// Empty when the layers were not scaled, or a trial has no samples.
    pub fn trial_layers(&self) -> Vec<BTreeMap<Layer, f64>> {
        let cpu: f64 = self.layers.values().map(|t| t.ns).sum();
        if self.layers.is_empty() || cpu <= 0.0 {
            return Vec::new();
        }
        (0..self.sampled_trials())
            .map(|k| {
                let of = |n: &Vec<u64>| n.get(k).copied().unwrap_or(0);
                let total: u64 = self.layer_samples.values().map(of).sum();
                Layer::ALL
                    .into_iter()
                    .filter_map(|l| {
                        let n = of(self.layer_samples.get(l.name())?);
                        (total > 0).then(|| (l, cpu * n as f64 / total as f64))
                    })
                    .collect()
            })
            .take_while(|by: &BTreeMap<Layer, f64>| !by.is_empty())
            .collect()
    }
}

crate::named! {
    /// What made the samples: the PMU's cycle counter where the kernel offers one,
    /// else the kernel's timer. The names are the values of [`Why::clock`] in result
    /// files.
    pub enum Clock as "sampling clock" {
        /// `cycles` (`PERF_COUNT_HW_CPU_CYCLES`): the PMU's overflow interrupt is
        /// non-maskable, so a sample lands where the CPU was, interrupts on or off.
        Cycles = "cycles",
        /// `cpu-clock`, a timer interrupt: one due while interrupts are off is taken
        /// where they come back on, so time spent with interrupts off (waking a
        /// task, switching, the receive softirq's locks) is counted at the unlock
        /// that ends it, mostly in the scheduler.
        CpuClock = "cpu-clock",
    }
}

/// The kernel's account of one trial, client and server apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Why {
    pub client: KernelAccount,
    /// Absent for a server sockbench could not identify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<KernelAccount>,
    /// The tracepoints this kernel offered of those sockbench counts
    /// (`net:net_dev_xmit`, …).
    #[serde(default)]
    pub tracepoints: Vec<String>,
    /// What made the samples; absent without samples and in files from before
    /// (which sampled `cpu-clock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
}

impl Why {
    /// Client plus server events per operation of `event`, when counted on both
    /// (on the client alone when the server is unknown).
    pub fn total(&self, event: Event) -> Option<f64> {
        let client = self.client.event(event)?;
        match &self.server {
            Some(s) => Some(client + s.event(event)?),
            None => Some(client),
        }
    }

    /// CPU ns per operation by layer in each counting trial, client plus server;
    /// as many trials as both sides have.
    pub fn trial_layers(&self) -> Vec<BTreeMap<Layer, f64>> {
        let mut all = self.client.trial_layers();
        if let Some(server) = &self.server {
            let theirs = server.trial_layers();
            if !theirs.is_empty() {
                all.truncate(theirs.len());
                for (mine, theirs) in all.iter_mut().zip(theirs) {
                    for (layer, ns) in theirs {
                        *mine.entry(layer).or_default() += ns;
                    }
                }
            }
        }
        all
    }
}

#[cfg(test)]
mod tests;
