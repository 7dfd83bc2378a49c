//! Non-responsive cross traffic: constant-bit-rate packets along a path,
//! optionally switched on and off (seed 000 Fig. 9: 10 ms at line rate,
//! then 100 ms of silence, again and again). Nothing acknowledges them and
//! nothing slows them down; they take queue space and capacity from the
//! flows that share their links, and a full queue drops them like any
//! packet.
//!
//! Packet `k` goes at a time computed from `k` (not by adding intervals),
//! so rounding never accumulates over a long run.

use braid_proto::{Duration, Instant};

/// One source of cross traffic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrossTraffic {
    pub name: String,
    /// Index of the path whose forward route the packets follow.
    pub path: usize,
    /// Sending rate while on.
    pub bits_per_sec: u64,
    /// Wire bytes per packet.
    pub packet_bytes: u32,
    pub start: Instant,
    /// No packet at or after this time.
    pub stop: Option<Instant>,
    /// On and off periods; `None` sends all the time.
    pub on_off: Option<(Duration, Duration)>,
}

/// What became of a source's packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrossOutcome {
    pub packets_sent: u64,
    pub packets_delivered: u64,
}

impl CrossTraffic {
    /// Nanoseconds between packet `j` of a burst and the burst's start.
    fn offset(&self, j: u64) -> u64 {
        let ns =
            u128::from(j) * u128::from(self.packet_bytes) * 8 * 1_000_000_000 / u128::from(self.bits_per_sec.max(1));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// Packets sent in each on period: those that start within it (at
    /// least one).
    fn per_burst(&self, on: Duration) -> u64 {
        let per_packet = u128::from(self.packet_bytes) * 8 * 1_000_000_000;
        let n = (u128::from(on.as_nanos()) * u128::from(self.bits_per_sec)).div_ceil(per_packet);
        u64::try_from(n).unwrap_or(u64::MAX).max(1)
    }

    /// When packet `k` (from 0) is sent, or `None` once the source has stopped.
    pub fn packet_time(&self, k: u64) -> Option<Instant> {
        let at = match self.on_off {
            None => self.start + Duration::from_nanos(self.offset(k)),
            Some((on, off)) => {
                let m = self.per_burst(on);
                let cycle = (k / m).saturating_mul((on + off).as_nanos());
                self.start + Duration::from_nanos(cycle.saturating_add(self.offset(k % m)))
            }
        };
        match self.stop {
            Some(stop) if at >= stop => None,
            _ => Some(at),
        }
    }

    /// Mean rate over time (on and off), in bit/s.
    pub fn mean_bits_per_sec(&self) -> f64 {
        match self.on_off {
            None => self.bits_per_sec as f64,
            Some((on, off)) => {
                let bits = self.per_burst(on) as f64 * f64::from(self.packet_bytes) * 8.0;
                bits / (on + off).as_secs_f64()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_off_bursts_at_line_rate() {
        // 100 Mbit/s, 1500-byte packets: 120 µs apart; 10 ms on holds 84
        // packets (the 84th starts at 9.96 ms), then 100 ms off.
        let c = CrossTraffic {
            name: "cbr".into(),
            path: 0,
            bits_per_sec: 100_000_000,
            packet_bytes: 1500,
            start: Instant::ZERO,
            stop: Some(Instant::from_nanos(1_000_000_000)),
            on_off: Some((Duration::from_millis(10), Duration::from_millis(100))),
        };
        let us = |t: u64| Some(Instant::from_nanos(t * 1000));
        assert_eq!(c.packet_time(1), us(120));
        assert_eq!(c.packet_time(83), us(9960));
        assert_eq!(c.packet_time(84), us(110_000));
        assert_eq!(c.packet_time(84 * 9), us(990_000));
        assert_eq!(c.packet_time(84 * 10), None, "stopped at 1 s");
        assert!((c.mean_bits_per_sec() - 84.0 * 12_000.0 / 0.11).abs() < 1e-6);
        let steady = CrossTraffic { on_off: None, stop: None, ..c };
        assert_eq!(steady.packet_time(1_000_000), Some(Instant::from_nanos(120_000_000_000)));
    }
}
