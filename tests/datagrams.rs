//! The kinds of socket that keep messages whole (`unix-seqpacket`, `unix-dgram`,
//! `udp`) beside the streams, against sockbench's own server: each workload runs
//! where it means something and says in one line where it does not, and messages
//! a receiver could not take are counted as lost, never hidden in the rate.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn measured(tmp: &Path, args: &[&str]) -> (Value, String, String) {
    let json = tmp.join("out.json");
    let mut all = vec!["sockets", "--quick", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(tmp, &all);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let file = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (file, stdout, stderr)
}

/// The transports of `experiment`'s records, each once, in order.
fn transports(file: &Value, experiment: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for r in results(file, experiment) {
        let t = r["transport"].as_str().unwrap().to_string();
        if !all.contains(&t) {
            all.push(t);
        }
    }
    all
}

/// A figure summed over a record's trials.
fn summed(record: &Value, key: &str) -> u64 {
    record["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[key].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn every_kind_of_socket_runs_the_workloads_that_mean_something_on_it() {
    let tmp = tempdir();
    let (file, stdout, stderr) = measured(
        tmp.path(),
        &[
            "--trials",
            "1",
            "--transports",
            "unix,unix-dgram,unix-seqpacket,udp,udp-unconnected,tcp",
            "--workloads",
            "connect,pingpong,stream,messages",
            "--sizes",
            "64",
            "--message-sizes",
            "64",
        ],
    );
    let all = [
        "unix",
        "unix-dgram",
        "unix-seqpacket",
        "udp",
        "udp-unconnected",
        "tcp",
    ];
    assert_eq!(transports(&file, "sockets.pingpong"), all);
    assert_eq!(transports(&file, "sockets.messages"), all);
    assert_eq!(
        transports(&file, "sockets.connect"),
        ["unix", "unix-seqpacket", "tcp"]
    );
    assert_eq!(transports(&file, "sockets.stream"), ["unix", "tcp"]);
    assert!(
        stderr.contains(
            "connect leaves out unix-dgram, udp and udp-unconnected: a datagram socket has no \
             connection to open"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("stream leaves out unix-dgram, unix-seqpacket, udp and udp-unconnected: "),
        "{stderr}"
    );
    for record in results(&file, "sockets.pingpong") {
        let rtt = record["metrics"]["rtt_ns"]["p50"].as_f64().unwrap();
        assert!(rtt > 0.0, "{record}");
    }
    for record in results(&file, "sockets.messages") {
        let (sent, received) = (summed(record, "sent"), summed(record, "received"));
        assert!(received > 0 && received <= sent, "{record}");
        assert_eq!(summed(record, "lost"), sent - received, "{record}");
    }
    assert!(stdout.contains("sockets.messages"), "{stdout}");
    assert!(stdout.contains("Messages lost one way"), "{stdout}");
    // One round settles nothing, and says so rather than guess.
    let verdict: String = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        verdict.contains("Datagrams against streams (64 B messages, on one CPU): unix-dgram against udp: not settled (too few rounds)"),
        "{verdict}"
    );
}

#[test]
fn a_tiny_receive_buffer_makes_udp_lose_messages_and_says_how_many() {
    let tmp = tempdir();
    let (file, stdout, _) = measured(
        tmp.path(),
        &[
            "--trials",
            "2",
            "--transports",
            "unix-dgram,udp",
            "--workloads",
            "messages",
            "--message-sizes",
            "1KiB",
            "--receive-buffer",
            "1",
        ],
    );
    let records = results(&file, "sockets.messages");
    let of = |t: &str| *records.iter().find(|r| r["transport"] == t).unwrap();
    let (udp, unix) = (of("udp"), of("unix-dgram"));
    // UDP drops what finds the buffer full; the Unix datagram's sender waits.
    let (lost, sent) = (summed(udp, "lost"), summed(udp, "sent"));
    assert!(lost > 0, "{udp}");
    assert_eq!(summed(unix, "lost"), 0, "{unix}");
    let waited = unix["metrics"]["waited_share"].as_f64().unwrap();
    assert!(waited > 0.0, "{unix}");
    // The rate counts what arrived, not what was sent.
    let received = summed(udp, "received") as f64;
    assert!(received < sent as f64, "{udp}");
    // The table and the verdict say one share, printed as every share is.
    let share = lost as f64 * 100.0 / sent as f64;
    let said = match share {
        s if s >= 9.95 => format!("{s:.0}%"),
        s if s >= 0.995 => format!("{s:.1}%"),
        s => format!("{s:.2}%"),
    };
    let json = tmp.path().join("out.json");
    let report = run(tmp.path(), &["report", json.to_str().unwrap()]);
    let table = text(&report.stdout);
    let lost_row = table
        .lines()
        .find(|l| l.contains("lost (of all sent)"))
        .unwrap_or_else(|| panic!("no lost row: {table}"));
    assert!(lost_row.contains(&said), "{said} not in {lost_row}");
    assert!(lost_row.contains("none"), "{lost_row}");
    // Work counted per message received includes the work on those lost.
    let notes: String = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        notes.contains("CPU and the kernel's count are per message received"),
        "{table}"
    );
    let verdict: String = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        verdict.contains(&format!("udp lost {said} of the messages sent")),
        "{verdict}"
    );
    assert!(
        verdict.contains("unix-dgram lost none: its sender waits for room instead"),
        "{verdict}"
    );
}

#[test]
fn a_message_larger_than_a_udp_datagram_is_refused_before_anything_runs() {
    assert_rejected(
        &["sockets", "--transports", "unix,udp", "--sizes", "64KiB"],
        "64 KiB does not fit in one message over udp",
    );
    assert_rejected(
        &["sockets", "--transports", "udp", "--workloads", "connect"],
        "connect means nothing on udp",
    );
    assert_rejected(
        &[
            "sockets",
            "--workloads",
            "pingpong",
            "--receive-buffer",
            "4KiB",
        ],
        "--receive-buffer is for the messages workload; add messages to --workloads",
    );
}

#[test]
fn a_running_datagram_server_is_measured_and_counted_as_the_server() {
    let tmp = tempdir();
    let (_server, addrs) = start_serve(
        tmp.path(),
        &[
            format!("unix-dgram:{}", tmp.path().join("d.sock").display()),
            "udp:127.0.0.1:0".into(),
            format!("unix-seqpacket:{}", tmp.path().join("q.sock").display()),
        ],
    );
    let mut args = vec!["--trials", "1", "--workloads", "pingpong", "--sizes", "64"];
    for a in &addrs {
        args.extend(["--server", a.as_str()]);
    }
    let (file, _, _) = measured(tmp.path(), &args);
    let records = results(&file, "sockets.pingpong");
    assert_eq!(records.len(), 3, "{addrs:?}");
    for record in records {
        let cpu = &record["trials"][0]["cpu"];
        assert!(cpu["server"]["cpu_ns"].as_f64().unwrap() > 0.0, "{cpu}");
    }
}
