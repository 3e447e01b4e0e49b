//! The `postgres` command's arguments as clap sees them; `plan.rs` validates them.

use super::experiment::{Budget, Experiment};
use super::hba::AuthMethod;
use super::libpq::Protocol;
use super::targets::{NamedUrl, UrlArg};
use crate::plan::Measuring;
use crate::units::format_count;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Default, Args)]
#[command(after_help = "Examples:\n  \
    sockbench postgres --quick --json out.json\n  \
    sockbench postgres --experiments query,rows --transports unix,tcp,tls,tcp6\n  \
    sockbench postgres --server postgres://foo@127.0.0.1:5432/foo\n  \
    sockbench postgres --url postgres://foo@127.0.0.1:5432/foo?sslmode=require\n  \
    sockbench postgres --url 'host=/var/run/postgresql port=5432 user=foo'\n  \
    PGHOST=127.0.0.1 PGPORT=5432 PGUSER=foo sockbench postgres -M prepared\n  \
    sockbench postgres --experiments concurrent -c 10 -j 2 -T 10 -f bench.sql\n  \
    sockbench postgres --experiments concurrent -c 10 -R 2000 -L 5 -P 1\n  \
    sockbench postgres --auth-url trust=postgres://foo@127.0.0.1/foo \\\n      \
    --auth-url scram-sha-256=postgres://foo@127.0.0.1/foo\n\n\
    Passwords: keep them out of the URL. A command line is visible to every local user \
    (ps, /proc) while it runs; libpq, as psql does, takes the password from PGPASSWORD, \
    from ~/.pgpass, or from the file PGPASSFILE (or passfile=FILE in the URI) names. A \
    password given in a URL anyway is hidden from the result file and from messages.\n\n\
    Without --url, --server or a PG* variable naming a server, sockbench creates a throwaway cluster (initdb into a private temporary \
    directory, as the 'postgres' or 'nobody' account when run as root), listening on \
    127.0.0.1 and a Unix socket with TLS on, and removes it when done. Role and database \
    'foo' with a random password are created there; authentication is switched between \
    methods only on that cluster. Other local users can reach its loopback port (and its \
    abstract socket, made only when unix-abstract is measured) while it runs, so those \
    admit only 'foo', which is no superuser; the superuser is admitted only on the private \
    socket directory and only for your own account (peer authentication). A run that is \
    killed leaves its directory behind; the next run removes it.\n\
    With --url or --server, the named servers are only read: nothing in their configuration \
    changes. Without either, when PGHOST, PGHOSTADDR, PGPORT or PGSERVICE is set, the server \
    they name has its transports compared as with --server, reached as libpq would reach \
    it (with PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE, …); the throwaway cluster is made only when none of the four is \
    set, and never reads any PG* variable. A URL named unix, tcp or tls must reach the \
    server that way (a tcp URL that negotiates TLS is refused: add sslmode=disable).\n\n\
    Experiments: query (N sequential SELECT 1 on one connection; time per query by \
    least-squares fit), connect (connect + SELECT 1 + close, phase by phase; role foo \
    logs in by md5 on every transport of the throwaway cluster, as no other local account \
    may reach it), auth (the same per authentication method; the cost over trust, which \
    is offered only over the private Unix socket), rows \
    (SELECT * FROM generate_series(1,N), every value read; time per row by fit), \
    concurrent (clients running a script at once on a few threads, like pgbench -c -j -T; \
    transactions/s and latency percentiles; with --rate, the latency at that rate).\n\n\
    pgbench's options keep pgbench's letters and meaning: -c -j -T (a plain number is \
    seconds) -C -f -D -M -R -L -P -r.")]
pub struct PostgresArgs {
    /// Experiments to run, comma-separated [default: query,connect,auth,rows,concurrent].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub experiments: Option<Vec<Experiment>>,

    /// Transports of the throwaway cluster, comma-separated (unix, unix-abstract, tcp,
    /// tcp6, tls; as root, into a second cluster in a container's network: veth,
    /// bridge, published, docker-proxy, unix-shared) [default: unix,tcp,tls].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<crate::transport::Transport>>,

    #[command(flatten)]
    pub measuring: Measuring,

    /// Query counts N for the query experiment, comma-separated [default: see
    /// `with_defaults`].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub queries: Option<Vec<String>>,

    /// Row counts N for the rows experiment, comma-separated [default: see
    /// `with_defaults`].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rows: Option<Vec<String>>,

    /// Most connections per trial in connect and auth [default: see `with_defaults`].
    #[arg(long, value_name = "N")]
    pub connections: Option<u64>,

    /// Authentication methods the auth experiment compares on the throwaway cluster
    /// [default: trust,password,md5,scram-sha-256,peer; trust only over unix, and not
    /// with unix-abstract, as any local account could connect by it elsewhere].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub auth_methods: Option<Vec<AuthMethod>>,

    /// Concurrent clients (pgbench -c); a list (e.g. 1,2,4,8,16) runs a sweep [default:
    /// 10].
    #[arg(short = 'c', long, value_delimiter = ',', value_name = "LIST")]
    pub clients: Option<Vec<u32>>,

    /// Client threads driving the concurrent clients (pgbench -j) [default: the number
    /// of cores].
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<u32>,

    /// Measured time of each concurrent run (pgbench -T) [default: see `with_defaults`].
    #[arg(short = 'T', long, value_name = "TIME")]
    pub duration: Option<String>,

    /// The transaction of the concurrent clients (pgbench -f): a file of SQL commands,
    /// each ending with ';', run one after the other, with pgbench's \set NAME EXPR
    /// (integer arithmetic and random(a, b)) and :NAME in the SQL; other meta-commands
    /// are refused [default: SELECT 1].
    #[arg(short = 'f', long, value_name = "FILE")]
    pub script: Option<PathBuf>,

    /// Sets a script variable (pgbench -D), an integer; :scale is 1 unless given
    /// (repeatable).
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,

    /// Open and close a connection for every transaction (pgbench -C).
    #[arg(short = 'C', long)]
    pub connect_per_transaction: bool,

    /// How queries are sent in the query and concurrent experiments (pgbench -M):
    /// simple (one message, parsed each time), extended (parse, bind, execute an
    /// unnamed statement each time) or prepared (prepared once per connection)
    /// [default: simple].
    #[arg(short = 'M', long, value_name = "MODE")]
    pub protocol: Option<Protocol>,

    /// Run the concurrent clients at a fixed rate of TPS transactions per second in
    /// all (pgbench -R), started on a Poisson schedule; latency counts from each
    /// transaction's scheduled start, so a slow server cannot hide its queue, and the
    /// verdict compares latency instead of throughput.
    #[arg(short = 'R', long, value_name = "TPS")]
    pub rate: Option<u64>,

    /// Count the transactions that take longer than MS milliseconds (pgbench -L); with
    /// --rate, a transaction already later than that when it would start is skipped
    /// and counted.
    #[arg(short = 'L', long, value_name = "MS")]
    pub latency_limit: Option<f64>,

    /// Print progress every N seconds during each concurrent run on stderr (pgbench -P):
    /// transactions/s, latency mean and stddev, and with --rate the schedule lag.
    #[arg(short = 'P', long, value_name = "N")]
    pub progress: Option<u32>,

    /// Report the mean latency of each SQL command of the script in the concurrent
    /// experiment (pgbench -r); they are rows of the full tables, which it prints
    /// as --tables does.
    #[arg(short = 'r', long)]
    pub report_per_command: bool,

    /// Directory holding PostgreSQL's initdb and postgres [default: from pg_config, then
    /// the newest /usr/lib/postgresql/*/bin, then PATH].
    #[arg(long, value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,

    /// Measure the user's server at URI instead of a throwaway cluster (repeatable): a
    /// URI or a key=value connection string as psql takes it, under the name NAME, or
    /// without NAME= under what it reaches (unix, tcp, tls). A name that is a libpq
    /// keyword (host, user, …) goes only before a postgres:// URI.
    #[arg(long = "url", value_name = "[NAME=]URI")]
    pub urls: Vec<UrlArg>,

    /// Compare the transports of the user's server at URI: asks it where it listens and
    /// measures the same database and user over its Unix socket (unix), over TCP with
    /// sslmode=disable (tcp) and with sslmode=require (tls), skipping what it does not
    /// offer or refuses. A role that may not read unix_socket_directories gets the
    /// socket found in /var/run/postgresql, /run/postgresql or /tmp, or through the
    /// server's postmaster.pid, kept only when it answers as the same server.
    #[arg(long, value_name = "URI", conflicts_with = "urls")]
    pub server: Option<String>,

    /// Run the auth experiment on the user's server for METHOD, reached as URI (whose
    /// server must be set up for that method; repeatable).
    #[arg(long = "auth-url", value_name = "METHOD=URI")]
    pub auth_urls: Vec<NamedUrl>,
}

/// The `postgres` command, its `--help` stating the defaults of this build's budgets.
pub fn with_defaults(command: clap::Command) -> clap::Command {
    let (full, quick) = (Budget::full(), Budget::quick());
    let counts = |n: &[u64]| {
        n.iter()
            .map(|&n| format_count(n))
            .collect::<Vec<_>>()
            .join(",")
    };
    let seconds = |d: std::time::Duration| format!("{}s", d.as_secs_f64());
    let about = "PostgreSQL experiments on a throwaway cluster, or on servers given by URL";
    Measuring::with_defaults(command)
        .about(about)
        .mut_arg("queries", |a| {
            a.help(format!(
                "Query counts N for the query experiment, comma-separated [default: {}; {} \
                 with --quick]",
                counts(&full.queries),
                counts(&quick.queries)
            ))
        })
        .mut_arg("rows", |a| {
            a.help(format!(
                "Row counts N for the rows experiment, comma-separated [default: {}; {} with \
                 --quick]",
                counts(&full.rows),
                counts(&quick.rows)
            ))
        })
        .mut_arg("connections", |a| {
            a.help(format!(
                "Most connections per trial in connect and auth [default: {} and {}; {} and {} \
                 with --quick]; each trial also stops after a few seconds",
                full.connections, full.auth_connections, quick.connections, quick.auth_connections
            ))
        })
        .mut_arg("duration", |a| {
            a.help(format!(
                "Measured time of each concurrent run (pgbench -T), e.g. 10s, 500ms or 10 (a \
                 plain number is seconds), after a warm-up that is not counted [default: {}; \
                 {} with --quick]. It is one trial: every round runs one per client count \
                 and transport, and the line printed before measuring says how many and how \
                 long the whole takes",
                seconds(full.concurrent_time),
                seconds(quick.concurrent_time)
            ))
        })
}
