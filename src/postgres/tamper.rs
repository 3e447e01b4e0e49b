//! What another local account could change on the throwaway cluster to skew the
//! figures, read before and after each experiment.
//!
//! Role `foo` is reachable by every local account (trust over TCP while
//! authentication is not measured), and a role may change its own defaults:
//! `ALTER ROLE foo SET jit_above_cost = 0` makes every later connection's queries many
//! times slower, with nothing to see in the figures but the figures. Preventing all of
//! it would mean measuring something else than a default connection, so sockbench
//! detects it instead: as the administrator it reads everything `foo` can change that
//! alters the measured work, and an experiment during which any of it changed is
//! refused (its records are not saved).
//!
//! Read: per-database and per-role settings (`pg_db_role_setting`: `ALTER ROLE … SET`,
//! `ALTER DATABASE … SET`), the role's attributes, the databases' connection limits,
//! and the functions, operators and schemas `foo` owns (a function or operator that
//! shadows a built-in one, or an extension `foo` created), each with the version of its
//! row. Not read: tables and other relations, which a user's `--script` may create
//! as it runs; and `foo`'s password, which the auth experiment itself rewrites (a
//! changed password fails the connections, it does not skew them).

use super::cluster::Cluster;
use super::hba::ROLE;
use super::libpq::Conn;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;

/// One line per fact; `{ROLE}` is the benchmark role.
const FACTS: &str = "
SELECT 'setting of role ' || coalesce(r.rolname, 'every role') || ' in database '
       || coalesce(d.datname, 'every database') || ': ' || array_to_string(s.setconfig, ', ')
  FROM pg_db_role_setting s
  LEFT JOIN pg_roles r ON r.oid = s.setrole
  LEFT JOIN pg_database d ON d.oid = s.setdatabase
UNION ALL
SELECT 'attributes of role ' || rolname || ': '
       || row(rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication,
              rolconnlimit, rolvaliduntil, rolbypassrls)::text
  FROM pg_roles WHERE rolname = '{ROLE}'
UNION ALL
SELECT 'database ' || datname || ': ' || row(datconnlimit, datallowconn, datistemplate)::text
  FROM pg_database
UNION ALL
SELECT 'function ' || oid::regprocedure::text || ' (row version ' || xmin || ')'
  FROM pg_proc WHERE proowner = '{ROLE}'::regrole
UNION ALL
SELECT 'operator ' || oid::regoperator::text || ' (row version ' || xmin || ')'
  FROM pg_operator WHERE oprowner = '{ROLE}'::regrole
UNION ALL
SELECT 'schema ' || nspname || ' (row version ' || xmin || ')'
  FROM pg_namespace
 WHERE nspowner = '{ROLE}'::regrole AND nspname NOT LIKE 'pg\\_%temp\\_%'
";

/// What `foo` could have changed, at one moment.
pub struct Facts {
    lines: BTreeSet<String>,
    /// Whether objects count (not while a user's script may create its own).
    objects: bool,
}

impl Facts {
    /// Reads the facts now, as the administrator, in `foo`'s database.
    pub fn read(cluster: &Cluster, objects: bool) -> Result<Facts> {
        let admin = Conn::connect(&cluster.admin_params().with(&[("dbname", ROLE)]))
            .context("cannot check the throwaway cluster's settings")?;
        let result = admin
            .exec(&std::ffi::CString::new(FACTS.replace("{ROLE}", ROLE))?)
            .context("cannot check the throwaway cluster's settings")?;
        let lines = (0..result.rows())
            .filter_map(|row| result.value(row, 0))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .filter(|line| objects || !is_object(line))
            .collect();
        Ok(Facts { lines, objects })
    }

    /// An error naming the first change since `self`, if anything changed.
    pub fn unchanged(&self, cluster: &Cluster, experiment: &str) -> Result<()> {
        let now = Facts::read(cluster, self.objects)?;
        let changed = now
            .lines
            .difference(&self.lines)
            .map(|l| format!("now {l}"))
            .chain(
                self.lines
                    .difference(&now.lines)
                    .map(|l| format!("gone: {l}")),
            )
            .next();
        if let Some(change) = changed {
            bail!(
                "the throwaway cluster was changed during {experiment} ({}): another local \
                 account (any account may log in as role {ROLE} over loopback) altered what \
                 the experiment measures, so its figures are not reported; run again when no \
                 one else uses the machine",
                change.chars().take(160).collect::<String>()
            );
        }
        Ok(())
    }
}

fn is_object(line: &str) -> bool {
    ["function ", "operator ", "schema "]
        .iter()
        .any(|p| line.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::cluster_tests::binaries_or_skip;
    use crate::transport::Transport;

    #[test]
    fn role_settings_and_shadowing_functions_made_by_foo_are_seen() {
        let Some(binaries) = binaries_or_skip("role_settings_and_shadowing_functions") else {
            return;
        };
        let cluster = Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).unwrap();
        // Any local account: role foo over TCP, trusted.
        let foo = Conn::connect(&cluster.params(Transport::Tcp).unwrap()).unwrap();

        let before = Facts::read(&cluster, true).unwrap();
        before.unchanged(&cluster, "postgres.query").unwrap();
        foo.query_value("ALTER ROLE foo SET jit_above_cost = 0")
            .unwrap();
        let e = before.unchanged(&cluster, "postgres.query").unwrap_err();
        let line = e.to_string();
        assert!(line.contains("changed during postgres.query"), "{line}");
        assert!(line.contains("jit_above_cost=0"), "{line}");
        assert!(!line.contains('\n'), "{line}");

        let before = Facts::read(&cluster, true).unwrap();
        let without_objects = Facts::read(&cluster, false).unwrap();
        foo.query_value(
            "CREATE FUNCTION public.generate_series(int, int) RETURNS SETOF int \
             LANGUAGE sql AS 'SELECT 1'",
        )
        .unwrap();
        let e = before.unchanged(&cluster, "postgres.rows").unwrap_err();
        assert!(e.to_string().contains("generate_series"), "{e}");
        // A user's script may create objects: then only settings count.
        without_objects
            .unchanged(&cluster, "postgres.concurrent")
            .unwrap();

        let before = Facts::read(&cluster, true).unwrap();
        foo.query_value("ALTER DATABASE foo SET work_mem = '64kB'")
            .unwrap();
        let e = before.unchanged(&cluster, "postgres.connect").unwrap_err();
        assert!(e.to_string().contains("in database foo"), "{e}");
    }
}
