//! Where one operation's CPU time goes: a horizontal bar per transport (and per
//! case), stacked by layer (system-call entry, socket layer, TCP, IP, the loopback
//! device, copying, TLS, user space …), client and server together, from the
//! kernel's account of the counting trial scaled to the measured CPU time.

use super::{
    draw, label_area, mesh, number, scale, text, DrawnChart, Marked, LABELS, WIDTH, X_LABELS,
};
use crate::cpu::why::Layer;
use crate::report::columns::kernel::{layer_times, top_layers};
use crate::report::experiment::Description;
use crate::results::metric::Unit;
use crate::results::ResultRecord;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Each layer's colour: the network stack in blues and greens, user space in
/// greys, TLS in orange.
const COLOURS: [(Layer, RGBColor); 13] = [
    (Layer::Syscall, RGBColor(158, 202, 225)),
    (Layer::Socket, RGBColor(107, 174, 214)),
    (Layer::Unix, RGBColor(148, 103, 189)),
    (Layer::Tcp, RGBColor(33, 113, 181)),
    (Layer::Ip, RGBColor(65, 171, 93)),
    (Layer::Loopback, RGBColor(161, 217, 155)),
    (Layer::Bridge, RGBColor(0, 109, 44)),
    (Layer::Netfilter, RGBColor(140, 86, 75)),
    (Layer::Scheduler, RGBColor(214, 39, 40)),
    (Layer::Copy, RGBColor(255, 187, 120)),
    (Layer::Tls, RGBColor(255, 127, 14)),
    (Layer::User, RGBColor(150, 150, 150)),
    (Layer::OtherKernel, RGBColor(210, 210, 210)),
];

/// Pixels per bar, and per line of the legend.
const ROW: u32 = 26;
const LEGEND_LINE: u32 = 24;
const LEGEND_COLUMNS: usize = 3;

/// The chart of an experiment's records that carry CPU by layer; none when none
/// does.
pub fn layers(experiment: &Description, records: &[ResultRecord]) -> Option<DrawnChart> {
    let bars: Vec<(String, Vec<(Layer, f64)>)> = records
        .iter()
        .filter_map(|r| {
            let why = r.counters.as_ref()?.why.as_ref()?;
            let layers = layer_times(why);
            let mut label = super::bars::case(experiment, r);
            if !settled(why) {
                label.push_str(" *");
            }
            (!layers.is_empty()).then_some((label, layers))
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let op = experiment.verdict.map_or("operation", |v| v.work.op);
    Some(DrawnChart {
        title: format!("Where one {op}'s CPU time goes, client and server together"),
        note: format!(
            "Each bar is the measured CPU time per operation, divided by layer in the \
             mean proportion of the kernel's samples with call chains over the counting \
             trials. A bar marked * has one of its three largest layers whose share is \
             not settled (its 95% interval over the trials wider than ±{:.0} points, or \
             one trial only): read that split as rough; the table's \"most CPU in\" row \
             gives each share with its interval.",
            100.0 * SETTLED_SHARE
        ),
        svg: draw_layers(&bars),
    })
}

fn draw_layers(bars: &[(String, Vec<(Layer, f64)>)]) -> Result<String, String> {
    let present: Vec<Layer> = Layer::ALL
        .into_iter()
        .filter(|l| {
            bars.iter()
                .any(|(_, ls)| ls.iter().any(|(x, ns)| x == l && *ns > 0.0))
        })
        .collect();
    let total = |ls: &[(Layer, f64)]| ls.iter().map(|(_, ns)| ns).sum::<f64>();
    let largest = bars.iter().map(|(_, ls)| total(ls)).fold(0.0, f64::max);
    let (unit, unit_name) = scale(Unit::Time, largest);
    let n = bars.len();
    let chart_height = 78 + ROW * n as u32;
    let legend_rows = present.len().div_ceil(LEGEND_COLUMNS) as u32;
    let height = chart_height + 12 + LEGEND_LINE * legend_rows;
    draw((WIDTH, height), |root| {
        let (top, bottom) = root.split_vertically(chart_height);
        let rows = Marked {
            axis: RangedCoordf64::from(0f64..n as f64),
            at: (0..n).map(|i| i as f64 + 0.5).collect(),
        };
        let mut chart = ChartBuilder::on(&top)
            .margin(12)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(label_area(bars.iter().map(|(label, _)| label)))
            .build_cartesian_2d(0f64..(largest / unit * 1.05).max(1e-9), rows)
            .map_err(text)?;
        // The first record on top, as in the table.
        let row_of = |i: usize| (n - 1 - i) as f64;
        mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .y_label_formatter(&|y| {
                let i = n as f64 - 0.5 - *y;
                bars.get(i.round() as usize)
                    .map(|(label, _)| label.clone())
                    .unwrap_or_default()
            })
            .x_label_formatter(&|v| number(*v))
            .x_desc(unit_name.as_str())
            .draw()
            .map_err(text)?;
        for (i, (_, layers)) in bars.iter().enumerate() {
            let y = row_of(i);
            let mut from = 0.0;
            for &layer in &present {
                let ns = layers
                    .iter()
                    .find(|(l, _)| *l == layer)
                    .map_or(0.0, |x| x.1);
                if ns <= 0.0 {
                    continue;
                }
                let to = from + ns / unit;
                chart
                    .draw_series([Rectangle::new(
                        [(from, y + 0.15), (to, y + 0.85)],
                        colour(layer).filled(),
                    )])
                    .map_err(text)?;
                from = to;
            }
        }
        legend(&bottom, &present)
    })
}

/// The layers' names beside their colours, in columns under the chart.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    present: &[Layer],
) -> Result<(), String> {
    let font = (LABELS.0, LABELS.1)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let column = (WIDTH as i32 - 24) / LEGEND_COLUMNS as i32;
    for (k, &layer) in present.iter().enumerate() {
        let x = 12 + (k % LEGEND_COLUMNS) as i32 * column;
        let y = 12 + (k / LEGEND_COLUMNS) as i32 * LEGEND_LINE as i32;
        area.draw(&Rectangle::new(
            [(x, y - 7), (x + 14, y + 7)],
            colour(layer).filled(),
        ))
        .map_err(text)?;
        area.draw(&Text::new(
            layer.name().to_string(),
            (x + 20, y),
            font.clone(),
        ))
        .map_err(text)?;
    }
    Ok(())
}

/// A layer's share is settled when its interval is within ± this (5 points).
const SETTLED_SHARE: f64 = 0.05;

/// Whether the three largest layers' shares are each settled.
fn settled(why: &crate::cpu::why::Why) -> bool {
    top_layers(why, 3)
        .iter()
        .all(|s| s.interval.is_some_and(|m| m.half_width() <= SETTLED_SHARE))
}

fn colour(layer: Layer) -> RGBColor {
    COLOURS
        .iter()
        .find(|(l, _)| *l == layer)
        .map_or(RGBColor(0, 0, 0), |(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layer_has_its_own_colour() {
        for layer in Layer::ALL {
            assert!(COLOURS.iter().any(|(l, _)| *l == layer), "{layer}");
        }
        let mut colours: Vec<(u8, u8, u8)> = COLOURS.iter().map(|(_, c)| (c.0, c.1, c.2)).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), COLOURS.len());
    }
}

#[cfg(test)]
mod settled_tests {
    use super::*;
    use crate::cpu::why::{KernelAccount, Why};

    fn why(samples: &[(&str, Vec<u64>)]) -> Why {
        let mut why = Why {
            client: KernelAccount {
                layer_samples: samples
                    .iter()
                    .map(|(l, n)| (l.to_string(), n.clone()))
                    .collect(),
                ..KernelAccount::default()
            },
            ..Why::default()
        };
        let cost = crate::cpu::Cost::of_client(1000.0);
        why.scale_layers(None, &cost);
        why
    }

    #[test]
    fn a_bar_is_marked_when_a_large_layer_moves_between_trials() {
        let steady = why(&[("tcp", vec![50, 51, 49]), ("user", vec![50, 49, 51])]);
        assert!(settled(&steady));
        let moving = why(&[("tcp", vec![30, 50, 70]), ("user", vec![70, 50, 30])]);
        assert!(!settled(&moving));
        assert!(!settled(&why(&[("tcp", vec![50]), ("user", vec![50])])));
    }
}
