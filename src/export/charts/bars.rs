//! The chart every experiment gets: its headline figure per transport (and per
//! case) as a horizontal bar at the median, with the 95% interval the tables
//! report as a whisker.

use super::{
    colour_of, draw, label_area, mesh, number, scale, text, Colours, DrawnChart, WIDTH, X_LABELS,
};
use crate::report::experiment::Description;
use crate::results::ResultRecord;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// The case and transport of a bar: `64 B tcp`, `10 cl. unix`, `md5 tls`.
pub(super) fn case(experiment: &Description, r: &ResultRecord) -> String {
    experiment
        .cases
        .iter()
        .filter_map(|c| c.short_label(&r.params))
        .chain(std::iter::once(r.transport.clone()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How far the axis reaches beyond the longest bar, at most.
const REACH: f64 = 2.5;

/// Horizontal bars of the headline median with 95% interval whiskers.
pub fn bars(experiment: &Description, records: &[ResultRecord], colours: &Colours) -> DrawnChart {
    let rounds = records.iter().map(|r| r.trials.len()).max().unwrap_or(0);
    let note = if records.iter().any(|r| r.headline.interval.is_some()) {
        format!("Bars: medians of {rounds} rounds; whiskers: 95% intervals.")
    } else {
        format!("Bars: medians of {rounds} rounds (too few for an interval).")
    };
    DrawnChart {
        title: experiment.chart_title.to_string(),
        note,
        svg: draw_bars(experiment, records, colours),
    }
}

fn draw_bars(
    experiment: &Description,
    records: &[ResultRecord],
    colours: &Colours,
) -> Result<String, String> {
    let high = |r: &ResultRecord| {
        r.headline.interval.map_or(r.headline.spread.median, |i| {
            i.high.max(r.headline.spread.median)
        })
    };
    // A whisker far beyond every bar would flatten them: the axis stops at
    // `REACH` times the longest bar, and such a whisker ends in an arrow there.
    let longest = records
        .iter()
        .map(|r| r.headline.spread.median)
        .fold(0.0, f64::max);
    let largest = records
        .iter()
        .map(high)
        .fold(0.0, f64::max)
        .min(longest * REACH);
    let (unit, unit_name) = scale(experiment.headline.unit, largest);
    let labels: Vec<String> = records.iter().map(|r| case(experiment, r)).collect();
    let n = records.len() as i32;
    let height = 78 + 26 * records.len() as u32;
    draw((WIDTH, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(label_area(&labels))
            .build_cartesian_2d(
                0f64..(largest / unit * 1.05).max(1e-9),
                // Segments of 0..n-1 are n rows: none left empty.
                (0..n - 1).into_segmented(),
            )
            .map_err(text)?;
        mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .y_labels(records.len())
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels
                    .get((n - 1 - i) as usize)
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .x_label_formatter(&|v| number(*v))
            .x_desc(unit_name.as_str())
            .draw()
            .map_err(text)?;
        // The first record on top, as in the table.
        let row = |i: usize| n - 1 - i as i32;
        for (i, r) in records.iter().enumerate() {
            let median = r.headline.spread.median;
            chart
                .draw_series(
                    Histogram::horizontal(&chart)
                        .style(colour_of(colours, &r.transport).mix(0.8).filled())
                        .margin(4)
                        .data([(row(i), median / unit)]),
                )
                .map_err(text)?;
            if let Some(interval) = r.headline.interval {
                let at = SegmentValue::CenterOf(row(i));
                let edge = largest / unit * 1.05;
                let (low, high) = (interval.low / unit, (interval.high / unit).min(edge));
                let cap = |x: f64| {
                    let shape = if x >= edge {
                        vec![(-8, -6), (0, 0), (-8, 6)]
                    } else {
                        vec![(0, -7), (0, 7)]
                    };
                    EmptyElement::at((x, at.clone()))
                        + PathElement::new(shape, BLACK.stroke_width(2))
                };
                chart
                    .draw_series([PathElement::new(
                        [(low, at.clone()), (high, at.clone())],
                        BLACK.stroke_width(2),
                    )])
                    .map_err(text)?;
                chart.draw_series([cap(low), cap(high)]).map_err(text)?;
            }
        }
        Ok(())
    })
}
