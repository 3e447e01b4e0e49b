//! Loading a result file for `report` and `compare`: bounded (see `input.rs`), of
//! the format this sockbench reads, and holding only values a measurement can
//! produce. A file that fails any check is refused in one line that names the
//! field, so a damaged or hand-edited file is never printed as if measured.

use crate::error::usage;
use crate::results::metric::{Declared, Unit, MAX_MAGNITUDE, MIN_POSITIVE};
use crate::results::paired::pair;
use crate::results::{ResultFile, SCHEMA_VERSION};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// Larger than any result file sockbench writes (a full run is about 150 KB).
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Where every figure is a headline or a ratio of two, which the report also divides
/// by or takes the logarithm of: each at least [`MIN_POSITIVE`].
const POSITIVE_PARTS: [&str; 3] = ["headline.spread", "headline.interval", ".ratio."];
/// Where every figure is a difference, which may be below zero: a comparison's
/// extra CPU per operation.
const SIGNED_PARTS: [&str; 1] = [".extra_cpu_ns."];

/// The oldest result format this sockbench reads: format 2 lacks only the intervals,
/// which are computed from its trials on loading.
const OLDEST_FORMAT: u32 = 2;

/// Reads a result file, or says in one line why it cannot be reported; `known`
/// gives the headline and the declared figures of each experiment id this
/// sockbench knows (a figure's unit and sign say which values are possible).
pub fn load(path: &Path, known: impl Fn(&str) -> Option<Declared>) -> Result<ResultFile> {
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
    let unknown = |r: &Value| {
        let id = r.get("experiment").and_then(Value::as_str);
        id.filter(|id| known(id).is_none()).map(str::to_string)
    };
    if let Some(id) = value["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(unknown)
    {
        return Err(usage(format!(
            "{shown} holds an experiment this sockbench does not know ({}); report it with \
             the sockbench that wrote it ({})",
            crate::units::shown(&id),
            value["sockbench_version"]
                .as_str()
                .unwrap_or("another version")
        )));
    }
    let declared = |r: &Value| {
        let id = r.get("experiment").and_then(Value::as_str).unwrap_or("");
        known(id)
    };
    if let Err(e) = check_records(&value["results"], declared) {
        return Err(usage(format!(
            "{shown} holds an impossible value: {e}; it was damaged or edited, re-run the \
             measurement"
        )));
    }
    let mut value = value;
    let format = value["schema_version"].as_u64().unwrap_or(0);
    if format < 4 {
        password_storage_into_server(&mut value);
    }
    if format < 6 {
        port_limited_into_count(&mut value);
    }
    let mut file: ResultFile = serde_json::from_value(value)
        .map_err(|e| usage(format!("{shown} is not a valid sockbench result file: {e}")))?;
    if format < 5 {
        upgrade(&mut file, |id| known(id).map(|d| d.headline));
    }
    file.schema_version = SCHEMA_VERSION;
    Ok(file)
}

/// Format 4 keeps everything a family says of its server in the record's
/// `server`: before, PostgreSQL's password storage stood beside it.
fn password_storage_into_server(value: &mut Value) {
    let Some(records) = value["results"].as_array_mut() else {
        return;
    };
    for r in records.iter_mut().filter_map(Value::as_object_mut) {
        let Some(stored) = r.remove("password_storage") else {
            continue;
        };
        if let Some(server) = r.get_mut("server").and_then(Value::as_object_mut) {
            server.insert("password_storage".into(), stored);
        }
    }
}

/// Format 6 keeps what a family says of one trial among its figures, numbers all:
/// before, a trial stopped early to spare ephemeral ports said `port_limited: true`.
fn port_limited_into_count(value: &mut Value) {
    let Some(records) = value["results"].as_array_mut() else {
        return;
    };
    let trials = records
        .iter_mut()
        .filter_map(|r| r.get_mut("trials")?.as_array_mut())
        .flatten()
        .filter_map(Value::as_object_mut);
    for trial in trials {
        match trial.remove("port_limited") {
            Some(Value::Bool(true)) => {
                trial.insert("port_limited".into(), 1.into());
            }
            Some(Value::Bool(false)) | None => {}
            Some(other) => {
                trial.insert("port_limited".into(), other);
            }
        }
    }
}

/// Recomputes what formats before 5 recorded otherwise or not at all, from the
/// trials: the intervals (format 2), TLS compared with tcp and the extra CPU of
/// each comparison (formats 2 to 4).
fn upgrade(
    file: &mut ResultFile,
    headline: impl Fn(&str) -> Option<crate::results::metric::Metric>,
) {
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

/// Every number of every record is one a measurement can give, and every record has
/// trials; the error names the first field that is not. `declared` gives a
/// record's declared figures.
fn check_records(
    results: &Value,
    declared: impl Fn(&Value) -> Option<Declared>,
) -> Result<(), String> {
    let Some(records) = results.as_array() else {
        return check_values(results, "results", None);
    };
    records
        .iter()
        .enumerate()
        .try_for_each(|(i, r)| check_values(r, &format!("results[{i}]"), declared(r).as_ref()))
}

/// Every number under `value` is possible for the figures `declared`: only a
/// figure declared signed may be below zero, and a rate must be above zero.
fn check_values(value: &Value, path: &str, declared: Option<&Declared>) -> Result<(), String> {
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::INFINITY);
            let field = path.rsplit(['.', '[']).next().unwrap_or(path);
            let figure = |name: &str| declared.and_then(|d| d.figure(name));
            let signed = SIGNED_PARTS.iter().any(|p| path.contains(p))
                || path
                    .split(['.', '['])
                    .any(|segment| figure(segment).is_some_and(|m| m.signed));
            if x.abs() > MAX_MAGNITUDE {
                return Err(format!("{path} is {n}"));
            }
            if x < 0.0 && !signed {
                return Err(format!("{path} is {n}, below zero ({field} cannot be)"));
            }
            let rate = figure(field)
                .is_some_and(|m| m.name == field && matches!(m.unit, Unit::Rate | Unit::ByteRate));
            let positive = rate || POSITIVE_PARTS.iter().any(|p| path.contains(p));
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
                .try_for_each(|(i, v)| check_values(v, &format!("{path}[{i}]"), declared))
        }
        Value::Object(fields) => {
            for (low, high) in [
                ("min", "max"),
                ("low", "high"),
                ("p50", "p99"),
                ("p99", "p999"),
            ] {
                let bound = |k| fields.get(k).and_then(Value::as_f64);
                if let (Some(l), Some(h)) = (bound(low), bound(high)) {
                    if l > h {
                        return Err(format!("{path}.{low} is {l}, above {path}.{high} ({h})"));
                    }
                }
            }
            fields
                .iter()
                .try_for_each(|(k, v)| check_values(v, &format!("{path}.{k}"), declared))
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
#[path = "load_tests.rs"]
mod tests;
