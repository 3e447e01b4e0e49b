//! Cost ratios with their 95% intervals on a log axis: the page's summary (each
//! transport against the reference, per kind of work) and a comparison's B / A.
//!
//! The axis is logarithmic so that a ratio of 20 (TLS setting up connections)
//! does not squeeze +10% (tcp against unix) into a pixel: equal factors take equal
//! widths either side of "same". A whisker that leaves the axis ends in an arrow.
//!
//! The chart is HTML that lays itself out, so that it uses the page's width on a
//! desktop and stays readable on a phone: a group's label is a line of text that
//! wraps, each ratio a row of its name beside a strip of SVG whose positions are
//! percentages of the strip's width, and the axis' numbers another such strip
//! under them. Text keeps the page's size at any width; [`STYLE`] is its CSS.

use crate::report::format::relative;
use crate::stats::Interval;
use plotters::style::RGBColor;
use std::fmt::Write;

/// Ratios about one thing: its label and a ratio per series that has one.
pub struct Group {
    pub label: String,
    pub ratios: Vec<(String, Interval)>,
}

/// The widest axis: ratios beyond it end in an arrow.
const FLOOR: f64 = 0.25;
const CEILING: f64 = 100.0;
/// The strip's width, in pixels, on which the ticks every width shows are chosen
/// (a phone's), and the one from which the ticks a wider screen adds are.
const NARROW: u32 = 260;
const WIDE: u32 = 520;
/// A strip's height in pixels; its whisker is drawn across the middle.
const STRIP: u32 = 22;

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

/// The page's CSS for the chart: a grid of names and strips, the ticks only a
/// wide screen has room for hidden on a narrow one, and room either side of a
/// strip for a dot, an arrow or a tick's number at its ends.
pub const STYLE: &str = "div.ratios{display:grid;grid-template-columns:fit-content(45%) \
minmax(0,1fr);column-gap:.6rem;align-items:center;font-size:.9rem;margin:.4rem 0}\
div.ratios p{grid-column:1/-1;margin:.6rem 0 .1rem;font-weight:600}\
div.ratios span.name{overflow-wrap:normal;line-height:1.2}\
div.ratios span.key{display:inline-block;width:.6rem;height:.6rem;border-radius:50%;\
margin-right:.3rem}\
div.ratios svg{width:100%;max-width:none;padding:0 28px;box-sizing:border-box;\
overflow:visible}\
div.ratios svg.axis{grid-column:2}div.ratios svg text{font-size:13px;fill:#444}\
div.ratios span.desc{grid-column:2;text-align:center;font-size:.85rem;color:#555}\
@media (max-width:40rem){div.ratios .more{display:none}}";

/// The chart: each group's label on a line of its own, then a row per series
/// with its name and estimate beside a dot at the estimate and its interval as a
/// whisker; or, unless `named`, a row per group that its label names. `x_desc`
/// names the axis; series are coloured as `colours` says (in that order).
pub fn ratios(
    groups: &[Group],
    colours: &[(String, RGBColor)],
    x_desc: &str,
    named: bool,
) -> Result<String, String> {
    if groups.iter().all(|g| g.ratios.is_empty()) {
        return Err("no ratio to draw".into());
    }
    let axis = Axis::new(groups);
    let mut out = String::from("<div class=\"ratios\">\n");
    for g in groups {
        if named {
            let _ = writeln!(out, "<p>{}</p>", escape(&g.label));
        }
        for (series, ratio) in ordered(&g.ratios, colours) {
            let colour = colours
                .iter()
                .find(|(n, _)| n == series)
                .map_or(RGBColor(0, 0, 0), |(_, c)| *c);
            let name = if named { series } else { &g.label };
            let _ = writeln!(
                out,
                "<span class=\"name\"><span class=\"key\" style=\"background:{}\"></span>\
                 {}\u{a0}{}</span>",
                hex(colour),
                escape(name),
                relative(ratio.estimate)
            );
            out.push_str(&axis.strip(name, ratio, colour));
        }
    }
    out.push_str(&axis.numbers());
    let _ = writeln!(out, "<span class=\"desc\">{}</span>", escape(x_desc));
    out.push_str("</div>");
    Ok(out)
}

/// Where on a strip a ratio is, and which ticks it shows.
struct Axis {
    low: f64,
    high: f64,
    /// The ticks, each with whether every width shows it.
    ticks: Vec<(f64, &'static str, bool)>,
}

impl Axis {
    fn new(groups: &[Group]) -> Axis {
        let (low, high) = axis(groups);
        let always = ticks(low, high, NARROW);
        let ticks = ticks(low, high, WIDE)
            .into_iter()
            .chain(always.iter().copied())
            .map(|(at, label)| (at, label, always.iter().any(|t| t.0 == at)))
            .fold(Vec::new(), |mut all: Vec<(f64, &str, bool)>, t| {
                if !all.iter().any(|a| a.0 == t.0) {
                    all.push(t);
                }
                all
            });
        Axis { low, high, ticks }
    }

    /// The position of `ratio` as a percentage of the strip, within the axis.
    fn at(&self, ratio: f64) -> String {
        let ratio = ratio.clamp(self.low, self.high);
        let share = (ratio.ln() - self.low.ln()) / (self.high.ln() - self.low.ln());
        format!("{:.2}%", share * 100.0)
    }

    /// The class of a tick's line or number: `more` when only a wide screen has
    /// room for it.
    fn class(always: bool) -> &'static str {
        if always {
            ""
        } else {
            " class=\"more\""
        }
    }

    /// A ratio's strip: the grid at the ticks, "same", and the ratio's whisker
    /// from low to high (an arrow where it leaves the axis) with a dot at the
    /// estimate.
    fn strip(&self, name: &str, ratio: &Interval, colour: RGBColor) -> String {
        let mid = STRIP / 2;
        let mut svg = format!(
            "<svg height=\"{STRIP}\"><title>{} {}, 95% interval {} to {}</title>",
            escape(name),
            relative(ratio.estimate),
            relative(ratio.low),
            relative(ratio.high)
        );
        for (at, _, always) in &self.ticks {
            let x = self.at(*at);
            let (opacity, width) = if *at == 1.0 { (0.6, 2) } else { (0.12, 1) };
            let _ = write!(
                svg,
                "<line{} x1=\"{x}\" x2=\"{x}\" y1=\"0\" y2=\"{STRIP}\" stroke=\"#000\" \
                 stroke-opacity=\"{opacity}\" stroke-width=\"{width}\"/>",
                Self::class(*always)
            );
        }
        let colour = hex(colour);
        let (from, to) = (self.at(ratio.low), self.at(ratio.high));
        let _ = write!(
            svg,
            "<g stroke=\"{colour}\" fill=\"{colour}\" stroke-width=\"2\">\
             <line x1=\"{from}\" x2=\"{to}\" y1=\"{mid}\" y2=\"{mid}\"/>"
        );
        for (x, beyond, side) in [
            (&from, ratio.low < self.low, -1),
            (&to, ratio.high > self.high, 1),
        ] {
            if beyond {
                let _ = write!(
                    svg,
                    "<svg x=\"{x}\" y=\"{mid}\" overflow=\"visible\">\
                     <polygon points=\"0,-5 {},0 0,5\"/></svg>",
                    8 * side
                );
            } else {
                let _ = write!(
                    svg,
                    "<line x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\"/>",
                    mid - 6,
                    mid + 6
                );
            }
        }
        let _ = writeln!(
            svg,
            "<circle cx=\"{}\" cy=\"{mid}\" r=\"5\" stroke=\"none\"/></g></svg>",
            self.at(ratio.estimate)
        );
        svg
    }

    /// The strip of tick numbers under the rows, centred on their ticks (the
    /// strip's padding leaves room for a number at either end).
    fn numbers(&self) -> String {
        let mut svg = String::from(
            "<svg class=\"axis\" height=\"20\">\
             <line x1=\"0\" x2=\"100%\" y1=\"0.5\" y2=\"0.5\" stroke=\"#000\" \
             stroke-opacity=\"0.4\"/>",
        );
        for (at, label, always) in &self.ticks {
            let _ = write!(
                svg,
                "<text{} x=\"{}\" y=\"15\" text-anchor=\"middle\">{label}</text>",
                Self::class(*always),
                self.at(*at)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

/// `#1f77b4`.
fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

fn escape(text: &str) -> String {
    crate::units::printable(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

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
        assert!(svg.contains("tcp\u{a0}+8.7%") && svg.contains("tls\u{a0}+35%"));
        assert!(svg.contains(">same</text>"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 3);
        // tcp is drawn before tls, as `colours` orders them.
        assert!(svg.find("tcp\u{a0}+8.7%") < svg.find("tls\u{a0}+35%"));
        // Bulk bytes' interval leaves the axis on the left: an arrow there.
        assert_eq!(svg.matches("<polygon").count(), 1, "{svg}");
    }

    #[test]
    fn a_long_label_is_text_and_a_ratio_beyond_the_axis_ends_in_an_arrow() {
        let groups = [Group {
            label: "New connections (PostgreSQL: connect, SELECT 1, close) <&>".into(),
            ratios: vec![
                ("tcp".into(), interval(0.5, 0.45, 0.56)),
                ("tls".into(), interval(127.0, 110.0, 140.0)),
            ],
        }];
        let svg = ratios(&groups, &[], "against unix", true).unwrap();
        // The label is a line of text that wraps, not SVG text in a gutter.
        assert!(
            svg.contains(
                "<p>New connections (PostgreSQL: connect, SELECT 1, close) &lt;&amp;&gt;</p>"
            ),
            "{svg}"
        );
        let tcp = format!("tcp\u{a0}{}", relative(0.5));
        assert!(svg.contains(&tcp) && svg.contains("tls\u{a0}127×"), "{svg}");
        // 127× is beyond the ceiling: its dot and whisker stop at the axis' end,
        // where an arrow points on.
        assert!(svg.contains("<circle cx=\"100.00%\""), "{svg}");
        assert_eq!(svg.matches("<polygon points=\"0,-5 8,0 0,5\"/>").count(), 1);
        assert!(
            svg.contains(">100×</text>") && svg.contains(">−50%</text>"),
            "{svg}"
        );
        assert!(ratios(&[], &[], "against unix", true).is_err());
    }
}
