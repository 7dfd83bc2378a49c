//! C-MPBBR, coupled multipath BBR (Mahmud et al. 2020; seed 004 §2.3.7 and
//! Algorithm 13).
//!
//! Every subflow runs BBR v1 (`cc/bbr.rs`). Once per ProbeBW gain cycle,
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
//! Deviations: the checks run once per gain cycle, on entering phase 3
//! (the pseudo-code tests `cycle_index = 3` without saying how often);
//! "delivery rate" is each subflow's latest rate sample.

use super::bbr::Bbr;
use super::{AckSample, Controller, PathView};
use crate::time::Instant;

/// Percentage band of BtlBw within which subflows share a bottleneck.
pub const MPBBR_ALPHA: f64 = 20.0;
/// Percentage below the best BtlBw at which multipath is not worth it.
pub const MPBBR_BETA: f64 = 40.0;
/// Consecutive failing checks before the weakest subflow is closed.
pub const MPBBR_CLOSE_AFTER: u32 = 5;
const CHECK_PHASE: usize = 3;

#[derive(Debug, Default)]
pub struct MpBbr {
    bbr: Bbr,
    /// Per path: when phase 3 was last checked, and the shared count then.
    checked: Vec<(Option<Instant>, usize)>,
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

    fn check(&mut self, path: usize) {
        let now_sharing = self.sharing(path);
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
        if self.checked.len() <= path {
            self.checked.resize(path + 1, (None, 0));
        }
        self.checked[path] = (None, 0);
    }
    fn on_path_removed(&mut self, path: usize) {
        self.bbr.on_path_removed(path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        self.bbr.on_ack(path, ack, paths);
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
    fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.bbr.on_rto(now, path, paths);
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
    fn take_closed_path(&mut self) -> Option<usize> {
        self.to_close.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_bw(bws: &[f64]) -> MpBbr {
        let mut m = MpBbr::default();
        for (i, &bw) in bws.iter().enumerate() {
            m.on_path_added(i, 1000, 10);
            m.bbr.paths[i].btl_bw = bw;
            m.bbr.paths[i].last_rate = bw;
        }
        m
    }

    #[test]
    fn subflows_with_similar_bandwidth_split_it_after_two_checks() {
        // 10 and 11 MB/s are within 20% of each other; 30 is not.
        let mut m = with_bw(&[10e6, 11e6, 30e6]);
        assert_eq!(m.sharing(0), 2);
        assert_eq!(m.sharing(2), 1);
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 1.0, "one observation is not enough");
        m.check(0);
        assert_eq!(m.bbr.paths[0].bw_divisor, 2.0);
        assert!((m.bbr.paths[0].model_bw() - 5e6).abs() < 1e-6);
        m.check(2);
        assert_eq!(m.bbr.paths[2].bw_divisor, 1.0);
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
    }
}
