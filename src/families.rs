//! The server families sockbench measures, registered in one list. A new family is
//! one folder declaring a [`Family`] and one line here.

use crate::report::experiment::{Catalog, Family};

/// Every family, in the order reports list their experiments.
pub static FAMILIES: [&Family; 2] = [&crate::sockets::FAMILY, &crate::postgres::FAMILY];

/// Every experiment of every family.
pub fn catalog() -> Catalog {
    Catalog::new(FAMILIES.iter().flat_map(|f| f.experiments.iter().copied()))
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
    fn each_named_experiment_is_described_by_its_own_entry() {
        use crate::postgres::experiment::PgExperiment;
        use crate::sockets::Workload;
        for w in Workload::ALL {
            assert_eq!(w.describe().id, format!("sockets.{w}"));
        }
        for e in PgExperiment::ALL {
            assert_eq!(e.describe().id, format!("postgres.{e}"));
        }
    }
}
