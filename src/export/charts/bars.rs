//! The chart every experiment gets: its headline figure per transport (and per
//! case) as a horizontal bar at the median, with a whisker from the lowest to the
//! highest trial.

use super::{draw, mesh, scale, text, transports, PALETTE, TITLE};
use crate::report::experiment::Experiment;
use crate::results::ResultRecord;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// The case and transport of a bar: `64 B tcp`, `10 cl. unix`, `md5 tls`.
fn case(experiment: &Experiment, r: &ResultRecord) -> String {
    experiment
        .cases
        .iter()
        .filter_map(|c| c.short(&r.params))
        .chain(std::iter::once(r.transport.clone()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Horizontal bars of the headline median with min–max whiskers.
pub fn bars(experiment: &Experiment, records: &[ResultRecord]) -> Result<String, String> {
    let metric = records.first().map_or("", |r| r.headline.metric.as_str());
    let largest = records
        .iter()
        .map(|r| r.headline.spread.max)
        .fold(0.0, f64::max);
    let (unit, unit_name) = scale(experiment.headline.unit, largest);
    let colours = transports(records);
    let colour = |r: &ResultRecord| {
        colours
            .iter()
            .find(|(n, _)| *n == r.transport)
            .map_or(PALETTE[0], |(_, c)| *c)
    };
    let labels: Vec<String> = records.iter().map(|r| case(experiment, r)).collect();
    let n = records.len() as i32;
    let height = 90 + 24 * records.len() as u32;
    draw(height, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{}: {metric} (median, whisker = min–max)", experiment.id),
                TITLE,
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(150)
            .build_cartesian_2d(
                0f64..(largest / unit * 1.08).max(1e-9),
                (0..n).into_segmented(),
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
            .x_desc(unit_name.clone())
            .draw()
            .map_err(text)?;
        // The first record on top, as in the table.
        let row = |i: usize| n - 1 - i as i32;
        for (i, r) in records.iter().enumerate() {
            let s = &r.headline.spread;
            chart
                .draw_series(
                    Histogram::horizontal(&chart)
                        .style(colour(r).mix(0.8).filled())
                        .margin(3)
                        .data([(row(i), s.median / unit)]),
                )
                .map_err(text)?;
            chart
                .draw_series(std::iter::once(ErrorBar::new_horizontal(
                    SegmentValue::CenterOf(row(i)),
                    s.min / unit,
                    s.median / unit,
                    s.max / unit,
                    BLACK.stroke_width(1),
                    8,
                )))
                .map_err(text)?;
        }
        Ok(())
    })
}
