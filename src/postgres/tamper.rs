//! What could change the throwaway cluster's measured work without showing in the
//! figures, read right after the cluster is made and checked after each experiment.
//!
//! A role may change its own defaults: `ALTER ROLE foo SET jit_above_cost = 0` makes
//! every later connection's queries many times slower, with nothing to see in the
//! figures but the figures. No other local account can log in as role `foo` (see
//! `hba.rs`), but what runs as `foo` can (a user's `--script`), and so can whoever
//! acts as the server account. So as the administrator sockbench reads everything
//! `foo` can change that alters the measured work, once right after the cluster is
//! made (the clean baseline, [`super::cluster::Cluster::baseline`]), and an
//! experiment is refused (its records are not saved) when anything differs from that
//! baseline, before or after it ran: a change made before the first experiment
//! counts as much as one made during it.
//!
//! Read: per-database and per-role settings (`pg_db_role_setting`: `ALTER ROLE … SET`,
//! `ALTER DATABASE … SET`), the role's attributes, the databases' connection limits,
//! and the functions, operators and schemas `foo` owns (a function or operator that
//! shadows a built-in one, or an extension `foo` created), each with the version of its
//! row. Not read: tables and other relations, which a user's `--script` may create
//! as it runs; and `foo`'s password, which the auth experiment itself rewrites (a
//! changed password fails the connections, it does not skew them). The objects a
//! user's script makes are the script's own: while it runs they are not compared,
//! and after it they join the baseline.

use super::cluster::Cluster;
use super::hba::ROLE;
use super::libpq::PgConn;
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
#[derive(Debug, Clone)]
pub struct Facts {
    lines: BTreeSet<String>,
}

impl Facts {
    /// Reads the facts now, as the administrator, in `foo`'s database.
    pub fn read(cluster: &Cluster) -> Result<Facts> {
        let admin = PgConn::connect(&cluster.admin_params().with(&[("dbname", ROLE)]))
            .context("cannot check the throwaway cluster's settings")?;
        let result = admin
            .exec(&std::ffi::CString::new(FACTS.replace("{ROLE}", ROLE))?)
            .context("cannot check the throwaway cluster's settings")?;
        let lines = (0..result.rows())
            .filter_map(|row| result.value(row, 0))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        Ok(Facts { lines })
    }

    /// An error naming the first difference between the cluster now and `self` (the
    /// baseline), if there is one; objects count only when `objects` (not while a
    /// user's script may make its own).
    pub fn unchanged(&self, cluster: &Cluster, experiment: &str, objects: bool) -> Result<()> {
        let now = Facts::read(cluster)?;
        let counts = |l: &&String| objects || !is_object(l);
        let changed = now
            .lines
            .difference(&self.lines)
            .filter(counts)
            .map(|l| format!("now {l}"))
            .chain(
                self.lines
                    .difference(&now.lines)
                    .filter(counts)
                    .map(|l| format!("gone: {l}")),
            )
            .next();
        if let Some(change) = changed {
            bail!(
                "the throwaway cluster is not as it was made ({}), so {experiment}'s figures \
                 would not measure a default server and are not reported; if your --script \
                 changes settings of role {ROLE} or its database, take that out of it",
                crate::units::shown(&change)
            );
        }
        Ok(())
    }

    /// Takes the objects of `now` in place of this baseline's.
    pub fn take_objects(&mut self, now: Facts) {
        self.lines.retain(|l| !is_object(l));
        self.lines
            .extend(now.lines.into_iter().filter(|l| is_object(l)));
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
    use crate::postgres::args::PostgresArgs;
    use crate::postgres::cluster_tests::binaries_or_skip;
    use crate::postgres::experiment::Experiment;
    use crate::postgres::plan::PostgresPlan;
    use crate::postgres::suite::Suite;
    use crate::postgres::targets::cluster_targets;
    use crate::transport::Transport;

    /// One round of `experiment` on `cluster`, as `sockbench postgres` runs it.
    fn run(cluster: &mut Cluster, experiment: Experiment) -> Result<()> {
        let transports = [Transport::Unix, Transport::Tcp];
        let plan = PostgresPlan::from_args(&PostgresArgs {
            measuring: crate::plan::Measuring {
                trials: Some(1),
                ..crate::plan::Measuring::quick()
            },
            ..PostgresArgs::default()
        })?;
        let mut suite = Suite {
            targets: cluster_targets(cluster, &transports)?,
            auth_targets: Vec::new(),
            clusters: vec![cluster],
            methods: Vec::new(),
            budget: plan.budget.clone(),
            concurrent: plan.concurrent.clone(),
            rounds: plan.rounds,
            placements: plan.placements.clone(),
            progress: &crate::harness::Silent,
            per_query_ns: Default::default(),
            left_out: Default::default(),
        };
        suite.run(experiment).map(|_| ())
    }

    #[test]
    fn a_change_made_before_the_first_experiment_refuses_it() {
        let Some(binaries) = binaries_or_skip("a_change_made_before_the_first_experiment") else {
            return;
        };
        let mut cluster = Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).unwrap();
        run(&mut cluster, Experiment::Query).expect("a clean cluster is measured");
        // What runs as role foo (a user's script) can change its own defaults; a
        // change made before an experiment starts is as much a change.
        let foo = PgConn::connect(&cluster.params(Transport::Tcp).unwrap()).unwrap();
        foo.query_value("ALTER ROLE foo SET jit_above_cost = 0")
            .unwrap();
        drop(foo);
        let e = run(&mut cluster, Experiment::Query).expect_err("the change is seen");
        let line = format!("{e:#}");
        assert!(line.contains("not as it was made"), "{line}");
        assert!(line.contains("jit_above_cost=0"), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn role_settings_and_shadowing_functions_made_by_foo_are_seen() {
        let Some(binaries) = binaries_or_skip("role_settings_and_shadowing_functions") else {
            return;
        };
        let mut cluster = Cluster::start(&binaries, &[Transport::Unix, Transport::Tcp], 1).unwrap();
        let foo = PgConn::connect(&cluster.params(Transport::Tcp).unwrap()).unwrap();
        let baseline = cluster.baseline().expect("a baseline").clone();
        baseline
            .unchanged(&cluster, "postgres.query", true)
            .unwrap();

        foo.query_value(
            "CREATE FUNCTION public.generate_series(int, int) RETURNS SETOF int \
             LANGUAGE sql AS 'SELECT 1'",
        )
        .unwrap();
        let e = baseline
            .unchanged(&cluster, "postgres.rows", true)
            .unwrap_err();
        assert!(e.to_string().contains("generate_series"), "{e}");
        // A user's script may create objects: then only settings count, and after
        // it its objects are the baseline's.
        baseline
            .unchanged(&cluster, "postgres.concurrent", false)
            .unwrap();
        cluster.accept_objects().unwrap();
        let baseline = cluster.baseline().unwrap().clone();
        baseline.unchanged(&cluster, "postgres.rows", true).unwrap();

        foo.query_value("ALTER DATABASE foo SET work_mem = '64kB'")
            .unwrap();
        for objects in [true, false] {
            let e = baseline
                .unchanged(&cluster, "postgres.connect", objects)
                .unwrap_err();
            assert!(e.to_string().contains("in database foo"), "{e}");
        }
    }
}
