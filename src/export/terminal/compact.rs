//! The compact form of a finished experiment printed while measuring: its id, then
//! one line per case with the reference transport's figure and every other
//! transport's change against it.

use super::fit::GLUE;
use super::wrap::wrap;
use super::Screen;
use crate::families;
use crate::report::format::{figure, versus};
use crate::results::paired::reference;
use crate::results::ResultRecord;

impl Screen {
    /// One finished experiment in a few lines: its id and what it does, then one
    /// line per case with the reference transport's headline figure and every other
    /// transport's extra time per operation over the one it is compared with (the
    /// reference, or for TLS tcp, named), with its 95% interval:
    /// `  64 B   unix 72.6 µs · tcp +19% [-15%, +66%] · tls vs tcp +39% [+20%, +60%]`.
    pub fn summary(&self, records: &[ResultRecord]) -> String {
        let catalog = families::catalog();
        let Some(experiment) = records.first().and_then(|r| catalog.of(r)) else {
            return String::new();
        };
        let rounds = records.first().map_or(0, |r| r.trials.len());
        let mut text = self.wrap(
            &format!("{} — {}, {rounds} rounds", experiment.id, experiment.title),
            "",
            "  ",
        );
        let mut cases: Vec<(String, Vec<&ResultRecord>)> = Vec::new();
        for record in records {
            let case = experiment.case_label(&record.params);
            match cases.iter_mut().find(|(c, _)| *c == case) {
                Some((_, of)) => of.push(record),
                None => cases.push((case, vec![record])),
            }
        }
        let labels: Vec<String> = cases.iter().map(|(c, _)| self.shown(c)).collect();
        let label_width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let dot = if self.ascii { " | " } else { " · " };
        for ((_, of), label) in cases.iter().zip(&labels) {
            let transports: Vec<&str> = of.iter().map(|r| r.transport.as_str()).collect();
            let reference = transports.get(reference(&transports)).copied();
            let parts: Vec<String> = of
                .iter()
                .map(|r| {
                    let shown = match &r.headline.vs_reference {
                        Some(v) if Some(v.reference.as_str()) == reference => versus(&v.ratio),
                        // TLS against tcp: named, as everywhere.
                        Some(v) => format!("vs {} {}", v.reference, versus(&v.ratio)),
                        None => experiment.headline.read(&r.metrics).map_or_else(
                            || "-".to_string(),
                            |value| figure(experiment.headline.unit, value),
                        ),
                    };
                    // A part breaks from the next, never inside itself.
                    self.shown(&format!("{} {shown}", r.transport))
                        .replace(' ', &GLUE.to_string())
                })
                .collect();
            let mut first = if label_width == 0 {
                "  ".to_string()
            } else {
                format!("  {label:<label_width$}  ")
            };
            let mut rest = " ".repeat(first.chars().count() + 2);
            // A label so long that a part would not fit beside it: the parts go
            // below it, rather than be cut inside a figure.
            let widest = parts.iter().map(|p| p.chars().count()).max().unwrap_or(0);
            if rest.chars().count() + widest + dot.len() > self.width {
                text.push_str(first.trim_end());
                text.push('\n');
                (first, rest) = ("      ".to_string(), "        ".to_string());
            }
            text.push_str(&wrap(&parts.join(dot), self.width, &first, &rest).replace(GLUE, " "));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::super::wrap::widest;
    use super::*;

    #[test]
    fn a_finished_experiment_is_a_line_per_case_within_80_columns() {
        let catalog = families::catalog();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
        let file = crate::results::load(std::path::Path::new(path), |id| {
            catalog.find(id).map(|e| e.declared())
        })
        .unwrap();
        let mut text = String::new();
        for experiment in catalog.all() {
            let records: Vec<ResultRecord> = file
                .results
                .iter()
                .filter(|r| r.experiment == experiment.id)
                .cloned()
                .collect();
            text.push_str(&Screen::plain(80).summary(&records));
        }
        println!("{text}");
        assert!(widest(&text) <= 80, "{text}");
        let pingpong: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("sockets.pingpong"))
            .take(4)
            .collect();
        assert_eq!(pingpong.len(), 4, "{text}");
        assert!(
            pingpong[1].starts_with("  64 B    unix 72.6 µs · tcp +19% ["),
            "{text}"
        );
        assert!(pingpong[3].starts_with("  64 KiB  unix "), "{text}");
    }

    #[test]
    fn a_label_too_long_for_a_figure_beside_it_puts_the_figures_below() {
        let catalog = families::catalog();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
        let file = crate::results::load(std::path::Path::new(path), |id| {
            catalog.find(id).map(|e| e.declared())
        })
        .unwrap();
        let records: Vec<ResultRecord> = file
            .results
            .iter()
            .filter(|r| r.experiment == "sockets.pingpong")
            .cloned()
            .collect();
        // 40 columns leave a 64 B label room, none for a part beside it.
        let text = Screen::plain(40).summary(&records);
        assert!(widest(&text) <= 40, "{text}");
        for line in text.lines().filter(|l| l.contains('[')) {
            // Every interval whole on its line: never cut inside a figure.
            assert!(line.contains(']'), "cut inside a figure:\n{text}");
        }
        assert!(text.lines().any(|l| l.trim_end() == "  64 B"), "{text}");
    }
}
