//! Progress on stderr: one bar per experiment, advanced between trials and never
//! inside a timed loop. A bar redraws only when it is advanced (no ticking thread
//! competing with the measurement for a CPU), and nothing is drawn when stderr is
//! not a terminal or with `--quiet`.

use crate::harness;
use indicatif::{ProgressBar, ProgressStyle};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::rc::Rc;

/// A handle on the progress line; clones share it.
#[derive(Clone)]
pub struct Progress {
    enabled: bool,
    bar: Rc<RefCell<Option<ProgressBar>>>,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: Rc::new(RefCell::new(None)),
        }
    }

    /// Removes the bar, before a table is printed.
    pub fn clear(&self) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }

    fn replace(&self, steps: u64, template: &str, prefix: &str) {
        self.clear();
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::new(steps);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(prefix.to_string());
        bar.tick();
        *self.bar.borrow_mut() = Some(bar);
    }
}

impl harness::Progress for Progress {
    /// Starts a bar for `steps` runs of one experiment.
    fn begin(&self, experiment: &str, steps: u64) {
        let template = "{prefix} [{bar:20}] {pos}/{len} {msg} ({elapsed})";
        self.replace(steps, template, experiment);
    }

    /// Counts the run about to start and says what it is.
    fn step(&self, what: String) {
        if let Some(bar) = &*self.bar.borrow() {
            bar.inc(1);
            bar.set_message(what);
        }
    }

    /// A line while something other than a trial happens, e.g. starting a server.
    fn note(&self, text: &str) {
        self.replace(0, "{prefix}", text);
    }

    /// Lengthens the bar by another round.
    fn grow(&self, steps: u64) {
        if let Some(bar) = &*self.bar.borrow() {
            bar.inc_length(steps);
        }
    }
}
