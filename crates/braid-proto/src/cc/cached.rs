//! The connection's controller with every subflow's window copied beside
//! it.
//!
//! Why: sending one packet asks for windows several times (the scheduler's
//! views, the window checks before and after it decides), each a virtual
//! call into the controller and, for the loss-based ones, a float-to-integer
//! conversion. A window is a function of the controller's state alone
//! ([`Controller::window`] takes `&self` and no clock), and that state
//! changes only through the `&mut` callbacks, so refreshing the copies after
//! each of those keeps them exact: one call per subflow per acknowledgement
//! instead of several per packet. The copies sit inline, in the
//! connection, for the first [`CACHED_PATHS`] subflows (more are asked of
//! the controller), so reading them touches no other allocation. Pacing
//! rates, asked for on every poll and every packet sent, are copied the
//! same way for the controllers that pace (BBR's took about 550
//! instructions a packet to work out again each time); the others are
//! asked nothing.

use super::{AckSample, Controller, PathView};
use crate::time::{Duration, Instant};

/// Subflows whose windows are copied (64 bytes of copies).
pub(crate) const CACHED_PATHS: usize = 8;

#[derive(Debug)]
pub(crate) struct CachedController {
    controller: Box<dyn Controller>,
    /// `controller.window(i)` for the first `cached` path indices.
    windows: [u64; CACHED_PATHS],
    /// `controller.pacing_rate(i)` for the same paths, if it paces, 0 for
    /// `None` (a pacing rate is at least 1 byte a second): 64 bytes.
    pacing: [u64; CACHED_PATHS],
    cached: usize,
    /// [`Controller::paces`], read once.
    paces: bool,
    /// [`Controller::answers_after_ack`], read once.
    answers_after_ack: bool,
}

impl CachedController {
    pub(crate) fn new(controller: Box<dyn Controller>) -> Self {
        let (answers_after_ack, paces) = (controller.answers_after_ack(), controller.paces());
        CachedController {
            controller,
            windows: [0; CACHED_PATHS],
            pacing: [0; CACHED_PATHS],
            cached: 0,
            paces,
            answers_after_ack,
        }
    }

    /// Congestion window of `path`, in bytes: the controller's answer.
    /// (Builds with debug assertions, the tests among them, check the copy
    /// against the controller on every read.)
    #[inline]
    pub(crate) fn window(&self, path: usize) -> u64 {
        if path < self.cached {
            debug_assert_eq!(self.windows[path], self.controller.window(path), "stale window copy of path {path}");
            self.windows[path]
        } else {
            self.controller.window(path)
        }
    }

    /// Pacing rate of `path`: the controller's answer, as [`Self::window`].
    #[inline]
    pub(crate) fn pacing_rate(&self, path: usize) -> Option<u64> {
        if !self.paces {
            debug_assert_eq!(self.controller.pacing_rate(path), None, "paces without saying so");
            None
        } else if path < self.cached {
            let rate = Some(self.pacing[path]).filter(|&r| r > 0);
            debug_assert_eq!(rate, self.controller.pacing_rate(path), "stale pacing rate of path {path}");
            rate
        } else {
            self.controller.pacing_rate(path)
        }
    }

    /// The controller itself, for the calls that do not change its state.
    pub(crate) fn get(&self) -> &dyn Controller {
        &*self.controller
    }

    pub(crate) fn on_path_added(&mut self, path: usize, mss: u32, initial_window_packets: u32) {
        self.controller.on_path_added(path, mss, initial_window_packets);
        self.cached = self.cached.max((path + 1).min(CACHED_PATHS));
        self.refresh();
    }

    pub(crate) fn on_path_removed(&mut self, path: usize) {
        self.controller.on_path_removed(path);
        self.refresh();
    }

    pub(crate) fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        self.controller.on_ack(path, ack, paths);
        self.refresh();
    }

    pub(crate) fn on_congestion_event(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.controller.on_congestion_event(now, path, paths);
        self.refresh();
    }

    pub(crate) fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView], in_recovery: bool) {
        self.controller.on_rto(now, path, paths, in_recovery);
        self.refresh();
    }

    pub(crate) fn on_spurious_rto(&mut self, path: usize) {
        self.controller.on_spurious_rto(path);
        self.refresh();
    }

    pub(crate) fn penalize(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.controller.penalize(now, path, paths);
        self.refresh();
    }

    pub(crate) fn on_idle_restart(&mut self, now: Instant, path: usize, idle: Duration, rto: Duration, restart: u64) {
        self.controller.on_idle_restart(now, path, idle, rto, restart);
        self.refresh();
    }

    /// Only reports (see [`Controller::take_closed_path`]): the windows
    /// stay as they are. Asked of the controller only if it
    /// [answers after an ACK](Controller::answers_after_ack) (builds with
    /// debug assertions check the others' defaults).
    pub(crate) fn take_closed_path(&mut self) -> Option<usize> {
        if self.answers_after_ack {
            self.controller.take_closed_path()
        } else {
            debug_assert_eq!(self.controller.take_closed_path(), None, "closes paths without answers_after_ack");
            None
        }
    }

    /// [`Controller::samples_app_limited`], asked only of a controller that
    /// [answers after an ACK](Controller::answers_after_ack).
    pub(crate) fn samples_app_limited(&self, path: usize) -> bool {
        if self.answers_after_ack {
            self.controller.samples_app_limited(path)
        } else {
            debug_assert!(!self.controller.samples_app_limited(path), "limits samples without answers_after_ack");
            false
        }
    }

    fn refresh(&mut self) {
        for (path, w) in self.windows[..self.cached].iter_mut().enumerate() {
            *w = self.controller.window(path);
        }
        if self.paces {
            for (path, r) in self.pacing[..self.cached].iter_mut().enumerate() {
                let rate = self.controller.pacing_rate(path);
                debug_assert_ne!(rate, Some(0), "a pacing rate of 0");
                *r = rate.unwrap_or(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_ack;

    /// A controller whose every window moves on every callback that may
    /// change state, so a callback that does not refresh the copies leaves
    /// them stale.
    #[derive(Debug, Default)]
    struct Moving(u64);

    impl Controller for Moving {
        fn name(&self) -> &'static str {
            "moving"
        }
        fn on_path_added(&mut self, _: usize, _: u32, _: u32) {
            self.0 += 1;
        }
        fn on_path_removed(&mut self, _: usize) {
            self.0 += 1;
        }
        fn on_ack(&mut self, _: usize, _: &AckSample, _: &[PathView]) {
            self.0 += 1;
        }
        fn on_congestion_event(&mut self, _: Instant, _: usize, _: &[PathView]) {
            self.0 += 1;
        }
        fn on_rto(&mut self, _: Instant, _: usize, _: &[PathView], _: bool) {
            self.0 += 1;
        }
        fn on_spurious_rto(&mut self, _: usize) {
            self.0 += 1;
        }
        fn window(&self, path: usize) -> u64 {
            1000 * self.0 + path as u64
        }
        fn pacing_rate(&self, path: usize) -> Option<u64> {
            Some(7 * self.0 + path as u64)
        }
        fn paces(&self) -> bool {
            true
        }
        fn ssthresh(&self, _: usize) -> u64 {
            u64::MAX
        }
        fn penalize(&mut self, _: Instant, _: usize, _: &[PathView]) {
            self.0 += 1;
        }
        fn on_idle_restart(&mut self, _: Instant, _: usize, _: Duration, _: Duration, _: u64) {
            self.0 += 1;
        }
    }

    /// Every callback leaves every copy equal to the controller's answer,
    /// for cached paths and beyond them.
    #[test]
    fn every_callback_refreshes_the_copies() {
        let mut c = CachedController::new(Box::<Moving>::default());
        let now = Instant::from_nanos(0);
        let check = |c: &CachedController, step: &str| {
            for path in 0..CACHED_PATHS + 2 {
                assert_eq!(c.window(path), c.get().window(path), "{step}: path {path}");
                assert_eq!(c.pacing_rate(path), c.get().pacing_rate(path), "{step}: pacing of path {path}");
            }
        };
        for path in 0..CACHED_PATHS + 1 {
            c.on_path_added(path, 1000, 10);
            check(&c, "added");
        }
        c.on_ack(0, &test_ack(now, 1000), &[]);
        check(&c, "ack");
        c.on_congestion_event(now, 1, &[]);
        check(&c, "congestion");
        c.on_rto(now, 1, &[], false);
        check(&c, "rto");
        c.on_spurious_rto(1);
        check(&c, "spurious rto");
        c.penalize(now, 0, &[]);
        check(&c, "penalize");
        c.on_idle_restart(now, 0, Duration::from_secs(1), Duration::from_millis(200), 1000);
        check(&c, "idle restart");
        c.on_path_removed(2);
        check(&c, "removed");
        assert_eq!(c.take_closed_path(), None);
        check(&c, "closed");
    }
}
