//! Line charts: round trip against message size, throughput against clients, and
//! the total time of every timed batch against N with the least-squares line.

use super::{
    colour_of, draw, legend, mesh, number, scale, text, Colours, Marked, Series, WIDTH, X_LABELS,
};
use crate::report::experiment::Description;
use crate::results::metric::{Metric, Unit};
use crate::results::{Key, Point, ResultRecord};
use crate::units::format_size;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// A line per transport through (x, y) points, y scaled to a readable unit; the
/// x axis is marked at the measured values (sizes in bytes when `log_x`).
pub fn lines(
    records: &[ResultRecord],
    colours: &Colours,
    x_desc: &str,
    unit: Unit,
    point: impl Fn(&ResultRecord) -> Option<(f64, f64)>,
    log_x: bool,
) -> Result<String, String> {
    let series: Vec<Series> = super::colours(records)
        .into_iter()
        .map(|(name, _)| {
            let colour = colour_of(colours, &name);
            let mut pts: Vec<(f64, f64)> = records
                .iter()
                .filter(|r| r.transport == name)
                .filter_map(&point)
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name, colour, pts)
        })
        .collect();
    let all = series.iter().flat_map(|s| &s.2);
    let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let x_min = series
        .iter()
        .flat_map(|s| &s.2)
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min);
    let mut measured: Vec<f64> = series.iter().flat_map(|s| &s.2).map(|p| p.0).collect();
    measured.sort_by(f64::total_cmp);
    measured.dedup();
    let (unit, unit_name) = scale(unit, y_max);
    draw((WIDTH, 360), |root| {
        let mut builder = ChartBuilder::on(root);
        builder
            .margin(12)
            .margin_right(24)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(72);
        let y_range = 0f64..(y_max / unit * 1.1).max(1e-9);
        let axes = Axes {
            x_desc,
            y_desc: &unit_name,
            unit,
        };
        if log_x {
            let axis: LogCoord<f64> = (x_min.max(1.0) / 1.5..x_max.max(2.0) * 1.5)
                .log_scale()
                .into();
            let x_range = Marked { axis, at: measured };
            let chart = builder.build_cartesian_2d(x_range, y_range).map_err(text)?;
            axes.draw(chart, &series, |v| format_size(v.round() as u64))
        } else {
            let pad = (x_max - x_min.min(x_max)).max(1.0) * 0.05;
            let x_range = Marked {
                axis: RangedCoordf64::from((x_min.min(x_max) - pad).max(0.0)..x_max + pad),
                at: measured,
            };
            let chart = builder.build_cartesian_2d(x_range, y_range).map_err(text)?;
            axes.draw(chart, &series, |v| format!("{v}"))
        }
    })
}

/// Total time of every batch against N, and each transport's fitted line.
pub fn fitted(
    experiment: &Description,
    what: &str,
    batches: Key<Vec<Point>>,
    intercept: &Metric,
    records: &[ResultRecord],
    colours: &Colours,
) -> Result<String, String> {
    let points = |r: &ResultRecord| -> Vec<(f64, f64)> {
        r.trials
            .iter()
            .flat_map(|t| t.metrics.get(batches).unwrap_or_default())
            .map(|p| (p.n as f64, p.total_ns as f64))
            .collect()
    };
    let all: Vec<(f64, f64)> = records.iter().flat_map(points).collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0, f64::max);
    let y_max = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let (unit, unit_name) = scale(Unit::Time, y_max);
    draw((WIDTH, 380), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(72)
            .build_cartesian_2d(
                0f64..(x_max * 1.05).max(1.0),
                0f64..(y_max / unit * 1.1).max(1e-9),
            )
            .map_err(text)?;
        mesh(&mut chart.configure_mesh())
            .x_desc(format!("N ({what})"))
            .y_desc(format!("total {unit_name}"))
            .y_label_formatter(&|v| number(*v))
            .x_label_formatter(&|v| crate::units::format_count(*v as u64))
            .draw()
            .map_err(text)?;
        for (name, _) in super::colours(records) {
            let colour = colour_of(colours, &name);
            let Some(r) = records.iter().find(|r| r.transport == name) else {
                continue;
            };
            let dots = points(r)
                .into_iter()
                .map(|(x, y)| Circle::new((x, y / unit), 3, colour.filled()));
            chart.draw_series(dots).map_err(text)?;
            let slope = experiment.headline.read(&r.metrics);
            if let (Some(slope), Some(intercept)) = (slope, intercept.read(&r.metrics)) {
                let at = |x: f64| (x, (intercept + slope * x) / unit);
                chart
                    .draw_series(LineSeries::new(
                        [at(0.0), at(x_max * 1.05)],
                        colour.stroke_width(2),
                    ))
                    .map_err(text)?
                    .label(name)
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
                    });
            }
        }
        legend(&mut chart)
    })
}

/// How a line chart's axes are labelled and its values scaled.
struct Axes<'t> {
    x_desc: &'t str,
    y_desc: &'t str,
    unit: f64,
}

impl Axes<'_> {
    /// Labels the axes of a built chart and draws a line per series with a legend.
    fn draw<'a, X>(
        &self,
        mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, RangedCoordf64>>,
        series: &[Series],
        x_label: fn(f64) -> String,
    ) -> Result<(), String>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        mesh(&mut chart.configure_mesh())
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .y_label_formatter(&|v| number(*v))
            .x_label_formatter(&|v| x_label(*v))
            .draw()
            .map_err(text)?;
        for (name, colour, pts) in series {
            plot_line(&mut chart, name, *colour, pts, self.unit)?;
        }
        legend(&mut chart)
    }
}

fn plot_line<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    name: &str,
    colour: RGBColor,
    pts: &[(f64, f64)],
    unit: f64,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let scaled: Vec<(f64, f64)> = pts.iter().map(|(x, y)| (*x, y / unit)).collect();
    chart
        .draw_series(scaled.iter().map(|p| Circle::new(*p, 3, colour.filled())))
        .map_err(text)?;
    chart
        .draw_series(LineSeries::new(scaled, colour.stroke_width(2)))
        .map_err(text)?
        .label(name.to_string())
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
    Ok(())
}
