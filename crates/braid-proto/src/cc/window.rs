//! One subflow's window arithmetic shared by loss-based controllers: slow
//! start, the RTO reset and the restart after idleness of RFC 5681.

use crate::time::Duration;

/// One subflow's congestion window and slow-start threshold, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
    /// False for a removed subflow: it contributes nothing to coupled sums.
    pub active: bool,
    /// cwnd and ssthresh to go back to should the last timeout prove
    /// spurious (Linux's `prior_cwnd`, `prior_ssthresh`).
    prior: Option<(f64, f64)>,
}

impl Window {
    pub fn new(mss: u32, initial_window_packets: u32) -> Self {
        let mss = f64::from(mss.max(1));
        Window {
            cwnd: mss * f64::from(initial_window_packets.max(1)),
            ssthresh: f64::INFINITY,
            mss,
            active: true,
            prior: None,
        }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Grows the window by the acknowledged bytes up to ssthresh and returns
    /// the bytes left over for congestion avoidance (RFC 5681 section 3.1).
    pub fn slow_start(&mut self, bytes_acked: u64) -> u64 {
        if !self.in_slow_start() {
            return bytes_acked;
        }
        let room = self.ssthresh - self.cwnd;
        let acked = bytes_acked as f64;
        if acked <= room {
            self.cwnd += acked;
            0
        } else {
            self.cwnd = self.ssthresh;
            (acked - room) as u64
        }
    }

    /// RFC 5681 section 3.1 on timeout: ssthresh = max(cwnd/2, 2 segments),
    /// cwnd = one segment.
    pub fn on_rto(&mut self) {
        self.on_rto_to((self.cwnd / 2.0).max(2.0 * self.mss));
    }

    /// A retransmission timeout with the controller's own `ssthresh`.
    pub fn on_rto_to(&mut self, ssthresh: f64) {
        self.save_prior();
        self.ssthresh = ssthresh;
        self.cwnd = self.mss;
    }

    /// Before a timeout cuts the window: what undoing it restores, as
    /// Linux's `tcp_enter_loss` records it (`prior_ssthresh` is
    /// `tcp_current_ssthresh`, at least 3/4 of cwnd). Linux records
    /// nothing for a timeout during fast recovery, and F-RTO is off then;
    /// the window does not know about recovery and records what it has, so
    /// an undo there only returns to the window recovery had already cut.
    pub fn save_prior(&mut self) {
        self.prior = Some((self.cwnd, self.ssthresh.max(0.75 * self.cwnd)));
    }

    /// The last timeout was spurious: Linux's `tcp_undo_cwnd_reduction`
    /// with `tcp_reno_undo_cwnd`: cwnd back to at least its value before,
    /// ssthresh to at least its recorded prior. Once per timeout.
    pub fn undo_timeout(&mut self) {
        if let Some((cwnd, ssthresh)) = self.prior.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
        }
    }

    /// Penalisation as Linux MPTCP's `mptcp_rcv_buf_optimization` does it:
    /// halve cwnd (at least one segment) and, unless in slow start, halve
    /// ssthresh too (at least two segments), so a penalised subflow in slow
    /// start climbs straight back.
    pub fn penalize(&mut self) {
        if self.ssthresh <= self.cwnd {
            self.ssthresh = (self.ssthresh / 2.0).max(2.0 * self.mss);
        }
        self.cwnd = (self.cwnd / 2.0).max(self.mss);
    }

    /// Linux's `tcp_cwnd_restart` after `idle` without sending (more than
    /// one `rto`): ssthresh = max(ssthresh, 3/4 cwnd) (`tcp_current_ssthresh`
    /// outside recovery), then cwnd halves once per full RTO of idleness
    /// beyond the first, never below `restart` (the initial window, or cwnd
    /// if smaller).
    pub fn restart_after_idle(&mut self, idle: Duration, rto: Duration, restart: f64) {
        self.ssthresh = self.ssthresh.max(0.75 * self.cwnd);
        let restart = restart.min(self.cwnd);
        let mut left = idle.as_nanos();
        let rto = rto.as_nanos().max(1);
        while left > rto && self.cwnd > restart {
            left -= rto;
            self.cwnd /= 2.0;
        }
        self.cwnd = self.cwnd.max(restart);
    }

    pub fn bytes(&self) -> u64 {
        self.cwnd as u64
    }

    pub fn ssthresh_bytes(&self) -> u64 {
        if self.ssthresh.is_finite() {
            self.ssthresh as u64
        } else {
            u64::MAX
        }
    }
}

/// Controller state that keeps one [`Window`] per subflow, so the
/// window-level callbacks are written once for all such controllers.
pub(crate) trait Windowed {
    fn window(&self) -> &Window;
    fn window_mut(&mut self) -> &mut Window;
}

impl<T: Windowed + Clone> super::PathSlot for T {
    fn deactivate(&mut self) {
        self.window_mut().active = false;
    }
}

impl Windowed for Window {
    fn window(&self) -> &Window {
        self
    }
    fn window_mut(&mut self) -> &mut Window {
        self
    }
}

/// Congestion window of `path` in bytes (0 for an unknown path).
pub(crate) fn window_bytes<T: Windowed>(paths: &[T], path: usize) -> u64 {
    paths.get(path).map_or(0, |p| p.window().bytes())
}

/// Slow-start threshold of `path` in bytes (unbounded for an unknown path).
pub(crate) fn ssthresh_bytes<T: Windowed>(paths: &[T], path: usize) -> u64 {
    paths.get(path).map_or(u64::MAX, |p| p.window().ssthresh_bytes())
}

/// Applies `change` to the window of `path` if it is active (a removed
/// path's window stays as it was): the window-level callbacks a timeout's
/// undo, a penalty or a restart after idleness make.
pub(crate) fn on_active<T: Windowed>(paths: &mut [T], path: usize, change: impl FnOnce(&mut Window)) {
    if let Some(p) = paths.get_mut(path).filter(|p| p.window().active) {
        change(p.window_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Undoing a timeout by hand: cwnd 20 segments, ssthresh 12. The
    /// timeout gives ssthresh 10, cwnd 1; prior ssthresh is max(12, 3/4 x
    /// 20) = 15. After the window grew to 3 segments, undo gives cwnd
    /// max(3, 20) = 20 and ssthresh max(10, 15) = 15; a second undo does
    /// nothing.
    #[test]
    fn undoing_a_timeout_restores_the_window_before_it() {
        let mut w = Window::new(1000, 20);
        w.ssthresh = 12_000.0;
        w.on_rto();
        assert_eq!((w.cwnd, w.ssthresh), (1_000.0, 10_000.0));
        w.cwnd = 3_000.0;
        w.undo_timeout();
        assert_eq!((w.cwnd, w.ssthresh), (20_000.0, 15_000.0));
        w.cwnd = 5_000.0;
        w.undo_timeout();
        assert_eq!(w.cwnd, 5_000.0, "once per timeout");
    }

    #[test]
    fn penalty_keeps_slow_start_threshold_in_slow_start() {
        let mut w = Window::new(1000, 40);
        w.penalize();
        assert_eq!((w.cwnd, w.ssthresh), (20_000.0, f64::INFINITY));
        w.ssthresh = 16_000.0;
        w.penalize();
        assert_eq!((w.cwnd, w.ssthresh), (10_000.0, 8_000.0));
        w.cwnd = 1_500.0;
        w.penalize();
        assert_eq!((w.cwnd, w.ssthresh), (1_000.0, 8_000.0), "in slow start below ssthresh");
    }

    /// Linux's `tcp_cwnd_restart`, by hand: 3.5 RTOs idle halve a 100-segment
    /// window three times (the first RTO is free), stopping at the restart
    /// window; ssthresh keeps 3/4 of the old window.
    #[test]
    fn restart_after_idle_halves_per_rto_down_to_the_initial_window() {
        let rto = Duration::from_millis(200);
        let mut w = Window::new(1000, 100);
        w.ssthresh = 60_000.0;
        w.restart_after_idle(Duration::from_millis(700), rto, 10_000.0);
        assert_eq!((w.cwnd, w.ssthresh), (12_500.0, 75_000.0));
        w.restart_after_idle(Duration::from_secs(10), rto, 10_000.0);
        assert_eq!((w.cwnd, w.ssthresh), (10_000.0, 75_000.0), "never below the initial window");
        let mut small = Window::new(1000, 4);
        small.restart_after_idle(Duration::from_secs(10), rto, 10_000.0);
        assert_eq!(small.cwnd, 4_000.0, "a window below the initial one stays");
        // Exactly two RTOs: one halving (Linux halves while the idle time
        // left after an RTO is still positive).
        let mut edge = Window::new(1000, 40);
        edge.restart_after_idle(Duration::from_millis(400), rto, 10_000.0);
        assert_eq!(edge.cwnd, 20_000.0);
        let mut fresh = Window::new(1000, 40);
        fresh.restart_after_idle(Duration::from_millis(300), rto, 10_000.0);
        assert_eq!((fresh.cwnd, fresh.ssthresh), (20_000.0, f64::INFINITY), "unset ssthresh stays unset");
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut w = Window::new(1000, 10);
        w.ssthresh = 12_500.0;
        assert_eq!(w.slow_start(2000), 0);
        assert_eq!(w.cwnd, 12_000.0);
        assert_eq!(w.slow_start(2000), 1500);
        assert_eq!(w.cwnd, 12_500.0);
        assert!(!w.in_slow_start());
    }

    #[test]
    fn rto_keeps_a_two_segment_ssthresh_floor() {
        let mut w = Window::new(1000, 10);
        w.cwnd = 9000.0;
        w.on_rto();
        assert_eq!((w.cwnd, w.ssthresh), (1000.0, 4500.0));
        w.on_rto();
        assert_eq!((w.cwnd, w.ssthresh), (1000.0, 2000.0));
    }
}
