//! The server families sockbench measures, registered in one list. A new family is
//! one folder declaring a [`Family`] and one line here.

use crate::report::experiment::{Catalog, Family};

/// Every family, in the order reports list their experiments.
pub static FAMILIES: [&Family; 2] = [&crate::sockets::FAMILY, &crate::postgres::FAMILY];

/// Every experiment of every family.
pub fn catalog() -> Catalog {
    Catalog::new(FAMILIES.iter().flat_map(|f| f.experiments.iter().copied()))
}
