//! EWTCP, equally weighted TCP (Honda et al. 2009; NSDI 2011 §2.1, seed 000;
//! seed 001 §1).
//!
//! Every subflow runs Reno with its congestion-avoidance increase scaled by
//! a weight `a`: per ACK, `w_r += a * bytes_acked * MSS / w_r`; on loss,
//! `w_r /= 2`. Slow start is plain Reno.
//!
//! Deviation from the seeds: both write `a = 1/sqrt(n)` and also say n
//! subflows then together take one TCP share when RTTs are equal. Those two
//! claims contradict each other: AIMD with an increase of `a` segments per
//! RTT settles at `w = sqrt(2a/p)`, so n subflows with `a = 1/sqrt(n)` take
//! `n^(3/4)` TCP shares. The authors' simulator (htsim `mtcp.cpp`,
//! `COUPLED_TCP`) adds `tcp_inc / n^2` per ACK, that is `a = 1/n^2`, which
//! gives each subflow `w_TCP / n` and the fairness the paper describes.
//! Braid follows the code. n counts the connection's active subflows.

use super::aimd::WindowRule;
use super::window::Window;
use super::PathView;

#[derive(Clone, Copy, Debug, Default)]
pub struct Ewtcp;

/// The weight `a = 1/n^2` for `n` subflows (htsim's `COUPLED_TCP`).
pub fn ewtcp_weight(n: usize) -> f64 {
    let n = n.max(1) as f64;
    1.0 / (n * n)
}

impl WindowRule for Ewtcp {
    const NAME: &'static str = "ewtcp";
    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, _paths: &[PathView]) -> f64 {
        let n = windows.iter().filter(|w| w.active).count();
        let w = &windows[path];
        ewtcp_weight(n) * w.mss * acked / w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::Instant;

    #[test]
    fn increase_is_reno_over_n_squared() {
        assert_eq!(ewtcp_weight(1), 1.0);
        assert_eq!(ewtcp_weight(2), 0.25);
        assert_eq!(ewtcp_weight(4), 0.0625);
        let mut e = in_avoidance::<Ewtcp>(&[10, 10]);
        e.on_ack(0, &ack(1000), &[]);
        // 0.25 * 1000 * 1000 / 10000 = 25 bytes
        assert_eq!(e.window(0), 10_025);
        e.on_path_removed(1);
        e.on_ack(0, &ack(1000), &[]);
        // One active subflow left: plain Reno, 1000 * 1000 / 10025 = 99.75 bytes.
        assert_eq!(e.window(0), 10_124);
        e.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!(e.window(0), 5_062);
    }
}
