//! SIGINT and SIGTERM as a flag, so a long-running emulator stops cleanly
//! (devices closed, counters printed) when the testbed script or a person
//! ends it.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Routes SIGINT and SIGTERM to [`stop_requested`].
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic, which is signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
}

/// True once SIGINT or SIGTERM arrived after [`install`].
pub fn stop_requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
