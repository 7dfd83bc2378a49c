//! Uncoupled NewReno: every subflow runs its own RFC 5681 window.
//!
//! Source: RFC 5681 (slow start, congestion avoidance, multiplicative
//! decrease) with the recovery behaviour of RFC 6582/6675 implemented in
//! the connection (one decrease per recovery episode, SACK-based pipe).
//! Congestion avoidance adds `mss * bytes_acked / cwnd` per ACK, which is
//! one segment per RTT whatever the ACK frequency (RFC 3465 byte counting).
//! Deviation: Linux grows by one segment per `cwnd` ACK events instead; with
//! delayed ACKs Braid's growth is twice Linux's (see `cc` module docs).

use super::window::{add_path, Window};
use super::{AckSample, Controller, PathView};
use crate::time::Instant;

#[derive(Debug, Default)]
pub struct Reno {
    windows: Vec<Window>,
}

impl Controller for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        add_path(&mut self.windows, path, mss, iw);
    }
    fn on_path_removed(&mut self, path: usize) {
        if let Some(w) = self.windows.get_mut(path) {
            w.active = false;
        }
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, _paths: &[PathView]) {
        let Some(w) = self.windows.get_mut(path) else { return };
        if ack.in_recovery {
            return;
        }
        let rest = w.slow_start(ack.bytes_acked);
        if rest > 0 {
            w.cwnd += w.mss * rest as f64 / w.cwnd;
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        if let Some(w) = self.windows.get_mut(path) {
            w.decrease(0.5);
        }
    }
    fn on_rto(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        if let Some(w) = self.windows.get_mut(path) {
            w.on_rto();
        }
    }
    fn window(&self, path: usize) -> u64 {
        self.windows.get(path).map_or(0, Window::bytes)
    }
    fn ssthresh(&self, path: usize) -> u64 {
        self.windows.get(path).map_or(u64::MAX, Window::ssthresh_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(bytes: u64) -> AckSample {
        AckSample { now: Instant::ZERO, bytes_acked: bytes, rtt: None, prior_in_flight: 0, in_recovery: false }
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        let mut r = Reno::default();
        r.on_path_added(0, 1000, 10);
        r.windows[0].ssthresh = 10_000.0;
        // ten ACKs of one segment each at cwnd = 10 segments: + ~1 segment.
        for _ in 0..10 {
            r.on_ack(0, &ack(1000), &[]);
        }
        let w = r.window(0);
        assert!((10_950..=11_000).contains(&w), "cwnd {w}");
        r.on_congestion_event(Instant::ZERO, 0, &[]);
        assert_eq!(r.window(0), w / 2);
    }

    #[test]
    fn no_growth_in_recovery_and_removed_path_is_ignored() {
        let mut r = Reno::default();
        r.on_path_added(1, 1000, 10);
        let mut a = ack(5000);
        a.in_recovery = true;
        r.on_ack(1, &a, &[]);
        assert_eq!(r.window(1), 10_000);
        assert_eq!(r.window(0), 0);
        r.on_ack(7, &ack(1000), &[]);
        r.on_path_removed(1);
    }
}
