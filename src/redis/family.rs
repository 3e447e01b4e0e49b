//! What the registry composes from the Redis family: its part of the default
//! `sockbench run`, the temporary directories it leaves for the sweep, and how a
//! password in a `--url` is hidden.

use super::args::RedisArgs;
use super::plan::RedisPlan;
use crate::leftovers::DirKind;
use crate::plan::Measuring;
use crate::report::family::{Plan, Redaction};
use anyhow::Result;

/// The quick Redis suite on a throwaway server, GETs at the smallest and largest
/// sizes alone (to keep `run` within its two minutes), or `None` (and one line)
/// when `redis-server` is not installed.
pub fn quick(_run: &clap::ArgMatches) -> Result<Option<Box<dyn Plan>>> {
    if super::find_program().is_none() {
        eprintln!(
            "redis: skipped, redis-server was not found; install it (Debian/Ubuntu: apt-get \
             install redis-server) to measure Redis too"
        );
        return Ok(None);
    }
    let plan = RedisPlan::from_args(&RedisArgs {
        measuring: Measuring::quick(),
        sizes: Some(vec!["64".into(), "64KiB".into()]),
        ..RedisArgs::default()
    })?;
    Ok(Some(Box::new(plan)))
}

/// A throwaway server's directory; it records its `redis-server` in its owner
/// file, so the sweep keeps it while that server runs.
pub const SERVER: DirKind = DirKind {
    prefix: super::DIR_PREFIX,
};

pub const REDACTION: Redaction = Redaction {
    argument: redact_url,
    message,
};

/// The schemes whose URLs may hold a password.
const SCHEMES: [&str; 3] = ["redis://", "rediss://", "unix://"];
/// What a password is shown as.
const HIDDEN: &str = "***";

/// `text` with the password of every Redis URL in it hidden:
/// `redis://app:***@127.0.0.1`.
pub fn redact_url(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, scheme)) = SCHEMES
        .iter()
        .filter_map(|s| rest.find(s).map(|i| (i, *s)))
        .min()
    {
        let start = at + scheme.len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if let Some(info_end) = rest[..end].rfind('@') {
            let info = &rest[..info_end];
            match info.split_once(':') {
                Some((user, _)) => out.push_str(&format!("{user}:{HIDDEN}")),
                None => out.push_str(HIDDEN),
            }
            rest = &rest[info_end..];
        }
    }
    out.push_str(rest);
    out
}

/// An error message with the password of every Redis URL of `argv` hidden where
/// the message quotes it (the messages sockbench writes about a URL hide it
/// themselves).
fn message(text: &str, argv: &[String]) -> String {
    let mut shown = text.to_string();
    for arg in argv {
        let redacted = redact_url(arg);
        if redacted != *arg {
            shown = shown.replace(arg.as_str(), &redacted);
            // `--url=URL` and `NAME=URL` quote only the URL.
            for part in arg.split('=').filter(|p| p.contains("://")) {
                shown = shown.replace(part, &redact_url(part));
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_redis_urls_are_hidden_wherever_they_stand() {
        assert_eq!(
            redact_url("--url=cache=redis://app:s3cret@127.0.0.1:6380/1"),
            "--url=cache=redis://app:***@127.0.0.1:6380/1"
        );
        assert_eq!(
            redact_url("rediss://s3cret@localhost"),
            "rediss://***@localhost"
        );
        assert_eq!(
            redact_url("unix://:pw/with/slash@/run/redis.sock"),
            "unix://:***@/run/redis.sock"
        );
        assert_eq!(redact_url("redis://127.0.0.1"), "redis://127.0.0.1");
        assert_eq!(
            redact_url("postgresql://127.0.0.1"),
            "postgresql://127.0.0.1"
        );
        let argv = vec!["redis".to_string(), "redis://:hunter2@127.0.0.1:1".into()];
        let m = message("cannot reach redis://:hunter2@127.0.0.1:1: refused", &argv);
        assert!(!m.contains("hunter2"), "{m}");
    }
}
