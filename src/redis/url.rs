//! `--url [NAME=]URL`: a Redis server the user runs, as Redis clients write it:
//! `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, `rediss://…` (TLS), or
//! `unix://[[USER]:PASSWORD@]/PATH/TO/SOCKET[?db=DB]`. Only this machine is
//! measured: the host must be a loopback address or `localhost`. As with redis-cli,
//! a URL without a password takes the one in `REDISCLI_AUTH`, which keeps it off
//! the command line (where other local accounts can read it).

use crate::error::usage;
use crate::transport::{Address, Endpoint, Transport};
use anyhow::Result;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

/// Redis's port when a URL names none.
const DEFAULT_PORT: u16 = 6379;

/// A user's server, as `--url` gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserUrl {
    /// The name given before `=`, else what it reaches (`unix`, `tcp`, `tls`).
    pub label: String,
    pub endpoint: Endpoint,
    /// `AUTH [USER] PASSWORD`, when the URL has a password.
    pub user: Option<String>,
    pub password: Option<String>,
    /// `SELECT DB`, when the URL names one.
    pub db: Option<u64>,
}

/// The variable redis-cli reads a password from.
pub const PASSWORD_VARIABLE: &str = "REDISCLI_AUTH";

/// Parses one `--url` value; a URL without a password takes `REDISCLI_AUTH`'s.
pub fn parse(text: &str) -> Result<UserUrl> {
    let mut url = parse_text(text)?;
    // `redis://user:@host` names a user and no password (`redis://secret@host` is a
    // password, as redis-cli reads it).
    if url.password.as_deref().is_none_or(str::is_empty) {
        url.password = std::env::var(PASSWORD_VARIABLE)
            .ok()
            .filter(|p| !p.is_empty());
    }
    Ok(url)
}

/// Parses one `--url` value as it is written.
fn parse_text(text: &str) -> Result<UserUrl> {
    let (name, url) = match text.split_once('=') {
        Some((name, rest)) if !name.contains("://") => (Some(name), rest),
        _ => (None, text),
    };
    if let Some(name) = name {
        crate::plan::url_name(name).map_err(|why| {
            usage(format!(
                "--url NAME=URL: {why}; e.g. cache=redis://127.0.0.1:6379"
            ))
        })?;
    }
    let refuse = |why: &str| {
        usage(format!(
            "--url {}: {why}; write redis://[USER:PASSWORD@]127.0.0.1[:PORT][/DB], rediss://… \
             for TLS, or unix://[USER:PASSWORD@]/path/to/redis.sock",
            without_userinfo(url)
        ))
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| refuse("no scheme"))?;
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, rest),
    };
    let (user, password) = match userinfo {
        None => (None, None),
        Some(info) => {
            let (user, password) = info.split_once(':').unwrap_or(("", info));
            let user = decode(user).map_err(|e| refuse(&e))?;
            let password = decode(password).map_err(|e| refuse(&e))?;
            ((!user.is_empty()).then_some(user), Some(password))
        }
    };
    let (transport, address, db) = match scheme {
        "redis" | "rediss" => {
            let (hostport, db) = match rest.split_once('/') {
                Some((hostport, "")) => (hostport, None),
                Some((hostport, db)) => (hostport, Some(number(db).map_err(|e| refuse(&e))?)),
                None => (rest, None),
            };
            let address = loopback(hostport).map_err(|e| refuse(&e))?;
            let transport = match (scheme, address.is_ipv4()) {
                ("rediss", _) => Transport::Tls,
                (_, true) => Transport::Tcp,
                (_, false) => Transport::Tcp6,
            };
            (transport, Address::Ip(address), db)
        }
        "unix" => {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            if !path.starts_with('/') {
                return Err(refuse("the socket's path must be absolute"));
            }
            let db = match query.strip_prefix("db=") {
                Some(db) => Some(number(db).map_err(|e| refuse(&e))?),
                None if query.is_empty() => None,
                None => return Err(refuse("the only option after ? is db=N")),
            };
            let path = decode(path).map_err(|e| refuse(&e))?;
            (Transport::Unix, Address::Path(PathBuf::from(path)), db)
        }
        other => {
            return Err(refuse(&format!(
                "{} is not a Redis URL scheme",
                crate::units::shown(other)
            )))
        }
    };
    // A name that is a transport's must be the transport the URL reaches: the
    // reference and the verdict go by it.
    if let Some(named) = name.and_then(|n| n.parse::<Transport>().ok()) {
        if named != transport {
            return Err(refuse(&format!(
                "{named} names a transport, and this URL reaches {transport}; name it \
                 {transport} or give it a name of its own"
            )));
        }
    }
    Ok(UserUrl {
        label: name.unwrap_or(transport.name()).to_string(),
        endpoint: Endpoint { transport, address },
        user,
        password,
        db,
    })
}

/// `url` with whatever stands before its host hidden (a password, in any scheme),
/// for an error message about it.
fn without_userinfo(url: &str) -> String {
    let shown = match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_string(),
        },
        None => match url.rsplit_once('@') {
            Some((_, host)) => format!("***@{host}"),
            None => url.to_string(),
        },
    };
    crate::units::shown(&shown).to_string()
}

/// `HOST[:PORT]` on this machine: `127.x.y.z`, `[::1]`, `localhost`.
fn loopback(hostport: &str) -> Result<SocketAddr, String> {
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an IPv6 host needs its ]")?;
        (host, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("{} is not a port", crate::units::shown(p)))?,
        None => DEFAULT_PORT,
    };
    let ip: IpAddr = match host {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        _ => host
            .parse()
            .map_err(|_| format!("{} is not an address", crate::units::shown(host)))?,
    };
    if !ip.is_loopback() {
        return Err(format!(
            "{ip} is not on this machine (sockbench measures local servers: a loopback \
             address or a Unix socket)"
        ));
    }
    Ok(SocketAddr::new(ip, port))
}

fn number(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("{} is not a database number", crate::units::shown(text)))
}

/// Percent-decoding, as URLs escape `@`, `:` and `/` in a password.
fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the decoded text is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_redis_clients_write_them() {
        let u = parse_text("redis://127.0.0.1:6380/2").unwrap();
        assert_eq!((u.label.as_str(), u.db), ("tcp", Some(2)));
        assert_eq!(u.endpoint.to_string(), "tcp:127.0.0.1:6380");
        let u = parse_text("cache=rediss://app:p%40ss@localhost").unwrap();
        assert_eq!(u.label, "cache");
        assert_eq!(u.endpoint.transport, Transport::Tls);
        assert_eq!(
            (u.user.as_deref(), u.password.as_deref()),
            (Some("app"), Some("p@ss"))
        );
        let u = parse_text("redis://:secret@[::1]").unwrap();
        assert_eq!(u.endpoint.transport, Transport::Tcp6);
        assert_eq!((u.user, u.password.as_deref()), (None, Some("secret")));
        let u = parse_text("unix://:pw@/run/redis/redis.sock?db=1").unwrap();
        assert_eq!(
            u.endpoint.address,
            Address::Path("/run/redis/redis.sock".into())
        );
        assert_eq!((u.label.as_str(), u.db), ("unix", Some(1)));
    }

    #[test]
    fn other_machines_and_bad_urls_are_refused_without_their_password() {
        for bad in [
            "redis://:hunter2@10.0.0.5:6379",
            "redis://:hunter2@example.com",
            "http://:hunter2@127.0.0.1",
            "unix://:hunter2@relative.sock",
            "redis://:hunter2@127.0.0.1:99999",
            "redis://:hunter2@127.0.0.1/x",
            "127.0.0.1:6379",
        ] {
            let e = parse_text(bad).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.starts_with("--url "), "{e}");
        }
        let e = parse_text("redis://10.0.0.5").unwrap_err().to_string();
        assert!(e.contains("not on this machine"), "{e}");
        let e = parse_text("unix=redis://127.0.0.1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("this URL reaches tcp"), "{e}");
        assert!(parse_text("tls=rediss://127.0.0.1").is_ok());
    }

    #[test]
    fn a_name_holds_letters_digits_and_dashes_as_the_postgresql_family_s_do() {
        let u = parse_text("cache-1.b_2=redis://127.0.0.1").unwrap();
        assert_eq!(u.label, "cache-1.b_2");
        let long = format!("{}=redis://127.0.0.1", "n".repeat(5_000));
        let e = parse_text(&long).unwrap_err().to_string();
        assert!(e.contains("5000 characters long; use at most 64"), "{e}");
        for bad in [
            "a\x1b[31mb=redis://127.0.0.1",
            "a\nb=redis://127.0.0.1",
            "a b=redis://127.0.0.1",
            "=redis://:hunter2@127.0.0.1",
            "a@b=redis://127.0.0.1",
        ] {
            let e = parse_text(bad).unwrap_err().to_string();
            assert!(
                e.contains("must be 1 to 64 letters, digits, '-', '_' or '.'"),
                "{e}"
            );
            assert!(!e.chars().any(char::is_control), "{e:?}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }
}
