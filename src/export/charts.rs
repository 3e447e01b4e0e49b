//! SVG charts for the HTML report, drawn with plotters' SVG backend (text is left
//! to the browser, so no font files are needed):
//! - every experiment: its headline figure per transport (and per case), a bar at
//!   the median with a whisker from the fastest to the slowest trial;
//! - pingpong: round trip against message size, a line per transport;
//! - query and rows: total time of every timed batch against N, with the fitted
//!   line through them;
//! - concurrent: throughput against the number of clients.

use crate::results::ResultRecord;
use plotters::coord::ranged1d::{SegmentValue, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

const WIDTH: u32 = 720;
const LABELS: (&str, u32) = ("sans-serif", 13);
const TITLE: (&str, u32) = ("sans-serif", 17);
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The charts of one experiment's records, as SVG documents.
pub fn for_experiment(experiment: &str, records: &[ResultRecord]) -> Vec<Result<String, String>> {
    let mut charts = vec![bars(experiment, records)];
    // A line needs at least two x values to say anything.
    let varies = |x: fn(&ResultRecord) -> Option<u64>| {
        let first = records.first().and_then(x);
        records.iter().any(|r| x(r) != first)
    };
    match experiment {
        "sockets.pingpong" if varies(|r| r.params.size) => charts.push(lines(
            records,
            "round trip p50 against message size",
            "message size (bytes, log scale)",
            "rtt_ns",
            |r| Some((r.params.size? as f64, r.metrics.rtt_ns?.p50)),
            true,
        )),
        "postgres.query" | "postgres.rows" => charts.push(fitted(experiment, records)),
        "sockets.concurrent" | "postgres.concurrent" if varies(|r| r.params.clients) => {
            let per_s = |r: &ResultRecord| r.metrics.tps.or(r.metrics.ops_per_s);
            charts.push(lines(
                records,
                "throughput against clients",
                "clients",
                "per_s",
                move |r| Some((r.params.clients? as f64, per_s(r)?)),
                false,
            ))
        }
        _ => {}
    }
    charts
}

/// A transport's name, colour and points.
type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Transports in the order the records first name them, with their colour.
fn transports(records: &[ResultRecord]) -> Vec<(String, RGBColor)> {
    let mut names: Vec<String> = Vec::new();
    for r in records {
        if !names.contains(&r.transport) {
            names.push(r.transport.clone());
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, PALETTE[i % PALETTE.len()]))
        .collect()
}

/// A unit that keeps axis numbers short: nanoseconds shown as µs or ms, rates as k/s.
fn scale(metric: &str, largest: f64) -> (f64, String) {
    if metric.contains("_ns") {
        match largest {
            v if v >= 1e6 => (1e6, "ms".into()),
            v if v >= 1e3 => (1e3, "µs".into()),
            _ => (1.0, "ns".into()),
        }
    } else if metric == "bytes_per_s" {
        (1e9, "GB/s".into())
    } else if largest >= 1e3 {
        (1e3, "thousand/s".into())
    } else {
        (1.0, "per second".into())
    }
}

fn case(r: &ResultRecord) -> String {
    use crate::units::format_size;
    let p = &r.params;
    let mut parts = Vec::new();
    if let Some(s) = p.size.or(p.write_size) {
        parts.push(format_size(s));
    }
    if let Some(c) = p.clients {
        parts.push(format!("{c} cl."));
    }
    if r.experiment == "postgres.auth" {
        parts.extend(p.auth_method.clone());
    }
    parts.push(r.transport.clone());
    parts.join(" ")
}

/// Horizontal bars of the headline median with min–max whiskers.
fn bars(experiment: &str, records: &[ResultRecord]) -> Result<String, String> {
    let metric = records.first().map_or("", |r| r.headline.metric.as_str());
    let largest = records
        .iter()
        .map(|r| r.headline.spread.max)
        .fold(0.0, f64::max);
    let (unit, unit_name) = scale(metric, largest);
    let colours = transports(records);
    let colour = |r: &ResultRecord| {
        colours
            .iter()
            .find(|(n, _)| *n == r.transport)
            .map_or(PALETTE[0], |(_, c)| *c)
    };
    let labels: Vec<String> = records.iter().map(case).collect();
    let n = records.len() as i32;
    let height = 90 + 24 * records.len() as u32;
    draw(height, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{experiment}: {metric} (median, whisker = min–max)"),
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
        chart
            .configure_mesh()
            .label_style(LABELS)
            .axis_desc_style(LABELS)
            .max_light_lines(1)
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

/// A line per transport through (x, y) points, y scaled to a readable unit.
fn lines(
    records: &[ResultRecord],
    title: &str,
    x_desc: &str,
    metric: &str,
    point: impl Fn(&ResultRecord) -> Option<(f64, f64)>,
    log_x: bool,
) -> Result<String, String> {
    let series: Vec<Series> = transports(records)
        .into_iter()
        .map(|(name, colour)| {
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
    let (unit, unit_name) = scale(metric, y_max);
    draw(360, |root| {
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(title, TITLE)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60);
        let y_range = 0f64..(y_max / unit * 1.1).max(1e-9);
        let axes = Axes {
            x_desc,
            y_desc: &unit_name,
            unit,
        };
        if log_x {
            let x_range = (x_min.max(1.0)..x_max.max(2.0) * 1.5).log_scale();
            let chart = builder.build_cartesian_2d(x_range, y_range).map_err(text)?;
            axes.draw(chart, &series, decimal_bytes)
        } else {
            let pad = (x_max - x_min.min(x_max)).max(1.0) * 0.05;
            let x_range = (x_min.min(x_max) - pad).max(0.0)..x_max + pad;
            let chart = builder.build_cartesian_2d(x_range, y_range).map_err(text)?;
            // Client counts are whole: no label between them.
            axes.draw(chart, &series, |v| {
                if v.fract() == 0.0 {
                    format!("{v}")
                } else {
                    String::new()
                }
            })
        }
    })
}

/// Total time of every batch against N, and each transport's fitted line.
fn fitted(experiment: &str, records: &[ResultRecord]) -> Result<String, String> {
    let points = |r: &ResultRecord| -> Vec<(f64, f64)> {
        r.trials
            .iter()
            .flat_map(|t| &t.points)
            .map(|p| (p.n as f64, p.total_ns as f64))
            .collect()
    };
    let all: Vec<(f64, f64)> = records.iter().flat_map(points).collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0, f64::max);
    let y_max = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let (unit, unit_name) = scale("_ns", y_max);
    let what = if experiment == "postgres.query" {
        "queries"
    } else {
        "rows"
    };
    draw(380, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{experiment}: total time against N, with the least-squares line"),
                TITLE,
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(
                0f64..(x_max * 1.05).max(1.0),
                0f64..(y_max / unit * 1.1).max(1e-9),
            )
            .map_err(text)?;
        chart
            .configure_mesh()
            .label_style(LABELS)
            .axis_desc_style(LABELS)
            .max_light_lines(1)
            .x_desc(format!("N ({what})"))
            .y_desc(format!("total time ({unit_name})"))
            .x_label_formatter(&|v| crate::units::format_count(*v as u64))
            .draw()
            .map_err(text)?;
        for (name, colour) in transports(records) {
            let Some(r) = records.iter().find(|r| r.transport == name) else {
                continue;
            };
            let dots = points(r)
                .into_iter()
                .map(|(x, y)| Circle::new((x, y / unit), 3, colour.filled()));
            chart.draw_series(dots).map_err(text)?;
            let slope = r.metrics.per_query_ns.or(r.metrics.per_row_ns);
            if let (Some(slope), Some(intercept)) = (slope, r.metrics.intercept_ns) {
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
        chart
            .configure_mesh()
            .label_style(LABELS)
            .axis_desc_style(LABELS)
            .max_light_lines(1)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
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

fn legend<'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .label_font(LABELS)
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(text)
}

/// Draws on a fresh SVG of `height` and returns its text.
fn draw(
    height: u32,
    paint: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(text)?;
        paint(&root)?;
        root.present().map_err(text)?;
    }
    Ok(svg)
}

/// Axis labels of a log scale fall on powers of ten: `100 B`, `10 kB`, `1 MB`.
fn decimal_bytes(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{} MB", v / 1e6),
        v if v >= 1e3 => format!("{} kB", v / 1e3),
        v => format!("{v} B"),
    }
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}
