//! How records of different files are matched: by experiment, transport and the
//! parameters that make a different measurement, and how such a match is named.

use crate::report::experiment::Experiment;
use crate::results::{Params, ResultRecord};

/// What makes two records of one experiment the same measurement.
#[derive(Debug, PartialEq)]
pub(super) struct Key {
    transport: String,
    case: Params,
}

impl Key {
    pub(super) fn of(r: &ResultRecord) -> Key {
        Key {
            transport: r.transport.clone(),
            case: case_of(&r.params),
        }
    }
}

/// The parameters that make a different measurement (not budgets such as durations
/// or batch sizes, which two runs may choose differently).
fn case_of(p: &Params) -> Params {
    Params {
        size: p.size,
        write_size: p.write_size,
        clients: p.clients,
        streams: p.streams,
        auth_method: p.auth_method.clone(),
        connect_per_transaction: p.connect_per_transaction,
        placement: p.placement.clone(),
        ..Params::default()
    }
}

pub(super) fn same_case(a: &Params, b: &Params) -> bool {
    case_of(a) == case_of(b)
}

/// `tcp`, `tcp, 64 B`, `unix, scram-sha-256`, `tls, 10 clients`.
pub(super) fn label(experiment: &Experiment, r: &ResultRecord) -> String {
    match experiment.case_label(&r.params) {
        case if case.is_empty() => r.transport.clone(),
        case => format!("{}, {case}", r.transport),
    }
}
