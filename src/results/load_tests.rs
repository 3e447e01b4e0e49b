//! Tests of loading: impossible values, formats, and older files kept whole.

use super::*;
use crate::results::metric::{Better, Metric};
use serde_json::json;

/// Figures of the kinds the checks tell apart.
const FIGURES: &[Metric] = &[
    Metric::new("rtt_ns.p50", Unit::Time, Better::Lower),
    Metric::new("per_query_ns", Unit::Time, Better::Lower),
    Metric::new("intercept_ns", Unit::Time, Better::Lower).signed(),
    Metric::new("auth_ns", Unit::Time, Better::Lower).signed(),
    Metric::new("r2", Unit::Count, Better::Higher).signed(),
    Metric::new("qps", Unit::Rate, Better::Higher),
    Metric::new("bytes_per_s", Unit::ByteRate, Better::Higher),
];

fn check_values(results: &Value, _: &str) -> Result<(), String> {
    let declared = Declared {
        headline: FIGURES[0],
        figures: FIGURES,
        budgets: &[],
    };
    check_records(results, |_| Some(declared))
}

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
                       "headline": {"vs_reference": {"extra_cpu_ns":
                           {"estimate": -40.0, "low": -900.0, "high": 820.0}}},
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

const ANY: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);
/// The figures of the fixtures that may be below zero.
const SIGNED: &[Metric] = &[
    Metric::new("intercept_ns", Unit::Time, Better::Lower).signed(),
    Metric::new("auth_ns", Unit::Time, Better::Lower).signed(),
    Metric::new("handshake_ns", Unit::Time, Better::Lower).signed(),
    Metric::new("r2", Unit::Count, Better::Higher).signed(),
];

/// Every parameter, figure and trial of a committed older file survives the
/// generic model unchanged, and PostgreSQL's password storage moves into its
/// record's `server`.
#[test]
fn older_files_keep_every_parameter_and_figure() {
    for (name, format) in [
        ("run.json", 2),
        ("sockets.json", 2),
        ("sweep.json", 2),
        ("placed.json", 3),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["schema_version"], format, "{name}");
        let file = load(&path, |_| {
            Some(Declared {
                headline: ANY,
                figures: SIGNED,
                budgets: &[],
            })
        })
        .unwrap();
        let back = serde_json::to_value(&file).unwrap();
        let before = raw["results"].as_array().unwrap();
        let mut after: Vec<&Value> = back["results"].as_array().unwrap().iter().collect();
        assert_eq!(before.len(), after.len(), "{name}");
        for r in before {
            // Format 2's upgrade may reorder experiments: find the same record.
            let same = |a: &&Value| {
                a["experiment"] == r["experiment"]
                    && a["transport"] == r["transport"]
                    && a["params"] == r["params"]
            };
            let i = after
                .iter()
                .position(same)
                .unwrap_or_else(|| panic!("{name}: {r}"));
            let a = after.remove(i);
            assert_eq!(a["metrics"], r["metrics"], "{name}");
            assert_eq!(a["trials"], r["trials"], "{name}");
            if let Some(stored) = r.get("password_storage") {
                assert_eq!(&a["server"]["password_storage"], stored, "{name}");
                assert!(a.get("password_storage").is_none());
            }
        }
    }
}
