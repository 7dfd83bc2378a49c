//! BALIA, Balanced Linked Adaptation (Peng, Walid, Hwang, Low, ToN 2016;
//! seed 004 Algorithm 10; Linux MPTCP v0.96 `mptcp_balia.c`).
//!
//! With rates `x_k = w_k / rtt_k` and `a_r = max_k x_k / x_r`, each ACK on
//! subflow r in congestion avoidance adds, in segments,
//! `(x_r / rtt_r) / (sum_k x_k)^2 * (1 + a_r)/2 * (4 + a_r)/5`,
//! and a loss takes `w_r / 2 * min(a_r, 1.5)` off the window. With one
//! path (a = 1) both reduce to Reno.
//!
//! Braid implements the paper's decrease. The kernel module differs: it
//! computes alpha in integer arithmetic, so the factor is truncated (alpha
//! below 2 gives `w/2`, alpha of 2 or more gives `w/4` left, i.e. a cut of
//! 0.75 w), which makes the cut coarser than `min(a_r, 1.5)`; it floors
//! ssthresh at one packet and counts its increase once per ACK event with
//! an integer threshold (`ai + 1` ACKs per packet). Braid floors at two
//! segments, as its other loss-based controllers do. A timeout sets
//! ssthresh by the same decrease (the module's `ssthresh` callback), not by
//! Reno's halving. Only active
//! subflows with an RTT estimate enter the sums; a subflow without one
//! grows like Reno. Growth is per acknowledged byte (see `cc`).

use super::aimd::WindowRule;
use super::window::Window;
use super::PathView;

/// The largest `a_r` the decrease uses.
pub const BALIA_MAX_ALPHA: f64 = 1.5;

#[derive(Clone, Copy, Debug, Default)]
pub struct Balia;

/// Rates `x_k` (bytes/s) of the paths that can send, and `a_r` for `path`.
fn rates(windows: &[Window], paths: &[PathView], path: usize) -> Option<(f64, f64, f64)> {
    let rate = |r: usize| -> Option<f64> {
        let (w, v) = (windows.get(r)?, paths.get(r)?);
        let rtt = v.srtt?.as_secs_f64();
        (w.active && v.active && rtt > 0.0).then(|| w.cwnd / rtt)
    };
    let mine = rate(path)?;
    let all = || (0..windows.len()).filter_map(rate);
    let sum: f64 = all().sum();
    let max = all().fold(0.0, f64::max);
    Some((mine, sum, max / mine))
}

/// BALIA's per-segment increase factor `(1 + a)/2 * (4 + a)/5`.
pub fn balia_factor(a: f64) -> f64 {
    (1.0 + a) / 2.0 * (4.0 + a) / 5.0
}

impl WindowRule for Balia {
    const NAME: &'static str = "balia";

    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, paths: &[PathView]) -> f64 {
        let w = &windows[path];
        match rates(windows, paths, path) {
            Some((x, sum, a)) => {
                let rtt = w.cwnd / x;
                acked * w.mss * (x / rtt) / (sum * sum) * balia_factor(a)
            }
            None => acked * w.mss / w.cwnd,
        }
    }

    fn decrease(&mut self, windows: &[Window], path: usize, paths: &[PathView]) -> f64 {
        let w = &windows[path];
        let a = rates(windows, paths, path).map_or(1.0, |(_, _, a)| a);
        (w.cwnd - w.cwnd / 2.0 * a.min(BALIA_MAX_ALPHA)).max(2.0 * w.mss)
    }

    /// The module's `ssthresh` callback is `mptcp_balia_ssthresh`, its
    /// loss decrease, which `tcp_enter_loss` uses at a timeout too.
    fn timeout_ssthresh(&mut self, windows: &[Window], path: usize, paths: &[PathView]) -> f64 {
        self.decrease(windows, path, paths)
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::in_avoidance;
    use super::super::Controller;
    use super::*;
    use crate::time::{Duration, Instant};

    fn view(ms: u64) -> PathView {
        PathView { srtt: Some(Duration::from_millis(ms)), mss: 1000, active: true, ..Default::default() }
    }

    #[test]
    fn increase_and_decrease_match_hand_computation() {
        assert_eq!(balia_factor(1.0), 1.0);
        assert!((balia_factor(2.0) - 1.8).abs() < 1e-12);
        // w = 10 kB at 10 ms (x = 1e6 B/s, a = 1) and 20 kB at 40 ms (x = 5e5, a = 2).
        let mut b = in_avoidance::<Balia>(&[10, 20]);
        let paths = [view(10), view(40)];
        // Path 0: (1e6 / 0.01) / (1.5e6)^2 * 1 * 1e6 = 44.44 B.
        let inc = b.rule.increase(&b.windows, 0, 1000.0, &paths);
        assert!((inc - 44.444_444).abs() < 1e-4, "{inc}");
        // Path 1: (5e5 / 0.04) / 2.25e12 * 1.8 * 1e6 = 10 B.
        let inc = b.rule.increase(&b.windows, 1, 1000.0, &paths);
        assert!((inc - 10.0).abs() < 1e-9, "{inc}");
        // Loss on path 0 (a = 1): halved. On path 1 (a = 2, capped 1.5): 20000 - 10000 * 1.5.
        b.on_congestion_event(Instant::ZERO, 1, &paths);
        assert_eq!(b.window(1), 5_000);
        b.on_congestion_event(Instant::ZERO, 0, &paths);
        assert_eq!(b.window(0), 5_000);
    }

    #[test]
    fn a_timeout_sets_ssthresh_by_balias_decrease() {
        // As above: path 1 (a = 2, capped 1.5) keeps 20000 - 10000 x 1.5 =
        // 5 kB as ssthresh where Reno's halving would keep 10 kB; path 0
        // (a = 1) is halved. Both windows restart at one segment.
        let mut b = in_avoidance::<Balia>(&[10, 20]);
        let paths = [view(10), view(40)];
        b.on_rto(Instant::ZERO, 1, &paths, false);
        assert_eq!((b.window(1), b.ssthresh(1)), (1_000, 5_000));
        b.on_rto(Instant::ZERO, 0, &paths, false);
        assert_eq!((b.window(0), b.ssthresh(0)), (1_000, 5_000));
    }

    #[test]
    fn a_loss_leaves_at_least_two_segments() {
        // 3 segments at a = 1: 3000 - 1500 = 1500 B, below the floor of 2 x 1000 B.
        let mut b = in_avoidance::<Balia>(&[3]);
        b.on_congestion_event(Instant::ZERO, 0, &[view(10)]);
        assert_eq!(b.window(0), 2_000);
    }

    #[test]
    fn a_path_with_a_zero_rtt_stays_out_of_the_sums() {
        // Path 1 reports srtt = 0: its rate would be infinite. Path 0 is then
        // alone (a = 1) and grows like Reno: 1000 B x 1000 / 10 kB = 100 B.
        let mut b = in_avoidance::<Balia>(&[10, 10]);
        let paths = [view(10), view(0)];
        let inc = b.rule.increase(&b.windows, 0, 1000.0, &paths);
        assert!((inc - 100.0).abs() < 1e-9, "{inc}");
        // Path 1 itself, without a usable RTT, grows like Reno too.
        let inc = b.rule.increase(&b.windows, 1, 1000.0, &paths);
        assert!((inc - 100.0).abs() < 1e-9, "{inc}");
    }
}
