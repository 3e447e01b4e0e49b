//! Turns the raw `sockets` arguments into a validated plan of trials.

use super::args::SocketsArgs;
use super::keys::*;
use crate::cpu::affinity::Placement;
use crate::error::usage;
use crate::plan::{distinct, DEFAULT_TRANSPORTS};
use crate::results::Params;
use crate::sockets::server::protocol::MAX_MESSAGE;
use crate::sockets::{Budget, Experiment};
use crate::transport::{Carries, Endpoint, TlsVersion, Transport};
use crate::units::{format_size, parse_size};
use anyhow::Result;
use std::time::Duration;

const MAX_CLIENTS: u32 = 1_024;
const MAX_STREAMS: u32 = 128;
/// The shortest and longest `--time` of a stream trial.
const STREAM_TIMES: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(3_600);

/// Where the server under test comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Start a `sockbench serve` child listening on these transports.
    Throwaway(Vec<Transport>),
    /// Use servers already running at these addresses.
    User(Vec<Endpoint>),
}

impl Source {
    /// The transports measured, in the order given.
    pub fn transports(&self) -> Vec<Transport> {
        match self {
            Source::Throwaway(transports) => transports.clone(),
            Source::User(endpoints) => endpoints.iter().map(Endpoint::transport).collect(),
        }
    }
}

/// A validated `sockets` run.
#[derive(Debug, Clone, PartialEq)]
pub struct SocketsPlan {
    pub server: Source,
    pub experiments: Vec<Experiment>,
    pub rounds: crate::harness::Rounds,
    pub placements: Vec<crate::cpu::affinity::Placement>,
    pub sizes: Vec<u64>,
    pub write_sizes: Vec<u64>,
    pub clients: u32,
    /// Connections streaming at once in the stream workload.
    pub streams: u32,
    pub tls_version: TlsVersion,
    pub budget: Budget,
    /// Message sizes of the messages workload.
    pub message_sizes: Vec<u64>,
    /// The receive buffer its receiver asks for (`None`: the system's).
    pub receive_buffer: Option<u64>,
}

/// What a connect trial spends besides its timed loop: 50 untimed connections
/// (TLS handshakes, over tls) and counting the TIME_WAIT sockets twice; measured
/// 0.2 s with other work running on 2 vCPUs.
const CONNECT_AROUND: Duration = Duration::from_millis(200);
/// Starting one client thread of a concurrent trial and connecting it.
const CLIENT_START: Duration = Duration::from_millis(3);

/// What runs when the arguments do not say.
const DEFAULT_WORKLOADS: [Experiment; 3] = [
    Experiment::Connect,
    Experiment::PingPong,
    Experiment::Stream,
];
const DEFAULT_SIZES: [u64; 3] = [64, 4 << 10, 64 << 10];
const DEFAULT_MESSAGE_SIZES: [u64; 2] = [64, 1 << 10];
/// The receive buffers `--receive-buffer` takes: the kernel keeps at least about
/// 2 KiB whatever it is given, and without root at most `net.core.rmem_max`.
const RECEIVE_BUFFERS: std::ops::RangeInclusive<u64> = 1..=(1 << 30);
const DEFAULT_WRITE_SIZES: [u64; 2] = [4 << 10, 64 << 10];
const DEFAULT_CLIENTS: u32 = 8;

impl SocketsPlan {
    pub fn from_args(args: &SocketsArgs) -> Result<SocketsPlan> {
        let server = match (&args.transports, args.servers.is_empty()) {
            (Some(_), false) => {
                return Err(usage(
                    "--transports and --server do not go together; --server already names \
                     the transports",
                ))
            }
            (_, false) => Source::User(args.servers.clone()),
            (Some(list), true) => {
                let transports = distinct("--transports", list)?;
                super::FAMILY.check_transports(&transports).map_err(usage)?;
                Source::Throwaway(crate::plan::buildable("sockets", transports)?)
            }
            (None, true) => Source::Throwaway(DEFAULT_TRANSPORTS.to_vec()),
        };
        if let Source::User(endpoints) = &server {
            let transports: Vec<Transport> = endpoints.iter().map(Endpoint::transport).collect();
            if distinct("--server", &transports).is_err() {
                return Err(usage("give at most one --server address per transport"));
            }
        }
        let rounds = crate::plan::rounds(args.measuring.trials, args.measuring.quick)?;
        let placements = crate::plan::placements(
            &args.measuring.placement,
            if args.servers.is_empty() {
                Placement::Same
            } else {
                Placement::Free
            },
        )?;
        let clients = args.clients.unwrap_or(DEFAULT_CLIENTS);
        if !(1..=MAX_CLIENTS).contains(&clients) {
            return Err(usage(format!(
                "--clients must be between 1 and {MAX_CLIENTS}, not {clients}"
            )));
        }
        if args
            .workloads
            .as_ref()
            .is_some_and(|w| w.contains(&Experiment::Concurrent))
        {
            crate::plan::check_open_files("--clients", u64::from(clients))?;
        }
        let transports = server.transports();
        let mut defaults = DEFAULT_WORKLOADS.to_vec();
        // Sockets that keep messages whole are measured by the messages workload too;
        // a workload that runs on none of the transports is not one of the defaults.
        if transports
            .iter()
            .any(|t| t.kind().carries() != Carries::Bytes)
        {
            defaults.push(Experiment::Messages);
        }
        defaults.retain(|w| transports.iter().any(|&t| w.applies_to(t).is_ok()));
        let workloads = args.workloads.as_deref().unwrap_or(&defaults);
        if workloads.is_empty() {
            return Err(usage("--workloads is empty; name at least one workload"));
        }
        for &w in workloads {
            let whys: Vec<&str> = transports
                .iter()
                .filter_map(|&t| w.applies_to(t).err())
                .collect();
            if whys.len() == transports.len() {
                return Err(usage(format!(
                    "{w} means nothing on {}: {}; add a transport it runs on, or leave it out \
                     of --workloads",
                    names(&transports),
                    whys.first().copied().unwrap_or_default()
                )));
            }
        }
        let largest = transports
            .iter()
            .filter_map(|t| t.largest_message().map(|m| (m, *t)))
            .min();
        if !workloads.contains(&Experiment::Messages) {
            let given = [
                ("--message-sizes", args.message_sizes.is_some()),
                ("--receive-buffer", args.receive_buffer.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
                return Err(usage(format!(
                    "{flag} is for the messages workload; add messages to --workloads"
                )));
            }
        }
        let receive_buffer = match &args.receive_buffer {
            Some(text) => {
                let bytes =
                    parse_size(text).map_err(|e| usage(format!("--receive-buffer: {e}")))?;
                if !RECEIVE_BUFFERS.contains(&bytes) {
                    return Err(usage("--receive-buffer must be between 1 B and 1 GiB"));
                }
                Some(bytes)
            }
            None => None,
        };
        let streams = stream_options(args, workloads)?;
        let mut budget = if args.measuring.quick {
            Budget::QUICK
        } else {
            Budget::FULL
        };
        if let Some(time) = args.time {
            // As iperf3 does: the time alone ends the trial.
            budget.stream = time;
            budget.stream_bytes = u64::MAX / 4;
        }
        let experiments = distinct("--workloads", workloads)?;
        let plan = SocketsPlan {
            server,
            experiments,
            rounds,
            placements,
            sizes: match &args.sizes {
                Some(texts) => fitting("--sizes", sizes("--sizes", texts)?, largest)?,
                // The largest every transport carries in one message, where that is
                // less than 64 KiB (UDP's 65,507 B).
                None => DEFAULT_SIZES
                    .iter()
                    .map(|&s| largest.map_or(s, |(most, _)| s.min(most)))
                    .collect(),
            },
            message_sizes: match &args.message_sizes {
                Some(texts) => {
                    fitting("--message-sizes", sizes("--message-sizes", texts)?, largest)?
                }
                None => DEFAULT_MESSAGE_SIZES.to_vec(),
            },
            receive_buffer,
            write_sizes: match &args.write_sizes {
                Some(texts) => sizes("--write-sizes", texts)?,
                None => DEFAULT_WRITE_SIZES.to_vec(),
            },
            clients,
            streams,
            tls_version: args.tls_version.unwrap_or(TlsVersion::V1_3),
            budget,
        };
        // Once every argument is good: what each workload leaves out, and why.
        for &w in &plan.experiments {
            if let Some(line) = left_out(w, &transports) {
                eprintln!("{line}");
            }
        }
        Ok(plan)
    }

    /// The rounds of a workload and how long each of its trials runs.
    pub fn timing(&self, experiment: Experiment) -> crate::harness::estimate::Timing {
        let b = &self.budget;
        crate::harness::estimate::Timing {
            rounds: self.rounds,
            trial: match experiment {
                Experiment::Connect => b.connect,
                Experiment::PingPong => b.pingpong,
                Experiment::Stream => b.stream,
                Experiment::Concurrent => b.concurrent,
                Experiment::Messages => b.messages,
            },
            around: match experiment {
                Experiment::Connect => CONNECT_AROUND,
                Experiment::Concurrent => CLIENT_START * self.clients,
                Experiment::PingPong | Experiment::Stream | Experiment::Messages => Duration::ZERO,
            },
        }
    }

    /// The parameter sets a workload runs with, one table section each.
    pub fn cases(&self, experiment: Experiment) -> Vec<Params> {
        let ms = |d: std::time::Duration| Some(d.as_millis() as u64);
        match experiment {
            Experiment::Connect => {
                vec![Params::default().with(DURATION_MS, ms(self.budget.connect))]
            }
            Experiment::PingPong => self
                .sizes
                .iter()
                .map(|&size| {
                    Params::default()
                        .with(SIZE, Some(size))
                        .with(DURATION_MS, ms(self.budget.pingpong))
                })
                .collect(),
            Experiment::Stream => self
                .write_sizes
                .iter()
                .map(|&write_size| {
                    Params::default()
                        .with(WRITE_SIZE, Some(write_size))
                        .with(
                            STREAMS,
                            (self.streams > 1).then_some(u64::from(self.streams)),
                        )
                        .with(DURATION_MS, ms(self.budget.stream))
                })
                .collect(),
            Experiment::Concurrent => vec![Params::default()
                .with(CLIENTS, Some(u64::from(self.clients)))
                .with(DURATION_MS, ms(self.budget.concurrent))],
            Experiment::Messages => self
                .message_sizes
                .iter()
                .map(|&size| {
                    Params::default()
                        .with(SIZE, Some(size))
                        .with(RECEIVE_BUFFER, self.receive_buffer)
                        .with(DURATION_MS, ms(self.budget.messages))
                })
                .collect(),
        }
    }
}

/// The streams at once (`-P`), with `-t` and `-P` refused when no stream
/// workload runs, and checked against the open-file limit.
fn stream_options(args: &SocketsArgs, workloads: &[Experiment]) -> Result<u32> {
    let given = [
        ("-t/--time", args.time.is_some()),
        ("-P/--parallel", args.parallel.is_some()),
    ];
    if !workloads.contains(&Experiment::Stream) {
        if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
            return Err(usage(format!(
                "{flag} is for the stream workload; add stream to --workloads"
            )));
        }
    }
    if let Some(time) = args.time {
        if !STREAM_TIMES.contains(&time) {
            return Err(usage(format!(
                "-t/--time must be between 100 ms and 1 h, not {time:?}"
            )));
        }
    }
    let streams = args.parallel.unwrap_or(1);
    if !(1..=MAX_STREAMS).contains(&streams) {
        return Err(usage(format!(
            "-P/--parallel must be between 1 and {MAX_STREAMS}, not {streams}"
        )));
    }
    crate::plan::check_open_files("-P/--parallel", u64::from(streams))?;
    Ok(streams)
}

/// The line that says which of `transports` workload `w` leaves out and why, if it
/// leaves out any: `sockets: connect leaves out unix-dgram and udp: a datagram
/// socket has no connection to open`.
pub fn left_out(w: Experiment, transports: &[Transport]) -> Option<String> {
    let out: Vec<(Transport, &str)> = transports
        .iter()
        .filter_map(|&t| w.applies_to(t).err().map(|why| (t, why)))
        .collect();
    let (_, first_why) = out.first()?;
    let mut whys = vec![*first_why];
    for (_, why) in &out {
        if !whys.contains(why) {
            whys.push(why);
        }
    }
    let left: Vec<Transport> = out.iter().map(|(t, _)| *t).collect();
    Some(format!(
        "sockets: {w} leaves out {}: {}",
        names(&left),
        whys.join("; ")
    ))
}

/// The transports in words: `unix, udp and tcp`.
fn names(transports: &[Transport]) -> String {
    let all: Vec<String> = transports.iter().map(|t| t.to_string()).collect();
    crate::report::verdict::listed(&all)
}

/// `sizes`, refused when one is larger than the largest message one of the
/// transports carries whole (`largest`, and that transport).
fn fitting(flag: &str, sizes: Vec<u64>, largest: Option<(u64, Transport)>) -> Result<Vec<u64>> {
    match (sizes.iter().max(), largest) {
        (Some(&size), Some((most, transport))) if size > most => Err(usage(format!(
            "{flag}: {} does not fit in one message over {transport}, which carries at most {} \
             whole; give sizes up to that, or leave {transport} out",
            format_size(size),
            format_size(most)
        ))),
        _ => Ok(sizes),
    }
}

fn sizes(flag: &str, texts: &[String]) -> Result<Vec<u64>> {
    if texts.is_empty() {
        return Err(usage(format!("{flag} is empty; give at least one size")));
    }
    let parsed = texts
        .iter()
        .map(|t| {
            let size = parse_size(t).map_err(|e| usage(format!("{flag}: {e}")))?;
            if size == 0 || size > u64::from(MAX_MESSAGE) {
                return Err(usage(format!(
                    "{flag}: size {t} is outside 1 B to {}",
                    format_size(u64::from(MAX_MESSAGE))
                )));
            }
            Ok(size)
        })
        .collect::<Result<Vec<u64>>>()?;
    let shown: Vec<String> = parsed.iter().map(|&s| format_size(s)).collect();
    distinct(flag, &shown)?;
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn plan(args: &[&str]) -> Result<SocketsPlan> {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: SocketsArgs,
        }
        let mut argv = vec!["sockets"];
        argv.extend_from_slice(args);
        SocketsPlan::from_args(&Wrapper::try_parse_from(argv)?.args)
    }

    #[test]
    fn defaults_match_the_documented_suite() {
        let p = plan(&[]).unwrap();
        assert_eq!(
            p.server,
            Source::Throwaway(vec![Transport::Unix, Transport::Tcp, Transport::Tls])
        );
        assert_eq!(
            p.experiments,
            vec![
                Experiment::Connect,
                Experiment::PingPong,
                Experiment::Stream
            ]
        );
        assert_eq!(p.rounds.min, 5);
        assert!(p.rounds.max > p.rounds.min, "rounds go on until settled");
        assert_eq!(p.sizes, vec![64, 4096, 65536]);
        assert_eq!(p.write_sizes, vec![4096, 65536]);
        assert_eq!(p.budget, Budget::FULL);
        assert_eq!(plan(&["--quick"]).unwrap().rounds.min, 6);
        assert_eq!(
            plan(&["--quick", "--trials", "7"]).unwrap().rounds,
            crate::harness::Rounds::fixed(7)
        );
    }

    #[test]
    fn rejects_bad_values() {
        for bad in [
            &["--trials", "0"][..],
            &["--clients", "0"],
            &["--sizes", "2MiB"],
            &["--sizes", "0"],
            &["--write-sizes", "lots"],
            &["--transports", "tcp", "--server", "tcp:127.0.0.1:1"],
            &["--server", "tcp:127.0.0.1:1", "--server", "tcp:127.0.0.1:2"],
            &["--transports", "unix,tcp,unix"],
            &["--workloads", "connect,connect"],
            &["--sizes", "64,64B"],
            &["--write-sizes", "4KiB,4096"],
            &["--placement", "same,same"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn iperf3s_time_and_parallel_streams_shape_the_stream_cases() {
        let p = plan(&["--workloads", "stream", "-t", "3", "-P", "4"]).unwrap();
        assert_eq!(p.budget.stream, Duration::from_secs(3));
        assert!(
            p.budget.stream_bytes > 1 << 50,
            "the time alone ends a trial"
        );
        assert_eq!(p.budget.pingpong, Budget::FULL.pingpong);
        let cases = p.cases(Experiment::Stream);
        assert!(cases.iter().all(|c| c.get(STREAMS) == Some(4)), "{cases:?}");
        assert!(cases.iter().all(|c| c.get(DURATION_MS) == Some(3_000)));
        let long = plan(&["--time", "500ms", "--parallel", "2", "--quick"]).unwrap();
        assert_eq!(long.budget.stream, Duration::from_millis(500));
        assert_eq!(long.streams, 2);
        let one = plan(&["--quick"]).unwrap();
        assert_eq!(one.budget, Budget::QUICK);
        assert!(one
            .cases(Experiment::Stream)
            .iter()
            .all(|c| c.get(STREAMS).is_none()));
        for bad in [
            &["-P", "0"][..],
            &["-P", "129"],
            &["-t", "50ms"],
            &["-t", "2h"],
            &["-t", "soon"],
            &["--workloads", "pingpong", "-P", "2"],
            &["--workloads", "connect", "-t", "1"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn udp_carries_at_most_one_datagram_and_messages_come_with_whole_messages() {
        let p = plan(&["--transports", "unix,udp"]).unwrap();
        assert_eq!(
            p.sizes,
            [64, 4096, 65_507],
            "the largest one datagram carries"
        );
        assert!(p.experiments.contains(&Experiment::Messages));
        assert_eq!(p.message_sizes, [64, 1024]);
        let streams = plan(&["--transports", "unix,tcp"]).unwrap();
        assert!(!streams.experiments.contains(&Experiment::Messages));
        assert_eq!(streams.sizes, DEFAULT_SIZES);
        let p = plan(&["--transports", "udp6", "--sizes", "65527"]).unwrap();
        assert_eq!(p.sizes, [65_527]);
        assert_eq!(p.experiments, [Experiment::PingPong, Experiment::Messages]);
        for bad in [
            &["--transports", "udp", "--sizes", "65508"][..],
            &["--transports", "udp", "--message-sizes", "64KiB"],
            &["--transports", "unix-dgram,udp", "--workloads", "stream"],
            &["--workloads", "messages", "--receive-buffer", "0"],
            &["--workloads", "pingpong", "--message-sizes", "64"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?} should be rejected");
        }
        let p = plan(&["--workloads", "messages", "--receive-buffer", "4KiB"]).unwrap();
        let cases = p.cases(Experiment::Messages);
        assert!(cases.iter().all(|c| c.get(RECEIVE_BUFFER) == Some(4096)));
    }

    #[test]
    fn one_case_per_size() {
        let p = plan(&["--sizes", "1,64,1MiB"]).unwrap();
        let sizes: Vec<_> = p
            .cases(Experiment::PingPong)
            .iter()
            .map(|c| c.get(SIZE))
            .collect();
        assert_eq!(sizes, vec![Some(1), Some(64), Some(1 << 20)]);
    }
}
