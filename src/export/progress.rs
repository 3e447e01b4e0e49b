//! Progress on stderr: one line for the whole run, `experiment 3 of 8
//! (sockets.stream: 64 KiB tcp, round 2), about 1 min 10 s left`, redrawn between
//! trials and never inside a timed loop. It redraws only when the harness reports a step
//! (no ticking thread competing with the measurement for a CPU), and nothing is
//! drawn when stderr is not a terminal or with `--quiet`.
//!
//! The time left is an estimate of the whole run's length minus the time taken: the
//! experiments to come are taken to last as long as the ones finished did on
//! average (the current one counting with its planned trials), and the estimate
//! only grows or holds, so extra rounds added to settle an interval never make the
//! end jump closer and then away again. It stays unsaid until the first round of
//! trials has given it something to go on.

use super::terminal::{ascii, utf8_locale};
use crate::harness;
use indicatif::{ProgressBar, ProgressStyle};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A handle on the progress line; clones share it.
#[derive(Clone)]
pub struct ProgressLine {
    enabled: bool,
    state: Rc<RefCell<LineState>>,
}

/// What the line knows about the run so far.
struct LineState {
    bar: Option<ProgressBar>,
    /// Experiments the run will measure, when the command knows.
    total: Option<usize>,
    /// Experiments finished.
    finished: usize,
    /// When the run started, and the time its finished experiments took.
    start: Instant,
    spent: Duration,
    /// The current experiment: when it began, its trials planned and started.
    begun: Option<Instant>,
    planned: u64,
    started: u64,
    /// The longest the whole run was estimated to take.
    estimate: Option<Duration>,
    /// The line saying how long the run expects to take, printed when the first
    /// experiment begins: after servers are reached, so that a command that fails
    /// before measuring prints only its error.
    foretold: Option<String>,
    ascii: bool,
}

impl ProgressLine {
    /// The line for a run of `total` experiments (when known).
    pub fn new(quiet: bool, total: Option<usize>) -> ProgressLine {
        ProgressLine {
            enabled: !quiet && std::io::stderr().is_terminal(),
            state: Rc::new(RefCell::new(LineState {
                bar: None,
                total,
                finished: 0,
                start: Instant::now(),
                spent: Duration::ZERO,
                begun: None,
                planned: 0,
                started: 0,
                estimate: None,
                foretold: None,
                ascii: !utf8_locale(|name| std::env::var(name).ok()),
            })),
        }
    }

    /// Keeps `line` (the run's expected time) to print on stderr when the first
    /// experiment begins, whether or not the progress line is drawn.
    pub fn foretell(&self, line: String) {
        self.state.borrow_mut().foretold = Some(line);
    }

    /// Removes the line, before a table is printed.
    pub fn clear(&self) {
        if let Some(bar) = self.state.borrow_mut().bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Counts an experiment as finished, and removes the line.
    pub fn finished(&self) {
        self.clear();
        let mut state = self.state.borrow_mut();
        if let Some(begun) = state.begun.take() {
            state.spent += begun.elapsed();
            state.finished += 1;
        }
    }

    /// Shows `text` on the line.
    fn show(&self, text: String) {
        if !self.enabled {
            return;
        }
        let mut state = self.state.borrow_mut();
        let text = crate::units::printable(&text).into_owned();
        let text = if state.ascii { ascii(&text) } else { text };
        let bar = state.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{wide_msg}") {
                bar.set_style(style);
            }
            bar
        });
        bar.set_message(text);
    }
}

impl LineState {
    /// `experiment 3 of 8` or, when the total is unknown, `experiment 3`.
    fn which(&self) -> String {
        let n = self.finished + 1;
        match self.total {
            Some(total) => format!("experiment {n} of {}", total.max(n)),
            None => format!("experiment {n}"),
        }
    }

    /// The time left, once a round of trials gives something to go on: the run's
    /// estimated length (never shortened) minus the time taken.
    fn left(&mut self) -> Option<Duration> {
        let begun = self.begun?;
        let done = self.started.saturating_sub(1);
        if done == 0 {
            return None;
        }
        let current = begun.elapsed().as_secs_f64() * self.planned.max(done) as f64 / done as f64;
        let later = self.total?.saturating_sub(self.finished + 1) as f64;
        let each = if self.finished == 0 {
            current
        } else {
            self.spent.as_secs_f64() / self.finished as f64
        };
        let whole = Duration::from_secs_f64(self.spent.as_secs_f64() + current + later * each);
        let estimate = self.estimate.map_or(whole, |e| e.max(whole));
        self.estimate = Some(estimate);
        Some(estimate.saturating_sub(self.start.elapsed()))
    }
}

/// The line a measuring command prints before it starts: how long it expects to
/// take, at most, and what that is made of.
pub fn estimate_line(estimate: &harness::estimate::Estimate) -> String {
    use crate::units::format_wall;
    let wall = |d: Duration| format_wall(d.as_secs_f64());
    let range = |(a, b): (Duration, Duration)| {
        if a == b {
            wall(a)
        } else {
            format!("{}–{}", wall(a), wall(b))
        }
    };
    let mut made = Vec::new();
    if let (Some((min, max)), Some(trials)) = (estimate.rounds(), estimate.trials()) {
        let per_round = estimate.trials_per_round();
        let rounds = if min == max {
            format!("{min} round{}", plural(min.into()))
        } else {
            format!("{min}–{max} rounds")
        };
        let total = if min == max {
            format!("{}", u64::from(min) * per_round)
        } else {
            format!(
                "{}–{}",
                u64::from(min) * per_round,
                u64::from(max) * per_round
            )
        };
        made.push(format!(
            "{rounds} of {per_round} trial{} ({total} trials) of {}",
            plural(per_round),
            range(trials)
        ));
    }
    if let Some(around) = estimate.around() {
        made.push(format!("about {} around each", range(around)));
    }
    let counting = estimate.counting_rounds();
    if counting > 0 {
        made.push(format!("{counting} counting rounds"));
    }
    made.push(format!("{} to set up", wall(estimate.setup)));
    // Rounded up, to the tenth of a second below 10 s, else to the second: a
    // promise is not rounded down.
    let up = |s: f64| {
        if s < 10.0 {
            (s * 10.0).ceil() / 10.0
        } else {
            s.ceil()
        }
    };
    format!(
        "sockbench expects about {} (at most {} if intervals need more rounds or outside \
         load makes trials run again): {}",
        format_wall(up(estimate.expected_s())),
        format_wall(up(estimate.most_s())),
        made.join(", ")
    )
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `about 45 s left`, `about 1 min 10 s left`, `about 3 min left`: whole seconds,
/// and whole minutes once past 100 s, written as the estimate line writes them.
fn about(left: Duration) -> String {
    let s = left.as_secs().max(1);
    let rounded = if s < 100 { s } else { s.div_ceil(60) * 60 };
    format!("about {} left", crate::units::format_wall(rounded as f64))
}

impl harness::Progress for ProgressLine {
    /// Starts an experiment of `steps` trials.
    fn begin(&self, experiment: &str, steps: u64) {
        {
            let mut state = self.state.borrow_mut();
            if let Some(line) = state.foretold.take() {
                let line = crate::units::printable_lines(&line).into_owned();
                match &state.bar {
                    Some(bar) => bar.suspend(|| eprintln!("{line}")),
                    None => eprintln!("{line}"),
                }
            }
            if state.begun.is_none() {
                state.begun = Some(Instant::now());
                state.planned = 0;
                state.started = 0;
            }
            state.planned += steps;
        }
        let which = self.state.borrow().which();
        self.show(format!("{which} ({experiment})"));
    }

    /// Counts the trial about to start and says what it is.
    fn step(&self, what: String) {
        let line = {
            let mut state = self.state.borrow_mut();
            state.started += 1;
            let mut line = format!("{}: {what}", state.which());
            if let Some(left) = state.left() {
                line.push_str(&format!(", {}", about(left)));
            }
            line
        };
        self.show(line);
    }

    /// A line while something other than a trial happens, e.g. starting a server.
    fn note(&self, text: &str) {
        self.show(text.to_string());
    }

    /// Plans another round of trials.
    fn grow(&self, steps: u64) {
        self.state.borrow_mut().planned += steps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Progress as _;

    #[test]
    fn time_left_reads_as_the_estimate_line_writes_time() {
        let left = |s| about(Duration::from_secs(s));
        assert_eq!(left(0), "about 1 s left");
        assert_eq!(left(45), "about 45 s left");
        assert_eq!(left(70), "about 1 min 10 s left");
        assert_eq!(left(101), "about 2 min left");
        assert_eq!(left(3_700), "about 1 h 2 min left");
    }

    #[test]
    fn the_estimate_only_grows_or_holds() {
        let progress = ProgressLine::new(true, Some(4));
        progress.begin("a", 4);
        let mut estimates = Vec::new();
        for round in 0..12 {
            if round >= 4 {
                progress.grow(1);
            }
            progress.step(format!("round {round}"));
            // A slow first trial: an estimate taken afresh would then fall.
            let ms = if round == 0 { 30 } else { 1 };
            std::thread::sleep(Duration::from_millis(ms));
            let mut state = progress.state.borrow_mut();
            if state.left().is_some() {
                estimates.extend(state.estimate);
            }
        }
        progress.finished();
        assert!(!estimates.is_empty());
        assert!(estimates.windows(2).all(|w| w[1] >= w[0]), "{estimates:?}");
        assert_eq!(progress.state.borrow().which(), "experiment 2 of 4");
    }
}
