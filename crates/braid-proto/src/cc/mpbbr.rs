//! C-MPBBR, coupled multipath BBR (Mahmud et al. 2020; seed 004 §2.3.7 and
//! Algorithm 13).
//!
//! Every subflow runs BBR v1 (`cc/bbr.rs`), with its long-term model for
//! policers, which the authors' module keeps (`mpbbr_lt_bw_sampling`,
//! `mpbbr_bw`), but without what Linux added later: the allowance for ACK
//! aggregation (5.1) and in-flight counts at the pacer's next departure
//! (4.20). Once per ProbeBW gain cycle,
//! when a subflow enters phase 3 of the cycle, two checks run:
//!
//! - Fairness (goal 2): the subflows whose BtlBw lies within ±20% (alpha
//!   = 20) of this subflow's are taken to share its bottleneck. If more than
//!   one does on two checks in a row, this subflow's model bandwidth becomes
//!   BtlBw divided by that count (a single check after a shared one keeps
//!   the last count); otherwise it is its whole BtlBw.
//! - Incentive (goal 1): if the summed delivery rate of all subflows is
//!   below `(1 - beta/100)` of the best subflow's BtlBw (beta = 40), no
//!   bottleneck is shared, there are several subflows and their BtlBw
//!   differ, a counter grows, else it resets. At five, the subflow with the
//!   lowest BtlBw is closed (the connection removes it and reinjects its data).
//!
//! The divided bandwidth paces and sizes the window only in the cruise
//! phases of the gain cycle (index above 1); probing (1.25) and draining
//! (0.75) use the whole BtlBw, as `mpbbr_check_same_bottleneck` in the
//! authors' module (github.com/imtiaztee/C-MPBBR) does. Dividing in every
//! phase, as Braid first did, makes the probe measure the divided rate: the
//! BtlBw filter then forgets the real bandwidth, the next check divides the
//! lower figure again and the subflows spiral down (2.2 of 200 Mbit/s on
//! two equal disjoint paths).
//!
//! Deviation (why the shared-bottleneck test misfires, and the fix): BtlBw
//! within ±20% is a property of the paths, not evidence of a common link.
//! Two equal disjoint paths (seed 004's homogeneous family, Fig. 5; both
//! 100 Mbit/s paths of Fig. 7) give equal BtlBw, so the module halves
//! every cruise phase and the connection gets about 60% of the two paths
//! (120 of 200 Mbit/s here) while uncoupled BBR gets 94%. No per-subflow
//! estimate can tell the two cases apart (equal paths have equal BtlBw,
//! RTprop and loss); what differs is that competition needs a queue. BBR v1
//! flows sharing a link keep a standing queue (their windows of 2 BDP each
//! add up to more than the link's BDP); a subflow alone on its bottleneck
//! paces at BtlBw and drains its queue every gain cycle. So before a
//! subflow starts dividing, Braid also asks that its lowest RTT over the
//! last gain cycle stayed above the path's lowest RTT ever (Linux's
//! `tcp_min_rtt`) by a quarter of the path's BDP and at least 4 segments
//! of queueing, on both checks that lead to division. Once divided, the
//! original BtlBw test alone keeps or ends it (dividing drains the queue
//! the test would look for). The queue must also exceed what the
//! subflow alone keeps queued (see `standing_queue`). With competition on
//! disjoint equal paths C-MPBBR still divides, as the original does.
//!
//! Other deviations: the checks run once per gain cycle, on entering phase
//! 3 (the module re-runs them on every ACK during phase 3, so its "five
//! consecutive" failing checks of goal 1 can all fall in one phase; the
//! paper says five ProbeBW rounds); "delivery rate" is each subflow's
//! latest rate sample (the module averages since its long-term sampling
//! interval began).

use super::bbr::Bbr;
use super::{AckSample, Controller, PathView};
use crate::time::{Duration, Instant};

/// Percentage band of BtlBw within which subflows share a bottleneck.
pub const MPBBR_ALPHA: f64 = 20.0;
/// Percentage below the best BtlBw at which multipath is not worth it.
pub const MPBBR_BETA: f64 = 40.0;
/// Consecutive failing checks before the weakest subflow is closed.
pub const MPBBR_CLOSE_AFTER: u32 = 5;
const CHECK_PHASE: usize = 3;
/// Queue, as a fraction of the path's BDP (BtlBw x RTprop), that must stay
/// in front of a subflow through a whole gain cycle for its bottleneck to
/// count as holding a standing queue.
pub const MPBBR_STANDING_QUEUE_BDP: f64 = 0.25;
/// ... and at least this many segments (BBR's smallest window): shorter
/// queues come from pacing granularity and ACK timing, not from competition.
pub const MPBBR_STANDING_QUEUE_SEGMENTS: f64 = 4.0;

#[derive(Debug, Default)]
pub struct MpBbr {
    bbr: Bbr,
    /// Per path: when phase 3 was last checked, and the shared count then.
    checked: Vec<(Option<Instant>, usize)>,
    /// Per path: the lowest RTT sample since its last check, and the
    /// lowest of the connection's life (Linux's `tcp_min_rtt`).
    cycle_min_rtt: Vec<Option<Duration>>,
    base_rtt: Vec<Option<Duration>>,
    stop_count: u32,
    to_close: Option<usize>,
}

impl MpBbr {
    /// The count of subflows sharing a bottleneck with `path` (itself included).
    fn sharing(&self, path: usize) -> usize {
        let me = self.bbr.paths[path].btl_bw;
        let (lo, hi) = (me * (1.0 - MPBBR_ALPHA / 100.0), me * (1.0 + MPBBR_ALPHA / 100.0));
        self.bbr.paths.iter().filter(|p| p.active && p.btl_bw >= lo && p.btl_bw <= hi).count()
    }

    /// Whether a queue stayed in front of `path` since its last check: its
    /// lowest RTT exceeded the path's lowest ever by the time BtlBw needs to
    /// send a quarter of the path's BDP, at least four segments, and more
    /// than the subflow alone can keep queued. (Not RTprop: BBR flows
    /// sharing a link keep a queue that ProbeRTT does not always drain, so
    /// RTprop itself drifts up to include it. Alone: a subflow leaves Drain
    /// and the draining phase once in flight is down to the BDP plus its
    /// quantization budget, Linux's `bbr_inflight`, and sends in bursts of
    /// a send quantum, so on a short path that much can stay queued for
    /// cycles: 41 kB of a 60 kB BDP at 100 Mbit/s and 5 ms.)
    fn standing_queue(&self, path: usize) -> bool {
        let p = &self.bbr.paths[path];
        let (Some(low), Some(base)) = (self.cycle_min_rtt[path], self.base_rtt[path]) else { return false };
        let queued = (low.as_secs_f64() - base.as_secs_f64()).max(0.0) * p.btl_bw;
        let bdp = base.as_secs_f64() * p.btl_bw;
        let alone = p.inflight_budget() + p.send_quantum();
        queued >= (MPBBR_STANDING_QUEUE_BDP * bdp).max(MPBBR_STANDING_QUEUE_SEGMENTS * p.mss).max(alone)
    }

    fn check(&mut self, path: usize) {
        let divided = self.bbr.paths[path].bw_divisor > 1.0;
        let now_sharing = if divided || self.standing_queue(path) { self.sharing(path) } else { 1 };
        self.cycle_min_rtt[path] = None;
        let (_, last) = self.checked[path];
        let divisor = match (now_sharing, last) {
            (n, l) if n > 1 && l > 1 => n,
            (1, l) if l > 1 => l,
            _ => 1,
        };
        self.checked[path].1 = now_sharing;
        self.bbr.paths[path].bw_divisor = divisor as f64;

        let active = || self.bbr.paths.iter().filter(|p| p.active);
        let n = active().count();
        let total_rate: f64 = active().map(|p| p.last_rate).sum();
        let highest = active().map(|p| p.btl_bw).fold(0.0, f64::max);
        let lowest = active().map(|p| p.btl_bw).fold(f64::INFINITY, f64::min);
        let threshold = highest * (1.0 - MPBBR_BETA / 100.0);
        if threshold > total_rate && last < 2 && n > 1 && lowest != highest {
            self.stop_count += 1;
        } else {
            self.stop_count = 0;
        }
        if self.stop_count >= MPBBR_CLOSE_AFTER && n > 1 && self.bbr.paths[path].btl_bw == lowest {
            self.stop_count = MPBBR_CLOSE_AFTER;
            self.to_close = Some(path);
        }
    }
}

impl Controller for MpBbr {
    fn name(&self) -> &'static str {
        "mpbbr"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        self.bbr.on_path_added(path, mss, iw);
        // The authors' module is built on a BBR without Linux's allowance
        // for ACK aggregation (added in 5.1) and without departure-time
        // in-flight counts (4.20).
        self.bbr.paths[path].aggregation = None;
        self.bbr.paths[path].at_departure = false;
        if self.checked.len() <= path {
            self.checked.resize(path + 1, (None, 0));
            self.cycle_min_rtt.resize(path + 1, None);
            self.base_rtt.resize(path + 1, None);
        }
        self.checked[path] = (None, 0);
        self.cycle_min_rtt[path] = None;
        self.base_rtt[path] = None;
    }
    fn on_path_removed(&mut self, path: usize) {
        self.bbr.on_path_removed(path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        self.bbr.on_ack(path, ack, paths);
        if let (Some(rtt), Some(low)) = (ack.rtt, self.cycle_min_rtt.get_mut(path)) {
            *low = Some(low.map_or(rtt, |l| l.min(rtt)));
            self.base_rtt[path] = paths.get(path).and_then(|v| v.min_rtt);
        }
        let Some(p) = self.bbr.paths.get(path).filter(|p| p.active) else { return };
        let in_phase = p.state == super::BbrState::ProbeBw && p.cycle_index == CHECK_PHASE;
        let stamp = p.cycle_stamp;
        if in_phase && self.checked[path].0 != Some(stamp) {
            self.checked[path].0 = Some(stamp);
            self.check(path);
        }
    }
    fn on_congestion_event(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.bbr.on_congestion_event(now, path, paths);
    }
    fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView], in_recovery: bool) {
        self.bbr.on_rto(now, path, paths, in_recovery);
    }
    fn on_spurious_rto(&mut self, path: usize) {
        self.bbr.on_spurious_rto(path);
    }
    fn penalize(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.bbr.penalize(now, path, paths);
    }
    fn window(&self, path: usize) -> u64 {
        self.bbr.window(path)
    }
    fn ssthresh(&self, path: usize) -> u64 {
        self.bbr.ssthresh(path)
    }
    fn pacing_rate(&self, path: usize) -> Option<u64> {
        self.bbr.pacing_rate(path)
    }
    fn paces(&self) -> bool {
        true
    }
    fn samples_app_limited(&self, path: usize) -> bool {
        self.bbr.samples_app_limited(path)
    }
    fn answers_after_ack(&self) -> bool {
        true
    }
    fn sndbuf_expand(&self) -> u32 {
        self.bbr.sndbuf_expand()
    }
    fn take_closed_path(&mut self) -> Option<usize> {
        self.to_close.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The authors' module predates Linux's allowance for ACK aggregation
    /// and its in-flight counts at the pacer's next departure; plain BBR
    /// has both.
    #[test]
    fn no_ack_aggregation_allowance_nor_departure_time() {
        let mut m = MpBbr::default();
        m.on_path_added(0, 1000, 10);
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        assert!(b.paths[0].aggregation.is_some());
        assert!(m.bbr.paths[0].aggregation.is_none());
        assert!(b.paths[0].at_departure);
        assert!(!m.bbr.paths[0].at_departure);
    }

    fn with_bw(bws: &[f64]) -> MpBbr {
        let mut m = MpBbr::default();
        for (i, &bw) in bws.iter().enumerate() {
            m.on_path_added(i, 1000, 10);
            m.bbr.paths[i].btl_bw = bw;
            m.bbr.paths[i].last_rate = bw;
            m.bbr.paths[i].state = super::super::BbrState::ProbeBw;
            m.base_rtt[i] = Some(Duration::from_millis(20));
        }
        m
    }

    /// The lowest RTT `path` saw in the cycle before its next check.
    fn cycle_low(m: &mut MpBbr, path: usize, ms: u64) {
        m.cycle_min_rtt[path] = Some(Duration::from_millis(ms));
    }

    #[test]
    fn subflows_with_similar_bandwidth_behind_a_standing_queue_split_it_after_two_checks() {
        // 10 and 11 MB/s are within 20% of each other; 30 is not. A 40 ms
        // low RTT on a 20 ms path: 20 ms of queue, far above a quarter BDP.
        let mut m = with_bw(&[10e6, 11e6, 30e6]);
        assert_eq!(m.sharing(0), 2);
        assert_eq!(m.sharing(2), 1);
        cycle_low(&mut m, 0, 40);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0, "one observation is not enough");
        cycle_low(&mut m, 0, 40);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 2.0);
        assert!((m.bbr.paths[0].model_bw() - 5e6).abs() < 1e-6, "cruise phase: divided");
        m.bbr.paths[0].cycle_index = 0;
        assert!((m.bbr.paths[0].model_bw() - 10e6).abs() < 1e-6, "probe phase: whole BtlBw");
        m.bbr.paths[0].cycle_index = 1;
        assert!((m.bbr.paths[0].model_bw() - 10e6).abs() < 1e-6, "drain phase: whole BtlBw");
        // Once divided, the queue it drained is not asked for again.
        cycle_low(&mut m, 0, 20);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 2.0);
        cycle_low(&mut m, 0, 20);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 2.0, "and stays divided while the bandwidths match");
        // The other subflow's bandwidth moves away: one check keeps the
        // division (hysteresis), the next ends it.
        m.bbr.paths[1].btl_bw = 30e6;
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 2.0, "one observation is not enough either way");
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0);
        cycle_low(&mut m, 2, 40);
        m.check(2);
        assert_eq!(m.bbr.paths[2].bw_divisor, 1.0);
    }

    /// A timeout and a removed subflow reach the BBR underneath: the window
    /// falls to one segment, and a removed subflow no longer shares.
    #[test]
    fn timeouts_and_removals_reach_bbr() {
        let mut m = with_bw(&[10e6, 11e6]);
        assert!(m.window(0) > 1000);
        m.on_rto(Instant::ZERO, 0, &[], false);
        assert_eq!(m.window(0), 1000);
        assert_eq!(m.sharing(0), 2);
        m.on_path_removed(1);
        assert_eq!(m.sharing(0), 1);
    }

    /// Penalisation halves BBR's window, to no less than BBR's 4-segment
    /// minimum.
    #[test]
    fn penalisation_halves_the_window_down_to_four_segments() {
        let mut m = with_bw(&[10e6]);
        assert_eq!(m.window(0), 10_000, "the initial window");
        m.penalize(Instant::ZERO, 0, &[]);
        assert_eq!(m.window(0), 5_000);
        m.penalize(Instant::ZERO, 0, &[]);
        assert_eq!(m.window(0), 4_000);
    }

    /// A subflow that shared a bottleneck at its last check is never counted
    /// towards closing, however little the subflows together deliver.
    #[test]
    fn a_subflow_sharing_a_bottleneck_is_not_counted_for_closing() {
        let mut m = with_bw(&[10e6, 10.5e6]);
        m.bbr.paths[0].last_rate = 1e6;
        m.bbr.paths[1].last_rate = 1e6;
        m.checked[0].1 = 2;
        m.check(0);
        assert_eq!(m.stop_count, 0);
        // Not sharing at the last check: the same rates count.
        m.checked[0].1 = 1;
        m.check(0);
        assert_eq!(m.stop_count, 1);
    }

    #[test]
    fn a_loss_leaves_no_slow_start_threshold() {
        let mut m = with_bw(&[10e6]);
        m.on_congestion_event(Instant::ZERO, 0, &[PathView { active: true, ..Default::default() }]);
        assert_eq!(m.ssthresh(0), u64::MAX, "BBR has none");
    }

    #[test]
    fn equal_bandwidth_without_a_standing_queue_is_not_a_shared_bottleneck() {
        // Two equal disjoint paths: equal BtlBw, but each subflow's RTT
        // returns to the path's lowest within every cycle (a queue of
        // 1 ms x 10 MB/s = 10 kB is below a quarter of the 200 kB BDP).
        let mut m = with_bw(&[10e6, 10e6]);
        for _ in 0..4 {
            cycle_low(&mut m, 0, 21);
            m.check(0);
        }
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0);
        // Without a sample in the cycle there is no evidence either.
        m.check(0);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0);
    }

    /// A standing queue must also be at least four segments: at 100 kB/s
    /// over 20 ms (BDP 2 kB), 30 ms of queueing is 3 kB, above a quarter
    /// BDP but below 4 x 1000 B.
    #[test]
    fn a_queue_below_four_segments_is_not_standing() {
        let mut m = with_bw(&[1e5, 1e5]);
        for _ in 0..3 {
            cycle_low(&mut m, 0, 50);
            m.check(0);
        }
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0);
    }

    #[test]
    fn weakest_subflow_closes_after_five_failing_checks() {
        // Best BtlBw 10 MB/s, but together the subflows deliver only 5 MB/s.
        let mut m = with_bw(&[10e6, 1e6]);
        m.bbr.paths[0].last_rate = 4e6;
        m.bbr.paths[1].last_rate = 1e6;
        for _ in 0..4 {
            m.check(1);
            assert_eq!(m.take_closed_path(), None);
        }
        m.check(1);
        assert_eq!(m.take_closed_path(), Some(1));
        // Delivering well (12 MB/s together) resets the count.
        let mut m = with_bw(&[10e6, 1e6]);
        m.bbr.paths[0].last_rate = 11e6;
        for _ in 0..10 {
            m.check(1);
        }
        assert_eq!(m.take_closed_path(), None);
        // 7 MB/s together is below the best BtlBw but above (1 - 40%) of it.
        let mut m = with_bw(&[10e6, 1e6]);
        m.bbr.paths[0].last_rate = 6e6;
        for _ in 0..10 {
            m.check(1);
        }
        assert_eq!(m.take_closed_path(), None);
    }

    /// The shared-bottleneck check runs once per ProbeBW cycle, in its
    /// check phase, never in Startup (whose queue is its own making).
    #[test]
    fn checks_run_only_in_probe_bw_check_phase() {
        let mut m = with_bw(&[10e6, 11e6]);
        let views = [PathView { active: true, ..Default::default() }; 2];
        let ack = |ms: u64| AckSample {
            now: Instant::ZERO + Duration::from_millis(ms),
            bytes_acked: 1000,
            rtt: Some(Duration::from_millis(40)),
            prior_in_flight: 0,
            packets_lost: 0,
            in_recovery: false,
            in_loss: false,
            window_use: crate::cc::WindowUse::FULL,
            delivered: 1000,
            // Path 0's bandwidth, so BtlBw's filter agrees with `with_bw`.
            rate: Some(crate::subflow::RateSample { delivery_rate: 10e6, prior_delivered: 0, is_app_limited: false }),
            prior_delivered: Some(0),
            next_departure: Instant::ZERO,
        };
        // Startup, with the cycle index where ProbeBW would check.
        m.bbr.paths[0].state = super::super::BbrState::Startup;
        m.bbr.paths[0].cycle_index = CHECK_PHASE;
        m.on_ack(0, &ack(100), &views);
        assert_eq!(m.checked[0], (None, 0), "no check in Startup");
        // ProbeBW, but another phase.
        m.bbr.paths[0].state = super::super::BbrState::ProbeBw;
        m.bbr.paths[0].cycle_index = CHECK_PHASE + 1;
        m.on_ack(0, &ack(200), &views);
        assert_eq!(m.checked[0], (None, 0), "no check outside the check phase");
        m.bbr.paths[0].cycle_index = CHECK_PHASE;
        // The phase began just now: this ACK does not end it.
        m.bbr.paths[0].cycle_stamp = Instant::ZERO + Duration::from_millis(300);
        m.on_ack(0, &ack(300), &views);
        assert_eq!(m.checked[0].0, Some(m.bbr.paths[0].cycle_stamp), "checked once in this cycle");
    }
}
