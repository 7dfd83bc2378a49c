//! BBR's allowance for ACK aggregation: Linux's `bbr_update_ack_aggregation`
//! and `bbr_ack_aggregation_cwnd` (`tcp_bbr.c`, since 5.1; in 5.4, the base
//! of MPTCP v0.96).
//!
//! When ACKs come in bursts (delayed ACKs, a link that batches, a receiver
//! that stretches ACKs), a window of BtlBw x RTprop runs dry between bursts.
//! BBR measures how far deliveries run ahead of BtlBw: an epoch starts
//! whenever they fall behind it, and the excess over the epoch (at most a
//! window) is the aggregation. The largest excess of the last 5 to 10 round
//! trips (two windows of 5 rounds, the older one dropped as a new one
//! starts) is added to the window's target once the pipe is filled, capped
//! at 100 ms of BtlBw.
//!
//! Bytes here where Linux counts packets; the expected delivery is floored
//! to whole segments as Linux floors it to packets, and the allowance to
//! whole segments. Linux also restarts the epoch when the sender restarts
//! from idle (`CA_EVENT_TX_START`); here the first ACK after an idle period
//! restarts it, since it finds deliveries far behind BtlBw, which differs
//! only in the epoch's first ACK's excess being counted from that ACK.

use crate::time::{Duration, Instant};

/// Round trips per window of the max filter (`bbr_extra_acked_win_rtts`).
const WINDOW_ROUNDS: u32 = 5;
/// An epoch that has acknowledged this many segments restarts
/// (`bbr_ack_epoch_acked_reset_thresh`).
const EPOCH_RESET_SEGMENTS: f64 = (1u32 << 20) as f64;
/// The allowance is at most this long at BtlBw (`bbr_extra_acked_max_us`).
const MAX_ALLOWANCE: Duration = Duration::from_millis(100);

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct AckAggregation {
    epoch_start: Instant,
    /// Bytes acknowledged since the epoch started.
    epoch_acked: f64,
    /// The largest excess of each of two windows of rounds, bytes.
    extra: [f64; 2],
    window: usize,
    rounds: u32,
}

impl AckAggregation {
    /// One ACK that delivered `acked` bytes at `now` with a valid rate
    /// sample, after BtlBw took it in (`btl_bw`, bytes/s); `round_start`
    /// if it began a round, `cwnd` the window before this ACK.
    pub(super) fn on_ack(&mut self, now: Instant, acked: f64, round_start: bool, btl_bw: f64, cwnd: f64, mss: f64) {
        if acked <= 0.0 {
            return;
        }
        if round_start {
            self.rounds = (self.rounds + 1).min(0x1F);
            if self.rounds >= WINDOW_ROUNDS {
                self.rounds = 0;
                self.window ^= 1;
                self.extra[self.window] = 0.0;
            }
        }
        let epoch = now.saturating_since(self.epoch_start).as_secs_f64();
        let mut expected = (btl_bw * epoch / mss).floor() * mss;
        if self.epoch_acked <= expected || self.epoch_acked + acked >= EPOCH_RESET_SEGMENTS * mss {
            self.epoch_acked = 0.0;
            self.epoch_start = now;
            expected = 0.0;
        }
        // Linux keeps the count in 20 bits of packets.
        self.epoch_acked = (self.epoch_acked + acked).min(f64::from(0xF_FFFFu32) * mss);
        let extra = (self.epoch_acked - expected).min(cwnd);
        self.extra[self.window] = self.extra[self.window].max(extra);
    }

    /// What the window's target gets on top of the BDP, whole segments
    /// (Linux's gain for it is 1).
    pub(super) fn allowance_segments(&self, btl_bw: f64, mss: f64) -> f64 {
        let cap = (btl_bw * MAX_ALLOWANCE.as_secs_f64() / mss).floor();
        (self.extra[0].max(self.extra[1]) / mss).floor().min(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: f64 = 1000.0;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    /// BtlBw 1 MB/s (a segment per ms). Each ACK that finds deliveries not
    /// ahead of BtlBw over the epoch starts a new one, and counts whole as
    /// its excess; one that finds them ahead adds to the epoch's.
    #[test]
    fn excess_over_btl_bw_in_an_epoch() {
        let mut a = AckAggregation::default();
        let bw = 1e6;
        for ms in 1..=20 {
            a.on_ack(at(ms), MSS, false, bw, 1e9, MSS);
        }
        assert_eq!(a.allowance_segments(bw, MSS), 1.0, "on time: each ACK its own epoch");
        // 10 segments after 10 ms of silence: the epoch (1 acked at 20 ms)
        // expected 10, so a new one starts with these 10.
        a.on_ack(at(30), 10.0 * MSS, false, bw, 1e9, MSS);
        assert_eq!(a.allowance_segments(bw, MSS), 10.0);
        // 5 more 1 ms later: 15 acked in the epoch against 1 expected.
        a.on_ack(at(31), 5.0 * MSS, false, bw, 1e9, MSS);
        assert_eq!(a.allowance_segments(bw, MSS), 14.0);
        // Half a millisecond later, 1 more: 16 acked in 1.5 ms, against 1
        // expected (1.5 floored to whole segments, as Linux counts packets).
        a.on_ack(at(31) + Duration::from_micros(500), MSS, false, bw, 1e9, MSS);
        assert_eq!(a.allowance_segments(bw, MSS), 15.0);
    }

    /// The excess is at most the window, and the allowance at most 100 ms
    /// of BtlBw.
    #[test]
    fn capped_by_window_and_by_100_ms() {
        let mut a = AckAggregation::default();
        a.on_ack(at(1), MSS, false, 1e6, 1e9, MSS);
        a.on_ack(at(2), 500.0 * MSS, false, 1e6, 50.0 * MSS, MSS);
        assert_eq!(a.allowance_segments(1e6, MSS), 50.0, "the window caps the excess");
        assert_eq!(a.allowance_segments(1e5, MSS), 10.0, "100 ms at 100 kB/s");
    }

    /// A burst is remembered for 5 to 10 rounds: it sits in the current
    /// window until that window is the older one and a new one starts.
    #[test]
    fn forgotten_after_two_windows_of_rounds() {
        let mut a = AckAggregation::default();
        a.on_ack(at(1), MSS, false, 1e6, 1e9, MSS);
        a.on_ack(at(2), 30.0 * MSS, false, 1e6, 1e9, MSS);
        let burst = a.allowance_segments(1e6, MSS);
        assert!(burst >= 29.0, "{burst}");
        let mut ms = 2;
        for round in 1..=10 {
            ms += 100;
            a.on_ack(at(ms), MSS, true, 1e6, 1e9, MSS);
            let now = a.allowance_segments(1e6, MSS);
            match round {
                1..=9 => assert_eq!(now, burst, "round {round}"),
                _ => assert!(now < burst, "round {round}: {now}"),
            }
        }
    }

    /// Without a valid delivery (nothing acknowledged) nothing changes.
    #[test]
    fn nothing_acknowledged_changes_nothing() {
        let mut a = AckAggregation::default();
        a.on_ack(at(5), 0.0, true, 1e6, 1e9, MSS);
        assert_eq!(a, AckAggregation::default());
    }
}
