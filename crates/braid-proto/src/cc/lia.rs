//! LIA, the Linked Increases Algorithm (RFC 6356; seed 000, NSDI 2011 §2.5;
//! seed 004 Algorithm 8).
//!
//! In congestion avoidance, each ACK on subflow i adds
//! `min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i / cwnd_i)`
//! with `alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2`
//! (RFC 6356 section 3, byte form). Losses halve only the lossy subflow.
//! Slow start is per subflow and uncoupled, as in the RFC.
//!
//! Choices and deviations:
//! - `alpha` is recomputed on every ACK in congestion avoidance (the RFC
//!   allows once per window; the result differs only in rounding).
//! - Only subflows that are active and have an RTT sample enter the sums;
//!   Linux's `mptcp_ccc_recalc_alpha` likewise skips subflows it cannot send on.
//! - Arithmetic is in f64 rather than Linux's scaled integers.

use super::aimd::{total_window, WindowRule};
use super::window::Window;
use super::PathView;

#[derive(Clone, Copy, Debug, Default)]
pub struct Lia;

/// RFC 6356 alpha from `(cwnd_bytes, srtt_seconds)` pairs; `None` when no
/// pair has a positive RTT.
pub fn lia_alpha(paths: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    // One pass; each sum takes its terms in path order, as separate passes would.
    let (mut total, mut best, mut denom) = (0.0, 0.0, 0.0);
    for (w, rtt) in paths.filter(|&(_, rtt)| rtt > 0.0) {
        total += w;
        best = f64::max(best, w / (rtt * rtt));
        denom += w / rtt;
    }
    (denom > 0.0).then(|| total * best / (denom * denom))
}

impl WindowRule for Lia {
    const NAME: &'static str = "lia";
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, paths: &[PathView]) -> f64 {
        let coupled = windows
            .iter()
            .zip(paths)
            .filter(|(w, p)| w.active && p.active)
            .filter_map(|(w, p)| Some((w.cwnd, p.srtt?.as_secs_f64())));
        let w = &windows[path];
        let uncoupled = acked * w.mss / w.cwnd;
        let total = total_window(windows);
        match lia_alpha(coupled) {
            Some(a) if total > 0.0 => (a * acked * w.mss / total).min(uncoupled),
            _ => uncoupled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::{Duration, Instant};

    #[test]
    fn alpha_matches_hand_computation() {
        // w1 = 10 kB at 10 ms, w2 = 20 kB at 100 ms:
        // max w/rtt^2 = 1e8; (sum w/rtt)^2 = (1e6 + 2e5)^2 = 1.44e12; total 3e4
        // alpha = 3e4 * 1e8 / 1.44e12 = 2.08333...
        let a = lia_alpha([(10_000.0, 0.010), (20_000.0, 0.100)].into_iter()).unwrap();
        assert!((a - 2.083_333_333).abs() < 1e-6, "alpha {a}");
        // Two identical paths: alpha = 1/2, whatever the window.
        let a = lia_alpha([(7_000.0, 0.05), (7_000.0, 0.05)].into_iter()).unwrap();
        assert!((a - 0.5).abs() < 1e-12);
        // One path: alpha = 1, LIA degenerates to Reno.
        let a = lia_alpha([(7_000.0, 0.05)].into_iter()).unwrap();
        assert!((a - 1.0).abs() < 1e-12);
        assert_eq!(lia_alpha([(7_000.0, 0.0)].into_iter()), None);
    }

    fn view(rtt_ms: u64) -> PathView {
        PathView { srtt: Some(Duration::from_millis(rtt_ms)), mss: 1000, active: true, ..Default::default() }
    }

    /// A subflow still joining (its path not active) has a window but no
    /// say in alpha: with only one established path alpha is 1, and the
    /// increase is 1000 x 1000 / 30000 = 33.3 bytes (the total counts every
    /// window the controller holds, the joining one's too).
    #[test]
    fn a_joining_subflow_does_not_count_in_alpha() {
        let mut l = in_avoidance::<Lia>(&[10, 20]);
        let joining = PathView { active: false, ..view(100) };
        l.on_ack(0, &ack(1000), &[view(10), joining]);
        assert!((l.windows[0].cwnd - 10_033.333).abs() < 1e-2, "{}", l.windows[0].cwnd);
    }

    #[test]
    fn increase_is_coupled_and_capped_by_reno() {
        let mut l = in_avoidance::<Lia>(&[10, 20]);
        let paths = [view(10), view(100)];
        l.on_ack(0, &ack(1000), &paths);
        // min(2.08333 * 1000 * 1000 / 30000, 1000 * 1000 / 10000) = 69.44 bytes
        assert!((l.windows[0].cwnd - 10_069.444).abs() < 1e-2, "{}", l.windows[0].cwnd);
        // The high-RTT path: alpha term 69.1 (total now 30069) vs Reno 50: Reno caps.
        l.on_ack(1, &ack(1000), &paths);
        assert!((l.windows[1].cwnd - 20_050.0).abs() < 1e-9, "{}", l.windows[1].cwnd);
        l.on_congestion_event(Instant::ZERO, 1, &paths);
        assert_eq!(l.window(1), 10_025);
        assert!(l.window(0) > 10_000, "the other subflow keeps its window");
    }
}
