//! Why an operation costs what it does, in the kernel's own words: how many times
//! each kernel event fired per operation (system calls, packets through the
//! loopback device, receive softirqs, wakeups, socket buffers, TCP segments), from
//! tracepoints counted with `perf_event_open`, and where its CPU time went by layer
//! (system-call entry, socket layer, Unix sockets, TCP, IP, loopback device,
//! scheduler, memory copy, TLS, the rest of user space, other kernel), from
//! `cpu-clock` samples with kernel call chains symbolised from `/proc/kallsyms`.
//!
//! Both run only in the counting trial, next to the CPU counters, for the client
//! and for the server with every thread and process it starts.

pub mod collect;
pub mod events;
pub mod kallsyms;
pub mod layers;
pub mod sampler;
mod scale;
pub mod tracepoints;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

crate::named! {
    /// A kernel event counted per operation. The names are the keys of
    /// [`Account::events`] in result files.
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
    /// Where a `cpu-clock` sample's CPU time is attributed. The names are the keys
    /// of [`Account::layers`] in result files.
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
pub struct Account {
    /// Events per operation by [`Event`] name; an event this kernel does not offer
    /// is absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<String, f64>,
    /// `cpu-clock` samples by [`Layer`] name, as counted in the counting trial;
    /// samples inside perf's own functions (the cost of counting) are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub layer_samples: BTreeMap<String, u64>,
    /// CPU time per operation by [`Layer`] name, ns: each layer's share of
    /// `layer_samples` times the side's CPU time per operation in the measured
    /// rounds (filled in when the trials become a record).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub layers: BTreeMap<String, f64>,
    /// `cpu-clock` samples left out of `layer_samples` because their call chain
    /// was in perf's own functions (the tracepoint counters' cost).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples_left_out: u64,
    /// Samples the kernel could not write, its buffers being full.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples_lost: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Account {
    /// Events per operation of `event`, when counted.
    pub fn event(&self, event: Event) -> Option<f64> {
        self.events.get(event.name()).copied()
    }

    /// CPU ns per operation in `layer`, when sampled.
    pub fn layer(&self, layer: Layer) -> Option<f64> {
        self.layers.get(layer.name()).copied()
    }
}

/// The kernel's account of one trial, client and server apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Why {
    pub client: Account,
    /// Absent for a server sockbench could not identify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Account>,
    /// The tracepoints this kernel offered of those sockbench counts
    /// (`net:net_dev_xmit`, …).
    #[serde(default)]
    pub tracepoints: Vec<String>,
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
}

#[cfg(test)]
mod tests;
