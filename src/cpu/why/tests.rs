//! The kernel's account against loops whose counts are known: system calls of a
//! loop of `getppid`, packets of a Unix and a TCP pingpong, and the layer table on
//! chains seen on this kind of machine. Skipped, with the reason printed, where
//! tracepoints are not permitted (not root).

use super::collect::Collector;
use super::layers::{classify, Class};
use super::{Event, Layer, Why};
use std::io::{Read, Write};

/// The account of `ops` operations of `work`, or `None` (with the reason printed)
/// where it cannot be collected.
fn account(ops: u64, work: impl FnOnce()) -> Option<Why> {
    let Some(mut collector) = Collector::open(&[]) else {
        // As root, tracepoints and sampling are permitted: not opening is a failure.
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_ne!(euid, 0, "the kernel's account did not open as root");
        eprintln!("skipped: tracepoints are not permitted here (not root)");
        return None;
    };
    collector.start();
    work();
    collector.end();
    Some(collector.finish(ops))
}

/// `ops` round trips of 64 bytes over `client`, echoed by a thread started after
/// the collector opened (so both ends are counted, as the client's).
fn pingpong<S: Read + Write + Send + 'static>(mut client: S, mut server: S, ops: u64) {
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        for _ in 0..ops {
            server.read_exact(&mut buf).unwrap();
            server.write_all(&buf).unwrap();
        }
    });
    let mut buf = [7u8; 64];
    for _ in 0..ops {
        client.write_all(&buf).unwrap();
        client.read_exact(&mut buf).unwrap();
    }
    echo.join().unwrap();
}

#[test]
fn a_loop_of_getppid_makes_one_system_call_per_operation() {
    const OPS: u64 = 20_000;
    let Some(why) = account(OPS, || {
        for _ in 0..OPS {
            // SAFETY: getppid has no preconditions.
            std::hint::black_box(unsafe { libc::getppid() });
        }
    }) else {
        return;
    };
    let syscalls = why.client.event(Event::Syscalls).expect("syscalls counted");
    assert!(
        (syscalls - 1.0).abs() < 0.03,
        "{syscalls} system calls per getppid"
    );
    assert_eq!(why.client.event(Event::PacketsSent), Some(0.0));
}

#[test]
fn a_unix_socket_sends_no_packets_and_tcp_more_than_one_per_round_trip() {
    const OPS: u64 = 2_000;
    let unix = account(OPS, || {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        pingpong(a, b, OPS);
    });
    let Some(unix) = unix else {
        return;
    };
    let tcp = account(OPS, || {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (b, _) = listener.accept().unwrap();
        a.set_nodelay(true).unwrap();
        b.set_nodelay(true).unwrap();
        pingpong(a, b, OPS);
    })
    .unwrap();
    assert_eq!(unix.client.event(Event::PacketsSent), Some(0.0));
    let packets = tcp.client.event(Event::PacketsSent).unwrap();
    assert!(packets > 1.0, "{packets} packets per tcp round trip");
    // Each round trip writes twice and reads twice, at the least.
    let syscalls = unix.client.event(Event::Syscalls).unwrap();
    assert!(
        (4.0..4.5).contains(&syscalls),
        "{syscalls} system calls per round trip"
    );
    let data = tcp.client.event(Event::TcpDataSegments).unwrap();
    assert!(
        (data - 2.0).abs() < 0.05,
        "{data} data segments per round trip"
    );
    // Every sample lands in a layer, and the kernel ones in named layers.
    // One trial: one count per layer.
    assert!(tcp.client.layer_samples.values().all(|n| n.len() == 1));
    let samples: u64 = tcp.client.layer_samples.values().flatten().sum();
    let other: u64 = tcp
        .client
        .layer_samples
        .get("other kernel")
        .map_or(0, |n| n.iter().sum());
    assert!(samples > 0, "no samples");
    assert!(
        other * 10 < samples,
        "{other} of {samples} samples in other kernel"
    );
    assert!(tcp.client.layer_samples.contains_key("tcp"));
    assert!(!unix.client.layer_samples.contains_key("tcp"));
    assert!(unix.client.layer_samples.contains_key("user"));
    // What made the samples is said.
    assert_eq!(tcp.clock, Some(super::sampler::chosen()));
}

#[test]
fn the_layer_table_classifies_chains_from_the_leaf() {
    let class = |chain: &str| classify(chain.split(' '));
    let layer = Class::In;
    assert_eq!(
        class("_raw_spin_lock tcp_v4_rcv ip_local_deliver_finish __netif_receive_skb_one_core"),
        layer(Layer::Tcp)
    );
    assert_eq!(
        class("rep_movs_alternative _copy_from_iter tcp_sendmsg_locked"),
        layer(Layer::Copy)
    );
    assert_eq!(
        class("_raw_spin_unlock_irqrestore unix_write_space sock_wfree skb_release_head_state"),
        layer(Layer::Scheduler)
    );
    assert_eq!(
        class("finish_task_switch.isra.0 __schedule schedule schedule_timeout"),
        layer(Layer::Scheduler)
    );
    assert_eq!(class("ip_finish_output2 __ip_queue_xmit"), layer(Layer::Ip));
    assert_eq!(
        class("loopback_xmit dev_hard_start_xmit"),
        layer(Layer::Loopback)
    );
    assert_eq!(
        class("unix_stream_sendmsg sock_write_iter vfs_write"),
        layer(Layer::Unix)
    );
    assert_eq!(
        class("sock_write_iter vfs_write ksys_write"),
        layer(Layer::Socket)
    );
    assert_eq!(
        class("do_syscall_64 entry_SYSCALL_64_after_hwframe"),
        layer(Layer::Syscall)
    );
    assert_eq!(
        class("clear_page_erms do_anonymous_page"),
        layer(Layer::OtherKernel)
    );
    assert_eq!(
        class("perf_tp_event perf_trace_sched_waking try_to_wake_up"),
        Class::Perf
    );
}

#[test]
fn samples_cpu_lists_and_crypto_mappings_are_read() {
    use super::sampler::{crypto_ranges_in, parse_cpu_list, Sample};
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&0xffff_ffff_8100_0010u64.to_ne_bytes());
    bytes.extend_from_slice(&42u32.to_ne_bytes());
    bytes.extend_from_slice(&43u32.to_ne_bytes());
    bytes.extend_from_slice(&2u64.to_ne_bytes());
    bytes.extend_from_slice(&(-128i64 as u64).to_ne_bytes());
    bytes.extend_from_slice(&0xffff_ffff_8100_0010u64.to_ne_bytes());
    let sample = Sample::parse(&bytes).unwrap();
    assert_eq!((sample.pid, sample.chain.len()), (42, 2));
    assert_eq!(Sample::parse(&bytes[..30]), None);
    assert_eq!(parse_cpu_list("0-2,5\n"), [0, 1, 2, 5]);
    let maps = "\
7f00-7f10 r-xp 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libssl.so.3
7f20-7f30 r-xp 00000000 08:01 13 /usr/lib/x86_64-linux-gnu/libk5crypto.so.3
7f40-7f50 r-xp 00000000 08:01 14 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
7f60-7f70 rw-p 00000000 00:00 0
";
    assert_eq!(crypto_ranges_in(maps), [(0x7f00, 0x7f10), (0x7f40, 0x7f50)]);
}
