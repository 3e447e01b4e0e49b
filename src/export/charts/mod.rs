//! SVG charts for the HTML report, drawn with plotters' SVG backend (text is left
//! to the browser, so no font files are needed). Each comes as a [`DrawnChart`]: the
//! page prints its title as text, which wraps and stays readable on a phone.
//! - the summary and a comparison: cost ratios with their 95% intervals on a log
//!   axis (`ratios`);
//! - every experiment: its headline figure per transport (and per case), a bar at
//!   the median with the 95% interval as a whisker;
//! - pingpong: round trip against message size, a line per transport;
//! - query and rows: total time of every timed batch against N, with the fitted
//!   line through them;
//! - concurrent: throughput against the number of clients;
//! - every experiment with the kernel's account: where one operation's CPU time
//!   goes, a bar per transport stacked by layer (`layers`).
//!
//! A transport has one colour on the whole page: callers pass [`colours`] of
//! every record the page shows.

mod bars;
mod layers;
mod lines;
mod ratios;

pub use crate::report::format::capitalised;

use crate::report::columns::distinct;
use crate::report::experiment::{Chart, Description};
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use bars::bars;
use lines::{fitted, lines};
use plotters::chart::MeshStyle;
use plotters::prelude::*;
pub use ratios::{ratios, Group, STYLE as RATIOS_STYLE};

/// A chart's width: narrow enough that its text, scaled down with it to a
/// phone's width, stays at 11 px or more.
pub(super) const WIDTH: u32 = 480;
/// Axis labels: plotters writes a font size of 0.8 times this (16 px).
pub(super) const LABELS: (&str, u32) = ("sans-serif", 20);
/// The height under the x axis, for its numbers and its name.
pub(super) const X_LABELS: u32 = 52;
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Each transport's colour.
pub type Colours = [(String, RGBColor)];

/// A chart with the words a person reads above and below it.
pub struct DrawnChart {
    pub title: String,
    /// How to read it (what the bar and the whisker are).
    pub note: String,
    /// The chart's markup (an SVG document, or HTML with SVG in it), or why it
    /// could not be drawn.
    pub svg: Result<String, String>,
}

/// The charts of one experiment's records.
pub fn for_experiment(
    experiment: &Description,
    records: &[ResultRecord],
    colours: &Colours,
) -> Vec<DrawnChart> {
    let mut charts = vec![bars(experiment, records, colours)];
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
                let svg = lines(
                    records,
                    colours,
                    x_desc,
                    y.unit,
                    move |r| Some((x.number(&r.params)? as f64, y.read(&r.metrics)?)),
                    log_x,
                );
                charts.push(DrawnChart {
                    title: capitalised(title),
                    note: "Medians of the rounds.".into(),
                    svg,
                });
            }
            Chart::Fitted {
                n,
                points,
                intercept,
            } => charts.push(DrawnChart {
                title: format!("Total time of each timed batch against the number of {n}"),
                note: "Dots: every batch of every round; lines: each transport's \
                       least-squares fit, whose slope is the time per one."
                    .into(),
                svg: fitted(experiment, n, points, &intercept, records, colours),
            }),
        }
    }
    charts.extend(layers::layers(experiment, records));
    charts
}

/// Each transport of `records`, in the order they first name it, with its colour.
pub fn colours<'r>(records: impl IntoIterator<Item = &'r ResultRecord>) -> Vec<(String, RGBColor)> {
    distinct(records, |r| r.transport.clone())
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, PALETTE[i % PALETTE.len()]))
        .collect()
}

/// The colour of `transport`.
pub(super) fn colour_of(colours: &Colours, transport: &str) -> RGBColor {
    colours
        .iter()
        .find(|(n, _)| n == transport)
        .map_or(PALETTE[0], |(_, c)| *c)
}

/// A transport's name, colour and points.
pub(super) type Series = (String, RGBColor, Vec<(f64, f64)>);

/// A unit that keeps axis numbers short, and the axis' words: nanoseconds shown
/// as `time (µs)`, rates as `thousands per second`.
pub(super) fn scale(unit: Unit, largest: f64) -> (f64, String) {
    match unit {
        Unit::Time => match largest {
            v if v >= 1e6 => (1e6, "time (ms)".into()),
            v if v >= 1e3 => (1e3, "time (µs)".into()),
            _ => (1.0, "time (ns)".into()),
        },
        Unit::ByteRate => (1e9, "GB per second".into()),
        Unit::Rate if largest >= 1e3 => (1e3, "thousands per second".into()),
        Unit::Rate => (1.0, "per second".into()),
        Unit::Count => (1.0, "count".into()),
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

/// The axes every chart shares: readable label sizes, at most 6 numbers across
/// (more crowd each other at these sizes), one light line between bold ones.
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
        .x_labels(6)
        .max_light_lines(1)
}

/// The width left of the y axis for `labels` (and the tick marks), at most
/// half the chart: about 9 px per character at [`LABELS`]' size.
pub(super) fn label_area<'l>(labels: impl IntoIterator<Item = &'l String>) -> u32 {
    let longest = labels
        .into_iter()
        .map(|l| l.chars().count() as u32)
        .max()
        .unwrap_or(0);
    (longest * 9 + 20).clamp(60, WIDTH / 2)
}

/// Draws on a fresh SVG of `height` and returns its text.
pub(super) fn draw(
    (width, height): (u32, u32),
    paint: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(text)?;
        paint(&root)?;
        root.present().map_err(text)?;
    }
    // Labels come from the result file: no control character reaches the page.
    Ok(crate::units::printable_lines(&svg).into_owned())
}

/// An axis number without needless zeros: `20`, `2.5`, `0.25`.
pub(super) fn number(v: f64) -> String {
    let text = format!("{:.2}", v);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// An axis marked at chosen values only (the measured sizes, the ratio ticks),
/// without the light lines between them; its labels come from the chart's own
/// formatter.
pub(super) struct Marked<R> {
    pub axis: R,
    pub at: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Marked<R> {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.axis.map(value, limit)
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.at.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.axis.range()
    }
}
