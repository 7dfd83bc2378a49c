//! COUPLED, the fully coupled controller (NSDI 2011 §2.2, seed 000; Kelly
//! and Voice 2005; Han et al. 2006).
//!
//! Per ACK on subflow r in congestion avoidance, `w_r += bytes_acked * MSS /
//! w_total`; on a loss on r, `w_r -= w_total / 2`, bounded below by one
//! segment (the paper's experiments bound it at 1 packet). All traffic moves
//! to the least congested paths, and a path once abandoned is rarely probed
//! again: that is the weakness the paper's later algorithms fix.
//!
//! Following the authors' simulator (htsim `mtcp.cpp`, `FULLY_COUPLED`):
//! the increase is capped at Reno's (a no-op since `w_total >= w_r`), and a
//! subflow in fast recovery counts with its ssthresh in `w_total`; Braid's
//! windows already equal ssthresh during recovery, so that holds by
//! construction. Slow start is per subflow.

use super::aimd::{total_window, WindowRule};
use super::window::Window;
use super::PathView;

#[derive(Clone, Copy, Debug, Default)]
pub struct Coupled;

/// The window after a loss on a subflow of window `w` in a connection of
/// total window `total`, with a floor of one segment `mss` (all bytes).
pub fn coupled_decrease(w: f64, total: f64, mss: f64) -> f64 {
    (w - total / 2.0).max(mss)
}

impl WindowRule for Coupled {
    const NAME: &'static str = "coupled";
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, _paths: &[PathView]) -> f64 {
        let w = &windows[path];
        (w.mss * acked / total_window(windows)).min(w.mss * acked / w.cwnd)
    }
    fn decrease(&mut self, windows: &[Window], path: usize, _paths: &[PathView]) -> f64 {
        let w = &windows[path];
        coupled_decrease(w.cwnd, total_window(windows), w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::Instant;

    #[test]
    fn increase_over_total_and_decrease_by_half_the_total() {
        let mut c = in_avoidance::<Coupled>(&[10, 30]);
        c.on_ack(0, &ack(1000), &[]);
        // 1000 * 1000 / 40000 = 25 bytes
        assert_eq!(c.window(0), 10_025);
        // Loss on the big subflow: 30000 - 40025/2 = 9987.5
        c.on_congestion_event(Instant::ZERO, 1, &[]);
        assert_eq!(c.window(1), 9_987);
        // Loss on the small one: 10025 - 20012.5/2 < 0, floored at one segment.
        c.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!(c.window(0), 1_000);
        assert_eq!(coupled_decrease(5_000.0, 4_000.0, 1_000.0), 3_000.0);
    }
}
