//! One comparison, one figure: checks that every comparison a result file holds
//! (each transport against the reference, TLS against tcp; its ratio and its extra
//! CPU per operation) reads the same in the lines printed while measuring, the
//! verdict and its why, the tables, the CSV and the page, and that no why speaks of
//! a byte in microseconds.

use sockbench::families;
use sockbench::report::format::{duration_interval_ns, versus};
use sockbench::report::verdict;
use sockbench::results::paired::reference;
use sockbench::results::{ResultFile, ResultRecord};
use sockbench::stats::Difference;
use std::path::Path;

/// What a user saw of one run: the terminal's output of `run` (the lines per case
/// and the verdict), and the report of its file as CSV, JSON and HTML.
pub struct Seen<'a> {
    pub terminal: &'a str,
    pub csv: &'a str,
    pub json: &'a str,
    pub html: &'a str,
}

/// Loads the result file as `report` does.
pub fn load(path: &Path) -> ResultFile {
    let catalog = families::catalog();
    sockbench::results::load(path, |id| catalog.find(id).map(|e| e.declared()))
        .expect("the result file loads")
}

/// Checks every comparison of `file` in everything `seen`; returns how many
/// comparisons were checked, so a caller can tell the check from a vacuous one.
pub fn one_figure_per_comparison(file: &ResultFile, seen: &Seen) -> usize {
    let catalog = families::catalog();
    let csv = super::parse_csv(seen.csv);
    let json: serde_json::Value = serde_json::from_str(seen.json).expect("report JSON");
    let cells: Vec<String> = json["sections"][0]["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .flat_map(|t| t["rows"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["cells"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["text"].as_str().map(str::to_string))
        .collect();
    let terminal = flat(seen.terminal);
    let mut checked = 0;
    for r in &file.results {
        let Some(v) = &r.headline.vs_reference else {
            continue;
        };
        let experiment = catalog.find(&r.experiment).expect("a known experiment");
        let what = format!(
            "{} {} ({})",
            r.experiment,
            r.transport,
            experiment.case_label(&r.params)
        );
        let ratio = versus(&v.ratio);
        // TLS against tcp, everything else against the reference of its case.
        let case: Vec<&ResultRecord> = file
            .results
            .iter()
            .filter(|o| o.experiment == r.experiment && o.params == r.params)
            .collect();
        let labels: Vec<&str> = case.iter().map(|o| o.transport.as_str()).collect();
        let case_reference = labels[reference(&labels)];
        let has_tcp = labels.contains(&"tcp");
        let expected = if r.transport == "tls" && has_tcp {
            "tcp"
        } else {
            case_reference
        };
        assert_eq!(
            v.reference, expected,
            "{what}: compared with the wrong transport"
        );
        // The line printed while measuring.
        let part = if v.reference == case_reference {
            format!("{} {ratio}", r.transport)
        } else {
            format!("{} vs {} {ratio}", r.transport, v.reference)
        };
        assert!(
            terminal.contains(&part),
            "{what}: no '{part}' in the terminal:\n{}",
            seen.terminal
        );
        // The tables (terminal and page draw the same cells).
        assert!(
            cells.contains(&ratio),
            "{what}: no '{ratio}' cell in the tables"
        );
        assert!(
            seen.html.contains(&ratio),
            "{what}: no '{ratio}' on the page"
        );
        // The CSV's figures.
        let row = |figure: &str| {
            csv.iter()
                .find(|row| {
                    row.get(1) == Some(&r.experiment)
                        && row.contains(&r.transport)
                        && row.contains(&figure.to_string())
                        && row.contains(&v.reference)
                        && case_cells(experiment, r).iter().all(|c| row.contains(c))
                })
                .unwrap_or_else(|| panic!("{what}: no CSV row of {figure}"))
        };
        let value = |row: &Vec<String>| -> f64 {
            let at = csv[0].iter().position(|h| h == "value").unwrap();
            row[at].parse().unwrap()
        };
        assert_eq!(
            value(row("vs_reference")),
            v.ratio.estimate,
            "{what}: CSV ratio"
        );
        if let Some(extra) = v.extra_cpu_ns {
            let shown = duration_interval_ns(extra.estimate, extra.low, extra.high);
            assert!(
                cells.contains(&shown),
                "{what}: no extra CPU cell '{shown}'"
            );
            assert!(
                seen.html.contains(&shown),
                "{what}: no extra CPU '{shown}' on the page"
            );
            assert_eq!(
                value(row("extra_cpu_ns")),
                extra.estimate,
                "{what}: CSV extra CPU"
            );
        }
        checked += 1;
    }
    // The verdict speaks of the same comparisons with the same figures.
    let lines = verdict::lines(&file.results, &file.system, &catalog);
    for line in lines.iter().filter(|l| !l.caveat && !l.by_case) {
        for p in &line.pairs {
            let stored = file
                .results
                .iter()
                .filter_map(|r| Some((r, r.headline.vs_reference.as_ref()?)))
                .find(|(r, v)| {
                    r.transport == p.other
                        && v.reference == p.base
                        && p.ratio.is_some_and(|i| {
                            (i.estimate - v.ratio.estimate).abs() < 1e-9 * i.estimate
                        })
                });
            let (r, v) = stored.unwrap_or_else(|| {
                panic!(
                    "{}: {} against {} is no stored comparison",
                    line.what, p.other, p.base
                )
            });
            assert_eq!(
                p.extra_cpu_ns, v.extra_cpu_ns,
                "{}: extra CPU of {}",
                line.what, r.transport
            );
            if let Some(ratio) = p.ratio.filter(|r| r.informative()) {
                let shown = versus(&ratio);
                assert!(
                    line.sentence.contains(&shown),
                    "{}: no '{shown}' in\n{}",
                    line.what,
                    line.sentence
                );
            }
        }
        // Every CPU figure of the sentence (the "does it matter" clause, the why)
        // is one of its comparisons' extra CPU, either way round. (A line of an
        // experiment's own, such as what nginx costs against the direct hop,
        // compares two experiments, which no stored comparison holds: its
        // figures are its own, said once.)
        let extras: Vec<String> = line
            .pairs
            .iter()
            .filter_map(|p| p.extra_cpu_ns)
            .flat_map(|d| [shown(d), shown(negated(d))])
            .collect();
        let figures = match line.pairs.is_empty() {
            true => Vec::new(),
            false => cpu_figures(&line.sentence),
        };
        for said in figures {
            assert!(
                extras.contains(&said),
                "{}: CPU figure '{said}' is none of {extras:?}:\n{}",
                line.what,
                line.sentence
            );
        }
        assert!(
            terminal.contains(&flat(&line.sentence)),
            "the terminal lacks:\n{}",
            line.sentence
        );
        if let Some(why) = line.sentence.split("Why: ").nth(1) {
            assert!(
                !why.contains("per byte"),
                "a why of bytes in time:\n{}",
                line.sentence
            );
        }
    }
    checked
}

fn shown(d: Difference) -> String {
    duration_interval_ns(d.estimate, d.low, d.high)
}

fn negated(d: Difference) -> Difference {
    Difference {
        estimate: -d.estimate,
        low: -d.high,
        high: -d.low,
    }
}

/// The CPU figures a verdict sentence prints: `its extra CPU (2.38 [0.57, 4.20] µs
/// per …` and `spends 2.38 [0.57, 4.20] µs more CPU time`.
fn cpu_figures(sentence: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (start, end) in [("its extra CPU (", " per "), ("spends ", " more CPU time")] {
        for piece in sentence.split(start).skip(1) {
            if let Some(figure) = piece.split(end).next().filter(|f| f.contains('[')) {
                out.push(figure.to_string());
            }
        }
    }
    out
}

/// The case's parameters as the CSV writes them.
fn case_cells(
    experiment: &sockbench::report::experiment::Description,
    r: &ResultRecord,
) -> Vec<String> {
    experiment
        .cases
        .iter()
        .filter_map(|c| match r.params.value(c.name)? {
            sockbench::results::params::Param::Number(n) => Some(n.to_string()),
            sockbench::results::params::Param::Text(t) => Some(t.clone()),
            sockbench::results::params::Param::Flag(on) => Some(on.to_string()),
            sockbench::results::params::Param::Numbers(_) => None,
        })
        .collect()
}

/// Text with its line breaks and indentation folded into single spaces, as a
/// wrapped paragraph reads.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
