//! Which layer a `cpu-clock` sample's CPU time belongs to, from the kernel
//! functions on its call chain: [`TABLE`], the one place that maps function names
//! to layers.
//!
//! A chain is walked from the leaf (where the CPU was) toward the root; the first
//! frame the table names decides. So a frame the table does not name (a spin
//! lock, an allocator, a list helper) is charged to the nearest caller it does
//! name: `_raw_spin_lock` under `tcp_v4_rcv` is TCP, under `__schedule` the
//! scheduler. A chain with none of the table's names is "other kernel". Names are
//! matched without the compiler's suffixes (`.isra.0`, `.constprop.0`, `.cold`).
//!
//! Samples whose chain holds perf's own functions ([`Class::Perf`]: the
//! tracepoint counters' handlers, the cost of counting itself) are left out and
//! counted apart.
//!
//! NOTE: `bench/why-check.sh` parses this table from this file (each entry on one
//! line, `("pattern", Class::…)`) to apply it to `perf script`'s chains; keep that
//! shape.

use super::Layer;

/// What a function name says about a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The sample's CPU time belongs to this layer.
    In(Layer),
    /// perf's own work: the sample is left out.
    Perf,
}

/// Function names (exact, or a prefix when ending in `*`) and their class; within
/// one frame, the first entry that matches wins, so exact names come before the
/// prefixes they would otherwise fall under.
///
/// Choices worth knowing:
/// - Functions whose work on this path is waking the peer (`sock_def_readable`,
///   `unix_write_space`, `sk_stream_write_space`, `__wake_up*`) are the
///   scheduler: the wakeup runs with interrupts off, so its samples land on the
///   unlock that ends it, inside these callers.
/// - `exit_to_user_mode_loop` runs `schedule` and rseq's notification on the way
///   back to user space: the scheduler (`__rseq_*` too: it follows a migration or
///   preemption).
/// - The generic file path a `read`/`write` takes to reach a socket (`vfs_*`,
///   `ksys_*`, `fdget*`) is system-call entry; the security hooks on a socket
///   call (`security_socket_*`) are the socket layer.
/// - The receive softirq's own frames (`net_rx_action`, `process_backlog`,
///   `__netif_receive_skb*`) and the transmit path down to the device
///   (`__dev_queue_xmit`, `loopback_xmit`, `netif_rx*`) are the loopback device;
///   `handle_softirqs` and `__local_bh_enable_ip` are left to their callers.
/// - On a container's network, the bridge's and veth's own functions (`br_*`,
///   `veth_*`) are the bridge, and netfilter's (`nf_*`, `nft_*`, conntrack), NAT for
///   a published port included, netfilter; the device path they share with
///   loopback stays the loopback device's.
/// - Memory copies between user and kernel (`_copy_*_iter`, `copy_user_*`,
///   `rep_movs_alternative`, `memcpy`, `__check_object_size`, the checks of a
///   user copy) are memory copy wherever they are called from.
pub const TABLE: &[(&str, Class)] = &[
    // perf's own work, left out.
    ("perf_*", Class::Perf),
    ("__perf_*", Class::Perf),
    ("perf_trace_*", Class::Perf),
    ("perf_tp_event", Class::Perf),
    ("perf_swevent_*", Class::Perf),
    // Memory copy.
    ("_copy_to_iter", Class::In(Layer::Copy)),
    ("_copy_from_iter", Class::In(Layer::Copy)),
    ("copy_user_*", Class::In(Layer::Copy)),
    ("rep_movs_alternative", Class::In(Layer::Copy)),
    ("memcpy", Class::In(Layer::Copy)),
    ("memcpy_orig", Class::In(Layer::Copy)),
    ("__memcpy", Class::In(Layer::Copy)),
    ("copy_page_to_iter", Class::In(Layer::Copy)),
    ("copy_page_from_iter", Class::In(Layer::Copy)),
    ("simple_copy_to_iter", Class::In(Layer::Copy)),
    ("__check_object_size", Class::In(Layer::Copy)),
    ("check_heap_object", Class::In(Layer::Copy)),
    ("__check_heap_object", Class::In(Layer::Copy)),
    ("__virt_addr_valid", Class::In(Layer::Copy)),
    ("__put_user_*", Class::In(Layer::Copy)),
    ("__get_user_*", Class::In(Layer::Copy)),
    ("skb_copy_datagram_iter", Class::In(Layer::Copy)),
    ("skb_copy_datagram_from_iter", Class::In(Layer::Copy)),
    ("__skb_datagram_iter", Class::In(Layer::Copy)),
    // Waking the peer: the scheduler (see above).
    ("sock_def_readable", Class::In(Layer::Scheduler)),
    ("sock_def_write_space", Class::In(Layer::Scheduler)),
    ("unix_write_space", Class::In(Layer::Scheduler)),
    ("sk_stream_write_space", Class::In(Layer::Scheduler)),
    ("__wake_up*", Class::In(Layer::Scheduler)),
    ("autoremove_wake_function", Class::In(Layer::Scheduler)),
    ("woken_wake_function", Class::In(Layer::Scheduler)),
    ("default_wake_function", Class::In(Layer::Scheduler)),
    ("try_to_wake_up", Class::In(Layer::Scheduler)),
    ("ttwu_*", Class::In(Layer::Scheduler)),
    ("wake_up_*", Class::In(Layer::Scheduler)),
    // The scheduler: sleeping and switching.
    ("schedule", Class::In(Layer::Scheduler)),
    ("__schedule", Class::In(Layer::Scheduler)),
    ("schedule_timeout", Class::In(Layer::Scheduler)),
    ("finish_task_switch", Class::In(Layer::Scheduler)),
    ("__switch_to", Class::In(Layer::Scheduler)),
    ("__switch_to_asm", Class::In(Layer::Scheduler)),
    ("exit_to_user_mode_loop", Class::In(Layer::Scheduler)),
    ("__rseq_*", Class::In(Layer::Scheduler)),
    ("rseq_*", Class::In(Layer::Scheduler)),
    ("prepare_to_wait*", Class::In(Layer::Scheduler)),
    ("finish_wait", Class::In(Layer::Scheduler)),
    ("wait_woken", Class::In(Layer::Scheduler)),
    ("pick_next_task*", Class::In(Layer::Scheduler)),
    ("put_prev_task*", Class::In(Layer::Scheduler)),
    ("set_next_task*", Class::In(Layer::Scheduler)),
    ("enqueue_task*", Class::In(Layer::Scheduler)),
    ("dequeue_task*", Class::In(Layer::Scheduler)),
    ("select_task_rq*", Class::In(Layer::Scheduler)),
    ("update_curr", Class::In(Layer::Scheduler)),
    ("sched_*", Class::In(Layer::Scheduler)),
    ("psi_*", Class::In(Layer::Scheduler)),
    // The loopback device and the receive softirq.
    ("loopback_xmit", Class::In(Layer::Loopback)),
    ("__dev_queue_xmit", Class::In(Layer::Loopback)),
    ("dev_hard_start_xmit", Class::In(Layer::Loopback)),
    ("netif_rx*", Class::In(Layer::Loopback)),
    ("__netif_rx", Class::In(Layer::Loopback)),
    ("enqueue_to_backlog", Class::In(Layer::Loopback)),
    ("net_rx_action", Class::In(Layer::Loopback)),
    ("__napi_poll", Class::In(Layer::Loopback)),
    ("process_backlog", Class::In(Layer::Loopback)),
    ("__netif_receive_skb*", Class::In(Layer::Loopback)),
    ("netif_receive_skb*", Class::In(Layer::Loopback)),
    ("eth_type_trans", Class::In(Layer::Loopback)),
    ("skb_defer_free_flush", Class::In(Layer::Loopback)),
    // A container's network: the bridge and veth pairs, and netfilter's hooks
    // (conntrack and NAT for a published port), before IP's prefixes.
    ("br_*", Class::In(Layer::Bridge)),
    ("__br_*", Class::In(Layer::Bridge)),
    ("veth_*", Class::In(Layer::Bridge)),
    ("__veth_*", Class::In(Layer::Bridge)),
    ("nf_*", Class::In(Layer::Netfilter)),
    ("__nf_*", Class::In(Layer::Netfilter)),
    ("nft_*", Class::In(Layer::Netfilter)),
    ("__nft_*", Class::In(Layer::Netfilter)),
    ("ipv4_conntrack*", Class::In(Layer::Netfilter)),
    ("ipt_*", Class::In(Layer::Netfilter)),
    ("iptable_*", Class::In(Layer::Netfilter)),
    ("masquerade_*", Class::In(Layer::Netfilter)),
    // IP.
    ("ip_*", Class::In(Layer::Ip)),
    ("__ip_*", Class::In(Layer::Ip)),
    ("ipv4_*", Class::In(Layer::Ip)),
    ("raw_local_deliver", Class::In(Layer::Ip)),
    ("inet_*", Class::In(Layer::Ip)),
    ("__inet_*", Class::In(Layer::Ip)),
    ("neigh_*", Class::In(Layer::Ip)),
    ("dst_release", Class::In(Layer::Ip)),
    ("fib_*", Class::In(Layer::Ip)),
    // TCP.
    ("tcp_*", Class::In(Layer::Tcp)),
    ("__tcp_*", Class::In(Layer::Tcp)),
    ("tcp_v4_*", Class::In(Layer::Tcp)),
    ("bbr_*", Class::In(Layer::Tcp)),
    ("cubictcp_*", Class::In(Layer::Tcp)),
    ("bictcp_*", Class::In(Layer::Tcp)),
    ("minmax_running_*", Class::In(Layer::Tcp)),
    // Unix sockets.
    ("unix_*", Class::In(Layer::Unix)),
    ("scm_*", Class::In(Layer::Unix)),
    ("__scm_*", Class::In(Layer::Unix)),
    ("maybe_add_creds", Class::In(Layer::Unix)),
    // The socket layer common to every family.
    ("sock_*", Class::In(Layer::Socket)),
    ("__sock_*", Class::In(Layer::Socket)),
    ("sk_*", Class::In(Layer::Socket)),
    ("__sk_*", Class::In(Layer::Socket)),
    ("skb_*", Class::In(Layer::Socket)),
    ("__skb_*", Class::In(Layer::Socket)),
    ("kfree_skb*", Class::In(Layer::Socket)),
    ("__kfree_skb", Class::In(Layer::Socket)),
    ("consume_skb", Class::In(Layer::Socket)),
    ("__alloc_skb", Class::In(Layer::Socket)),
    ("alloc_skb_with_frags", Class::In(Layer::Socket)),
    ("kmalloc_reserve", Class::In(Layer::Socket)),
    ("release_sock", Class::In(Layer::Socket)),
    ("lock_sock_nested", Class::In(Layer::Socket)),
    ("__release_sock", Class::In(Layer::Socket)),
    ("__sys_sendto", Class::In(Layer::Socket)),
    ("__sys_recvfrom", Class::In(Layer::Socket)),
    ("__x64_sys_sendto", Class::In(Layer::Socket)),
    ("__x64_sys_recvfrom", Class::In(Layer::Socket)),
    ("security_socket_*", Class::In(Layer::Socket)),
    ("security_sock_*", Class::In(Layer::Socket)),
    ("security_sk_*", Class::In(Layer::Socket)),
    // System-call entry and exit, with the generic file path to a socket.
    ("entry_SYSCALL*", Class::In(Layer::Syscall)),
    ("do_syscall_64", Class::In(Layer::Syscall)),
    ("x64_sys_call", Class::In(Layer::Syscall)),
    ("syscall_exit_*", Class::In(Layer::Syscall)),
    ("syscall_trace_enter", Class::In(Layer::Syscall)),
    ("exit_to_user_mode*", Class::In(Layer::Syscall)),
    ("vfs_read", Class::In(Layer::Syscall)),
    ("vfs_write", Class::In(Layer::Syscall)),
    ("ksys_*", Class::In(Layer::Syscall)),
    ("__x64_sys_*", Class::In(Layer::Syscall)),
    ("fdget*", Class::In(Layer::Syscall)),
    ("__fget_light", Class::In(Layer::Syscall)),
    ("fput", Class::In(Layer::Syscall)),
    ("rw_verify_area", Class::In(Layer::Syscall)),
    ("security_file_permission", Class::In(Layer::Syscall)),
];

/// A function name without the compiler's suffixes (`.isra.0`, `.cold`).
fn base(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// The class [`TABLE`] gives function `name`, if any.
pub fn class_of(name: &str) -> Option<Class> {
    let name = base(name);
    TABLE.iter().find_map(|(pattern, class)| {
        let hit = match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *pattern,
        };
        hit.then_some(*class)
    })
}

/// The class of a kernel call chain, leaf first: [`Class::Perf`] when any frame is
/// perf's own, else the layer of the first frame the table names, else other
/// kernel.
pub fn classify<'a>(frames: impl IntoIterator<Item = &'a str> + Clone) -> Class {
    let classes = || frames.clone().into_iter().filter_map(class_of);
    if classes().any(|c| c == Class::Perf) {
        return Class::Perf;
    }
    classes().next().unwrap_or(Class::In(Layer::OtherKernel))
}
