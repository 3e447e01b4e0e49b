//! The `sockets` command's arguments as clap sees them; `plan.rs` validates them.

use super::Experiment;
use crate::plan::Measuring;
use crate::transport::{Endpoint, TlsVersion, Transport};
use clap::Args;

#[derive(Debug, Default, Args)]
#[command(after_help = "Examples:\n  \
    sockbench sockets --quick --json out.json\n  \
    sockbench sockets --transports unix,unix-abstract,tcp,tcp6,tls --workloads connect\n  \
    sockbench sockets --workloads concurrent --clients 16\n  \
    sockbench sockets --workloads stream -t 5 -P 4 --write-sizes 128KiB\n  \
    sockbench sockets --server unix:/tmp/sb.sock --server tcp:127.0.0.1:7000\n  \
    sockbench sockets --transports unix,unix-dgram,unix-seqpacket,udp,tcp\n  \
    sockbench sockets --transports unix-dgram,udp --workloads messages --receive-buffer 4KiB\n\n\
    Transports: unix (socket file), unix-abstract (Linux abstract namespace), tcp \
    (127.0.0.1), tcp6 (::1), tls (TCP 127.0.0.1 with TLS; the client encrypts without \
    verifying the certificate, like libpq's sslmode=require); sockets that keep each \
    message whole: unix-seqpacket (SOCK_SEQPACKET: a connection of records), unix-dgram \
    and unix-dgram-abstract (SOCK_DGRAM: the sender waits while the receiver is full), \
    udp (127.0.0.1) and udp6 (::1) (connected sockets; a message that finds the receiver \
    full is dropped), udp-unconnected (127.0.0.1, every send names its peer: sendto).\n\
    Workloads: connect (connect, read a 12-byte greeting, close; not on datagram \
    sockets), pingpong (round trips on one connection or datagram session), stream \
    (bulk bytes one way, on one connection or on -P at once; stream sockets only), \
    concurrent (many clients doing 64-byte round trips at once), messages (messages one \
    way as fast as the sender can: received per second and the share lost; not over \
    tls; run by default when a transport keeps messages whole).")]
pub struct SocketsArgs {
    /// Transports to compare, comma-separated [default: unix,tcp,tls].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<Transport>>,

    /// Workloads to run, comma-separated [default: connect,pingpong,stream, and
    /// messages where a transport keeps messages whole; each where it means
    /// something].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub workloads: Option<Vec<Experiment>>,

    #[command(flatten)]
    pub measuring: Measuring,

    /// Pingpong message sizes, comma-separated (B, KiB, MiB; 1 B to 1 MiB)
    /// [default: 64,4KiB,64KiB; with udp 64,4KiB,65507: the largest one UDP
    /// datagram carries].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub sizes: Option<Vec<String>>,

    /// Stream write sizes, comma-separated (B, KiB, MiB; 1 B to 1 MiB)
    /// [default: 4KiB,64KiB].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub write_sizes: Option<Vec<String>>,

    /// How long each stream trial streams, as iperf3's -t: 10, 2.5s, 500ms
    /// [default: 2 s, or 0.15 s with --quick, or until 1 GiB (96 MiB) came first].
    /// The rounds repeat it, transports in turn.
    #[arg(short = 't', long = "time", value_name = "SECONDS", value_parser = crate::units::parse_duration)]
    pub time: Option<std::time::Duration>,

    /// Connections streaming at once in the stream workload, as iperf3's -P; the
    /// throughput is their total [default: 1].
    #[arg(short = 'P', long = "parallel", value_name = "N")]
    pub parallel: Option<u32>,

    /// Message sizes of the messages workload, comma-separated (B, KiB, MiB)
    /// [default: 64,1KiB].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub message_sizes: Option<Vec<String>>,

    /// The receive buffer the messages workload's receiver asks for (SO_RCVBUF;
    /// the kernel doubles it, and keeps at least about 2 KiB) [default: the
    /// system's, net.core.rmem_default].
    #[arg(long, value_name = "SIZE")]
    pub receive_buffer: Option<String>,

    /// Clients running at once in the concurrent workload [default: 8].
    #[arg(long, value_name = "N")]
    pub clients: Option<u32>,

    /// TLS protocol version the client asks for [default: 1.3].
    #[arg(long, value_name = "1.2|1.3")]
    pub tls_version: Option<TlsVersion>,

    /// Measure a running `sockbench serve` at ADDR instead of starting a server
    /// (repeatable; replaces --transports).
    #[arg(long = "server", value_name = "ADDR")]
    pub servers: Vec<Endpoint>,
}
