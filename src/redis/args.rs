//! The `redis` command's arguments as clap sees them; `plan.rs` validates them.
//! The letters are redis-benchmark's where it has one: `-c` clients, `-d` value
//! size, `-P` pipeline depth.

use super::Experiment;
use crate::plan::Measuring;
use crate::transport::Transport;
use clap::Args;

#[derive(Debug, Default, Args)]
#[command(after_help = "Examples:\n  \
    sockbench redis --quick\n  \
    sockbench redis --experiments get,pipeline -d 64,1KiB -P 32\n  \
    sockbench redis --experiments concurrent -c 100\n  \
    sockbench redis --url redis://:PASSWORD@127.0.0.1:6379 --url unix:///run/redis/redis.sock\n\n\
    Without --url, sockbench starts a throwaway redis-server as an unprivileged account, in \
    a private directory, with a random password (an ACL user allowed only the commands \
    measured), no persistence, a Unix socket, a port on 127.0.0.1 and a TLS port, and \
    removes it afterwards.\n\
    Experiments: ping (PING round trips), get (GET round trips by value size), pipeline \
    (GETs of 64 B sent -P at a time), connect (connect, AUTH, PING, close), concurrent (-c \
    clients doing GETs of 64 B at once). A GET reads a key sockbench SETs first \
    (sockbench:value:SIZE, expiring after ten minutes).")]
pub struct RedisArgs {
    /// Transports to compare, comma-separated (unix, tcp, tls) [default: unix,tcp,tls].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<Transport>>,

    /// Experiments to run, comma-separated [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub experiments: Option<Vec<Experiment>>,

    #[command(flatten)]
    pub measuring: Measuring,

    /// GET value sizes, comma-separated, as redis-benchmark's -d (B, KiB, MiB; 1 B to
    /// 1 MiB) [default: 64,4KiB,64KiB].
    #[arg(
        short = 'd',
        long = "sizes",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub sizes: Option<Vec<String>>,

    /// GETs sent together in the pipeline experiment, as redis-benchmark's -P
    /// [default: 16].
    #[arg(short = 'P', long = "pipeline", value_name = "N")]
    pub pipeline: Option<u32>,

    /// Clients at once in the concurrent experiment, as redis-benchmark's -c
    /// [default: 50].
    #[arg(short = 'c', long, value_name = "N")]
    pub clients: Option<u32>,

    /// Measure your Redis server instead of a throwaway one: [NAME=]URL, with URL
    /// redis://[USER:PASSWORD@]HOST[:PORT][/DB], rediss://… (TLS; the certificate is
    /// not verified) or unix://[USER:PASSWORD@]/path/to/redis.sock[?db=N]; HOST must be
    /// this machine (127.0.0.1, ::1, localhost). Without a password in the URL, the one
    /// in REDISCLI_AUTH is used, as redis-cli does. Repeatable, one per transport or name.
    #[arg(long = "url", value_name = "[NAME=]URL")]
    pub urls: Vec<String>,
}
