//! Passwords out of everything sockbench writes or prints: the command line saved
//! in the result file, and the error messages that echo an argument.
//!
//! What is a password is decided by libpq's own parse of the text
//! (`PQconninfoParse`), the same parse psql applies, not by looking for
//! `password=` in it: spaces around `=`, quoted values and URI escapes are all read
//! as libpq reads them. Text libpq cannot parse but that looks as if it might hold
//! a password is hidden whole.

use super::libpq::parse_conninfo;

/// What stands for a hidden value.
pub const HIDDEN: &str = "***";

/// How an argument that may hold a connection string is to be shown.
enum Verdict {
    /// No password in it.
    Clean,
    /// A password; these are its parsed pairs (`NAME=` prefix, if any, apart).
    Secret {
        prefix: String,
        pairs: Vec<(String, String)>,
    },
    /// Unparseable and suspicious: hide it whole.
    Opaque,
}

/// The places a connection string may start in one argument: the whole of it, or
/// after `--url=`, `NAME=` or both.
fn starts(arg: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(arg.match_indices('=').take(2).map(|(i, _)| i + 1))
}

fn judge(arg: &str) -> Verdict {
    let mut unparsed = false;
    for start in starts(arg) {
        match parse_conninfo(&arg[start..]) {
            Ok(pairs) if pairs.iter().any(|(k, v)| k == "password" && !v.is_empty()) => {
                return Verdict::Secret {
                    prefix: arg[..start].to_string(),
                    pairs,
                }
            }
            Ok(_) => {}
            Err(_) => unparsed = true,
        }
    }
    let suspicious = arg.to_ascii_lowercase().contains("password") || userinfo_password(arg);
    if unparsed && suspicious {
        Verdict::Opaque
    } else {
        Verdict::Clean
    }
}

/// True when `arg` holds a URI whose user part carries a password (`//user:pw@`).
fn userinfo_password(arg: &str) -> bool {
    arg.match_indices("://").any(|(i, _)| {
        let rest = &arg[i + 3..];
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        authority
            .rfind('@')
            .is_some_and(|at| authority[..at].contains(':'))
    })
}

/// `arg` as it may be shown or saved: its password replaced by [`HIDDEN`].
pub fn argument(arg: &str) -> String {
    match judge(arg) {
        Verdict::Clean => arg.to_string(),
        Verdict::Secret { prefix, pairs } => format!("{prefix}{}", keywords(&pairs)),
        Verdict::Opaque => HIDDEN.to_string(),
    }
}

/// `text` (e.g. an error message) with every argument of `argv` that holds a
/// password replaced by its shown form.
pub fn message(text: &str, argv: &[String]) -> String {
    let mut shown = text.to_string();
    for arg in argv {
        if !matches!(judge(arg), Verdict::Clean) && !arg.is_empty() {
            shown = shown.replace(arg.as_str(), &argument(arg));
        }
    }
    shown
}

/// libpq's complaint about `text`, which it could not parse, as it may be shown:
/// libpq quotes the part it stumbled on (`missing "=" after "…"`, `… in URI:
/// "…"`), which may be the whole text with its password. When `text` looks as if it
/// holds one, every quoted part taken from `text` is hidden; a part that cannot hold
/// a password (a single character such as `"="`) is kept, to say what is wrong.
pub fn parse_error(message: &str, text: &str) -> String {
    if matches!(judge(text), Verdict::Clean) && !userinfo_password(text) {
        return message.to_string();
    }
    let mut shown = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        let Some(len) = rest[open + 1..].find('"') else {
            break;
        };
        let quoted = &rest[open + 1..open + 1 + len];
        shown.push_str(&rest[..=open]);
        if quoted.chars().count() > 1 && text.contains(quoted) {
            shown.push_str(HIDDEN);
        } else {
            shown.push_str(quoted);
        }
        shown.push('"');
        rest = &rest[open + len + 2..];
    }
    shown.push_str(rest);
    shown
}

/// Parsed pairs as a libpq keyword/value string, the password hidden.
pub fn keywords(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let v = if k == "password" { HIDDEN } else { v };
            if v.is_empty() || v.contains([' ', '\'', '\\']) {
                format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_found_as_libpq_reads_them() {
        for (arg, secret) in [
            (
                "x=host=127.0.0.1 user=bob password = Hunter2Secret",
                "Hunter2Secret",
            ),
            ("x=host=127.0.0.1 password='open sesame'", "sesame"),
            ("x=postgres://bob@h/db?password=Hunter2&Secret=1", "Secret"),
            ("x=postgres://bob:Hunter2%26Secret@h/db", "Secret"),
            ("--url=x=postgres://bob:Hunter2Secret@h/db", "Hunter2Secret"),
            (
                "postgres://bob:Hunter2Secret@h/db?sslmode=require",
                "Hunter2Secret",
            ),
            (
                "x=host=h password='unterminated Hunter2Secret",
                "Hunter2Secret",
            ),
        ] {
            let shown = argument(arg);
            assert!(!shown.contains(secret), "{arg} shown as {shown}");
            assert!(!shown.contains("Hunter2"), "{arg} shown as {shown}");
        }
        assert_eq!(
            argument("tcp=postgres://bob:pw@127.0.0.1:5432/foo"),
            "tcp=user=bob password=*** dbname=foo host=127.0.0.1 port=5432"
        );
    }

    #[test]
    fn arguments_without_passwords_are_kept_as_typed() {
        for arg in [
            "--url",
            "unix=postgres://foo@?host=/tmp&port=5432",
            "--experiments=query,rows",
            "0.5M,1M",
        ] {
            assert_eq!(argument(arg), arg);
        }
    }

    #[test]
    fn parse_errors_hide_what_libpq_quotes() {
        for text in [
            "http://bob:Hunter2Secret@127.0.0.1:47432/bob",
            "postgres://bob:Hunter2Secret@[::1/bob",
            "postgresql://bob:Hunter2Secret@[::1",
            "postgres://bob:Hunter2Secret%zz@h/db",
        ] {
            let e = parse_conninfo(text).unwrap_err().to_string();
            assert!(e.contains("Hunter2Secret"), "libpq no longer echoes: {e}");
            let shown = parse_error(&e, text);
            assert!(!shown.contains("Hunter2"), "{shown}");
            assert!(shown.contains(HIDDEN), "{shown}");
        }
        // Without a password, libpq's words stay, so the mistake can be found.
        let text = "postgres://foo@[::1/foo";
        let e = parse_conninfo(text).unwrap_err().to_string();
        assert_eq!(parse_error(&e, text), e);
    }

    #[test]
    fn messages_lose_the_arguments_passwords() {
        let argv = vec![
            "--url".to_string(),
            "postgres://u:Hunter2Secret@h/d".to_string(),
        ];
        let text = "error: unexpected argument 'postgres://u:Hunter2Secret@h/d' found";
        let shown = message(text, &argv);
        assert!(!shown.contains("Hunter2Secret"), "{shown}");
        assert!(shown.contains("password=***"), "{shown}");
    }
}
