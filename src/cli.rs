//! The command line as clap sees it: raw values, help text and examples. Turning
//! these into a validated plan happens in `plan.rs`.

use crate::experiment::Workload;
use crate::postgres::experiment::PgExperiment;
use crate::postgres::hba::AuthMethod;
use crate::postgres::targets::NamedUrl;
use crate::transport::{Endpoint, TlsVersion, Transport};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Measures Unix domain sockets against loopback TCP and TLS on this machine.
#[derive(Debug, Parser)]
#[command(
    name = "sockbench",
    version,
    about,
    long_about = "Measures how much a Unix domain socket saves over loopback TCP and TLS \
                  on this machine: for opening connections, for small round trips, for \
                  bulk transfer and under many clients.\n\n\
                  With no command, runs `sockbench run`: the quick sockets suite and the \
                  quick PostgreSQL suite, a verdict, and a result file under \
                  sockbench-results/.",
    after_help = "Examples:\n  \
                  sockbench\n  \
                  sockbench report sockbench-results/*.json --format html --output report.html\n  \
                  sockbench compare laptop.json server.json --format markdown\n  \
                  sockbench sockets --quick\n  \
                  sockbench postgres --quick --json pg.json\n  \
                  sockbench sockets --transports unix,tcp --workloads pingpong --sizes 1,64,1MiB\n  \
                  sockbench serve --listen unix:/tmp/sb.sock --listen tcp:127.0.0.1:7000"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Everything in about a minute: the quick sockets and PostgreSQL suites, a
    /// verdict, and a result file (the default command).
    Run(RunArgs),
    /// Raw transport experiments against sockbench's own server process.
    Sockets(SocketsArgs),
    /// PostgreSQL experiments on a throwaway cluster, or on servers given by URL.
    Postgres(PostgresArgs),
    /// Run the sockbench server alone, e.g. for a client on another host.
    Serve(ServeArgs),
    /// Render saved result files as terminal tables, Markdown or one HTML page.
    Report(ReportArgs),
    /// Two result files side by side: system facts, then each headline figure on both
    /// with their ratio.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench run\n  \
    sockbench run --json laptop.json --quiet\n\n\
    Runs `sockets --quick` (connect, pingpong, stream over unix, tcp and tls) and, when \
    PostgreSQL's binaries are found, `postgres --quick` on a throwaway cluster (query, \
    connect, auth, rows, concurrent). Tables print as each experiment finishes, a short \
    verdict at the end. The result file is rewritten after every experiment, so an \
    interrupted run keeps what finished.")]
pub struct RunArgs {
    /// Write the results to FILE [default: sockbench-results/<start time>.json].
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No progress bars (they are also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Directory holding PostgreSQL's initdb and postgres [default: from pg_config, then
    /// the newest /usr/lib/postgresql/*/bin, then PATH].
    #[arg(long, value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,
}

/// How `report` and `compare` render, and where to.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,

    /// Write to PATH instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// The formats of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Boxed tables for the terminal.
    Table,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// One self-contained HTML page with SVG charts (no JavaScript, nothing fetched).
    Html,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench report sockbench-results/2026-11-22T10-00-00Z.json\n  \
    sockbench report run.json --format markdown --output RESULTS.md\n  \
    sockbench report a.json b.json --format html --output report.html")]
pub struct ReportArgs {
    /// Result files written by sockbench (--json, or sockbench-results/).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub render: RenderArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench compare laptop.json server.json\n  \
    sockbench compare before.json after.json --format html --output compare.html\n\n\
    Figures are matched by experiment, transport and parameters; the ratio is B over A \
    for the headline figure of each (above 1 means B measured more: more time, or more \
    per second, depending on the figure).")]
pub struct CompareArgs {
    /// The first result file (System A).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,

    /// The second result file (System B).
    #[arg(value_name = "B.json")]
    pub b: PathBuf,

    #[command(flatten)]
    pub render: RenderArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench sockets --quick --json out.json\n  \
    sockbench sockets --transports unix,unix-abstract,tcp,tcp6,tls --workloads connect\n  \
    sockbench sockets --workloads concurrent --clients 16\n  \
    sockbench sockets --server unix:/tmp/sb.sock --server tcp:127.0.0.1:7000\n\n\
    Transports: unix (socket file), unix-abstract (Linux abstract namespace), tcp \
    (127.0.0.1), tcp6 (::1), tls (TCP 127.0.0.1 with TLS; the client encrypts without \
    verifying the certificate, like libpq's sslmode=require).\n\
    Workloads: connect (connect, read a 12-byte greeting, close), pingpong (round trips \
    on one connection), stream (bulk bytes one way), concurrent (many clients doing \
    64-byte round trips at once).")]
pub struct SocketsArgs {
    /// Transports to compare, comma-separated [default: unix,tcp,tls].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<Transport>>,

    /// Workloads to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "connect,pingpong,stream",
        value_name = "LIST"
    )]
    pub workloads: Vec<Workload>,

    /// Repetitions of every measurement; tables show the median and the range
    /// [default: 5, or 3 with --quick].
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Shorter timed loops (and 3 trials unless --trials is given): the default
    /// suite in under 20 seconds.
    #[arg(long)]
    pub quick: bool,

    /// Write the results to FILE as JSON, updated as each workload finishes.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No progress bars (they are also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Pingpong message sizes, comma-separated (B, KiB, MiB; 1 B to 1 MiB).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,4KiB,64KiB",
        value_name = "LIST"
    )]
    pub sizes: Vec<String>,

    /// Stream write sizes, comma-separated (B, KiB, MiB; 1 B to 1 MiB).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4KiB,64KiB",
        value_name = "LIST"
    )]
    pub write_sizes: Vec<String>,

    /// Clients running at once in the concurrent workload.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub clients: u32,

    /// TLS protocol version the client asks for.
    #[arg(long, default_value = "1.3", value_name = "1.2|1.3")]
    pub tls_version: TlsVersion,

    /// Measure a running `sockbench serve` at ADDR instead of starting a server
    /// (repeatable; replaces --transports).
    #[arg(long = "server", value_name = "ADDR")]
    pub servers: Vec<Endpoint>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Addresses: unix:/path, unix-abstract:NAME, tcp:127.0.0.1:PORT, \
    tcp:[::1]:PORT, tls:127.0.0.1:PORT (port 0 picks a free one).\n\
    The server prints 'listening ADDR' for each address, then 'ready', and serves until \
    interrupted.\n\n\
    Example:\n  sockbench serve --listen unix:/tmp/sb.sock --listen tls:127.0.0.1:7443"
)]
pub struct ServeArgs {
    /// Address to listen on (repeatable).
    #[arg(long = "listen", value_name = "ADDR", required = true)]
    pub listen: Vec<Endpoint>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    sockbench postgres --quick --json out.json\n  \
    sockbench postgres --experiments query,rows --transports unix,tcp,tls,tcp6\n  \
    sockbench postgres --url unix='postgres://foo@?host=/var/run/postgresql&port=5432'\n  \
    sockbench postgres --url tls=postgres://foo@127.0.0.1:5432/foo?sslmode=require\n  \
    PGPASSWORD=… sockbench postgres --auth-url trust=postgres://foo@127.0.0.1/foo \\\n      \
    --auth-url scram-sha-256=postgres://foo@127.0.0.1/foo?passfile=/home/me/.pgpass-bench\n\n\
    Passwords: keep them out of the URL. A command line is visible to every local user \
    (ps, /proc) while it runs; libpq, as psql does, takes the password from PGPASSWORD, \
    from ~/.pgpass, or from the file PGPASSFILE (or passfile=FILE in the URI) names. A \
    password given in a URL anyway is hidden from the result file and from messages.\n\n\
    Without --url, sockbench creates a throwaway cluster (initdb into a private temporary \
    directory, as the 'postgres' or 'nobody' account when run as root), listening on \
    127.0.0.1 and a Unix socket with TLS on, and removes it when done. Role and database \
    'foo' with a random password are created there; authentication is switched between \
    methods only on that cluster. Other local users can reach its loopback port (and its \
    abstract socket, made only when unix-abstract is measured) while it runs, so those \
    admit only 'foo', which is no superuser; the superuser is admitted only on the private \
    socket directory and only for your own account (peer authentication). A run that is \
    killed leaves its directory behind; the next run removes it.\n\
    With --url, the named servers are only read: nothing in their configuration changes.\n\n\
    Experiments: query (N sequential SELECT 1 on one connection; time per query by \
    least-squares fit), connect (connect + SELECT 1 + close, phase by phase, trust \
    authentication), auth (the same per authentication method; the cost over trust), rows \
    (SELECT * FROM generate_series(1,N), every value read; time per row by fit), \
    concurrent (clients running a script at once on a few threads, like pgbench -c -j -T; \
    transactions/s and latency percentiles).")]
pub struct PostgresArgs {
    /// Experiments to run, comma-separated [default: query,connect,auth,rows,concurrent].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub experiments: Option<Vec<PgExperiment>>,

    /// Transports of the throwaway cluster, comma-separated (unix, unix-abstract, tcp,
    /// tcp6, tls) [default: unix,tcp,tls].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub transports: Option<Vec<crate::transport::Transport>>,

    /// Repetitions of every measurement [default: 5, or 3 with --quick].
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Smaller batches and 3 trials: the whole suite in well under a minute.
    #[arg(long)]
    pub quick: bool,

    /// Write the results to FILE as JSON, updated as each experiment finishes.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No progress bars (they are also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Query counts N for the query experiment, comma-separated [default: 5k,10k,20k;
    /// 1k,2k,4k with --quick].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub queries: Option<Vec<String>>,

    /// Row counts N for the rows experiment, comma-separated [default: 0.5M,1M,2M;
    /// 100k,200k,400k with --quick].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rows: Option<Vec<String>>,

    /// Most connections per trial in connect and auth [default: 1000 and 300; 200 and 50
    /// with --quick]; each trial also stops after a few seconds.
    #[arg(long, value_name = "N")]
    pub connections: Option<u64>,

    /// Authentication methods the auth experiment compares on the throwaway cluster
    /// [default: trust,password,md5,scram-sha-256,peer].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub auth_methods: Option<Vec<AuthMethod>>,

    /// Concurrent clients; a list (e.g. 1,2,4,8,16) runs a sweep [default: 10].
    #[arg(long, value_delimiter = ',', default_value = "10", value_name = "LIST")]
    pub clients: Vec<u32>,

    /// Client threads driving the concurrent clients [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,

    /// Measured time of each concurrent run, e.g. 10s or 500ms, after a warm-up that
    /// is not counted [default: 10s; 2s with --quick].
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,

    /// The transaction of the concurrent clients: a file of SQL commands, each ending
    /// with ';', run one after the other, like a pgbench script [default: SELECT 1].
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,

    /// Open and close a connection for every transaction, like pgbench -C.
    #[arg(long)]
    pub connect_per_transaction: bool,

    /// Directory holding PostgreSQL's initdb and postgres [default: from pg_config, then
    /// the newest /usr/lib/postgresql/*/bin, then PATH].
    #[arg(long, value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,

    /// Measure the user's server at URI (as psql takes it) under the name NAME instead of
    /// a throwaway cluster (repeatable).
    #[arg(long = "url", value_name = "NAME=URI")]
    pub urls: Vec<NamedUrl>,

    /// Run the auth experiment on the user's server for METHOD, reached as URI (whose
    /// server must be set up for that method; repeatable).
    #[arg(long = "auth-url", value_name = "METHOD=URI")]
    pub auth_urls: Vec<NamedUrl>,
}
