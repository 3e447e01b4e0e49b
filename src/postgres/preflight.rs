//! Checks made before any measuring, so that what cannot work fails at once with one
//! line instead of after the cluster is up or half-way through a run: the script
//! runs, the server has connection slots for the clients, and a user's server really
//! uses the authentication method its `--auth-url` names.

use super::experiment::Target;
use super::hba::{self, AuthMethod, ProbeAddr, StartupReply};
use super::libpq::PgConn;
use super::script::{Bindings, Rng, Script};
use crate::error::usage;
use anyhow::Result;

/// Runs the concurrent clients' script once (as a warm-up transaction would), its
/// `\set`s evaluated and its variables written as text.
pub fn script_runs(target: &Target, script: &Script) -> Result<()> {
    let conn = PgConn::connect(&target.params)?;
    let mut bindings = Bindings::new(script, 0);
    let mut rng = Rng::new(1);
    for (i, command) in script.commands.iter().enumerate() {
        bindings
            .run(&command.sets, &mut rng)
            .map_err(|e| usage(format!("--script: {e}; fix the script")))?;
        let text = bindings.text(command).to_owned();
        conn.exec(&text).map_err(|e| {
            usage(format!(
                "--script: command {} ({}) fails on {}: {e}; fix the script",
                i + 1,
                text.to_string_lossy(),
                target.label
            ))
        })?;
    }
    Ok(())
}

/// The server lets `clients` connections in at once (a user's server: sockbench
/// sizes its own cluster to the plan).
pub fn slots_for(target: &Target, clients: u32) -> Result<()> {
    let conn = PgConn::connect(&target.params)?;
    let slots: i64 = conn
        .query_value(
            "SELECT current_setting('max_connections')::int \
             - current_setting('superuser_reserved_connections')::int",
        )?
        .parse()
        .unwrap_or(i64::MAX);
    if i64::from(clients) > slots {
        return Err(usage(format!(
            "--clients {clients}: the server behind {} takes at most {slots} connections \
             (max_connections less the reserved ones); ask for fewer clients",
            target.label
        )));
    }
    Ok(())
}

/// The user's server asks for the authentication `method` names: a password or
/// none, and where a plain startup message can tell, which exchange.
pub fn auth_is(target: &Target, method: AuthMethod) -> Result<()> {
    let conn = PgConn::connect(&target.params)?;
    let wants_password = !matches!(method, AuthMethod::Trust | AuthMethod::Peer);
    let mismatch = |what: &str| {
        usage(format!(
            "--auth-url {method}: the server {what}, so this is not {method} authentication; \
             give a URL the server authenticates with {method}, or name the method it uses"
        ))
    };
    if conn.used_password() != wants_password {
        return Err(mismatch(if wants_password {
            "did not ask for a password"
        } else {
            "asked for a password"
        }));
    }
    if method == AuthMethod::Peer && !target.unix_socket {
        return Err(mismatch("was reached over TCP"));
    }
    if let Some(StartupReply::Request(code)) = startup_answer(target) {
        let expected = method.expected().0;
        if method != AuthMethod::Peer && StartupReply::Request(code) != expected {
            return Err(mismatch(&format!(
                "answers with {}",
                match code {
                    0 => "no authentication",
                    3 => "a cleartext password request",
                    5 => "an md5 challenge",
                    10 => "SCRAM (SASL)",
                    _ => "another method",
                }
            )));
        }
    }
    Ok(())
}

/// What the server answers a plain startup message for the target's user and
/// database, when the target names one host without TLS; `None` when that cannot
/// be asked.
fn startup_answer(target: &Target) -> Option<StartupReply> {
    let get = |k: &str| target.params.get(k);
    if get("sslmode").as_deref() == Some("require") || target.tls.is_some() {
        return None;
    }
    let host = get("host").or_else(|| get("hostaddr"))?;
    let port: u16 = get("port").unwrap_or_else(|| "5432".into()).parse().ok()?;
    let user = get("user")?;
    let database = get("dbname").unwrap_or_else(|| user.clone());
    if host.contains(',') {
        return None;
    }
    let answer = if host.starts_with('/') {
        let socket = std::path::Path::new(&host).join(format!(".s.PGSQL.{port}"));
        hba::probe_as(&ProbeAddr::Unix(&socket), &user, &database)
    } else {
        hba::probe_as(&ProbeAddr::Host(&host, port), &user, &database)
    };
    answer.ok()
}
