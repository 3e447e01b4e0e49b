//! Loading a result file for `report` and `compare`: bounded (see `input.rs`), of
//! the format this sockbench reads, and holding only values a measurement can
//! produce. A file that fails any check is refused in one line that names the
//! field, so a damaged or hand-edited file is never printed as if measured.

use crate::error::usage;
use crate::results::metric::{Declared, Range, Unit, MAX_MAGNITUDE, MIN_POSITIVE};
use crate::results::paired::pair;
use crate::results::{ResultFile, ResultRecord, SCHEMA_VERSION};
use anyhow::Result;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
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
    drop(text);
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
    let edited = |e: String| {
        usage(format!(
            "{shown} {e}; it was damaged or edited, re-run the measurement"
        ))
    };
    check_records(&value["results"], declared).map_err(edited)?;
    let mut value = value;
    let format = value["schema_version"].as_u64().unwrap_or(0);
    if format < 4 {
        password_storage_into_server(&mut value);
    }
    if format < 6 {
        port_limited_into_count(&mut value);
    }
    let invalid = |e: String| usage(format!("{shown} is not a valid sockbench result file: {e}"));
    // The records are read one at a time, each checked against the model read from
    // it and then dropped, so a large file is never held twice.
    let records = match value.get_mut("results").and_then(Value::as_array_mut) {
        Some(records) => std::mem::take(records),
        None => Vec::new(),
    };
    let mut file = ResultFile::deserialize(&value).map_err(|e| invalid(e.to_string()))?;
    lists_stay_lists(&value, &file, "").map_err(edited)?;
    drop(value);
    file.results = Vec::with_capacity(records.len());
    for (i, raw) in records.into_iter().enumerate() {
        let path = format!("results[{i}]");
        let record =
            ResultRecord::deserialize(&raw).map_err(|e| invalid(format!("{path}: {e}")))?;
        lists_stay_lists(&raw, &record, &path).map_err(edited)?;
        file.results.push(record);
    }
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

/// Every number of every record is one a measurement can give, every record has
/// trials, and no two records measure one case over one transport; the error names
/// the first field or record that is not so. `declared` gives a record's declared
/// figures.
fn check_records(
    results: &Value,
    declared: impl Fn(&Value) -> Option<Declared>,
) -> Result<(), String> {
    let impossible = |e: String| format!("holds an impossible value: {e}");
    let Some(records) = results.as_array() else {
        return check_values(results, "results", None, false).map_err(impossible);
    };
    let mut cases: HashMap<String, usize> = HashMap::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let declared = declared(r);
        check_values(r, &format!("results[{i}]"), declared.as_ref(), false).map_err(impossible)?;
        let Some(case) = case_of(r, declared.map_or(&[], |d| d.budgets)) else {
            continue;
        };
        if let Some(first) = cases.insert(case, i) {
            return Err(format!(
                "holds two records of one case: results[{first}] and results[{i}] are both {} \
                 over {} with the same parameters",
                crate::units::shown(r["experiment"].as_str().unwrap_or_default()),
                crate::units::shown(r["transport"].as_str().unwrap_or_default()),
            ));
        }
    }
    Ok(())
}

/// What tells a record apart from every other a run writes: its experiment, its
/// transport and its parameters but the `budgets` (which set only how long it
/// measured), as one text; none for a record without them, which reading it refuses.
fn case_of(record: &Value, budgets: &[&str]) -> Option<String> {
    let experiment = record.get("experiment")?.as_str()?;
    let transport = record.get("transport")?.as_str()?;
    let mut params: Vec<(&String, &Value)> = (record.get("params")?.as_object()?.iter())
        .filter(|(name, _)| !budgets.contains(&name.as_str()))
        .collect();
    params.sort_by_key(|&(name, _)| name);
    serde_json::to_string(&(experiment, transport, params)).ok()
}

/// Every list in `raw` (the file) is a list in `read` (what the model read from
/// it), or absent there: serde reads a struct from a list of its fields in order,
/// so `"spread": [1, 2, 3]` would pass for a median, a minimum and a maximum. The
/// error names the first that is not, below `path`.
fn lists_stay_lists(raw: &Value, read: &impl serde::Serialize, path: &str) -> Result<(), String> {
    let read = serde_json::to_value(read).map_err(|e| format!("cannot be read back ({e})"))?;
    match list_read_as_map(raw, &read) {
        Some(at) => Err(format!("holds a list where a map belongs: {path}{at}")),
        None => Ok(()),
    }
}

/// Where below `raw` a list was read as a map, as a path (`.headline.spread`).
fn list_read_as_map(raw: &Value, read: &Value) -> Option<String> {
    match (raw, read) {
        (Value::Array(_), Value::Object(_)) => Some(String::new()),
        (Value::Array(raw), Value::Array(read)) => {
            raw.iter()
                .zip(read)
                .enumerate()
                .find_map(|(i, (raw, read))| {
                    list_read_as_map(raw, read).map(|at| format!("[{i}]{at}"))
                })
        }
        (Value::Object(raw), Value::Object(read)) => raw.iter().find_map(|(name, raw)| {
            let at = list_read_as_map(raw, read.get(name)?)?;
            Some(format!(".{}{at}", crate::units::shown(name)))
        }),
        _ => None,
    }
}

/// Every number under `value` is possible for the figures `declared`: only a
/// figure declared signed may be below zero, a share is at most 1, a rate must be
/// above zero; a declared figure is a number (or a map of its parts), and a
/// remainder is what it is declared to be. `signed` is true below a figure
/// declared signed.
fn check_values(
    value: &Value,
    path: &str,
    declared: Option<&Declared>,
    signed: bool,
) -> Result<(), String> {
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::INFINITY);
            let field = path.rsplit(['.', '[']).next().unwrap_or(path);
            // The declared figure this number is the whole of, if any.
            let whole = declared
                .and_then(|d| d.figure(field))
                .filter(|m| m.name == field);
            let signed = signed || SIGNED_PARTS.iter().any(|p| path.contains(p));
            if x.abs() > MAX_MAGNITUDE {
                return Err(format!("{path} is {n}"));
            }
            if x < 0.0 && !signed {
                return Err(format!("{path} is {n}, below zero ({field} cannot be)"));
            }
            if x > 1.0 && whole.is_some_and(|m| m.range == Range::Share) {
                return Err(format!("{path} is {n}, above 1 ({field} is a share)"));
            }
            let rate = whole.is_some_and(|m| matches!(m.unit, Unit::Rate | Unit::ByteRate));
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
                .try_for_each(|(i, v)| check_values(v, &format!("{path}[{i}]"), declared, signed))
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
            for (name, value) in fields {
                // A declared figure is a number, or a map of its parts (`rtt_ns.p50`).
                let Some(m) = declared.and_then(|d| d.figure(name)) else {
                    continue;
                };
                let (fits, belongs) = if m.name == name {
                    (value.is_number(), "a number")
                } else {
                    (value.is_object(), "a map")
                };
                if !fits {
                    return Err(format!(
                        "{path}.{name} is {}, where {belongs} belongs",
                        kind(value)
                    ));
                }
            }
            for m in declared.into_iter().flat_map(|d| d.figures) {
                if let Range::Remainder { whole, taken } = m.range {
                    check_remainder(fields, path, m.name, whole, taken)?;
                }
            }
            fields.iter().try_for_each(|(k, v)| {
                let figure = declared.and_then(|d| d.figure(k));
                let signed = signed || figure.is_some_and(|m| m.range == Range::Signed);
                check_values(v, &format!("{path}.{k}"), declared, signed)
            })
        }
        _ => Ok(()),
    }
}

/// Where one trial or record (`fields`, at `path`) has any of the counts `rest`,
/// `whole` and `taken`, it has all three, and `rest` is `whole` less `taken`
/// ([`Range::Remainder`]).
fn check_remainder(
    fields: &Map<String, Value>,
    path: &str,
    rest: &str,
    whole: &str,
    taken: &str,
) -> Result<(), String> {
    let names = [rest, whole, taken];
    let Some(given) = names.into_iter().find(|name| fields.contains_key(*name)) else {
        return Ok(());
    };
    let count = |name: &str| fields.get(name).and_then(Value::as_u64);
    let (Some(r), Some(w), Some(t)) = (count(rest), count(whole), count(taken)) else {
        let name = names.into_iter().find(|name| count(name).is_none());
        let name = name.unwrap_or(rest);
        return Err(match fields.get(name) {
            None => format!("{path} has {given} but no {name}"),
            Some(v) => format!("{path}.{name} is {}, not a count", kind(v)),
        });
    };
    if t > w {
        return Err(format!(
            "{path}.{taken} is {t}, more than {path}.{whole} ({w})"
        ));
    }
    if r > w {
        return Err(format!(
            "{path}.{rest} is {r}, more than {path}.{whole} ({w})"
        ));
    }
    if r != w - t {
        return Err(format!(
            "{path}.{rest} is {r}, not {whole} less {taken} ({w} − {t} = {})",
            w - t
        ));
    }
    Ok(())
}

/// A value as an error names it: a number as it is, anything else by its kind.
fn kind(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a map".into(),
        Value::String(_) => "text".into(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
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
