//! Values out of what a run can take (a list naming an item twice, a count past
//! what finishes, a pasted value of 70,000 characters) get one line naming the
//! limit, exit code 2, and no echo longer than a line.

mod common;

use common::*;

#[test]
fn repeated_list_items_are_refused() {
    for (args, said) in [
        (
            &["sockets", "--transports", "unix,unix"][..],
            "--transports names unix twice",
        ),
        (
            &["sockets", "--workloads", "connect,stream,connect"],
            "--workloads names connect twice",
        ),
        (
            &["sockets", "--sizes", "64,64B"],
            "--sizes names 64 B twice",
        ),
        (
            &["sockets", "--write-sizes", "4KiB,4096"],
            "--write-sizes names 4 KiB twice",
        ),
        (
            &["sockets", "--placement", "same,same"],
            "--placement names same twice",
        ),
        (
            &["postgres", "--transports", "tcp,unix,tcp"],
            "--transports names tcp twice",
        ),
        (
            &["postgres", "--experiments", "query,query"],
            "--experiments names query twice",
        ),
        (
            &["postgres", "--queries", "1k,2k,1000"],
            "--queries names 1000 twice",
        ),
        (
            &["postgres", "--rows", "1M,1000k,2M"],
            "--rows names 1M twice",
        ),
        (
            &["postgres", "--auth-methods", "md5,trust,md5"],
            "--auth-methods names md5 twice",
        ),
        (
            &["postgres", "--clients", "1,2,1"],
            "--clients names 1 twice",
        ),
        (
            &[
                "postgres",
                "--auth-url",
                "trust=postgres://foo@127.0.0.1:1/foo",
                "--auth-url",
                "trust=postgres://foo@127.0.0.1:2/foo",
            ],
            "--auth-url names trust twice",
        ),
        (
            &[
                "postgres",
                "--url",
                "a=postgres://127.0.0.1:1",
                "--url",
                "a=postgres://127.0.0.1:2",
            ],
            "each --url needs its own NAME",
        ),
    ] {
        assert_rejected(args, said);
    }
}

#[test]
fn counts_out_of_range_say_the_range() {
    for (args, said) in [
        (
            &["postgres", "--queries", "0,1k"][..],
            "--queries: count '0' is out of range; use 1 to 250k",
        ),
        (
            &["postgres", "--queries", "1000,1e12"],
            "count '1e12' is out of range; use 1 to 250k",
        ),
        (
            &["postgres", "--rows", "1e15,1M"],
            "--rows: count '1e15' is out of range; use 1 to 100M",
        ),
        (
            &["postgres", "--duration", "25h"],
            "out of range; use 1ms to 24h",
        ),
        (&["postgres", "--connections", "0"], "between 1 and 1000000"),
        (
            &["sockets", "--sizes", "99999999999999999999999"],
            "too large",
        ),
        (&["sockets", "--clients", "5000"], "between 1 and 1024"),
    ] {
        assert_rejected(args, said);
    }
}

#[test]
fn long_values_are_echoed_cut() {
    let host = "h".repeat(70_000);
    for args in [
        vec![
            "postgres".to_string(),
            "--url".into(),
            format!("x=postgres://foo@{host}/foo"),
        ],
        vec!["serve".into(), "--listen".into(), format!("tcp:{host}:1")],
        vec!["postgres".into(), "--queries".into(), format!("1k,{host}")],
        vec!["report".into(), host.clone()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let tmp = tempdir();
        let out = run(tmp.path(), &args);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            &stderr[..stderr.len().min(300)]
        );
        assert_eq!(stderr.trim_end().lines().count(), 1);
        assert!(
            stderr.len() < 1000,
            "{} bytes: {}…",
            stderr.len(),
            &stderr[..300]
        );
        assert!(stderr.contains(&format!("{}…", "h".repeat(40))), "{stderr}");
    }
}

#[test]
fn a_url_name_over_64_characters_is_refused_naming_the_limit() {
    let name = "n".repeat(65);
    assert_rejected(
        &[
            "postgres",
            "--url",
            &format!("{name}=postgres://foo@127.0.0.1:1/foo"),
        ],
        "is 65 characters long; use at most 64",
    );
}
