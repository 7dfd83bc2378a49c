//! CUBIC, uncoupled per subflow (RFC 9438; seed 004 §2.3.1, Algorithm 7).
//!
//! In congestion avoidance the window follows `W_cubic(t) = C (t - K)^3 +
//! W_max` (segments, t in seconds since the epoch began), with
//! `K = cbrt((W_max - cwnd_epoch) / C)`, C = 0.4. As in Linux's
//! `bictcp_update` and the seed's Algorithm 7, the window grows one
//! segment per `cnt` acknowledged, `cnt = cwnd / (target - cwnd)` towards
//! `target = W_cubic(t + RTT)` (100 cwnd when the target is not above the
//! window), at least 2 (1.5 cwnd a round, RFC 9438's clamp, §4.2). A
//! Reno-friendly estimate `W_est` grows by `alpha_cubic` segments per
//! window, `alpha_cubic = 3 (1 - beta) / (1 + beta)` (§4.3), and while it
//! is above the window `cnt` is at most `cwnd / (W_est - cwnd)`, so the
//! window closes the gap within a round where RFC 9438 sets it to W_est.
//!
//! Deviation from RFC 9438, after Linux (5.4, MPTCP v0.96's base, and
//! 6.18 alike): `cnt` is worked out again only when the whole window has
//! changed or 1/32 s has passed since it last was, and the curve's part
//! of it at most once a millisecond (a jiffy in 5.4). On a path of a few
//! milliseconds the window can then lag W_est for ten round trips: over
//! 100 Mbit/s, 2 ms and 0.5% loss Linux's CUBIC gets less than its Reno,
//! and so does Braid's since it took the rule (70 Mbit/s, was 80; the
//! kernel 57-59; docs/validation.md, difference 1). RFC 9438 has no such
//! clock. Deviation from RFC 9438: its `alpha_cubic` becomes 1
//! once `W_est` passes the window before the last reduction; the seed's
//! Algorithm 7 (`cubic_tcp_friendliness`, line 35), RFC 8312 and Linux
//! 5.4's `bictcp_update` (`beta_scale`: 15/8 of a window of ACKs per
//! segment, 0.533) keep the one rate throughout, and so does Braid. (With
//! the switch, Braid's CUBIC outran Linux's on a lossy low-BDP path;
//! docs/validation.md, difference 1.) A loss sets `ssthresh = cwnd =
//! beta cwnd` with beta = 0.7, remembering `W_max` with fast convergence
//! (§4.6, §4.7). A timeout sets ssthresh the same way and cwnd to one
//! segment, then forgets `W_max` (§4.8; Linux's `bictcp_state` resets
//! CUBIC on `TCP_CA_Loss`), so the first epoch after it starts with K = 0
//! at the window it opens with.
//! While no reduction has set W_max (from the start, and after a timeout)
//! the window grows at least 5% a round, as Linux's `bictcp_update` caps
//! `cnt` at 20 while `last_max_cwnd` is 0; RFC 9438 has no such floor.
//!
//! HyStart, as Linux 5.4's `tcp_cubic.c` (MPTCP v0.96's base) runs it by
//! default: from 16 segments on, slow start ends (ssthresh = cwnd) when a
//! train of ACKs no more than 2 ms apart has lasted half the minimum RTT
//! since the round began, or when the smallest of a round's first 8 RTT
//! samples exceeds the minimum RTT by an eighth of it, clamped to 4-16 ms
//! (`hystart_update`). A round ends when an ACK covers data sent after it
//! began (`bictcp_hystart_reset`, on `cong_avoid`, so only while the window
//! is used); the minimum RTT and the detection start over at a timeout
//! (`bictcp_reset`), and RTT samples within a second of a new epoch are
//! ignored. A timeout also starts a round (`bictcp_hystart_reset` from
//! `bictcp_state`), which ends only once everything outstanding at the
//! timeout is acknowledged (Linux's `end_seq` is `snd_nxt` then), that is
//! when the loss state ends: its ACK train, timed from the timeout, cannot
//! begin once the first ACK comes more than 2 ms later. Samples still
//! count in the loss state (with timestamps, as MPTCP v0.96's subflows
//! run, Linux measures re-sent segments by their echo; Braid's re-sent
//! packets carry numbers of their own). Deviation: Linux's clock here is
//! milliseconds and its delays eighths of one; Braid's are exact.
//!
//! The target looks ahead by the minimum RTT seen (Linux's `delay_min`,
//! the seed's dMin, also HyStart's, so forgotten at a timeout and not
//! sampled in an epoch's first second), not by the smoothed RTT that RFC
//! 9438 names: under a standing queue the smoothed RTT would aim further
//! along the curve and grow the window faster than Linux does.
//! Windows, `cnt` and W_est are f64 rather than Linux's integers (its
//! `cnt` is a quotient rounded down and its W_est moves in whole
//! segments); the whole window of the refresh rule is the f64 window
//! rounded down. As in
//! Linux (`bictcp_cong_avoid`), the window grows only while it is used
//! (`WindowUse::limits`, `tcp_is_cwnd_limited`); RFC 2861's decay of
//! a window left unused is not modelled (Linux's `tcp_cwnd_application_limited`
//! rarely runs: it needs an RTO without an acknowledgement of data, since
//! `tcp_cong_avoid` renews its time stamp on every one). With `Config::restart_after_idle`
//! a restart also moves the epoch forward by the idle time, as Linux's
//! CUBIC does on `CA_EVENT_TX_START`. Deviation: Linux shifts the epoch
//! whenever a subflow starts sending with nothing in flight, restart or
//! not; Braid only when it restarts.

use super::window::{self, Window, Windowed};
use super::{deactivate, install, AckSample, Controller, PathView};
use crate::time::{Duration, Instant};

/// RFC 9438 constants.
pub const CUBIC_C: f64 = 0.4;
pub const CUBIC_BETA: f64 = 0.7;

/// `cnt`'s cap while no reduction has shown where the plateau lies
/// (Linux's 20 while `last_max_cwnd` is 0: "increase cwnd 5% per RTT").
const UNKNOWN_PLATEAU_CNT: f64 = 20.0;

/// `cnt`'s floor: at most one segment per two acknowledged, 1.5 times the
/// window a round (Linux's `max(cnt, 2)`, RFC 9438's 1.5 cwnd clamp).
const MIN_CNT: f64 = 2.0;

/// While the whole window stays the same, `cnt` is worked out again only
/// after this long (Linux's `HZ / 32`, `USEC_PER_SEC / 32` since 6.2).
const CNT_REFRESH: Duration = Duration::from_micros(31_250);

/// The curve's part of `cnt` is worked out at most once per this
/// (Linux's jiffy, a millisecond since 6.2); W_est's part on every update.
const CURVE_REFRESH: Duration = Duration::from_millis(1);

/// `alpha_cubic` of RFC 9438 §4.3.
pub fn cubic_alpha() -> f64 {
    3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA)
}

/// `K` of RFC 9438 eq. 2, in seconds, for windows in segments.
pub fn cubic_k(w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / CUBIC_C).cbrt()
}

/// `W_cubic(t)` of RFC 9438 eq. 1, in segments.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    CUBIC_C * (t - k).powi(3) + w_max
}

#[derive(Clone, Copy, Debug)]
struct CubicPath {
    window: Window,
    /// Window before the last reduction, in segments (0: none since the
    /// start or the last timeout; Linux's `last_max_cwnd`).
    w_max: f64,
    /// The plateau of this epoch's curve: W_max, or the window the epoch
    /// opened with when that is larger (`bic_origin_point`).
    origin: f64,
    epoch: Option<Instant>,
    k: f64,
    w_est: f64,
    /// Segments acknowledged per segment of growth (Linux's `cnt`), as
    /// last worked out.
    cnt: f64,
    /// When `cnt` was last worked out, and the whole window then (Linux's
    /// `last_time` and `last_cwnd`; `None` from the start and after a
    /// timeout).
    last_update: Option<(Instant, f64)>,
    /// Segments acknowledged since W_est last took them in (`ack_cnt`).
    ack_cnt: f64,
    hystart: HyStart,
}

/// HyStart's state (`struct bictcp`'s `found`, `round_start`, `last_ack`,
/// `end_seq`, `curr_rtt`, `sample_cnt`, `delay_min`).
#[derive(Clone, Copy, Debug, Default)]
struct HyStart {
    /// Slow start was ended by HyStart; no more checks until a timeout.
    found: bool,
    /// When the round began and when the ACK train's last ACK came (`None`
    /// until the first ACK starts a round).
    round_start: Option<Instant>,
    last_ack: Instant,
    /// The round ends on an ACK of data sent once `delivered` reached this.
    round_end: u64,
    /// Smallest of the round's first `HYSTART_MIN_SAMPLES` RTT samples.
    curr_rtt: Option<Duration>,
    samples: u32,
    delay_min: Option<Duration>,
}

/// Windows below this many segments are left to slow start.
const HYSTART_LOW_WINDOW: f64 = 16.0;
/// ACKs at most this far apart belong to one train.
const HYSTART_ACK_DELTA: Duration = Duration::from_millis(2);
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);

impl HyStart {
    /// `bictcp_hystart_reset`: a new round from this ACK on.
    fn new_round(&mut self, now: Instant, delivered: u64) {
        (self.round_start, self.last_ack, self.round_end) = (Some(now), now, delivered);
        (self.curr_rtt, self.samples) = (None, 0);
    }

    /// `hystart_update` on an RTT sample in slow start: whether slow start
    /// should end now.
    fn slow_start_over(&mut self, now: Instant, rtt: Duration) -> bool {
        let (Some(round_start), Some(delay_min)) = (self.round_start, self.delay_min) else { return false };
        if self.found {
            return false;
        }
        if now.saturating_since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            self.found |= now.saturating_since(round_start).as_nanos() > delay_min.as_nanos() / 2;
        }
        if self.samples < HYSTART_MIN_SAMPLES {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            self.samples += 1;
        } else {
            let rise = Duration::from_nanos(delay_min.as_nanos() / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            self.found |= self.curr_rtt.is_some_and(|c| c.as_nanos() > delay_min.as_nanos() + rise.as_nanos());
        }
        self.found
    }
}

impl CubicPath {
    fn segments(&self) -> f64 {
        self.window.cwnd / self.window.mss
    }

    /// Records a congestion event (loss or timeout): W_max with fast
    /// convergence, ssthresh = beta cwnd, and a new epoch on the next ACK.
    fn reduce(&mut self) {
        let cwnd = self.segments();
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + CUBIC_BETA) / 2.0 } else { cwnd };
        self.epoch = None;
        let mss = self.window.mss;
        self.window.ssthresh = (self.window.cwnd * CUBIC_BETA).max(2.0 * mss);
    }

    /// `bictcp_update` then `tcp_cong_avoid_ai`: the window grows by one
    /// segment per `cnt` acknowledged.
    fn avoid(&mut self, now: Instant, acked: f64, delay_min: f64) {
        let cwnd = self.segments();
        let segments_acked = acked / self.window.mss;
        self.update_cnt(now, cwnd, segments_acked, delay_min);
        self.window.cwnd += segments_acked / self.cnt * self.window.mss;
    }

    /// `bictcp_update`: works out `cnt` from the curve and W_est, at most
    /// once per [`CNT_REFRESH`] while the whole window stays the same, and
    /// the curve's part at most once per [`CURVE_REFRESH`].
    fn update_cnt(&mut self, now: Instant, cwnd: f64, segments_acked: f64, delay_min: f64) {
        self.ack_cnt += segments_acked;
        let whole = cwnd.floor();
        let since = self.last_update.map(|(at, w)| (now.saturating_since(at), w));
        if since.is_some_and(|(d, w)| w == whole && d <= CNT_REFRESH) {
            return;
        }
        if self.epoch.is_none() || since.is_none_or(|(d, _)| d >= CURVE_REFRESH) {
            self.last_update = Some((now, whole));
            let epoch = match self.epoch {
                Some(e) => e,
                None => self.open_epoch(now, cwnd, segments_acked),
            };
            let target = w_cubic(now.saturating_since(epoch).as_secs_f64() + delay_min, self.k, self.origin);
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100.0 * cwnd };
            if self.w_max == 0.0 {
                // No loss to say where the plateau lies: at least 5% a round.
                self.cnt = self.cnt.min(UNKNOWN_PLATEAU_CNT);
            }
        }
        // Reno-friendliness: W_est takes in what was acknowledged since.
        self.w_est += cubic_alpha() * self.ack_cnt / cwnd;
        self.ack_cnt = 0.0;
        if self.w_est > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.w_est - cwnd));
        }
        self.cnt = self.cnt.max(MIN_CNT);
    }

    /// A new epoch: the curve's plateau and K, and W_est from the window.
    fn open_epoch(&mut self, now: Instant, cwnd: f64, segments_acked: f64) -> Instant {
        self.origin = self.w_max.max(cwnd);
        self.k = cubic_k(self.origin, cwnd);
        (self.w_est, self.ack_cnt) = (cwnd, segments_acked);
        self.epoch = Some(now);
        now
    }
}

impl Windowed for CubicPath {
    fn window(&self) -> &Window {
        &self.window
    }
    fn window_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

#[derive(Debug, Default)]
pub struct Cubic {
    paths: Vec<CubicPath>,
}

impl Controller for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        let fresh = CubicPath {
            window: Window::new(mss, iw),
            w_max: 0.0,
            origin: 0.0,
            epoch: None,
            k: 0.0,
            w_est: 0.0,
            cnt: 0.0,
            last_update: None,
            ack_cnt: 0.0,
            hystart: HyStart::default(),
        };
        install(&mut self.paths, path, fresh);
    }
    fn on_path_removed(&mut self, path: usize) {
        deactivate(&mut self.paths, path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, _paths: &[PathView]) {
        let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) else { return };
        // `bictcp_acked`, on every acknowledgement with an RTT sample; then
        // `bictcp_cong_avoid`, only outside recovery on a used window.
        let fresh_epoch = p.epoch.is_some_and(|e| ack.now.saturating_since(e) < Duration::from_secs(1));
        if let Some(rtt) = ack.rtt.filter(|_| !fresh_epoch) {
            let checked = p.window.in_slow_start() && p.segments() >= HYSTART_LOW_WINDOW;
            let h = &mut p.hystart;
            h.delay_min = Some(h.delay_min.map_or(rtt, |m| m.min(rtt)));
            if checked && h.slow_start_over(ack.now, rtt) {
                p.window.ssthresh = p.window.cwnd;
            }
        }
        if ack.in_recovery || !ack.window_use.limits(p.window.bytes(), p.window.ssthresh_bytes()) {
            return;
        }
        if p.window.in_slow_start() && !ack.in_loss && ack.prior_delivered.is_none_or(|d| d >= p.hystart.round_end) {
            p.hystart.new_round(ack.now, ack.delivered);
        }
        let rest = p.window.slow_start(ack.bytes_acked);
        if rest > 0 {
            let rtt = p.hystart.delay_min.map_or(0.0, |d| d.as_secs_f64());
            p.avoid(ack.now, rest as f64, rtt);
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) {
            p.reduce();
            p.window.cwnd = p.window.ssthresh;
        }
    }
    /// Entering `TCP_CA_Loss` resets CUBIC (`bictcp_state`) whether or not
    /// ssthresh is cut, and starts HyStart's round now; the round lasts
    /// until the loss state ends (`on_ack`).
    fn on_rto(&mut self, now: Instant, path: usize, _paths: &[PathView], in_recovery: bool) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.window.active) {
            p.window.save_prior();
            if !in_recovery {
                p.reduce();
            }
            (p.w_max, p.epoch, p.last_update) = (0.0, None, None);
            p.hystart = HyStart::default();
            p.hystart.new_round(now, 0);
            p.window.cwnd = p.window.mss;
        }
    }
    /// Linux's CUBIC undoes with `tcp_reno_undo_cwnd`: the window comes
    /// back, W_max and the epoch stay as the timeout left them.
    fn on_spurious_rto(&mut self, path: usize) {
        window::on_active(&mut self.paths, path, Window::undo_timeout);
    }
    /// Linux halves `snd_cwnd` under the module and leaves CUBIC's state
    /// (W_max, epoch) alone; so does Braid.
    fn penalize(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        window::on_active(&mut self.paths, path, Window::penalize);
    }
    /// Linux's `tcp_cwnd_restart`, and CUBIC's own `CA_EVENT_TX_START`
    /// handling: the epoch moves forward by the idle time (no later than
    /// now), so the window resumes the cubic curve where it left it rather
    /// than jumping along it.
    fn on_idle_restart(&mut self, now: Instant, path: usize, idle: Duration, rto: Duration, restart: u64) {
        window::on_active(&mut self.paths, path, |w| w.restart_after_idle(idle, rto, restart as f64));
        if let Some(epoch) = self.paths.get_mut(path).and_then(|p| p.epoch.as_mut()) {
            *epoch = (*epoch + idle).min(now);
        }
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

    #[test]
    fn constants_and_curve_match_rfc9438() {
        assert!((cubic_alpha() - 0.529_411_764_7).abs() < 1e-9);
        // W_max = 100, cwnd after loss = 70: K = cbrt(30 / 0.4) = cbrt(75) = 4.2172 s.
        let k = cubic_k(100.0, 70.0);
        assert!((k - 4.217_163).abs() < 1e-6, "{k}");
        assert!((w_cubic(k, k, 100.0) - 100.0).abs() < 1e-9, "plateau at W_max after K");
        assert!((w_cubic(0.0, k, 100.0) - 70.0).abs() < 1e-9, "starts from the reduced window");
        assert!((w_cubic(k + 1.0, k, 100.0) - 100.4).abs() < 1e-9, "convex beyond W_max");
    }

    fn at(ms: u64, bytes: u64) -> AckSample {
        crate::cc::test_ack(Instant::ZERO + Duration::from_millis(ms), bytes)
    }

    /// The target looks one minimum RTT ahead (Linux's `delay_min`, the
    /// seed's dMin): 100 ms here, under a smoothed RTT of 300 ms.
    #[test]
    fn loss_then_concave_growth_towards_w_max() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 100);
        c.paths[0].hystart.delay_min = Some(Duration::from_millis(100));
        let views = [PathView { srtt: Some(Duration::from_millis(300)), active: true, ..Default::default() }];
        c.on_congestion_event(Instant::ZERO, 0, &views);
        // beta = 0.7: 100 segments -> 70.
        assert_eq!(c.window(0), 70_000);
        assert_eq!(c.ssthresh(0), 70_000);
        // First ACK opens the epoch at t = 0: target W_cubic(0.1) = 100 -
        // 0.4 (4.2172 - 0.1)^3 = 72.084, so cnt = 70 / 2.084 = 33.59 (W_est
        // = 70 + 0.5294 / 70 = 70.00756 would allow 70 / 0.00756 = 9,259),
        // and the window grows by 1 / 33.59 = 0.0298 segments.
        c.on_ack(0, &at(0, 1000), &views);
        let w = c.window(0) as f64 / 1000.0;
        assert!((w - 70.0298).abs() < 1e-3, "{w}");
        // At t = 1 s, target W_cubic(1.1) = 0.4 (1.1 - 4.2172)^3 + 100 =
        // 87.884: cnt = 70.0298 / (87.884 - 70.0298) = 3.922, and one
        // acked segment adds 0.255 segments.
        c.on_ack(0, &at(1000, 1000), &views);
        let w = c.window(0) as f64 / 1000.0;
        assert!((w - 70.285).abs() < 2e-3, "{w}");
        // Near K the curve is flat at W_max: after a long time without loss
        // the window has approached 100 segments but not jumped past it.
        for ms in (1010..4000).step_by(10) {
            c.on_ack(0, &at(ms, 1000), &views);
        }
        let w = c.window(0) as f64 / 1000.0;
        assert!(w > 90.0 && w <= 101.0, "{w}");
    }

    #[test]
    fn fast_convergence_and_timeout() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 100);
        let views = [PathView::default()];
        c.on_congestion_event(Instant::ZERO, 0, &views);
        c.on_congestion_event(Instant::ZERO, 0, &views);
        // Second loss below W_max = 100: W_max = 70 * 1.7 / 2 = 59.5.
        assert!((c.paths[0].w_max - 59.5).abs() < 1e-9);
        assert_eq!(c.window(0), 49_000);
        c.on_rto(Instant::ZERO, 0, &views, false);
        assert_eq!(c.window(0), 1_000);
        assert_eq!(c.ssthresh(0), 34_300);
    }

    fn after_loss_from_100_segments() -> (Cubic, [PathView; 1]) {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 100);
        c.paths[0].hystart.delay_min = Some(Duration::from_millis(100));
        let views = [PathView { active: true, ..Default::default() }];
        c.on_congestion_event(Instant::ZERO, 0, &views);
        (c, views)
    }

    #[test]
    fn growth_scales_with_the_segments_one_ack_covers() {
        let (mut c, views) = after_loss_from_100_segments();
        c.on_ack(0, &at(0, 1000), &views);
        // As in `loss_then_concave_growth_towards_w_max`, but the ACK at
        // t = 1 s covers two segments: 2 / 3.922 = 0.510 segments, to
        // 70.540.
        c.on_ack(0, &at(1000, 2000), &views);
        let w = c.window(0) as f64 / 1000.0;
        assert!((w - 70.540).abs() < 2e-3, "{w}");
    }

    /// Penalisation halves the window (the kernel does it under the module).
    #[test]
    fn penalisation_halves_the_window() {
        let (mut c, views) = after_loss_from_100_segments();
        let before = c.window(0);
        c.penalize(Instant::ZERO, 0, &views);
        assert_eq!(c.window(0), before / 2);
    }

    /// A restart after idleness moves the epoch on by the idle time, no
    /// later than now, and restarts the window as every loss-based one.
    #[test]
    fn a_restart_moves_the_epoch_on_by_the_idle_time() {
        let (mut c, _) = after_loss_from_100_segments();
        let rto = Duration::from_millis(200);
        let t = |ms| Instant::ZERO + Duration::from_millis(ms);
        c.paths[0].epoch = Some(t(1000));
        c.on_idle_restart(t(2000), 0, Duration::from_millis(500), rto, 10_000);
        assert_eq!(c.paths[0].epoch, Some(t(1500)));
        assert_eq!(c.window(0), 70_000 / 4, "70 segments halved twice (2.5 RTOs)");
        c.on_idle_restart(t(2300), 0, Duration::from_millis(900), rto, 10_000);
        assert_eq!(c.paths[0].epoch, Some(t(2300)), "never later than now");
    }

    #[test]
    fn the_epoch_opens_with_congestion_avoidance_not_in_slow_start() {
        let (mut c, views) = after_loss_from_100_segments();
        // Timeout at 70 segments: ssthresh 49, cwnd 1, W_max forgotten.
        c.on_rto(Instant::ZERO, 0, &views, false);
        // Slow start back to ssthresh at t = 0 (nothing left for avoidance).
        c.on_ack(0, &at(0, 1000), &views);
        c.on_ack(0, &at(0, 47_000), &views);
        assert_eq!(c.window(0), 49_000);
        // The first avoidance ACK, at t = 1 s, opens the epoch (RFC 9438
        // sections 4.2, 4.8): the curve's plateau is the window, 49, K = 0.
        // W_cubic(0) = 49 gives cnt = 100 x 49 and W_est = 49 + 0.5294 / 49
        // = 49.0108 allows 4,537, but with W_max forgotten Linux caps cnt
        // at 20: 49.05. An epoch opened at t = 0 with cwnd = 2 would leave
        // the window at 49. (With W_max kept at 59.5, K would be 2.97 s.)
        c.on_ack(0, &at(1000, 1000), &views);
        assert_eq!(c.paths[0].epoch, Some(Instant::ZERO + Duration::from_secs(1)));
        assert_eq!((c.paths[0].k, c.paths[0].origin, c.paths[0].w_max), (0.0, 49.0, 0.0));
        assert_eq!(c.window(0), 49_050);
        // An ACK covering two segments, still at t = 1 s and 49 whole
        // segments: cnt stays 20, + 0.1.
        c.on_ack(0, &at(1000, 2000), &views);
        assert_eq!(c.window(0), 49_150);
    }

    /// Until a reduction shows where the plateau lies, the window grows at
    /// least 5% a round (Linux's `cnt` capped at 20 while `last_max_cwnd`
    /// is 0), where the curve from K = 0 and W_est would add next to
    /// nothing within the round.
    #[test]
    fn without_a_plateau_the_window_grows_five_percent_a_round() {
        let grown = |w_max: f64| {
            let mut c = Cubic::default();
            c.on_path_added(0, 1000, 100);
            let p = &mut c.paths[0];
            (p.window.ssthresh, p.w_max, p.hystart.delay_min) = (1.0, w_max, Some(Duration::from_millis(10)));
            let views = [PathView { active: true, ..Default::default() }];
            // One round: 100 ACKs of a segment each over 10 ms.
            for i in 0..100 {
                c.on_ack(0, &AckSample { now: Instant::from_nanos(i * 100_000), ..at(0, 1000) }, &views);
            }
            c.window(0)
        };
        // 100 + 100 x 1/20, to the byte but for rounding.
        assert!(grown(0.0).abs_diff(105_000) <= 1, "{}", grown(0.0));
        // With a plateau at 100 segments: the first ACK sets cnt = 100 /
        // (W_est - 100) = 100 / 0.005294 = 18,889 (the curve's W_cubic(10
        // ms) adds 4e-7), and the round, 10 ms at 100 whole segments, keeps
        // it: 100 x 1 / 18,889 = 0.0053 segments.
        assert_eq!(grown(100.0), 100_005);
    }

    /// Without an earlier loss, the first epoch takes the current window as
    /// W_max (RFC 9438 section 4.2): K = 0 and the curve rises from it.
    #[test]
    fn without_a_loss_the_curve_starts_at_the_window() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 10);
        c.paths[0].window.ssthresh = 1.0;
        let views = [PathView { active: true, ..Default::default() }];
        // t = 0, the first RTT sample (100 ms, the minimum from now on):
        // target W_cubic(0.1) = 10.0004, cnt capped at 20 with no W_max, to
        // 10.05 segments.
        c.on_ack(0, &AckSample { rtt: Some(Duration::from_millis(100)), ..at(0, 1000) }, &views);
        assert_eq!(c.window(0), 10_050);
        // t = 2 s: target W_cubic(2.1) = 0.4 x 2.1^3 + 10 = 13.7044, cnt =
        // 10.05 / 3.6544 = 2.750 (W_est = 10.1056 allows 180): + 0.3636
        // segments, to 10.4136.
        c.on_ack(0, &at(2000, 1000), &views);
        assert_eq!(c.window(0), 10_413);
    }

    /// Linux works out `cnt` again only when the whole window has changed
    /// or 1/32 s has passed (`bictcp_update`), so on a short path the
    /// window can lag W_est for several round trips.
    #[test]
    fn cnt_is_kept_for_a_32nd_of_a_second_while_the_whole_window_stays() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 10);
        let p = &mut c.paths[0];
        // Plateau at the window (K = 0), minimum RTT 2 ms.
        (p.window.ssthresh, p.w_max, p.hystart.delay_min) = (1.0, 10.0, Some(Duration::from_millis(2)));
        let views = [PathView { active: true, ..Default::default() }];
        let ack = |c: &mut Cubic, us: u64| {
            c.on_ack(0, &AckSample { now: Instant::from_nanos(us * 1000), ..at(0, 1000) }, &views);
            c.window(0)
        };
        // t = 0: W_est = 10 + 0.5294 / 10 = 10.0529 gives cnt = 10 /
        // 0.0529 = 188.9 (the curve's 0.4 x 0.002^3 next to nothing).
        assert_eq!(ack(&mut c, 0), 10_005);
        // An ACK every 0.2 ms, still 10 whole segments: cnt stays 188.9
        // up to 31.2 ms, 157 ACKs on, although W_est has passed 17.
        for us in (200..=31_200).step_by(200) {
            ack(&mut c, us);
        }
        assert_eq!(c.window(0), 10_831, "10 + 157 / 188.9");
        // At 31.4 ms (beyond 31.25) cnt is worked out again: W_est = 10 +
        // 0.5294 x (1 / 10 + 157 / 10.831) = 17.727 allows 10.831 / 6.896
        // = 1.57, below the floor of 2: + 0.5.
        assert_eq!(ack(&mut c, 31_400), 11_331);
    }

    /// With the whole window changed `cnt` is worked out again at once,
    /// but the curve's part at most once a millisecond (Linux's jiffy).
    #[test]
    fn the_curve_is_consulted_at_most_once_a_millisecond() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 10);
        let p = &mut c.paths[0];
        // W_max below the window: the curve rises from it, K = 0.
        (p.window.cwnd, p.window.ssthresh, p.w_max, p.hystart.delay_min) =
            (10_900.0, 1.0, 5.0, Some(Duration::from_millis(100)));
        let views = [PathView { active: true, ..Default::default() }];
        let ack = |c: &mut Cubic, us: u64, bytes: u64| {
            c.on_ack(0, &AckSample { now: Instant::from_nanos(us * 1000), ..at(0, bytes) }, &views);
            c.window(0)
        };
        // t = 0: cnt = 10.9 / (W_est - 10.9) = 10.9 / 0.0486 = 224.4.
        assert_eq!(ack(&mut c, 0, 1000), 10_904);
        // t = 1 s: target W_cubic(1.1) = 10.9 + 0.4 x 1.331 = 11.4324, cnt
        // = 10.9045 / 0.5279 = 20.65: + 0.0484.
        assert_eq!(ack(&mut c, 1_000_000, 1000), 10_952);
        // 0.5 ms later, two segments, still 10 whole: cnt kept, + 0.0968.
        assert_eq!(ack(&mut c, 1_000_500, 2000), 11_049);
        // 0.9 ms after the last update the window is 11 whole segments, so
        // cnt is worked out again, but from W_est alone (11.14, which allows
        // 121): cnt stays 20.65, + 0.0484 to 11.0981. The curve would give
        // 11.0497 / (11.4337 - 11.0497) = 28.8, + 0.0348.
        assert_eq!(ack(&mut c, 1_000_900, 1000), 11_098);
    }

    /// Above both the curve and W_est the window creeps: one segment per
    /// 100 windows acknowledged (Linux's `cnt = 100 * cwnd`).
    #[test]
    fn above_the_curve_and_w_est_the_window_creeps() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 12);
        let p = &mut c.paths[0];
        (p.window.ssthresh, p.w_max, p.hystart.delay_min) = (1.0, 10.0, Some(Duration::ZERO));
        (p.epoch, p.origin, p.k, p.w_est) = (Some(Instant::ZERO), 10.0, 0.0, 5.0);
        let views = [PathView { active: true, ..Default::default() }];
        // t = 0.1 s: target W_cubic(0.1) = 10.0004 < 12 and W_est 5.04 <
        // 12: cnt = 1,200, + 1/1,200 segment (0.8 bytes).
        c.on_ack(0, &at(100, 1000), &views);
        assert_eq!(c.window(0), 12_000);
        for ms in 101..=199 {
            c.on_ack(0, &at(ms, 1000), &views);
        }
        // 100 segments: + 100/1,200 = 0.083 segments (cnt kept or worked
        // out again at 12 whole segments: 1,200 either way).
        assert_eq!(c.window(0), 12_083);
    }

    #[test]
    fn a_loss_leaves_at_least_two_segments() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 2);
        c.on_congestion_event(Instant::ZERO, 0, &[PathView::default()]);
        // 0.7 x 2 segments = 1400 B, below the floor of 2 segments.
        assert_eq!((c.window(0), c.ssthresh(0)), (2_000, 2_000));
    }

    /// A path of `segments` 1000-byte segments in slow start and ACKs of
    /// `acked` bytes, each `gap_ms` after the last from 100 ms on, with the
    /// RTTs given (ms): the time (ms) of the ACK on which HyStart ended slow
    /// start, if one did. The first ACK starts a round, which ends at ACK
    /// number `round` (covering data sent after the round began), and the
    /// next again.
    fn hystart_exit(segments: u32, acked: u64, gap_ms: u64, rtts: &[u64], round: usize) -> Option<u64> {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, segments);
        let view = [PathView { active: true, ..Default::default() }];
        let mut mark = 0;
        for (i, &rtt) in rtts.iter().enumerate() {
            let t = 100 + gap_ms * i as u64;
            let delivered = acked * (i as u64 + 1);
            // Data sent after the round's start is acknowledged from ACK
            // `round` on, then every `round` ACKs.
            if i % round == 0 {
                mark = delivered;
            }
            let prior = if i % round == 0 { delivered } else { mark - 1 };
            let ack = AckSample {
                rtt: Some(Duration::from_millis(rtt)),
                delivered,
                prior_delivered: Some(prior),
                next_departure: Instant::ZERO,
                ..at(t, acked)
            };
            c.on_ack(0, &ack, &view);
            if !c.paths[0].window.in_slow_start() {
                return Some(t);
            }
        }
        None
    }

    /// HyStart's ACK train by hand: a minimum RTT of 40 ms, ACKs 1 ms
    /// apart from the round's start at 100 ms: the train is longer than
    /// half the minimum RTT at 121 ms (not at 120). ACKs 3 ms apart make no
    /// train; the RTT does not rise, so slow start goes on. Nor does the
    /// train end it below 16 segments (4 segments and ACKs of 100 bytes:
    /// 8 segments after 40 ACKs).
    #[test]
    fn hystart_ends_slow_start_on_a_long_ack_train() {
        assert_eq!(hystart_exit(20, 1000, 1, &[40; 40], 100), Some(121));
        assert_eq!(hystart_exit(20, 1000, 3, &[40; 40], 100), None);
        assert_eq!(hystart_exit(4, 100, 1, &[40; 40], 100), None);
    }

    /// HyStart's delay test by hand: minimum RTT 40 ms, so a round whose
    /// first 8 samples stay above 40 + 40/8 = 45 ms ends slow start on its
    /// 9th sample; at 44 ms it does not. (ACKs 5 ms apart: no train.)
    #[test]
    fn hystart_ends_slow_start_on_an_rtt_rise() {
        let rising: Vec<u64> = (0..30).map(|i| if i < 10 { 40 } else { 46 }).collect();
        // Rounds of 10 ACKs. ACK 10 ends the first and its sample counts in
        // it (`bictcp_acked` runs before `bictcp_cong_avoid` starts the next
        // round); ACKs 11-18 are the second round's first 8 samples, at 46
        // ms, and ACK 19 (at 100 + 5 x 19 ms) finds the rise.
        assert_eq!(hystart_exit(20, 1000, 5, &rising, 10), Some(195));
        let slight: Vec<u64> = (0..30).map(|i| if i < 10 { 40 } else { 44 }).collect();
        assert_eq!(hystart_exit(20, 1000, 5, &slight, 10), None);
    }

    /// HyStart's minimum RTT ignores samples within a second of a new
    /// epoch (`bictcp_acked` after a reduction), and a timeout starts
    /// HyStart over (`bictcp_reset`).
    #[test]
    fn hystart_ignores_a_fresh_epoch_and_starts_over_at_a_timeout() {
        let (mut c, view) = after_loss_from_100_segments();
        let rtt_ack = |ms: u64, rtt: u64| AckSample { rtt: Some(Duration::from_millis(rtt)), ..at(ms, 1000) };
        // The first ACK after the cut samples (as in Linux, the module's
        // `pkts_acked` runs before `cong_avoid` opens the epoch).
        let ms = |v| Some(Duration::from_millis(v));
        c.on_ack(0, &rtt_ack(1_000, 50), &view);
        assert_eq!(c.paths[0].hystart.delay_min, ms(50));
        c.on_ack(0, &rtt_ack(1_900, 30), &view);
        assert_eq!(c.paths[0].hystart.delay_min, ms(50), "0.9 s into the epoch");
        c.on_ack(0, &rtt_ack(2_100, 30), &view);
        assert_eq!(c.paths[0].hystart.delay_min, ms(30));
        c.paths[0].hystart.found = true;
        c.on_rto(Instant::ZERO, 0, &view, false);
        let h = c.paths[0].hystart;
        assert!(!h.found && h.delay_min.is_none(), "{h:?}");
    }

    /// A timeout starts HyStart's round at the timeout (`bictcp_state`),
    /// and the round lasts through the loss state. Its ACK train is timed
    /// from the timeout, so ACKs 1 ms apart from 100 ms later never make
    /// one, and slow start goes on towards ssthresh (70 segments). Had a
    /// round started on an ACK in the loss state (the 31st, which covers
    /// data sent after the first), the train would have ended slow start
    /// 21 ms into it, at 52 segments. RTT samples count meanwhile; the
    /// first ACK after the loss state starts the next round.
    #[test]
    fn a_timeout_starts_a_round_that_lasts_the_loss_state() {
        let mut c = Cubic::default();
        c.on_path_added(0, 1000, 100);
        let view = [PathView { active: true, ..Default::default() }];
        let timeout = Instant::ZERO + Duration::from_secs(1);
        c.on_rto(timeout, 0, &view, false);
        assert_eq!(c.paths[0].hystart.round_start, Some(timeout));
        let ack = |i: u64, in_loss: bool| AckSample {
            rtt: Some(Duration::from_millis(40)),
            in_loss,
            delivered: 1000 * (i + 1),
            prior_delivered: Some(if i == 30 { 1000 } else { 0 }),
            ..at(1_100 + i, 1000)
        };
        for i in 0..60 {
            c.on_ack(0, &ack(i, true), &view);
        }
        let p = &c.paths[0];
        assert!(p.window.in_slow_start(), "cwnd {} ssthresh {}", p.window.cwnd, p.window.ssthresh);
        assert_eq!(p.hystart.round_start, Some(timeout));
        assert_eq!(p.hystart.delay_min, Some(Duration::from_millis(40)));
        c.on_ack(0, &ack(60, false), &view);
        assert_eq!(c.paths[0].hystart.round_start, Some(Instant::ZERO + Duration::from_millis(1_160)));
    }
}
