//! The throwaway server's `redis.conf`: what it listens on, that it keeps nothing
//! on disk, and who may do what.
//!
//! The password reaches the server only through this file (never its command line,
//! which every local account can read in `/proc`), and even here only as its
//! SHA-256 (`#HASH` in the ACL rule). The one user, [`USER`], may run the commands
//! the experiments send and nothing that runs code or changes the server: no
//! scripting, no MODULE, CONFIG or DEBUG, none of `@dangerous`. The `default` user
//! is off, so a connection that has not authenticated can run no command at all.

use crate::error::usage;
use anyhow::{bail, Result};
use std::fmt::Write;
use std::net::IpAddr;
use std::path::Path;

/// The ACL user sockbench authenticates as.
pub const USER: &str = "sockbench";

/// Every command [`USER`] may run: what the experiments send (PING, GET, SET and
/// their neighbours for setting up values), and what a client sends on connecting
/// (AUTH, HELLO, SELECT, CLIENT SETNAME). Anything else is refused with NOPERM.
pub const COMMANDS: &[&str] = &[
    "ping",
    "echo",
    "get",
    "set",
    "mget",
    "mset",
    "setrange",
    "getrange",
    "strlen",
    "exists",
    "del",
    "auth",
    "hello",
    "select",
    "client|setname",
];

/// What the server is told.
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    /// The addresses it listens on by TCP: 127.0.0.1 on the host, the container's
    /// own in a container.
    pub bind: &'a [IpAddr],
    /// The TCP port on those addresses.
    pub port: u16,
    /// The TLS port on the same addresses, with the certificate and key files; `None` when
    /// the server is started without TLS.
    pub tls: Option<Tls<'a>>,
    /// The server's own directory: its socket and pid file are there.
    pub dir: &'a Path,
    /// SHA-256 of [`USER`]'s password, in hexadecimal.
    pub password_sha256: &'a str,
}

#[derive(Debug, Clone, Copy)]
pub struct Tls<'a> {
    pub port: u16,
    pub cert: &'a Path,
    pub key: &'a Path,
}

/// The socket and pid file names in the server's directory.
pub const SOCKET: &str = "redis.sock";
pub const PID_FILE: &str = "redis.pid";

/// The text of `redis.conf`.
pub fn text(s: &Settings) -> Result<String> {
    let mut out = String::new();
    let mut line = |key: &str, value: &str| {
        let _ = writeln!(out, "{key} {value}");
    };
    line("daemonize", "no");
    line("supervised", "no");
    line("logfile", "\"\"");
    line("always-show-logo", "no");
    // What it listens on: the addresses given only (127.0.0.1 on the host), and a
    // socket only its account can open.
    let bind: Vec<String> = s.bind.iter().map(IpAddr::to_string).collect();
    if bind.is_empty() {
        bail!("the server must listen on some address");
    }
    line("bind", &bind.join(" "));
    line("protected-mode", "yes");
    line("port", &s.port.to_string());
    line("unixsocket", &quoted(&s.dir.join(SOCKET))?);
    line("unixsocketperm", "700");
    if let Some(tls) = &s.tls {
        line("tls-port", &tls.port.to_string());
        line("tls-cert-file", &quoted(tls.cert)?);
        line("tls-key-file", &quoted(tls.key)?);
        line("tls-auth-clients", "no");
    }
    line("dir", &quoted(s.dir)?);
    line("pidfile", &quoted(&s.dir.join(PID_FILE))?);
    // Nothing on disk: no RDB snapshot (not even at shutdown), no append-only file.
    line("save", "\"\"");
    line("appendonly", "no");
    // Nothing that runs code or changes the server, whoever connects.
    line("enable-debug-command", "no");
    line("enable-module-command", "no");
    line("enable-protected-configs", "no");
    line("user", "default off");
    line("user", &acl_rule(s.password_sha256)?);
    Ok(out)
}

/// The ACL rule of [`USER`]: on, its password's hash, every key, no channel, and
/// only [`COMMANDS`].
fn acl_rule(password_sha256: &str) -> Result<String> {
    if password_sha256.len() != 64 || !password_sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("the password hash must be 64 hexadecimal characters");
    }
    let commands: String = COMMANDS.iter().map(|c| format!(" +{c}")).collect();
    Ok(format!(
        "{USER} reset on #{password_sha256} ~* resetchannels -@all{commands}"
    ))
}

/// SHA-256 of `password`, in lowercase hexadecimal, as the ACL's `#` rule takes it.
pub fn sha256_hex(password: &str) -> String {
    openssl::sha::sha256(password.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new random password: 32 hexadecimal characters (128 bits) from OpenSSL's
/// generator.
pub fn random_password() -> String {
    let mut bytes = [0u8; 16];
    openssl::rand::rand_bytes(&mut bytes).expect("OpenSSL's random generator works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A path as one argument of a `redis.conf` line: in double quotes, with `\` and
/// `"` escaped. A path that is not UTF-8 or holds a control character is refused
/// (Redis would read it differently).
fn quoted(path: &Path) -> Result<String> {
    // The paths are in TMPDIR: refused as bad input, as every TMPDIR is.
    let Some(text) = path.to_str() else {
        return Err(usage(format!(
            "{} (in TMPDIR) is not UTF-8; set TMPDIR to a plain directory such as /tmp",
            path.display()
        )));
    };
    if text.chars().any(char::is_control) {
        return Err(usage(format!(
            "{text:?} (in TMPDIR) holds a control character; set TMPDIR to a plain directory \
             such as /tmp"
        )));
    }
    Ok(format!(
        "\"{}\"",
        text.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCALHOST: [IpAddr; 1] = [IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)];

    fn settings<'a>(dir: &'a Path, hash: &'a str) -> Settings<'a> {
        Settings {
            bind: &LOCALHOST,
            port: 7000,
            tls: Some(Tls {
                port: 7001,
                cert: Path::new("/t/s/server.crt"),
                key: Path::new("/t/s/server.key"),
            }),
            dir,
            password_sha256: hash,
        }
    }

    #[test]
    fn the_file_holds_the_hash_of_the_password_not_the_password() {
        let password = random_password();
        assert_eq!(password.len(), 32);
        assert_ne!(password, random_password());
        let hash = sha256_hex("hunter2");
        assert_eq!(
            hash,
            "f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7"
        );
        let text = text(&settings(Path::new("/t/s"), &hash)).unwrap();
        assert!(!text.contains("hunter2"));
        assert!(text.contains(&format!(" #{hash} ")), "{text}");
        assert!(text.contains("user default off\n"), "{text}");
    }

    #[test]
    fn nothing_is_kept_on_disk_and_no_command_runs_code() {
        let hash = sha256_hex("x");
        let text = text(&settings(Path::new("/t/s"), &hash)).unwrap();
        for wanted in [
            "save \"\"\n",
            "appendonly no\n",
            "bind 127.0.0.1\n",
            "protected-mode yes\n",
            "unixsocketperm 700\n",
            "tls-port 7001\n",
            "tls-auth-clients no\n",
            "enable-debug-command no\n",
            "enable-module-command no\n",
            "enable-protected-configs no\n",
        ] {
            assert!(text.contains(wanted), "{wanted:?} missing from\n{text}");
        }
        let rule = text.lines().find(|l| l.contains(USER)).unwrap();
        assert!(rule.contains("-@all"), "{rule}");
        for forbidden in [
            "@scripting",
            "eval",
            "module",
            "config",
            "debug",
            "+@",
            "&*",
        ] {
            assert!(!rule.contains(forbidden), "{forbidden} in {rule}");
        }
    }

    #[test]
    fn in_a_container_it_listens_on_the_containers_addresses_only() {
        let hash = sha256_hex("x");
        let addresses = ["198.18.3.2", "198.18.3.10"].map(|a| a.parse().unwrap());
        let mut s = settings(Path::new("/t/s"), &hash);
        s.bind = &addresses;
        let text = text(&s).unwrap();
        assert!(text.contains("\nbind 198.18.3.2 198.18.3.10\n"), "{text}");
        s.bind = &[];
        assert!(super::text(&s).is_err());
    }

    #[test]
    fn without_tls_no_tls_line_is_written() {
        let hash = sha256_hex("x");
        let mut s = settings(Path::new("/t/s"), &hash);
        s.tls = None;
        assert!(!text(&s).unwrap().contains("tls"));
    }

    #[test]
    fn paths_are_quoted_and_odd_ones_refused() {
        assert_eq!(quoted(Path::new("/t/a b")).unwrap(), "\"/t/a b\"");
        assert_eq!(quoted(Path::new("/t/a\"b\\")).unwrap(), "\"/t/a\\\"b\\\\\"");
        let e = quoted(Path::new("/t/a\nuser x on nopass")).unwrap_err();
        assert_eq!(
            crate::error::exit_code(&e),
            2,
            "a TMPDIR refusal is bad input"
        );
        assert!(acl_rule("nothex").is_err());
    }
}
