//! The shared machinery of loss-based (AIMD) controllers, in the style of
//! neqo's split between a generic state machine and a small per-algorithm
//! rule: [`Aimd`] owns every subflow's [`Window`], runs slow start and the
//! RTO reset, and asks its [`WindowRule`] only for the congestion-avoidance
//! increase and the loss decrease.
//!
//! A window grows (slow start or increase) only while it is used:
//! `WindowUse::limits`, Linux's `tcp_is_cwnd_limited`, which every
//! loss-based MPTCP v0.96 module checks (`mptcp_ccc_cong_avoid`,
//! `mptcp_olia_cong_avoid`, `mptcp_balia_cong_avoid`, `tcp_reno_cong_avoid`).
//! EWTCP, COUPLED and SEMICOUPLED have no kernel module; they follow the
//! same rule. RFC 2861's decay of an unused window is not modelled; the
//! restart after idleness (`Config::restart_after_idle`) is.

use super::window::{self, Window};
use super::{deactivate, install, AckSample, Controller, PathView};
use crate::time::{Duration, Instant};

/// The part of a loss-based controller that differs between algorithms.
pub trait WindowRule: std::fmt::Debug + Send + Default {
    const NAME: &'static str;

    /// Bytes to add to `windows[path]` for `acked` bytes acknowledged in
    /// congestion avoidance. Inactive windows must be ignored.
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, paths: &[PathView]) -> f64;

    /// The window of `path` after a loss there (it also becomes ssthresh).
    /// Default: Reno's halving, floored at two segments (RFC 5681).
    fn decrease(&mut self, windows: &[Window], path: usize, _paths: &[PathView]) -> f64 {
        let w = &windows[path];
        (w.cwnd / 2.0).max(2.0 * w.mss)
    }

    /// ssthresh after a retransmission timeout on `path` (the window then
    /// restarts at one segment). Default: Reno's halving, the
    /// `tcp_reno_ssthresh` that LIA's and OLIA's modules use.
    fn timeout_ssthresh(&mut self, windows: &[Window], path: usize, _paths: &[PathView]) -> f64 {
        let w = &windows[path];
        (w.cwnd / 2.0).max(2.0 * w.mss)
    }

    /// Sees every ACK of `path` outside fast recovery, slow start and ACKs
    /// of an unused window included: where the kernel calls the module's
    /// `cong_avoid` (for per-path state).
    fn observe_ack(&mut self, _path: usize, _ack: &AckSample) {}

    /// A loss episode (fast recovery or a first timeout) began on `path`.
    fn observe_loss(&mut self, _path: usize) {}
}

/// A loss-based controller: per-subflow windows driven by rule `R`.
#[derive(Debug, Default)]
pub struct Aimd<R> {
    pub(crate) rule: R,
    pub(crate) windows: Vec<Window>,
}

/// Sum of the active windows, in bytes.
pub fn total_window(windows: &[Window]) -> f64 {
    windows.iter().filter(|w| w.active).map(|w| w.cwnd).sum()
}

impl<R: WindowRule> Controller for Aimd<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        install(&mut self.windows, path, Window::new(mss, iw));
    }
    fn on_path_removed(&mut self, path: usize) {
        deactivate(&mut self.windows, path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        if !self.windows.get(path).is_some_and(|w| w.active) {
            return;
        }
        if ack.in_recovery {
            // Linux calls no `cong_avoid` during a window reduction.
            return;
        }
        self.rule.observe_ack(path, ack);
        let w = &self.windows[path];
        if !ack.window_use.limits(w.bytes(), w.ssthresh_bytes()) {
            return;
        }
        let rest = self.windows[path].slow_start(ack.bytes_acked);
        if rest > 0 {
            // OLIA's increase is negative on its max-window paths.
            let inc = self.rule.increase(&self.windows, path, rest as f64, paths);
            let w = &mut self.windows[path];
            w.cwnd = (w.cwnd + inc).max(w.mss);
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, path: usize, paths: &[PathView]) {
        if self.windows.get(path).is_some_and(|w| w.active) {
            self.rule.observe_loss(path);
            let w = self.rule.decrease(&self.windows, path, paths).max(self.windows[path].mss);
            self.windows[path].cwnd = w;
            self.windows[path].ssthresh = w;
        }
    }
    fn on_rto(&mut self, _now: Instant, path: usize, paths: &[PathView], in_recovery: bool) {
        if let Some(w) = self.windows.get(path).filter(|w| w.active) {
            let ssthresh =
                if in_recovery { w.ssthresh } else { self.rule.timeout_ssthresh(&self.windows, path, paths) };
            self.windows[path].on_rto_to(ssthresh);
            self.rule.observe_loss(path);
        }
    }
    /// `tcp_reno_undo_cwnd`, which MPTCP v0.96's coupled modules use; the
    /// rule's loss bookkeeping (OLIA's, BALIA's) stays, as in Linux.
    fn on_spurious_rto(&mut self, path: usize) {
        window::on_active(&mut self.windows, path, Window::undo_timeout);
    }
    fn penalize(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        window::on_active(&mut self.windows, path, Window::penalize);
    }
    fn on_idle_restart(&mut self, _now: Instant, path: usize, idle: Duration, rto: Duration, restart: u64) {
        window::on_active(&mut self.windows, path, |w| w.restart_after_idle(idle, rto, restart as f64));
    }
    fn window(&self, path: usize) -> u64 {
        window::window_bytes(&self.windows, path)
    }
    fn ssthresh(&self, path: usize) -> u64 {
        window::ssthresh_bytes(&self.windows, path)
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// A controller with the given windows (in segments of 1000 bytes), all
    /// in congestion avoidance.
    pub fn in_avoidance<R: WindowRule>(segments: &[u32]) -> Aimd<R> {
        let mut c = Aimd::<R>::default();
        for (i, &s) in segments.iter().enumerate() {
            c.on_path_added(i, 1000, s);
            c.windows[i].ssthresh = 1.0;
        }
        c
    }

    pub fn ack(bytes: u64) -> AckSample {
        crate::cc::test_ack(Instant::ZERO, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{ack, in_avoidance};
    use super::*;
    use crate::cc::lia::Lia;

    /// A window that was not used (`WindowUse::limits` false) neither slow-starts
    /// nor grows in congestion avoidance; a used one does both.
    #[test]
    fn only_a_used_window_grows() {
        let unused =
            AckSample { window_use: crate::cc::WindowUse { max_in_flight: 1000, was_full: false }, ..ack(1000) };
        let mut c = in_avoidance::<Lia>(&[10]);
        c.on_ack(0, &unused, &[]);
        assert_eq!(c.window(0), 10_000);
        c.on_ack(0, &ack(1000), &[]);
        assert!(c.window(0) > 10_000);
        let mut c = Aimd::<Lia>::default();
        c.on_path_added(0, 1000, 10);
        c.on_ack(0, &unused, &[]);
        assert_eq!(c.window(0), 10_000, "slow start too");
        c.on_ack(0, &ack(1000), &[]);
        assert_eq!(c.window(0), 11_000);
    }
}
