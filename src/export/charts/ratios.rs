//! Cost ratios with their 95% intervals on a log axis: the page's summary (each
//! transport against the reference, per kind of work) and a comparison's B / A.
//!
//! The axis is logarithmic so that a ratio of 20 (TLS setting up connections)
//! does not squeeze +10% (tcp against unix) into a pixel: equal factors take equal
//! widths either side of "same". A whisker that leaves the axis ends in an arrow.

use super::{draw, text, Marked};
use crate::report::format::relative;
use crate::stats::Interval;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Ratios about one thing: its label and a ratio per series that has one.
pub struct Group {
    pub label: String,
    pub ratios: Vec<(String, Interval)>,
}

/// The width of a ratio chart; narrower than the others, so that its text stays
/// readable when a phone scales it down.
const WIDTH: u32 = 520;
/// Pixels per line: a group's label, then one line per ratio.
const LINE: u32 = 28;
const GAP: f64 = 0.5;
/// Bigger than other charts' labels: a summary is read on phones too. (Plotters
/// writes a font size of 0.8 times this.)
const LABELS: (&str, u32) = ("sans-serif", 20);
/// The widest axis: ratios beyond it end in an arrow.
const FLOOR: f64 = 0.25;
const CEILING: f64 = 100.0;

/// Ticks the axis may show, with what they say (extra time as a percentage up to
/// +50%, as a factor beyond), in the order they are preferred when there is no
/// room for all.
const TICKS: [(f64, &str); 15] = [
    (2.0, "2×"),
    (10.0, "10×"),
    (0.5, "−50%"),
    (1.5, "+50%"),
    (100.0, "100×"),
    (30.0, "30×"),
    (5.0, "5×"),
    (3.0, "3×"),
    (1.25, "+25%"),
    (0.8, "−20%"),
    (1.1, "+10%"),
    (0.9, "−10%"),
    (0.25, "−75%"),
    (0.67, "−33%"),
    (1.0, "same"),
];

/// The chart: each group's label on a line of its own, then a dot per series at
/// the estimate with its interval as a whisker, the series named on its line;
/// or, unless `named`, a line per group that its label names. `x_desc` names the
/// axis; series are coloured as `colours` says (in that order).
pub fn ratios(
    groups: &[Group],
    colours: &[(String, RGBColor)],
    x_desc: &str,
    named: bool,
) -> Result<String, String> {
    let (low, high) = axis(groups);
    // Line positions from the top: the label of each group, then its ratios;
    // with one series, a line per group that its label names.
    let mut lines = Vec::new();
    let mut at = 0.0;
    for g in groups {
        let label_at = named.then_some(at);
        if named {
            at += 1.0;
        }
        let mut points = Vec::new();
        for (series, ratio) in ordered(&g.ratios, colours) {
            let name = if named { series } else { &g.label };
            points.push((at, name, series, ratio));
            at += 1.0;
        }
        lines.push((label_at, &g.label, points));
        if named {
            at += GAP;
        }
    }
    let depth = if named { at - GAP + 0.5 } else { at + 0.5 };
    let y = |line: f64| depth - line - 0.5;
    let point_labels: Vec<(f64, String)> = lines
        .iter()
        .flat_map(|(_, _, points)| points)
        .map(|(line, name, _, ratio)| (y(*line), format!("{name}  {}", relative(ratio.estimate))))
        .collect();
    let label_width = point_labels
        .iter()
        .map(|(_, l)| l.chars().count() as u32 * 10 + 16)
        .max()
        .unwrap_or(60)
        .max(60);
    let ticks = ticks(low, high, WIDTH - label_width - 24);
    let height = 12 + LINE * depth.ceil() as u32 + 52;
    draw((WIDTH, height), |root| {
        let x_range = Marked {
            axis: RangedCoordf64::from(low.ln()..high.ln()),
            at: ticks.iter().map(|t| t.0.ln()).collect(),
        };
        let y_range = Marked {
            axis: RangedCoordf64::from(0.0..depth),
            at: point_labels.iter().map(|p| p.0).collect(),
        };
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_bottom(4)
            .x_label_area_size(48)
            .y_label_area_size(label_width)
            .build_cartesian_2d(x_range, y_range)
            .map_err(text)?;
        chart
            .configure_mesh()
            .label_style(LABELS)
            .axis_desc_style(LABELS)
            .disable_y_mesh()
            .bold_line_style(BLACK.mix(0.12))
            .x_desc(x_desc)
            .x_label_formatter(&|v| {
                ticks
                    .iter()
                    .find(|t| (t.0.ln() - v).abs() < 1e-9)
                    .map_or_else(String::new, |t| t.1.to_string())
            })
            .y_label_formatter(&|v| {
                point_labels
                    .iter()
                    .find(|p| (p.0 - v).abs() < 1e-9)
                    .map_or_else(String::new, |p| p.1.clone())
            })
            .draw()
            .map_err(text)?;
        // "same": the reference, drawn over the grid.
        chart
            .draw_series(std::iter::once(PathElement::new(
                [(0.0, 0.0), (0.0, depth)],
                BLACK.mix(0.6).stroke_width(2),
            )))
            .map_err(text)?;
        let heading = ("sans-serif", 20)
            .into_font()
            .style(FontStyle::Bold)
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (label_at, label, points) in &lines {
            if let Some(label_at) = label_at {
                let (axis_x, py) = chart.backend_coord(&(low.ln(), y(*label_at)));
                // On white right of the axis, so that the grid does not run
                // through the words and the axis stays whole.
                let wide = 16 + label.chars().count() as i32 * 10;
                if wide > axis_x + 2 {
                    root.draw(&Rectangle::new(
                        [(axis_x + 2, py - 11), (wide, py + 11)],
                        WHITE.filled(),
                    ))
                    .map_err(text)?;
                }
                root.draw(&Text::new(label.to_string(), (14, py), heading.clone()))
                    .map_err(text)?;
            }
            for (line, _, series, ratio) in points {
                let colour = colours
                    .iter()
                    .find(|(n, _)| n == *series)
                    .map_or(BLACK, |(_, c)| *c);
                whisker(&mut chart, (low, high), y(*line), ratio, colour)?;
            }
        }
        Ok(())
    })
}

/// One ratio: its whisker from low to high (an arrow where it leaves the axis),
/// its caps, and a dot at the estimate.
fn whisker<'a>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RatioAxis, RatioAxis>>,
    (low, high): (f64, f64),
    y: f64,
    ratio: &Interval,
    colour: RGBColor,
) -> Result<(), String> {
    let style = colour.stroke_width(2);
    let from = ratio.low.clamp(low, high).ln();
    let to = ratio.high.clamp(low, high).ln();
    let end = |at: f64, beyond: bool, side: i32| {
        let shape: Vec<(i32, i32)> = if beyond {
            vec![(0, -5), (8 * side, 0), (0, 5)]
        } else {
            vec![(0, -6), (0, 6)]
        };
        EmptyElement::at((at, y)) + Polygon::new(shape, style.filled())
    };
    chart
        .draw_series([PathElement::new([(from, y), (to, y)], style)])
        .map_err(text)?;
    chart
        .draw_series([
            end(from, ratio.low < low, -1),
            end(to, ratio.high > high, 1),
        ])
        .map_err(text)?;
    let estimate = ratio.estimate.clamp(low, high).ln();
    chart
        .draw_series([Circle::new((estimate, y), 5, colour.filled())])
        .map_err(text)?;
    Ok(())
}

type RatioAxis = Marked<RangedCoordf64>;

/// Series in the order of `colours`, then any other.
fn ordered<'r>(
    ratios: &'r [(String, Interval)],
    colours: &[(String, RGBColor)],
) -> Vec<(&'r String, &'r Interval)> {
    let rank = |name: &String| colours.iter().position(|(n, _)| n == name);
    let mut out: Vec<_> = ratios.iter().map(|(n, r)| (n, r)).collect();
    out.sort_by_key(|(n, _)| rank(n).unwrap_or(usize::MAX));
    out
}

/// The axis from the lowest to the highest interval end, always showing "same"
/// and a little either side, within `FLOOR`..`CEILING`.
fn axis(groups: &[Group]) -> (f64, f64) {
    let all = groups.iter().flat_map(|g| &g.ratios).map(|(_, r)| r);
    let (low, high) = all.fold((0.9f64, 1.25f64), |(l, h), r| {
        (l.min(r.low.min(r.estimate)), h.max(r.high.max(r.estimate)))
    });
    // A margin of 6% of the axis' width on either side.
    let pad = ((high.ln() - low.ln()) * 0.06).exp();
    ((low / pad).max(FLOOR), (high * pad).min(CEILING))
}

/// The ticks inside the axis: `same`, then the others in the order preferred
/// while they stay 60 pixels apart on an axis `width` pixels wide.
fn ticks(low: f64, high: f64, width: u32) -> Vec<(f64, &'static str)> {
    let span = high.ln() - low.ln();
    let room = span * 60.0 / width as f64;
    let mut kept: Vec<(f64, &str)> = vec![(1.0, "same")];
    for t in TICKS
        .iter()
        .copied()
        .filter(|(t, _)| (low..=high).contains(t))
    {
        if kept.iter().all(|k| (k.0.ln() - t.0.ln()).abs() >= room) {
            kept.push(t);
        }
    }
    kept.sort_by(|a, b| a.0.total_cmp(&b.0));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, low: f64, high: f64) -> Interval {
        Interval {
            estimate,
            low,
            high,
            n: 10,
        }
    }

    #[test]
    fn ratios_read_as_percentages_when_small_and_factors_when_large() {
        assert_eq!(relative(1.087), "+8.7%");
        assert_eq!(relative(0.972), "−2.8%");
        assert_eq!(relative(1.45), "+45%");
        assert_eq!(relative(2.13), "2.1×");
        assert_eq!(relative(24.3), "24×");
    }

    #[test]
    fn the_axis_holds_every_interval_within_its_limits_and_always_same() {
        let group = |ratios| Group {
            label: "x".into(),
            ratios,
        };
        let (low, high) = axis(&[group(vec![("tcp".into(), interval(1.1, 1.05, 1.2))])]);
        assert!(low < 1.0 && high > 1.2 && high < 1.5, "{low}..{high}");
        let (low, high) = axis(&[group(vec![
            ("tcp".into(), interval(0.55, 0.01, 29.0)),
            ("tls".into(), interval(24.0, 19.0, 30.0)),
        ])]);
        assert_eq!((low, high), (FLOOR, high));
        assert!(high > 30.0 && high <= CEILING, "{high}");
    }

    #[test]
    fn ticks_keep_same_and_do_not_crowd() {
        let ticks = ticks(0.25, 40.0, 500);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1).collect();
        assert!(
            labels.contains(&"same") && labels.contains(&"10×"),
            "{labels:?}"
        );
        for pair in ticks.windows(2) {
            assert!(pair[1].0 / pair[0].0 > 1.4, "{labels:?}");
        }
    }

    #[test]
    fn a_chart_names_each_group_and_draws_a_dot_per_ratio() {
        let groups = [
            Group {
                label: "A SELECT 1 round trip".into(),
                ratios: vec![
                    ("tls".into(), interval(1.35, 0.69, 2.65)),
                    ("tcp".into(), interval(1.087, 0.61, 1.94)),
                ],
            },
            Group {
                label: "Bulk bytes".into(),
                ratios: vec![("tcp".into(), interval(0.55, 0.01, 29.0))],
            },
        ];
        let colours = [
            ("tcp".to_string(), RGBColor(1, 2, 3)),
            ("tls".to_string(), RGBColor(4, 5, 6)),
        ];
        let svg = ratios(&groups, &colours, "extra time", true).unwrap();
        assert!(svg.contains("A SELECT 1 round trip") && svg.contains("Bulk bytes"));
        assert!(svg.contains("tcp  +8.7%") && svg.contains("tls  +35%"));
        assert!(svg.contains(">\nsame\n<"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 3);
        // tcp is drawn before tls, as `colours` orders them.
        assert!(svg.find("tcp  +8.7%") < svg.find("tls  +35%"));
    }
}
