//! Loading a result file for `report` and `compare`: bounded (see `input.rs`), of
//! the format this sockbench reads, and holding only values a measurement can
//! produce. A file that fails any check is refused in one line that names the
//! field, so a damaged or hand-edited file is never printed as if measured.

use crate::error::usage;
use crate::results::metric::Metric;
use crate::results::paired::pair;
use crate::results::{ResultFile, SCHEMA_VERSION};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// Larger than any result file sockbench writes (a full run is about 150 KB).
const MAX_FILE_BYTES: u64 = 64 << 20;
/// No measured time (ns), rate (/s), size or count reaches this.
const MAX_MAGNITUDE: f64 = 1e15;
/// Figures that are differences or fits, and so may be below zero.
const MAY_BE_NEGATIVE: [&str; 4] = ["intercept_ns", "auth_ns", "handshake_ns", "r2"];

/// The oldest result format this sockbench reads: format 2 lacks only the intervals,
/// which are computed from its trials on loading.
const OLDEST_FORMAT: u32 = 2;

/// Reads a result file, or says in one line why it cannot be reported; `headline`
/// gives the headline figure of each experiment id this sockbench knows.
pub fn load(path: &Path, headline: impl Fn(&str) -> Option<Metric>) -> Result<ResultFile> {
    let shown = path.display();
    let text = crate::input::read_text(path, MAX_FILE_BYTES).map_err(|e| {
        usage(format!(
            "cannot read {shown}: {e}; give a result file written by sockbench"
        ))
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{shown} is not JSON ({e}); give a result file written by sockbench --json"
        ))
    })?;
    check_format(&value).map_err(|e| usage(format!("{shown} {e}")))?;
    if let Err(e) = check_values(&value["results"], "results") {
        return Err(usage(format!(
            "{shown} holds an impossible value: {e}; it was damaged or edited, re-run the \
             measurement"
        )));
    }
    let mut file: ResultFile = serde_json::from_value(value)
        .map_err(|e| usage(format!("{shown} is not a valid sockbench result file: {e}")))?;
    if let Some(r) = file
        .results
        .iter()
        .find(|r| headline(&r.experiment).is_none())
    {
        return Err(usage(format!(
            "{shown} holds an experiment this sockbench does not know ({}); report it with \
             the sockbench that wrote it ({})",
            r.experiment, file.sockbench_version
        )));
    }
    if file.schema_version < SCHEMA_VERSION {
        upgrade(&mut file, headline);
    }
    Ok(file)
}

/// Fills in what an older format did not record: the intervals of every
/// experiment's records, from their trials.
fn upgrade(file: &mut ResultFile, headline: impl Fn(&str) -> Option<Metric>) {
    let mut ids: Vec<String> = Vec::new();
    for r in &file.results {
        if !ids.contains(&r.experiment) {
            ids.push(r.experiment.clone());
        }
    }
    for id in ids {
        let Some(metric) = headline(&id) else {
            continue;
        };
        let (mut of, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut file.results)
            .into_iter()
            .partition(|r| r.experiment == id);
        pair(&mut of, &metric);
        // Each experiment moves to the end in the order they first appear, so the
        // experiments keep their order.
        file.results = rest;
        file.results.extend(of);
    }
    file.schema_version = SCHEMA_VERSION;
}

/// The file's `schema_version` is one this sockbench reads.
fn check_format(value: &Value) -> Result<(), String> {
    let written_by = value
        .get("sockbench_version")
        .and_then(Value::as_str)
        .unwrap_or("another version");
    match value.get("schema_version") {
        None => Err(
            "is not a sockbench result file (no schema_version); give a file \
                     written by sockbench --json"
                .into(),
        ),
        Some(v) => match v.as_u64() {
            Some(v) if (u64::from(OLDEST_FORMAT)..=u64::from(SCHEMA_VERSION)).contains(&v) => {
                Ok(())
            }
            Some(v) => Err(format!(
                "has result format {v} (written by sockbench {written_by}); this sockbench \
                 reads formats {OLDEST_FORMAT} to {SCHEMA_VERSION}: re-run the measurement, or \
                 report it with the sockbench that wrote it"
            )),
            None => Err(format!(
                "has schema_version {v}, which is not a format number; give a file written \
                 by sockbench --json"
            )),
        },
    }
}

/// Every number under `value` is one a measurement can give, and every record has
/// trials; the error names the first field that is not.
fn check_values(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::INFINITY);
            let field = path.rsplit(['.', '[']).next().unwrap_or(path);
            let signed = MAY_BE_NEGATIVE.iter().any(|k| path.contains(k));
            if x.abs() > MAX_MAGNITUDE {
                return Err(format!("{path} is {n}"));
            }
            if x < 0.0 && !signed {
                return Err(format!("{path} is {n}, below zero ({field} cannot be)"));
            }
            Ok(())
        }
        Value::Array(items) => {
            if path.ends_with(".trials") && items.is_empty() {
                return Err(format!(
                    "{path} is empty (every figure is a median of trials)"
                ));
            }
            items
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| check_values(v, &format!("{path}[{i}]")))
        }
        Value::Object(fields) => fields
            .iter()
            .try_for_each(|(k, v)| check_values(v, &format!("{path}.{k}"))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn impossible_values_are_named_by_their_path() {
        let cases = [
            (
                json!([{"metrics": {"rtt_ns": {"p50": 1e308}}}]),
                "results[0].metrics.rtt_ns.p50",
            ),
            (
                json!([{"metrics": {"per_query_ns": -5.0}}]),
                "results[0].metrics.per_query_ns",
            ),
            (json!([{"trials": []}]), "results[0].trials is empty"),
            (
                json!([{}, {"trials": [{"elapsed_ns": -1}]}]),
                "results[1].trials[0].elapsed_ns",
            ),
        ];
        for (results, named) in cases {
            let e = check_values(&results, "results").unwrap_err();
            assert!(e.contains(named), "{e}");
        }
        let fine = json!([{"metrics": {"intercept_ns": -300.0, "auth_ns": -20.0, "r2": 0.99},
                           "trials": [{"elapsed_ns": 5}]}]);
        assert_eq!(check_values(&fine, "results"), Ok(()));
    }

    #[test]
    fn a_wrongly_typed_format_is_not_called_missing() {
        let e = check_format(&json!({"schema_version": "2"})).unwrap_err();
        assert!(e.contains("not a format number"), "{e}");
        let e = check_format(&json!({})).unwrap_err();
        assert!(e.contains("no schema_version"), "{e}");
        assert_eq!(
            check_format(&json!({"schema_version": SCHEMA_VERSION})),
            Ok(())
        );
    }
}
