//! SVG charts for the HTML report, drawn with plotters' SVG backend (text is left
//! to the browser, so no font files are needed):
//! - every experiment: its headline figure per transport (and per case), a bar at
//!   the median with a whisker from the fastest to the slowest trial;
//! - pingpong: round trip against message size, a line per transport;
//! - query and rows: total time of every timed batch against N, with the fitted
//!   line through them;
//! - concurrent: throughput against the number of clients.

mod bars;
mod lines;

use crate::report::columns::distinct;
use crate::report::experiment::{Chart, Experiment};
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use bars::bars;
use lines::{fitted, lines};
use plotters::chart::MeshStyle;
use plotters::prelude::*;

pub(super) const WIDTH: u32 = 720;
const LABELS: (&str, u32) = ("sans-serif", 13);
pub(super) const TITLE: (&str, u32) = ("sans-serif", 17);
pub(super) const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The charts of one experiment's records, as SVG documents.
pub fn for_experiment(
    experiment: &Experiment,
    records: &[ResultRecord],
) -> Vec<Result<String, String>> {
    let mut charts = vec![bars(experiment, records)];
    for chart in experiment.charts {
        match *chart {
            Chart::Lines {
                title,
                x,
                x_desc,
                y,
                log_x,
            } => {
                // A line needs at least two x values to say anything.
                let first = records.first().and_then(|r| x.number(&r.params));
                if records.iter().all(|r| x.number(&r.params) == first) {
                    continue;
                }
                charts.push(lines(
                    records,
                    title,
                    x_desc,
                    y.unit,
                    move |r| Some((x.number(&r.params)? as f64, (y.read)(&r.metrics)?)),
                    log_x,
                ));
            }
            Chart::Fitted { n } => charts.push(fitted(experiment, n, records)),
        }
    }
    charts
}

/// A transport's name, colour and points.
pub(super) type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Transports in the order the records first name them, with their colour.
pub(super) fn transports(records: &[ResultRecord]) -> Vec<(String, RGBColor)> {
    distinct(records, |r| r.transport.clone())
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, PALETTE[i % PALETTE.len()]))
        .collect()
}

/// A unit that keeps axis numbers short: nanoseconds shown as µs or ms, rates as k/s.
pub(super) fn scale(unit: Unit, largest: f64) -> (f64, String) {
    match unit {
        Unit::Time => match largest {
            v if v >= 1e6 => (1e6, "ms".into()),
            v if v >= 1e3 => (1e3, "µs".into()),
            _ => (1.0, "ns".into()),
        },
        Unit::ByteRate => (1e9, "GB/s".into()),
        _ if largest >= 1e3 => (1e3, "thousand/s".into()),
        _ => (1.0, "per second".into()),
    }
}

pub(super) fn legend<'a, X: Ranged, Y: Ranged>(
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

/// The axes every chart shares: readable label sizes, one light line between bold
/// ones.
pub(super) fn mesh<'m, 'a, 'b, X, Y, DB>(
    style: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    style
        .label_style(LABELS)
        .axis_desc_style(LABELS)
        .max_light_lines(1)
}

/// Draws on a fresh SVG of `height` and returns its text.
pub(super) fn draw(
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
    // Labels come from the result file: no control character reaches the page.
    Ok(crate::export::printable::printable_lines(&svg).into_owned())
}

pub(super) fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}
