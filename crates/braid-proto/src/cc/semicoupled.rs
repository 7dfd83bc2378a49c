//! SEMICOUPLED (NSDI 2011 §2.3, seed 000).
//!
//! Per ACK on subflow r in congestion avoidance, `w_r += a * bytes_acked *
//! MSS / w_total`; on a loss on r, `w_r /= 2`. The equilibrium is
//! `w_r ~ sqrt(2a) (1/p_r) / sqrt(sum_s 1/p_s)`: traffic leans towards less
//! congested paths but every path keeps a window, so it keeps being probed.
//!
//! The paper leaves `a` as "a constant which controls the aggressiveness"
//! before replacing it with LIA's computed value. Braid uses `a = 1`, the
//! value for which one subflow is exactly Reno; with n equally congested
//! subflows that takes sqrt(n) TCP shares (about 1.4 for two).

use super::aimd::{total_window, WindowRule};
use super::window::Window;
use super::PathView;

/// The aggressiveness constant `a`.
pub const SEMICOUPLED_A: f64 = 1.0;

#[derive(Clone, Copy, Debug, Default)]
pub struct SemiCoupled;

impl WindowRule for SemiCoupled {
    const NAME: &'static str = "semicoupled";
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, _paths: &[PathView]) -> f64 {
        SEMICOUPLED_A * windows[path].mss * acked / total_window(windows)
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::Instant;

    #[test]
    fn increase_is_a_over_total_window() {
        let mut s = in_avoidance::<SemiCoupled>(&[10, 30]);
        s.on_ack(1, &ack(2000), &[]);
        // 1 * 1000 * 2000 / 40000 = 50 bytes, even on the big subflow.
        assert_eq!(s.window(1), 30_050);
        s.on_congestion_event(Instant::ZERO, 1, &[]);
        assert_eq!(s.window(1), 15_025);
        assert_eq!(s.window(0), 10_000);
    }
}
