//! The `proxy` command's arguments as clap sees them; `plan.rs` validates them.

use super::Experiment;
use crate::plan::Measuring;
use crate::transport::Transport;
use clap::Args;

#[derive(Debug, Default, Args)]
#[command(after_help = "Examples:\n  \
    sockbench proxy --quick\n  \
    sockbench proxy --experiments request --sizes 0,4KiB,64KiB,1MiB\n  \
    sockbench proxy --transports unix,tcp --proxy-workers 2\n  \
    sockbench proxy --experiments concurrent,overload -c 200 --app-backlog 16\n\n\
    sockbench starts a throwaway nginx (as www-data, else nobody; listening on 127.0.0.1 \
    only, no access log, its configuration in a private directory) in front of its own \
    small HTTP/1.1 app server (GET /?size=N answers N bytes), which listens on a Unix \
    socket and on 127.0.0.1. The client reaches nginx over TCP, as a browser would; what \
    is compared is the hop from nginx to the app server: a column per transport.\n\
    Experiments: request (through nginx with upstream keepalive on, by response size), \
    keepalive (through nginx with upstream keepalive on and off, a new upstream connection \
    per request, 0 B responses), direct (the client straight to the app server over the \
    same transports: what nginx itself costs), connect (a new connection to nginx per \
    request, as ab without -k), concurrent (-c keep-alive connections at once, as wrk -c), \
    overload (-c connections at once through nginx without upstream keepalive to a second \
    app server whose listen backlog is --app-backlog: the requests that fail, which nginx \
    answers 502 at once over a Unix socket whose backlog is full, and 504 over TCP after \
    waiting 50 ms for a connection; they are counted apart, never in the 2xx rate). The last \
    three take the smallest size. The server side's CPU is shown role by role: proxy \
    (nginx, master and workers) and app.")]
pub struct ProxyArgs {
    /// Transports of the hop from nginx to the app server, comma-separated (unix,
    /// tcp) [default: unix,tcp].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<Transport>>,

    /// Experiments to run, comma-separated (request, keepalive, direct, connect,
    /// concurrent, overload) [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub experiments: Option<Vec<Experiment>>,

    #[command(flatten)]
    pub measuring: Measuring,

    /// Response body sizes, comma-separated (B, KiB, MiB; 0 B to 1 MiB); connect,
    /// concurrent and overload take the smallest [default: 0,4KiB,64KiB; with
    /// --quick 0,4KiB].
    #[arg(long = "sizes", value_delimiter = ',', value_name = "LIST")]
    pub sizes: Option<Vec<String>>,

    /// nginx worker processes [default: 1].
    #[arg(long = "proxy-workers", value_name = "N")]
    pub workers: Option<u32>,

    /// Keep-alive connections to nginx at once in the concurrent and overload
    /// experiments, as wrk's -c [default: 50].
    #[arg(short = 'c', long, value_name = "N")]
    pub connections: Option<u32>,

    /// The listen backlog of the app server behind nginx in the overload
    /// experiment: connections that may wait for it to accept them (the kernel
    /// lets one more wait) [default: 8].
    #[arg(long = "app-backlog", value_name = "N")]
    pub app_backlog: Option<u32>,
}
