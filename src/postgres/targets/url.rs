//! The `--url` and `--auth-url` arguments as psql users write them.
//!
//! `--url` takes `NAME=URI`, a bare URI (`postgres://app@127.0.0.1:5432/app`), a
//! key=value conninfo (`host=/tmp port=5432 user=app`), or `NAME=` before a
//! conninfo. A conninfo itself begins with `word=`, so which it is is asked of
//! libpq's own parser, in this order:
//!
//! 1. text that starts with `postgres://` or `postgresql://` is a bare URI;
//! 2. `NAME=` followed by such a URI is a named URI (even when NAME is also a libpq
//!    keyword: no keyword takes a URI as its value);
//! 3. text libpq parses whole as a conninfo is a conninfo without a name (its first
//!    word is then a libpq keyword, or libpq would have refused it);
//! 4. `NAME=` whose NAME is no libpq keyword, followed by a conninfo libpq parses,
//!    is a named conninfo;
//! 5. anything else is refused, with libpq's complaint about the whole text.
//!
//! So a NAME that is a libpq keyword (`host`, `user`, …) goes only before a URI.

use super::super::libpq::{is_keyword, parse_conninfo};
use super::super::redact;
use std::str::FromStr;

/// One `--url`: the connection text, and the name the user gave its results.
#[derive(Debug, Clone)]
pub struct UrlArg {
    /// `None`: named after what it reaches (`unix`, `tcp`, `tls`).
    pub name: Option<String>,
    /// A URI or a key=value conninfo, as libpq takes it.
    pub uri: String,
}

impl FromStr for UrlArg {
    type Err = String;
    fn from_str(s: &str) -> Result<UrlArg, String> {
        let bare = |uri: &str| UrlArg {
            name: None,
            uri: uri.to_string(),
        };
        if is_uri(s) {
            return Ok(bare(s));
        }
        let split = s.split_once('=');
        if let Some((name, rest)) = split {
            if is_uri(rest) {
                return checked_name(name).map(|name| UrlArg {
                    name: Some(name),
                    uri: rest.to_string(),
                });
            }
        }
        let whole = parse_conninfo(s);
        if whole.is_ok() {
            return Ok(bare(s));
        }
        if let Some((name, rest)) = split {
            if !is_keyword(name) && !rest.is_empty() {
                let name = checked_name(name)?;
                return match parse_conninfo(rest) {
                    Ok(_) => Ok(UrlArg {
                        name: Some(name),
                        uri: rest.to_string(),
                    }),
                    // Named, but what follows is no connection string: say what
                    // libpq found wrong with it.
                    Err(e) => Err(format!(
                        "--url {name}: {}; write it as psql takes it, e.g. \
                         postgres://app@127.0.0.1:5432/app or 'host=/var/run/postgresql user=app'",
                        redact::parse_error(&e.to_string(), rest)
                    )),
                };
            }
        }
        let why = whole
            .err()
            .map(|e| redact::parse_error(&e.to_string(), s))
            .unwrap_or_default();
        Err(format!(
            "'{}' is neither a URI, a key=value connection string nor NAME= before one \
             ({why}); write it as psql takes it, e.g. postgres://app@127.0.0.1:5432/app, \
             'host=/var/run/postgresql user=app' or tcp=postgres://app@127.0.0.1/app",
            crate::units::shown(&redact::argument(s))
        ))
    }
}

fn is_uri(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// `name`, when it may name results (as every family's `--url` checks it).
fn checked_name(name: &str) -> Result<String, String> {
    crate::plan::url_name(name)
        .map(|()| name.to_string())
        .map_err(|why| format!("{why}; e.g. tcp=postgres://foo@127.0.0.1/foo"))
}

/// `METHOD=URI` from `--auth-url`: the method is always there, so the text is split
/// at its first `=`.
#[derive(Debug, Clone)]
pub struct NamedUrl {
    pub name: String,
    pub uri: String,
}

impl FromStr for NamedUrl {
    type Err = String;
    fn from_str(s: &str) -> Result<NamedUrl, String> {
        match s.split_once('=') {
            Some((name, uri)) if !uri.is_empty() => Ok(NamedUrl {
                name: checked_name(name)?,
                uri: uri.to_string(),
            }),
            _ => Err(format!(
                "expected METHOD=URI, e.g. scram-sha-256=postgres://foo@127.0.0.1/foo, got '{}'",
                crate::units::shown(&redact::argument(s))
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> (Option<String>, String) {
        let u: UrlArg = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
        (u.name, u.uri)
    }

    #[test]
    fn bare_named_and_conninfo_forms() {
        let uri = "postgres://app@127.0.0.1:55433/app";
        assert_eq!(parsed(uri), (None, uri.into()));
        assert_eq!(
            parsed(&format!("tcp={uri}")),
            (Some("tcp".into()), uri.into())
        );
        // A NAME that is also a libpq keyword, before a URI: still a name.
        assert_eq!(
            parsed(&format!("user={uri}")),
            (Some("user".into()), uri.into())
        );
        let info = "host=/tmp port=5432 user=app";
        assert_eq!(parsed(info), (None, info.into()));
        assert_eq!(
            parsed(&format!("mine={info}")),
            (Some("mine".into()), info.into())
        );
        assert_eq!(parsed("host = /tmp"), (None, "host = /tmp".into()));
    }

    #[test]
    fn refusals_name_the_forms_and_hide_passwords() {
        for bad in [
            "a b=host=h password=secret",
            "tcp=host=h password=secret nosuchkeyword=1",
            "=postgres://foo:secret@h",
        ] {
            let e = bad.parse::<UrlArg>().expect_err(bad);
            assert!(!e.contains("secret"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let long = format!("{}=postgres://foo@h/db", "n".repeat(65));
        let e = long.parse::<UrlArg>().expect_err("65 characters");
        assert!(e.contains("65 characters long; use at most 64"), "{e}");
        // The same words as the Redis family's, a control character escaped.
        let e = "a\x1bb=postgres://foo@h/db"
            .parse::<UrlArg>()
            .expect_err("ESC");
        assert!(
            e.contains("letters, digits, '-', '_' or '.', not 'a\\u{1b}b'"),
            "{e}"
        );
        let e = "nonsense".parse::<UrlArg>().expect_err("no =");
        assert!(e.contains("neither a URI"), "{e}");
    }

    #[test]
    fn auth_urls_split_at_the_first_equals_sign() {
        let named: NamedUrl = "password=host=/tmp user=x".parse().unwrap();
        assert_eq!(
            (named.name.as_str(), named.uri.as_str()),
            ("password", "host=/tmp user=x")
        );
        let e = "scram-sha-256".parse::<NamedUrl>().expect_err("no URI");
        assert!(e.contains("METHOD=URI"), "{e}");
    }
}
