//! Lines an experiment makes itself ([`OwnLine`]): what the records of one
//! placement give its `says`, and how what it says becomes a [`Line`] beside the
//! others, written as they are: `Heading (case, placement): statement.`
//!
//! Such a line has no [`Pair`](super::Pair) of the reference against a transport,
//! so "In short", the count of comparisons not settled and the summary chart
//! leave it out: its sentence carries its own figures with their uncertainty, and
//! says itself when it is not settled.

use super::Line;
use crate::cpu::affinity::Placement;
use crate::report::columns::distinct;
use crate::report::experiment::{placement, Catalog, Description, OwnLine};
use crate::results::params::PLACEMENT;
use crate::results::ResultRecord;

/// The run's records at one placement, as an [`OwnLine`] reads them: its own
/// experiment's and any other's (a layer against the same work without it).
pub struct Placed<'r> {
    records: &'r [ResultRecord],
    catalog: &'r Catalog,
    placement: Option<Placement>,
}

impl<'r> Placed<'r> {
    /// The records of a run, at `placement` (none: where `--placement` did not
    /// choose).
    pub fn new(
        records: &'r [ResultRecord],
        catalog: &'r Catalog,
        placement: Option<Placement>,
    ) -> Placed<'r> {
        Placed {
            records,
            catalog,
            placement,
        }
    }

    /// The records of `experiment` at this placement, in the run's order.
    pub fn of(&self, experiment: &Description) -> Vec<&'r ResultRecord> {
        self.catalog
            .records_of(self.records, experiment)
            .into_iter()
            .filter(|r| r.params.get(PLACEMENT) == self.placement)
            .collect()
    }
}

/// What an [`OwnLine`] says: the case in words (`0 B responses`), and the
/// statement after the colon, without its final full stop.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub case: String,
    pub says: String,
}

/// The lines `own` makes of `experiment`'s records: one per placement they were
/// measured at, for each that gives it something to say.
pub(super) fn lines(
    experiment: &'static Description,
    own: &OwnLine,
    records: &[ResultRecord],
    catalog: &Catalog,
) -> Vec<Line> {
    let of = catalog.records_of(records, experiment);
    distinct(of.iter().copied(), |r| r.params.get(PLACEMENT))
        .into_iter()
        .filter_map(|at| {
            let said = (own.says)(&Placed::new(records, catalog, at))?;
            let placed = of
                .iter()
                .find(|r| r.params.get(PLACEMENT) == at)
                .and_then(|r| placement(&r.params))
                .map(|p| p.describe());
            let what = match placed {
                Some(p) => format!("{} ({}, {p})", own.heading, said.case),
                None => format!("{} ({})", own.heading, said.case),
            };
            Some(Line {
                sentence: format!("{what}: {}.", said.says),
                what,
                work: None,
                placement: placed,
                reference: String::new(),
                ratios: Vec::new(),
                pairs: Vec::new(),
                caveat: false,
                by_case: false,
                experiment: Some(experiment),
                reference_ns: 0.0,
            })
        })
        .collect()
}
