//! Uncoupled NewReno: every subflow runs its own RFC 5681 window.
//!
//! Source: RFC 5681 (slow start, congestion avoidance, multiplicative
//! decrease to max(cwnd/2, 2 segments)) with the recovery behaviour of RFC
//! 6582/6675 implemented in the connection (one decrease per recovery
//! episode, SACK-based pipe). Congestion avoidance adds `MSS * bytes_acked /
//! cwnd` per ACK, one segment per RTT whatever the ACK frequency (RFC 3465
//! byte counting). Deviation: Linux grows by one segment per `cwnd` ACK
//! events instead; with delayed ACKs Braid's growth is twice Linux's.

use super::aimd::WindowRule;
use super::window::Window;
use super::PathView;

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl WindowRule for Reno {
    const NAME: &'static str = "reno";
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, _paths: &[PathView]) -> f64 {
        let w = &windows[path];
        w.mss * acked / w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::Instant;

    #[test]
    fn one_segment_per_window_of_acks_then_halving() {
        let mut r = in_avoidance::<Reno>(&[10]);
        for _ in 0..10 {
            r.on_ack(0, &ack(1000), &[]);
        }
        let w = r.window(0);
        assert!((10_950..=11_000).contains(&w), "cwnd {w}");
        r.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!(r.window(0), w / 2);
        assert_eq!(r.ssthresh(0), w / 2);
        // The two-segment floor.
        r.windows[0].cwnd = 3000.0;
        r.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!(r.window(0), 2000);
    }

    /// Penalisation (Raiciu et al.) halves the window and, outside slow
    /// start, ssthresh, as Linux does directly under the module.
    #[test]
    fn penalizing_halves_window_and_ssthresh() {
        let mut r = in_avoidance::<Reno>(&[10]);
        r.windows[0].ssthresh = 8000.0;
        r.penalize(Instant::ZERO, 0, &[]);
        assert_eq!((r.window(0), r.ssthresh(0)), (5000, 4000));
    }

    #[test]
    fn no_growth_in_recovery_and_unknown_paths_are_ignored() {
        let mut r = in_avoidance::<Reno>(&[0, 10]);
        let mut a = ack(5000);
        a.in_recovery = true;
        r.on_ack(1, &a, &[]);
        assert_eq!(r.window(1), 10_000);
        r.on_ack(7, &ack(1000), &[]);
        r.on_congestion_event(Instant::ZERO, 9, &[]);
        r.on_path_removed(1);
        r.on_ack(1, &ack(1000), &[]);
        assert_eq!(r.window(1), 10_000, "removed paths do not grow");
    }
}
