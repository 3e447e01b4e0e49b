//! The verdict on the committed result files: every percentage lies inside its own
//! interval, and the two figures printed beside it reproduce it.

use sockbench::families::catalog;
use sockbench::report::verdict::{lines, Line};
use sockbench::results::load;
use std::path::Path;

const FIXTURES: [&str; 4] = [
    "tests/fixtures/run.json",
    "tests/fixtures/sockets.json",
    "tests/fixtures/sweep.json",
    "tests/fixtures/placed.json",
];

fn verdict(path: &str) -> Vec<Line> {
    let catalog = catalog();
    let file = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path), |id| {
        catalog.find(id).map(|e| e.declared())
    })
    .expect("fixture loads");
    lines(&file.results, &file.system, &catalog)
}

#[test]
fn every_estimate_lies_inside_its_interval_and_is_the_ratio_of_its_figures() {
    let mut pairs = 0;
    for path in FIXTURES {
        for line in verdict(path) {
            for p in &line.pairs {
                let Some(i) = p.ratio else { continue };
                pairs += 1;
                assert!(
                    i.low <= i.estimate && i.estimate <= i.high,
                    "{path}: {} {i:?}",
                    line.sentence
                );
                let from_figures = p.other_cost / p.base_cost;
                assert!(
                    (from_figures / i.estimate - 1.0).abs() < 1e-9,
                    "{path}: {} figures give {from_figures}, interval says {}",
                    line.sentence,
                    i.estimate
                );
            }
        }
    }
    assert!(pairs >= 20, "only {pairs} comparisons in the fixtures");
}

/// A printed figure as a cost in one unit per kind: ns for times, seconds per
/// operation for rates.
fn cost(figure: &str) -> Option<f64> {
    let (number, unit) = figure.split_once(' ').map_or_else(
        || {
            let at = figure.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
            Some((&figure[..at], &figure[at..]))
        },
        Some,
    )?;
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "ns" => n,
        "µs" => n * 1e3,
        "ms" => n * 1e6,
        "s" => n * 1e9,
        "/s" => 1.0 / n,
        "k/s" => 1.0 / (n * 1e3),
        "M/s" => 1.0 / (n * 1e6),
        "kB/s" => 1.0 / (n * 1e3),
        "MB/s" => 1.0 / (n * 1e6),
        "GB/s" => 1.0 / (n * 1e9),
        _ => return None,
    })
}

/// `+36%` or `3.5×` as a ratio.
fn ratio(text: &str) -> Option<f64> {
    if let Some(f) = text.strip_suffix('×') {
        return f.parse().ok();
    }
    let p: f64 = text.strip_suffix('%')?.replace('+', "").parse().ok()?;
    Some(1.0 + p / 100.0)
}

#[test]
fn the_two_figures_printed_beside_a_percentage_reproduce_it() {
    let mut checked = 0;
    for path in FIXTURES {
        for line in verdict(path) {
            // "(unix 29.6 µs, tcp 77.4 µs; tcp +162% [" or "(tcp 2.39 ms, tls 4.54 ms; +90% ["
            for part in line.sentence.split('(').skip(1) {
                let Some((figures, rest)) = part.split_once("; ") else {
                    continue;
                };
                let Some((a, b)) = figures.split_once(", ") else {
                    continue;
                };
                let value = |side: &str| cost(side.split_once(' ')?.1);
                let (Some(a), Some(b)) = (value(a), value(b)) else {
                    continue;
                };
                let Some(word) = rest
                    .split(" [")
                    .next()
                    .and_then(|s| s.split(' ').next_back())
                else {
                    continue;
                };
                let Some(shown) = ratio(word) else { continue };
                checked += 1;
                let from_figures = b / a;
                // Three significant digits on each figure; whole percents above 10%,
                // factors to one decimal below 10× and whole above.
                let rounding = match word.ends_with('×') {
                    true if shown >= 10.0 => 0.5,
                    true => 0.05,
                    false => 0.006,
                };
                assert!(
                    (from_figures - shown).abs() <= 0.012 * from_figures + rounding,
                    "{path}: {} — the figures give {from_figures:.3}, the text {shown}",
                    line.sentence
                );
            }
        }
    }
    assert!(checked >= 6, "only {checked} printed comparisons found");
}
