//! Ctrl-C and SIGTERM: noted in a flag that long runs check between measurements,
//! so an interrupted run stops cleanly, keeps what finished and leaves no server or
//! temporary directory behind.

use crate::error::Interrupted;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        // Without a handler the default action still ends the process, so failing
        // to install one only loses the clean stop.
        let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once a signal has arrived.
pub fn check() -> Result<(), Interrupted> {
    if interrupted() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}
