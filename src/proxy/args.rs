//! The `proxy` command's arguments as clap sees them; `plan.rs` validates them.

use super::plan::AppServerKind;
use super::Experiment;
use crate::plan::Measuring;
use crate::transport::Transport;
use clap::Args;

#[derive(Debug, Default, Args)]
#[command(after_help = "Examples:\n  \
    sockbench proxy --quick\n  \
    sockbench proxy --experiments request --sizes 0,4KiB,64KiB,1MiB\n  \
    sockbench proxy --transports unix,tcp --proxy-workers 2\n  \
    sockbench proxy --experiments concurrent,overload -c 200 --app-backlog 16\n  \
    sockbench proxy --app-server gunicorn --app-workers 2\n  \
    sockbench proxy --upstream unix:/run/app/app.sock --upstream 127.0.0.1:8000 --path /health\n  \
    sockbench proxy --app 'gunicorn -w 2 -b unix:{socket} -b {host}:{port} myapp:app' \
    --path /items\n\n\
    sockbench starts a throwaway nginx (as www-data, else nobody; listening on 127.0.0.1 \
    only, no access log, its configuration in a private directory) in front of its own \
    small HTTP/1.1 app server (GET /?size=N answers N bytes), which listens on a Unix \
    socket, on 127.0.0.1 and with TLS on 127.0.0.1 (a certificate made in memory; nginx \
    reuses its TLS sessions). The client reaches nginx over TCP, as a browser would; what \
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
    (nginx, master and workers) and app.\n\n\
    Your own app server: --upstream puts one that runs (on this machine: a Unix socket, \
    127.0.0.1, or tls:127.0.0.1) behind the throwaway nginx, a column per --upstream, named \
    by NAME= or by what it reaches; it is only read, never pinned. --app has sockbench \
    start your command once per transport, through /bin/sh as 'exec CMD' (a program and its \
    arguments; env VAR=VALUE first to set a variable: only PATH is passed), as nginx's \
    account, in the directory sockbench runs in, with {socket} (a Unix socket's path in a \
    private directory), {host} and {port} (a free port on 127.0.0.1) filled in and the \
    other transport's option left out (the word with it, and an option word before it), \
    and stops it and all it started after (a PID namespace of its own). Both ask for --path (default /) and take \
    whatever body it answers; overload needs an app server sockbench starts with a small \
    backlog, so it is not run on yours.")]
pub struct ProxyArgs {
    /// Transports of the hop from nginx to the app server, comma-separated (unix,
    /// tcp, tls) [default: unix,tcp,tls; with --app-server gunicorn or --app:
    /// unix,tcp; with --upstream, each --upstream is a column instead].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<Transport>>,

    /// Experiments to run, comma-separated (request, keepalive, direct, connect,
    /// concurrent, overload) [default: all; on your app server (--upstream, --app)
    /// all but overload].
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

    /// The app server sockbench starts behind nginx: sockbench (its own, on
    /// hyper: GET /?size=N) or gunicorn (Debian's, sync workers, running a WSGI
    /// app of a few lines that answers the same) [default: sockbench].
    #[arg(long = "app-server", value_name = "KIND")]
    pub app_server: Option<AppServerKind>,

    /// gunicorn's sync workers, with --app-server gunicorn [default: 1].
    #[arg(long = "app-workers", value_name = "N")]
    pub app_workers: Option<u32>,

    /// Your running app server, put behind the throwaway nginx:
    /// [NAME=]unix:/PATH, [NAME=]127.0.0.1:PORT or [NAME=]tls:127.0.0.1:PORT (this
    /// machine only); repeatable, a column each.
    #[arg(long = "upstream", value_name = "[NAME=]ADDRESS")]
    pub upstreams: Vec<String>,

    /// Your app server's command, which sockbench starts once per transport (as
    /// nginx's account, in a private directory) and stops after: {socket},
    /// {host} and {port} are replaced by where it is to listen.
    #[arg(long = "app", value_name = "CMD")]
    pub app: Option<String>,

    /// The path asked of your app server (--upstream, --app), a query included
    /// [default: /].
    #[arg(long = "path", value_name = "PATH")]
    pub path: Option<String>,
}
