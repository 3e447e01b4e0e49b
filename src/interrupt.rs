//! Ctrl-C, SIGTERM and SIGHUP: the first is noted in a flag that every long loop
//! checks (between trials, and about once a second inside the longer ones), so an
//! interrupted run stops within a second, keeps what finished and leaves no server
//! or temporary directory behind. A second signal ends the process at once: the
//! servers it started die with it (they are tied to it, see `subprocess.rs`), and
//! what they leave in the temporary directory is removed by the next run.

use crate::error::Interrupted;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        // Without a handler the default action still ends the process, so failing
        // to install one only loses the clean stop.
        let _ = ctrlc::set_handler(|| {
            // The handler runs on its own thread, not in signal context.
            if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
                eprintln!("error: interrupted again; stopping at once");
                std::process::exit(130);
            }
        });
    });
}

pub fn interrupted() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}

/// `Err(Interrupted)` once a signal has arrived.
pub fn check() -> anyhow::Result<()> {
    if interrupted() {
        Err(Interrupted::default().into())
    } else {
        Ok(())
    }
}
