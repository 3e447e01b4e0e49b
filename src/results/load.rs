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
/// Rates, which the report divides by (a zero rate was printed as "+inf%").
const RATES: [&str; 6] = [
    "conn_per_s",
    "ops_per_s",
    "bytes_per_s",
    "qps",
    "rows_per_s",
    "tps",
];
/// Where every figure is a headline or a ratio of two, which the report also divides
/// by or takes the logarithm of.
const POSITIVE_PARTS: [&str; 3] = ["headline.spread", "headline.interval", ".ratio."];
/// No rate, headline or ratio a measurement gives comes near this: one operation in
/// eleven days, a millionth of a nanosecond, a ratio of a million to one. It keeps
/// zero and subnormal numbers out, whose reciprocals are infinite.
const MIN_POSITIVE: f64 = 1e-6;

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
    // serde_json keeps the last of two equal keys: a second `results` would hide the
    // first from every check below.
    serde_json::from_str::<unique::Unique>(&text).map_err(|e| {
        usage(format!(
            "{shown} {e}; it was damaged or edited, re-run the measurement"
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
            let positive =
                RATES.contains(&field) || POSITIVE_PARTS.iter().any(|p| path.contains(p));
            if positive && x < MIN_POSITIVE {
                return Err(format!(
                    "{path} is {n}, not a positive figure ({field} cannot be zero)"
                ));
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
        Value::Object(fields) => {
            for (low, high) in [("min", "max"), ("low", "high")] {
                let bound = |k| fields.get(k).and_then(Value::as_f64);
                if let (Some(l), Some(h)) = (bound(low), bound(high)) {
                    if l > h {
                        return Err(format!("{path}.{low} is {l}, above {path}.{high} ({h})"));
                    }
                }
            }
            fields
                .iter()
                .try_for_each(|(k, v)| check_values(v, &format!("{path}.{k}")))
        }
        _ => Ok(()),
    }
}

/// A JSON document read only to find an object that holds a key twice.
mod unique {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    pub struct Unique;

    impl<'de> Deserialize<'de> for Unique {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
            d.deserialize_any(Walk)
        }
    }

    struct Walk;

    impl<'de> Visitor<'de> for Walk {
        type Value = Unique;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_unit<E>(self) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Unique, A::Error> {
            while items.next_element::<Unique>()?.is_some() {}
            Ok(Unique)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<Unique, A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = fields.next_key::<String>()? {
                fields.next_value::<Unique>()?;
                if !keys.insert(key.clone()) {
                    return Err(A::Error::custom(format!(
                        "holds the field \"{}\" twice in one object",
                        crate::units::shown(&key)
                    )));
                }
            }
            Ok(Unique)
        }
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
    fn zero_and_subnormal_rates_and_crossed_ranges_are_refused() {
        let cases = [
            (
                json!([{"metrics": {"qps": 0.0}}]),
                "results[0].metrics.qps is 0",
            ),
            (
                json!([{"metrics": {"bytes_per_s": 5e-324}}]),
                "results[0].metrics.bytes_per_s",
            ),
            (
                json!([{"headline": {"spread": {"median": 0.0, "min": 0.0, "max": 0.0}}}]),
                "is 0.0, not a positive figure",
            ),
            (
                json!([{"headline": {"spread": {"median": 5.0, "min": 9.0, "max": 2.0}}}]),
                "results[0].headline.spread.min is 9, above results[0].headline.spread.max",
            ),
            (
                json!([{"headline": {"vs_reference": {"ratio":
                    {"estimate": 1.0, "low": 1.5, "high": 0.5, "n": 5}}}}]),
                "results[0].headline.vs_reference.ratio.low is 1.5, above",
            ),
        ];
        for (results, named) in cases {
            let e = check_values(&results, "results").unwrap_err();
            assert!(e.contains(named), "{e}");
        }
        let fine = json!([{"metrics": {"qps": 25000.0, "failed": 0},
                           "headline": {"spread": {"median": 5.0, "min": 4.0, "max": 6.0}},
                           "vs_fastest": 0.0, "trials": [{"elapsed_ns": 5}]}]);
        assert_eq!(check_values(&fine, "results"), Ok(()));
    }

    #[test]
    fn a_key_given_twice_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("twice.json");
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sockets.json"
        ))
        .unwrap();
        let doubled = text.replacen('{', "{\"results\": [],", 1);
        std::fs::write(&path, doubled).unwrap();
        let e = load(&path, |_| None).unwrap_err().to_string();
        assert!(
            e.contains("twice.json holds the field \"results\" twice"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
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
