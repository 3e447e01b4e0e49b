//! How records of different files are matched: by experiment, transport and the
//! parameters that make a different measurement, and how such a match is named.

use crate::report::experiment::Description;
use crate::results::{Params, ResultRecord};

/// What makes two records of one experiment the same measurement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct CaseKey {
    transport: String,
    case: Params,
}

impl CaseKey {
    /// The key of `r`, a record of `experiment`: its transport and every parameter
    /// but the experiment's budgets, so a parameter a family adds tells cases apart
    /// without being listed here.
    pub(super) fn of(experiment: &Description, r: &ResultRecord) -> CaseKey {
        CaseKey {
            transport: r.transport.clone(),
            case: experiment.case_of(&r.params),
        }
    }
}

/// True when `a` and `b` are the same case of `experiment`.
pub(super) fn same_case(experiment: &Description, a: &Params, b: &Params) -> bool {
    experiment.case_of(a) == experiment.case_of(b)
}

/// `tcp`, `tcp, 64 B`, `unix, scram-sha-256`, `tls, 10 clients`.
pub(super) fn label(experiment: &Description, r: &ResultRecord) -> String {
    match experiment.case_label(&r.params) {
        case if case.is_empty() => r.transport.clone(),
        case => format!("{}, {case}", r.transport),
    }
}
