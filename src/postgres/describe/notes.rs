//! The notes under a PostgreSQL table: its own footnotes (how passwords were stored,
//! what is not settled) and the legend every table of the run shares (the TLS each
//! transport negotiated, the server, how to read the figures), set into the block.

use crate::postgres::keys::*;
use crate::report::block::Block;
use crate::report::columns::{certainty_notes, legend, Columns};
use crate::report::difference::{BELOW_RESOLUTION, BELOW_RESOLUTION_NOTE};
use crate::report::experiment::Description;
use crate::report::format::short_version;
use crate::results::ResultRecord;

/// The block of `experiment` with the rows laid out and the footnotes.
pub(super) fn finish(
    experiment: &'static Description,
    table: Columns,
    records: &[ResultRecord],
) -> Block {
    let mut legend = legend_notes(records);
    let unresolved = table
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.text == BELOW_RESOLUTION);
    if unresolved {
        legend.push(BELOW_RESOLUTION_NOTE.into());
    }
    Block {
        notes: footnotes(records),
        legend,
        ..table.into_block(experiment, records)
    }
}

/// The notes of this table alone: how passwords were stored, what was not settled.
fn footnotes(records: &[ResultRecord]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for r in records {
        let uses_password = |m: &str| ["password", "md5", "scram-sha-256"].contains(&m);
        let stored = r.server.as_ref().and_then(ServerInfo::of);
        let stored = stored.and_then(|s| s.password_storage);
        if let (Some(m), Some(stored)) = (r.params.get(AUTH_METHOD), stored) {
            let note = format!("{m}: password stored as {stored}");
            if uses_password(&m) && !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    notes.extend(certainty_notes(records));
    notes
}

/// The notes every table of the run shares: the TLS each transport negotiated,
/// the server, how to read the figures.
fn legend_notes(records: &[ResultRecord]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut add = |note: String| {
        if !notes.contains(&note) {
            notes.push(note);
        }
    };
    for r in records {
        if let Some(tls) = &r.tls {
            add(format!(
                "{}: {} {}, {} certificate",
                r.transport, tls.version, tls.cipher, tls.certificate
            ));
        }
    }
    for r in records {
        if let Some(s) = &r.server {
            let short = short_version(&s.version);
            let whose = if s.throwaway {
                "throwaway cluster"
            } else {
                "your server"
            };
            add(format!("server ({whose}): {short}"));
        }
    }
    for note in legend(records) {
        add(note);
    }
    notes
}
