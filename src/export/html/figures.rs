//! Which charts a section and its blocks get, and the numbers they are drawn
//! from: the verdict's ratios for the summary, an experiment's records for its
//! charts, a comparison's ratio cells for its chart.

use crate::export::charts::{self, Colours, DrawnChart, Group};
use crate::report::block::{Block, Number};
use crate::report::Section;

/// The summary under the verdict: every verdict line that compares transports,
/// with each of its comparisons (each transport against the reference, TLS
/// against tcp) and its 95% interval; an interval too wide for the axis ends in
/// arrows, as wide as the verdict's "not settled". None without a ratio.
pub fn summary(section: &Section, colours: &Colours) -> Option<DrawnChart> {
    let groups: Vec<Group> = section
        .verdict
        .iter()
        .filter(|line| !line.ratios.is_empty())
        .map(|line| Group {
            label: charts::capitalised(&line.what),
            ratios: line.ratios.clone(),
        })
        .collect();
    if groups.is_empty() {
        return None;
    }
    let reference = section
        .verdict
        .iter()
        .find(|l| !l.ratios.is_empty())
        .map_or("the reference".into(), |l| l.reference.clone());
    // A comparison with another transport (`tls vs tcp`) wears its transport's colour.
    let mut colours = colours.to_vec();
    for (name, _) in groups.iter().flat_map(|g| &g.ratios) {
        if let Some((transport, _)) = name.split_once(" vs ") {
            let colour = charts::colour_of(&colours, transport);
            if !colours.iter().any(|(n, _)| n == name) {
                colours.push((name.clone(), colour));
            }
        }
    }
    let aside = groups
        .iter()
        .flat_map(|g| &g.ratios)
        .any(|(name, _)| name.contains(" vs "));
    let over = if aside {
        format!("{reference} (TLS over tcp)")
    } else {
        reference.clone()
    };
    Some(DrawnChart {
        title: format!("Extra time per operation over {over}, 95% intervals"),
        note: format!(
            "Dot: the estimate, paired round by round; line: its 95% interval (an arrow \
             where it goes on beyond the axis). A line that crosses “same” cannot tell \
             the transport from the one it is compared with: {reference}, or for TLS \
             tcp, as everywhere sockbench prints TLS. Log scale: 2× is as far right of \
             “same” as −50% is left."
        ),
        svg: charts::ratios(
            &groups,
            &colours,
            &format!("time per operation against {over} (log scale)"),
            true,
        ),
    })
}

/// The charts after a block's table: an experiment's own, or the ratios a
/// comparison's cells carry.
pub fn of_block(block: &Block, colours: &Colours) -> Vec<DrawnChart> {
    match block.experiment {
        Some(experiment) if !block.records.is_empty() => {
            charts::for_experiment(experiment, &block.records, colours)
        }
        _ => ratios(block).into_iter().collect(),
    }
}

/// A comparison's ratios: a line per row, a dot per column that holds a ratio,
/// against the first column of figures.
fn ratios(block: &Block) -> Option<DrawnChart> {
    let column = |i: usize| block.header.get(i + 1).cloned().unwrap_or_default();
    // A sub-row is named with the row it belongs to: `tcp: time, vs A`.
    let mut parent = String::new();
    let labels: Vec<String> = block
        .rows
        .iter()
        .map(|row| {
            if row.sub {
                format!("{parent}: {}", row.label)
            } else {
                parent.clone_from(&row.label);
                row.label.clone()
            }
        })
        .collect();
    let groups: Vec<Group> = block
        .rows
        .iter()
        .zip(labels)
        .map(|(row, label)| Group {
            label,
            ratios: row
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, cell)| match cell.value {
                    Some(Number::Ratio(ratio)) => Some((column(i), ratio)),
                    _ => None,
                })
                .collect(),
        })
        .filter(|g| !g.ratios.is_empty())
        .collect();
    if groups.is_empty() {
        return None;
    }
    let mut series: Vec<String> = Vec::new();
    for (name, _) in groups.iter().flat_map(|g| &g.ratios) {
        if !series.contains(name) {
            series.push(name.clone());
        }
    }
    let colours: Vec<_> = series
        .iter()
        .zip(charts::PALETTE.iter().cycle().skip(1))
        .map(|(name, colour)| (name.clone(), *colour))
        .collect();
    let reference = block.header.get(1).map_or("A", String::as_str);
    Some(DrawnChart {
        // The chart follows its table: its title says what the dots are.
        title: format!("Time per operation against {reference}, 95% intervals"),
        note: format!(
            "Time per operation against {reference}: dot at the estimate, line its 95% \
             interval; right of “same” is slower, left is faster. Log scale."
        ),
        svg: charts::ratios(
            &groups,
            &colours,
            &format!("time per operation against {reference} (log scale)"),
            series.len() > 1,
        ),
    })
}

/// The labels of highlighted rows in tables of facts: what differs between the
/// compared systems.
pub fn differing(facts: &[&Block]) -> Vec<String> {
    facts
        .iter()
        .flat_map(|b| &b.rows)
        .filter(|r| r.highlight)
        .map(|r| r.label.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::block::{Cell, Row};
    use crate::stats::Interval;

    fn ratio(estimate: f64, low: f64, high: f64) -> Cell {
        let interval = Interval {
            estimate,
            low,
            high,
            n: 5,
        };
        Cell::with(format!("{estimate:.2}"), Number::Ratio(interval))
    }

    #[test]
    fn a_comparison_draws_a_dot_per_ratio_cell_and_nothing_without_one() {
        let mut block = Block::facts(
            "sockets.pingpong",
            ["transport", "A", "B", "B / A"].map(String::from).to_vec(),
            Vec::new(),
        );
        block.rows = vec![
            Row::new(
                "unix, 64 B",
                vec![
                    Cell::text("72.6 µs"),
                    Cell::text("80.1 µs"),
                    ratio(1.1, 1.02, 1.19),
                ],
            ),
            Row::new("tcp, 64 B", vec![Cell::text("89.1 µs"), Cell::missing()]),
            Row::new(
                "tls, 64 B",
                vec![
                    Cell::text("115 µs"),
                    Cell::text("98 µs"),
                    ratio(0.85, 0.7, 1.03),
                ],
            ),
        ];
        let figures = of_block(&block, &[]);
        assert_eq!(figures.len(), 1);
        let svg = figures[0].svg.as_ref().unwrap();
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        assert!(svg.contains("unix, 64 B\u{a0}+10%") && svg.contains("tls, 64 B\u{a0}−15%"));
        assert!(
            !svg.contains("tcp, 64 B"),
            "a row without a ratio has no line"
        );
        assert!(figures[0].note.contains("against A"), "{}", figures[0].note);

        block.rows.retain(|r| r.label.starts_with("tcp"));
        assert!(of_block(&block, &[]).is_empty());
    }
}
