//! wVegas, weighted Vegas (Cao, Xu, Fu, "Delay-based congestion control for
//! multipath TCP", ICNP 2012; seed 004 Algorithm 11; Linux MPTCP v0.96
//! `mptcp_wvegas.c`).
//!
//! Delay-based: once per round trip, with `rtt` the mean RTT sampled in the
//! last round and `base_rtt` the smallest ever seen, the subflow estimates
//! the packets it keeps queued, `diff = cwnd (rtt - base_rtt) / rtt`, and
//! moves its window one segment towards `diff = alpha_r`. The alphas share
//! a total of 10 packets in proportion to the subflows' rates
//! (`alpha_r = max(2, 10 * x_r / sum x)`, `x = cwnd / rtt`), recomputed
//! when `diff >= alpha_r`. `diff` and `alpha_r` are whole packets, rounded
//! down as the kernel's integers are: the window holds while `alpha_r <=
//! diff < alpha_r + 1`. In slow start a `diff` above gamma = 1 (two queued
//! packets or more) ends slow start, cutting the window to `base_rtt / rtt`
//! of itself plus one. When the
//! queueing delay reaches twice the smallest one seen since the last
//! backoff, the window drops to `cwnd * base_rtt / (2 rtt)` to drain the
//! queue. Losses halve the window as Reno does.
//!
//! Following the kernel: decisions are taken once per round, and only with
//! more than two RTT samples in it (otherwise Reno); ssthresh follows
//! `max(ssthresh, 3/4 cwnd)` after each decision and `min(ssthresh, cwnd)`
//! on the slow-start exit and on every one-segment decrease; the window is floored at two segments; after
//! loss recovery a round restarts with alpha back at 2 and the queue-delay
//! minimum forgotten (`wvegas_enable`). A subflow's weight is its rate
//! over the sum of the rates the subflows that can send and have RTT
//! samples in their current round stored (`mptcp_wvegas_weight`): a rate,
//! `cwnd / rtt` with the round's mean RTT, is stored only at a decision
//! that recomputes alpha, and dropped at a timeout and at the return from
//! recovery, so a sibling without one counts for nothing and the alphas
//! may sum to more than 10. Deviations: the
//! backoff test requires a positive queueing delay (the kernel's
//! `q_delay >= 2 * queue_delay` also fires when both are exactly zero,
//! which real RTT noise hides but a noiseless simulator hits every round);
//! a round ends when an ACK covers a packet sent after the round began
//! (delivered counts) rather than at `snd_nxt`. Its Reno steps grow only a
//! window in use (`tcp_reno_cong_avoid`'s `tcp_is_cwnd_limited`); the
//! module's own slow start and Vegas steps are ungated, as in the kernel.
//! A restart after idleness (`Config::restart_after_idle`) restarts the
//! window as for every loss-based controller; the kernel module also
//! re-enables its round on `CA_EVENT_CWND_RESTART`, which Braid does not.
//! In the loss state after a timeout the window grows as Reno's, as the
//! kernel's disabled module does, and the return to the open state
//! restarts the round (`wvegas_enable`).

use super::window::{self, Window, Windowed};
use super::{deactivate, install, AckSample, Controller, PathView};
use crate::time::{Duration, Instant};

/// Sum of the subflows' alphas, in packets.
pub const WVEGAS_TOTAL_ALPHA: f64 = 10.0;
/// Alpha of a new subflow, and the floor of every alpha, in packets.
pub const WVEGAS_MIN_ALPHA: f64 = 2.0;
/// Queued packets that end slow start.
pub const WVEGAS_GAMMA: f64 = 1.0;

#[derive(Clone, Copy, Debug)]
struct VegasPath {
    window: Window,
    round_end: u64,
    rtt_samples: u32,
    rtt_sum: f64,
    base_rtt: f64,
    alpha: f64,
    /// Its rate, cwnd / round RTT in segments per second, stored at a
    /// decision that recomputed alpha (0 until then, and after a loss).
    instant_rate: f64,
    /// Its share of the connection's rate when alpha was last recomputed.
    weight: f64,
    /// Smallest queueing delay since the last backoff (0: none yet).
    queue_delay: f64,
    recovering: bool,
}

impl VegasPath {
    fn new(mss: u32, iw: u32) -> Self {
        VegasPath {
            window: Window::new(mss, iw),
            round_end: 0,
            rtt_samples: 0,
            rtt_sum: 0.0,
            base_rtt: f64::INFINITY,
            alpha: WVEGAS_MIN_ALPHA,
            instant_rate: 0.0,
            weight: 1.0,
            queue_delay: 0.0,
            recovering: false,
        }
    }

    /// `wvegas_enable`: a fresh round, alpha and weight back to their
    /// initial values, no stored rate, the queue-delay minimum forgotten;
    /// base_rtt is kept.
    fn enable(&mut self, round_end: u64) {
        self.round_end = round_end;
        self.rtt_samples = 0;
        self.rtt_sum = 0.0;
        self.alpha = WVEGAS_MIN_ALPHA;
        self.instant_rate = 0.0;
        self.weight = 1.0;
        self.queue_delay = 0.0;
    }

    fn reno(&mut self, acked: u64) {
        let rest = self.window.slow_start(acked);
        if rest > 0 {
            self.window.cwnd += self.window.mss * rest as f64 / self.window.cwnd;
        }
    }

    /// The once-per-round wVegas decision; `share(rate)` is this subflow's
    /// fraction of the connection's rate with its own at `rate`, or None
    /// when no rate is known (the weight then stays).
    fn decide(&mut self, acked: u64, share: impl FnOnce(f64) -> Option<f64>) {
        let mss = self.window.mss;
        let rtt = self.rtt_sum / f64::from(self.rtt_samples);
        let base = self.base_rtt;
        let cwnd = self.window.cwnd / mss;
        // Whole packets, as the kernel's `u32 diff`: slow start ends at two
        // queued packets, and the window holds while alpha <= diff < alpha + 1.
        let diff = (cwnd * (rtt - base) / rtt).floor();
        let slow_start = self.window.in_slow_start();
        let mut next = cwnd;
        if diff > WVEGAS_GAMMA && slow_start {
            next = cwnd.min(cwnd * base / rtt + 1.0);
            // Kernel: ssthresh = min(ssthresh, cwnd) after the cut.
            self.window.ssthresh = self.window.ssthresh.min(next.max(2.0) * mss);
        } else if slow_start {
            self.window.slow_start(acked);
            next = self.window.cwnd / mss;
        } else {
            if diff >= self.alpha {
                self.instant_rate = cwnd / rtt;
                self.weight = share(self.instant_rate).unwrap_or(self.weight);
                self.alpha = (WVEGAS_TOTAL_ALPHA * self.weight).floor().max(WVEGAS_MIN_ALPHA);
            }
            if diff > self.alpha {
                next -= 1.0;
                // Kernel: ssthresh = min(ssthresh, cwnd), so that slow start
                // does not take the step back before the round ends.
                self.window.ssthresh = self.window.ssthresh.min(next.max(2.0) * mss);
            } else if diff < self.alpha {
                next += 1.0;
            }
            let q_delay = rtt - base;
            if self.queue_delay == 0.0 || self.queue_delay > q_delay {
                self.queue_delay = q_delay;
            }
            if q_delay > 0.0 && q_delay >= 2.0 * self.queue_delay {
                next *= base / (2.0 * rtt);
                self.queue_delay = 0.0;
            }
        }
        self.window.cwnd = next.max(2.0) * mss;
        if !slow_start {
            self.window.ssthresh = self.window.ssthresh.max(0.75 * self.window.cwnd);
        }
    }
}

impl Windowed for VegasPath {
    fn window(&self) -> &Window {
        &self.window
    }
    fn window_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

#[derive(Debug, Default)]
pub struct WVegas {
    paths: Vec<VegasPath>,
}

impl WVegas {
    /// The alpha (packets) a subflow currently aims to keep queued.
    pub fn alpha(&self, path: usize) -> Option<f64> {
        self.paths.get(path).map(|p| p.alpha)
    }
}

impl Controller for WVegas {
    fn name(&self) -> &'static str {
        "wvegas"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        install(&mut self.paths, path, VegasPath::new(mss, iw));
    }
    fn on_path_removed(&mut self, path: usize) {
        deactivate(&mut self.paths, path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, _paths: &[PathView]) {
        // The rates the other subflows stored, for the alpha weights: those
        // that can send and have RTT samples in their current round
        // (`mptcp_wvegas_weight`).
        let others: f64 = (self.paths.iter().enumerate())
            .filter(|&(r, p)| r != path && p.window.active && p.rtt_samples > 0)
            .map(|(_, p)| p.instant_rate)
            .sum();
        let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) else { return };
        if let Some(r) = ack.rtt.map(|d| d.as_secs_f64()).filter(|&r| r > 0.0) {
            p.rtt_samples += 1;
            p.rtt_sum += r;
            p.base_rtt = p.base_rtt.min(r);
        }
        if ack.in_recovery || ack.in_loss {
            // Out of the open state the module stands aside
            // (`mptcp_wvegas_state`): no growth in fast recovery, Reno's in
            // the loss state after a timeout (`tcp_reno_cong_avoid`).
            p.recovering = true;
            if ack.in_loss && ack.window_use.limits(p.window.bytes(), p.window.ssthresh_bytes()) {
                p.reno(ack.bytes_acked);
            }
            return;
        }
        if std::mem::take(&mut p.recovering) {
            // Back in the open state.
            p.enable(ack.delivered);
        }
        if ack.prior_delivered.is_none_or(|d| d < p.round_end) {
            if p.window.in_slow_start() {
                p.window.slow_start(ack.bytes_acked);
            }
            return;
        }
        p.round_end = ack.delivered;
        if p.rtt_samples <= 2 {
            // tcp_reno_cong_avoid, which grows only a window in use.
            if ack.window_use.limits(p.window.bytes(), p.window.ssthresh_bytes()) {
                p.reno(ack.bytes_acked);
            }
        } else {
            p.decide(ack.bytes_acked, |mine| (mine > 0.0).then(|| mine / (others + mine)));
        }
        p.rtt_samples = 0;
        p.rtt_sum = 0.0;
    }
    fn on_congestion_event(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) {
            let w = &mut p.window;
            w.ssthresh = (w.cwnd / 2.0).max(2.0 * w.mss);
            w.cwnd = w.ssthresh;
        }
    }
    fn on_rto(&mut self, _now: Instant, path: usize, _paths: &[PathView], in_recovery: bool) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) {
            if in_recovery {
                let ssthresh = p.window.ssthresh;
                p.window.on_rto_to(ssthresh);
            } else {
                p.window.on_rto();
                // CA_EVENT_LOSS, raised with the cut: the stored rate is dropped.
                p.instant_rate = 0.0;
            }
        }
    }
    /// As Reno's undo (`tcp_reno_undo_cwnd`): the delay state stays.
    fn on_spurious_rto(&mut self, path: usize) {
        window::on_active(&mut self.paths, path, Window::undo_timeout);
    }
    fn penalize(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        window::on_active(&mut self.paths, path, Window::penalize);
    }
    fn on_idle_restart(&mut self, _now: Instant, path: usize, idle: Duration, rto: Duration, restart: u64) {
        window::on_active(&mut self.paths, path, |w| w.restart_after_idle(idle, rto, restart as f64));
    }
    fn window(&self, path: usize) -> u64 {
        window::window_bytes(&self.paths, path)
    }
    fn ssthresh(&self, path: usize) -> u64 {
        window::ssthresh_bytes(&self.paths, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// A path in congestion avoidance with `cwnd` segments, base RTT 100 ms
    /// and three samples averaging `rtt_ms` in the round just ended.
    fn path(cwnd: f64, rtt_ms: f64) -> VegasPath {
        let mut p = VegasPath::new(1000, 10);
        p.window.cwnd = cwnd * 1000.0;
        p.window.ssthresh = 1.0;
        p.base_rtt = 0.100;
        p.rtt_samples = 3;
        p.rtt_sum = 3.0 * rtt_ms / 1000.0;
        p
    }

    #[test]
    fn one_segment_towards_alpha_per_round() {
        // diff = 20 * (0.105 - 0.1) / 0.105 = 0.95 < alpha 2: +1 segment.
        let mut p = path(20.0, 105.0);
        p.decide(1000, |_| Some(0.5));
        assert_eq!(p.window.bytes(), 21_000);
        // diff = 40 * 0.02 / 0.12 = 6.67 >= 2: alpha becomes max(2, 10 * 0.5) = 5;
        // still above: -1 segment. (queue_delay starts at 0.02: no backoff.)
        let mut p = path(40.0, 120.0);
        p.decide(1000, |_| Some(0.5));
        assert_eq!(p.alpha, 5.0);
        assert_eq!(p.window.bytes(), 39_000);
        assert_eq!(p.window.ssthresh_bytes(), 29_250, "3/4 of the window");
    }

    /// diff and alpha are whole packets, as the kernel's integers: the
    /// window holds while alpha <= diff < alpha + 1.
    #[test]
    fn the_window_holds_within_a_packet_of_alpha() {
        // diff = 40 x 0.02 / 0.12 = 6.67: 6 packets; alpha = 10 x 0.69 = 6.9: 6.
        let mut p = path(40.0, 120.0);
        p.decide(1000, |_| Some(0.69));
        assert_eq!(p.alpha, 6.0);
        assert_eq!(p.window.bytes(), 40_000);
    }

    /// A one-segment decrease lowers ssthresh with the window (the kernel's
    /// `mptcp_wvegas_ssthresh`), so slow start between decisions does not
    /// take the segment back.
    #[test]
    fn a_decrease_lowers_ssthresh_with_the_window() {
        // 20 segments = ssthresh; diff = 20 x 0.15 / 0.25 = 12 > alpha 10.
        let mut p = path(20.0, 250.0);
        p.window.ssthresh = 20_000.0;
        p.decide(1000, |_| Some(1.0));
        assert_eq!((p.window.bytes(), p.window.ssthresh_bytes()), (19_000, 19_000));
        assert!(!p.window.in_slow_start());
    }

    #[test]
    fn queue_delay_doubling_backs_off() {
        let mut p = path(40.0, 110.0);
        p.alpha = 10.0;
        p.decide(1000, |_| Some(0.5));
        // diff = 40 * 0.01 / 0.11 = 3.6 < 10: +1 = 41 segments; queue_delay = 10 ms.
        assert_eq!(p.window.bytes(), 41_000);
        // Next round: 20 ms of queueing, twice the minimum: 42 * 0.1 / (2 * 0.12) = 17.5.
        p.rtt_samples = 3;
        p.rtt_sum = 3.0 * 0.120;
        p.decide(1000, |_| Some(0.5));
        assert_eq!(p.window.bytes(), 17_500);
    }

    /// The backoff compares with the smallest queueing delay since the
    /// last one: a round with less queueing lowers the reference.
    #[test]
    fn a_lower_queueing_delay_becomes_the_backoff_reference() {
        let mut p = path(40.0, 120.0);
        p.alpha = 10.0;
        // diff = 40 x 0.02 / 0.12 = 6.7 < 10: 41 segments; queue_delay 20 ms.
        p.decide(1000, |_| Some(0.5));
        // 110 ms: diff = 41 x 0.01 / 0.11 = 3.7: 42; queue_delay down to 10 ms.
        (p.rtt_samples, p.rtt_sum) = (3, 3.0 * 0.110);
        p.decide(1000, |_| Some(0.5));
        assert_eq!(p.window.bytes(), 42_000);
        // 120 ms again: diff = 7: 43, and 20 ms is twice the 10 ms reference:
        // 43 x 0.1 / (2 x 0.12) = 17.92 segments.
        (p.rtt_samples, p.rtt_sum) = (3, 3.0 * 0.120);
        p.decide(1000, |_| Some(0.5));
        assert_eq!(p.window.bytes(), 17_916);
    }

    /// In slow start with little queueing the round's decision is slow
    /// start's own growth: 20 segments and 5 acknowledged make 25. Slow
    /// start ends at two whole queued packets: 1.48 is one.
    #[test]
    fn slow_start_grows_while_queueing_stays_low() {
        // diff = 20 x 0.001 / 0.101 = 0.2, and 20 x 0.008 / 0.108 = 1.48.
        for rtt_ms in [101.0, 108.0] {
            let mut p = path(20.0, rtt_ms);
            p.window.ssthresh = f64::INFINITY;
            p.decide(5000, |_| Some(1.0));
            assert_eq!(p.window.bytes(), 25_000, "{rtt_ms} ms");
            assert!(p.window.in_slow_start());
        }
    }

    /// A restart after idleness restarts the window as for every
    /// loss-based controller (Linux's `tcp_cwnd_restart`): 40 segments, 500
    /// ms idle at a 200 ms RTO, halve twice.
    #[test]
    fn a_restart_after_idleness_halves_the_window() {
        let mut w = WVegas::default();
        w.on_path_added(0, 1000, 40);
        let rto = Duration::from_millis(200);
        w.on_idle_restart(Instant::ZERO, 0, Duration::from_millis(500), rto, 10_000);
        assert_eq!(w.window(0), 10_000);
    }

    #[test]
    fn slow_start_ends_on_queueing() {
        let mut p = path(30.0, 150.0);
        p.window.ssthresh = f64::INFINITY;
        // diff = 30 * 0.05 / 0.15 = 10 > gamma: cwnd = 30 * 0.1 / 0.15 + 1 = 21.
        p.decide(1000, |_| Some(1.0));
        assert_eq!(p.window.bytes(), 21_000);
        assert_eq!(p.window.ssthresh_bytes(), 21_000, "ssthresh = min(ssthresh, cwnd)");
        assert!(!p.window.in_slow_start());
    }

    #[test]
    fn decisions_wait_for_a_round_and_three_samples() {
        let mut w = WVegas::default();
        w.on_path_added(0, 1000, 10);
        w.paths[0].window.ssthresh = 1.0;
        let view = [PathView { srtt: Some(Duration::from_millis(100)), active: true, ..Default::default() }];
        let ack = |delivered, prior| AckSample {
            now: Instant::ZERO,
            bytes_acked: 1000,
            rtt: Some(Duration::from_millis(100)),
            prior_in_flight: 0,
            packets_lost: 0,
            in_recovery: false,
            in_loss: false,
            window_use: crate::cc::WindowUse::FULL,
            delivered,
            rate: None,
            prior_delivered: Some(prior),
            next_departure: Instant::ZERO,
        };
        // First ACK ends round 0 with one sample: Reno growth.
        w.on_ack(0, &ack(1000, 0), &view);
        assert_eq!(w.window(0), 10_100);
        // Within the round (prior below the mark): nothing in avoidance.
        w.on_ack(0, &ack(2000, 500), &view);
        w.on_ack(0, &ack(3000, 600), &view);
        w.on_ack(0, &ack(4000, 700), &view);
        assert_eq!(w.window(0), 10_100);
        // Round ends with 3 samples and no queueing (diff 0 < alpha): +1 segment.
        w.on_ack(0, &ack(5000, 1000), &view);
        assert_eq!(w.window(0), 11_100);
    }

    /// In the loss state after a timeout the module stands aside and Reno
    /// grows the window (`mptcp_wvegas_state` disables it out of the open
    /// state; `tcp_reno_cong_avoid`), even at a round end with samples
    /// showing a queue; back in the open state a fresh round starts.
    #[test]
    fn the_loss_state_grows_as_reno_then_a_fresh_round_starts() {
        let mut w = two_paths();
        let view = |ms| PathView { srtt: Some(Duration::from_millis(ms)), active: true, ..Default::default() };
        let views = [view(120), view(100)];
        w.on_rto(Instant::ZERO, 0, &views, false);
        assert_eq!((w.window(0), w.ssthresh(0)), (1000, 20_000), "one segment, half of 40");
        // Grown to 8 segments in the loss state, two 200 ms samples in the round.
        w.paths[0].window.cwnd = 8000.0;
        (w.paths[0].rtt_samples, w.paths[0].rtt_sum) = (2, 0.400);
        let mut ack = crate::cc::test_ack(Instant::ZERO, 1000);
        (ack.rtt, ack.delivered, ack.prior_delivered, ack.in_loss) =
            (Some(Duration::from_millis(200)), 1000, Some(0), true);
        w.on_ack(0, &ack, &views);
        // Three samples of 200 ms against a 100 ms base: a decision would
        // end slow start (diff = 8 x 0.1 / 0.2 = 4 > gamma, 5 segments);
        // Reno's slow start adds one.
        assert_eq!(w.window(0), 9000);
        (ack.delivered, ack.prior_delivered, ack.in_loss) = (2000, Some(1000), false);
        w.on_ack(0, &ack, &views);
        assert_eq!(w.paths[0].round_end, 2000, "a fresh round from here");
        assert_eq!((w.paths[0].rtt_samples, w.alpha(0)), (0, Some(WVEGAS_MIN_ALPHA)));
    }

    /// wVegas with path 0 at 40 segments and path 1 at 10, both in
    /// congestion avoidance; path 0 has base RTT 100 ms and two samples of
    /// 120 ms in the current round.
    fn two_paths() -> WVegas {
        let mut w = WVegas::default();
        for (path, segments) in [(0, 40), (1, 10)] {
            w.on_path_added(path, 1000, segments);
            w.paths[path].window.ssthresh = 1.0;
        }
        let p = &mut w.paths[0];
        (p.base_rtt, p.rtt_samples, p.rtt_sum) = (0.100, 2, 0.240);
        w
    }

    /// Ends path 0's round with a third 120 ms sample; srtt 120 ms on path 0
    /// and 100 ms on path 1.
    fn end_round(w: &mut WVegas) {
        let view = |ms| PathView { srtt: Some(Duration::from_millis(ms)), active: true, ..Default::default() };
        let mut ack = crate::cc::test_ack(Instant::ZERO, 1000);
        (ack.rtt, ack.delivered, ack.prior_delivered) = (Some(Duration::from_millis(120)), 1000, Some(0));
        w.on_ack(0, &ack, &[view(120), view(100)]);
    }

    #[test]
    fn alpha_is_the_subflows_share_of_the_connections_rate() {
        let mut w = two_paths();
        assert_eq!(w.alpha(0), Some(WVEGAS_MIN_ALPHA));
        // Path 1 stored a rate of 100 segments/s and has samples in its round.
        (w.paths[1].instant_rate, w.paths[1].rtt_samples) = (100.0, 1);
        end_round(&mut w);
        // diff = 40 x 0.02 / 0.12 = 6.67, 6 whole packets, >= alpha 2: path 0
        // stores x_0 = 40 / 0.12 = 333.3 segments/s; 10 x 333.3 / 433.3 =
        // 7.69, 7 whole packets; diff is below it: +1 segment.
        assert_eq!(w.alpha(0), Some(7.0));
        assert_eq!(w.window(0), 41_000);
        assert_eq!(w.ssthresh(0), 30_750, "3/4 of the window");
    }

    /// A sibling counts only with a stored rate and RTT samples in its
    /// current round, and a removed one not at all: path 0's weight is
    /// then 1 and its alpha 10.
    #[test]
    fn a_sibling_without_a_stored_rate_leaves_the_rate_sum() {
        let removed = |w: &mut WVegas| w.on_path_removed(1);
        let no_rate = |w: &mut WVegas| w.paths[1].rtt_samples = 1;
        let no_samples = |w: &mut WVegas| w.paths[1].instant_rate = 100.0;
        for (what, change) in
            [("removed", &removed as &dyn Fn(&mut WVegas)), ("no rate", &no_rate), ("no samples", &no_samples)]
        {
            let mut w = two_paths();
            change(&mut w);
            end_round(&mut w);
            assert_eq!(w.alpha(0), Some(WVEGAS_TOTAL_ALPHA), "{what}");
        }
    }

    /// A timeout drops the stored rate (CA_EVENT_LOSS).
    #[test]
    fn a_timeout_drops_the_stored_rate() {
        let mut w = two_paths();
        w.paths[0].instant_rate = 100.0;
        w.on_rto(Instant::ZERO, 0, &[], false);
        assert_eq!(w.paths[0].instant_rate, 0.0);
    }

    #[test]
    fn a_loss_halves_the_window_as_reno_does() {
        let mut w = two_paths();
        w.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!((w.window(0), w.ssthresh(0)), (20_000, 20_000));
    }

    #[test]
    fn penalizing_halves_the_window() {
        let mut w = two_paths();
        w.penalize(Instant::ZERO, 0, &[]);
        assert_eq!(w.window(0), 20_000);
    }
}
