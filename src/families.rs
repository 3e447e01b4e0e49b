//! The server families sockbench measures, registered in one list. A new family is
//! one folder declaring a [`Family`] and one line here.
//!
//! What sockbench does for every family goes through this list, never through a
//! family by name: the commands (`cli.rs`), the catalog of experiments, the default
//! `sockbench run` (each family's [`Family::run`], in this order), the sweep of
//! abandoned temporary directories, and the hiding of secrets.

use crate::leftovers::DirKind;
use crate::report::experiment::{Catalog, ServerName};
use crate::report::family::Family;

/// Every family, in the order reports list their experiments and `run` measures them:
/// one line each.
#[rustfmt::skip]
pub static FAMILIES: &[&Family] = &[
    &crate::sockets::FAMILY,
    &crate::postgres::FAMILY,
    &crate::redis::FAMILY,
    &crate::proxy::FAMILY,
];

/// Every experiment of every family, and the servers they measure.
pub fn catalog() -> Catalog {
    let servers = FAMILIES.iter().filter_map(|f| {
        Some(ServerName {
            family: f.name,
            product: f.server?,
        })
    });
    Catalog::new(FAMILIES.iter().flat_map(|f| f.experiments.iter().copied())).with_servers(servers)
}

/// Every kind of temporary directory the families make, for the sweep of the ones
/// killed runs left (`leftovers::sweep_temp`).
pub fn leftover_kinds() -> Vec<DirKind> {
    FAMILIES
        .iter()
        .flat_map(|f| f.leftovers.iter().copied())
        .collect()
}

/// The command line as the result file may keep it: every argument as the
/// redaction of the family whose command it is shows it (every family's for `run`
/// and the other commands).
pub fn redact_arguments(argv: Vec<String>) -> Vec<String> {
    let redactions = redactions(&argv);
    argv.into_iter()
        .map(|arg| redactions.iter().fold(arg, |arg, r| (r.argument)(&arg)))
        .collect()
}

/// An error message as it may be printed: no secret of the command line (`argv`)
/// in it, by the redaction of the family whose command it is (every family's for
/// the other commands).
pub fn redact_message(text: &str, argv: &[String]) -> String {
    redactions(argv)
        .iter()
        .fold(text.to_string(), |text, r| (r.message)(&text, argv))
}

/// The redactions that apply to `argv` (with or without the program's name
/// first): the named family's only, so that one family's URL is shown as that
/// family hides it rather than as another's caution hides it whole.
fn redactions(argv: &[String]) -> Vec<crate::report::family::Redaction> {
    let named = argv
        .iter()
        .take(2)
        .find_map(|a| FAMILIES.iter().find(|f| f.name == a));
    match named {
        Some(family) => family.redaction.into_iter().collect(),
        None => FAMILIES.iter().filter_map(|f| f.redaction).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_id_is_its_family_then_a_unique_name() {
        let mut seen = std::collections::BTreeSet::new();
        for family in FAMILIES {
            for e in family.experiments {
                let (first, name) = e.id.split_once('.').expect("family.name");
                assert_eq!(first, family.name, "{}", e.id);
                let word = |w: &str| {
                    w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                };
                assert!(
                    word(first) && word(name),
                    "{} fits the schema's pattern",
                    e.id
                );
                assert!(seen.insert(e.id), "{} twice", e.id);
                assert_eq!(catalog().find(e.id), Some(*e));
            }
        }
        assert_eq!(catalog().find("sockets.teleport"), None);
    }

    #[test]
    fn every_leftover_kind_has_its_own_prefix() {
        let kinds = leftover_kinds();
        assert!(!kinds.is_empty());
        for (i, a) in kinds.iter().enumerate() {
            assert!(a.prefix.starts_with("sockbench-"), "{}", a.prefix);
            for b in &kinds[i + 1..] {
                assert!(
                    !a.prefix.starts_with(b.prefix) && !b.prefix.starts_with(a.prefix),
                    "{} and {} overlap: one family's sweep would judge the other's",
                    a.prefix,
                    b.prefix
                );
            }
        }
    }

    #[test]
    fn a_family_command_is_hidden_by_its_own_redaction() {
        let url = "--url=tcp=redis://:hunter2@127.0.0.1:6379";
        let saved = redact_arguments(vec!["redis".into(), url.into()]);
        assert_eq!(saved[1], "--url=tcp=redis://:***@127.0.0.1:6379");
        // Where the command names no family, every redaction applies.
        let saved = redact_arguments(vec!["report".into(), url.into()]);
        assert!(!saved[1].contains("hunter2"), "{saved:?}");
    }

    #[test]
    fn secrets_are_hidden_by_the_family_that_knows_them() {
        let url = "--url=postgresql://me:hunter2@localhost/db";
        let argv = vec!["postgres".to_string(), url.to_string(), "--quick".into()];
        let saved = redact_arguments(argv.clone());
        assert_eq!(saved[0], "postgres");
        assert_eq!(saved[2], "--quick");
        assert!(!saved[1].contains("hunter2"), "{}", saved[1]);
        let message = redact_message(&format!("cannot connect with {url}"), &argv);
        assert!(!message.contains("hunter2"), "{message}");
        assert!(message.starts_with("cannot connect with "), "{message}");
        // Text with no secret is untouched.
        assert_eq!(redact_message("plain", &argv), "plain");
    }
}
