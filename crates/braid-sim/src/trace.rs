//! Time-varying capacity from a packet-delivery trace, in mahimahi's format
//! (Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP",
//! USENIX ATC 2015; `mm-link`).
//!
//! A trace file has one integer per line, a time in milliseconds, in
//! non-decreasing order; each line is one opportunity to deliver
//! [`OPPORTUNITY_BYTES`] bytes (an MTU-sized packet). Two lines with the
//! same time are two opportunities at that instant. The trace repeats with
//! a period equal to its last time, as `mm-link` loops it. As in mahimahi's
//! `LinkQueue`, an opportunity that finds the queue empty is lost, a packet
//! larger than what is left of an opportunity uses the next ones too, and
//! several small packets can share one.
//!
//! Cellular and Wi-Fi traces recorded by the mahimahi authors (Verizon,
//! T-Mobile, AT&T LTE) are in this format.

use braid_proto::{Duration, Instant};

/// Bytes one delivery opportunity carries (mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// A parsed delivery trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Opportunity times within one period, in nanoseconds, non-decreasing.
    times: Vec<u64>,
    /// Length of one period in nanoseconds (the last line's time).
    period: u64,
}

/// Why a trace was refused: the 1-based line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// Where a link is in its trace: the absolute index of the current
/// opportunity (counting over every period) and the bytes left in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCursor {
    opportunity: u64,
    left: u32,
}

impl TraceCursor {
    /// Moves back over `bytes` of opportunities, handing them back: those
    /// of packets scheduled back to back that will not be sent after all.
    pub fn rewind(&mut self, bytes: u64) {
        if bytes == 0 || self.left == 0 {
            return;
        }
        let per = u64::from(OPPORTUNITY_BYTES);
        let used = (self.opportunity * per + (per - u64::from(self.left))).saturating_sub(bytes);
        self.opportunity = used / per;
        self.left = (per - used % per) as u32;
    }
}

impl DeliveryTrace {
    /// Parses mahimahi's text format. Blank lines are skipped.
    pub fn parse(text: &str) -> Result<DeliveryTrace, TraceError> {
        let mut times = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let err = |message: String| TraceError { line: i + 1, message };
            let ms: u64 = line.parse().map_err(|_| err(format!("{line:?} is not a whole number of milliseconds")))?;
            if ms > 1_000_000_000 {
                return Err(err(format!("{ms} ms is too large (at most 10^9 ms)")));
            }
            let ns = ms * 1_000_000;
            if times.last().is_some_and(|&last| ns < last) {
                return Err(err(format!("{ms} ms is earlier than the line before; times must not decrease")));
            }
            times.push(ns);
        }
        let period = *times
            .last()
            .ok_or_else(|| TraceError { line: 0, message: "the trace has no delivery opportunity".into() })?;
        if period == 0 {
            return Err(TraceError {
                line: times.len(),
                message: "the last time must be above 0 ms: it is the period the trace repeats with".into(),
            });
        }
        Ok(DeliveryTrace { times, period })
    }

    /// Mean capacity over one period, in bit/s.
    pub fn mean_rate_bps(&self) -> f64 {
        self.times.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / (self.period as f64 / 1e9)
    }

    /// Time of opportunity `i` (absolute, counting over periods).
    fn time(&self, i: u64) -> Instant {
        let n = self.times.len() as u64;
        Instant::from_nanos((i / n).saturating_mul(self.period).saturating_add(self.times[(i % n) as usize]))
    }

    /// The first opportunity at or after `t`.
    fn first_at_or_after(&self, t: Instant) -> u64 {
        let n = self.times.len() as u64;
        let ns = t.as_nanos();
        // A time on a period's boundary is the end of the period before
        // (whose last opportunity lies there), not the start of the next.
        let (cycle, within) = match ns {
            0 => (0, 0),
            _ => ((ns - 1) / self.period, (ns - 1) % self.period + 1),
        };
        let idx = self.times.partition_point(|&x| x < within) as u64;
        cycle * n + idx
    }

    /// Schedules a packet of `bytes` that can start no earlier than
    /// `earliest` (its arrival, or the end of the packet before it):
    /// returns when its first and its last byte are delivered, and moves
    /// `cursor` past what it used.
    pub fn schedule(&self, cursor: &mut TraceCursor, earliest: Instant, bytes: u32) -> (Instant, Instant) {
        if cursor.left == 0 || self.time(cursor.opportunity) < earliest {
            // Opportunities before `earliest` found nothing to send: lost.
            cursor.opportunity = self.first_at_or_after(earliest);
            cursor.left = OPPORTUNITY_BYTES;
        }
        let start = self.time(cursor.opportunity);
        let mut rest = bytes.max(1);
        while rest > cursor.left {
            rest -= cursor.left;
            cursor.opportunity += 1;
            cursor.left = OPPORTUNITY_BYTES;
        }
        cursor.left -= rest;
        let end = self.time(cursor.opportunity);
        if cursor.left == 0 {
            cursor.opportunity += 1;
            cursor.left = OPPORTUNITY_BYTES;
        }
        (start, end)
    }

    /// The time `bytes` take at the trace's mean rate: their share of one
    /// period's capacity, times the period.
    pub fn busy_time(&self, bytes: u64) -> Duration {
        let capacity = self.times.len() as u128 * u128::from(OPPORTUNITY_BYTES);
        Duration::from_nanos((u128::from(bytes) * u128::from(self.period) / capacity) as u64)
    }

    /// One period's length.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000_000)
    }

    #[test]
    fn parses_and_refuses_bad_traces() {
        let t = DeliveryTrace::parse("1\n1\n5\n\n10\n").unwrap();
        assert_eq!(t.times.len(), 4);
        assert_eq!(t.period(), Duration::from_millis(10));
        // 4 opportunities of 1504 bytes every 10 ms.
        assert!((t.mean_rate_bps() - 4.0 * 1504.0 * 8.0 / 0.01).abs() < 1e-6);
        assert_eq!(DeliveryTrace::parse("3\n2\n").unwrap_err().line, 2);
        assert_eq!(DeliveryTrace::parse("1\nx\n").unwrap_err().line, 2);
        assert!(DeliveryTrace::parse("0\n0\n").is_err());
        assert!(DeliveryTrace::parse("\n").is_err());
    }

    #[test]
    fn packets_use_opportunities_as_mahimahi_does() {
        let t = DeliveryTrace::parse("1\n2\n2\n4\n").unwrap();
        let mut c = TraceCursor::default();
        // A full packet at t = 0 leaves at the first opportunity (1 ms).
        assert_eq!(t.schedule(&mut c, ms(0), 1504), (ms(1), ms(1)));
        // Two 700-byte packets share the next opportunity (2 ms)...
        assert_eq!(t.schedule(&mut c, ms(1), 700), (ms(2), ms(2)));
        assert_eq!(t.schedule(&mut c, ms(2), 700), (ms(2), ms(2)));
        // ...and a 1500-byte one uses its last 104 bytes and the second
        // opportunity at 2 ms.
        assert_eq!(t.schedule(&mut c, ms(2), 1500), (ms(2), ms(2)));
        // Idle past 4 ms: the next period starts at 4 ms, its first
        // opportunity is at 5 ms; the 4 ms one was lost.
        assert_eq!(t.schedule(&mut c, ms(4) + Duration::from_nanos(1), 3000), (ms(5), ms(6)));
        // Far in the future, without drift: period 999 ends with an
        // opportunity at 4000 ms, which a packet arriving then takes;
        // period 1000's first is at 4001 ms.
        assert_eq!(t.schedule(&mut c, ms(4000), 100), (ms(4000), ms(4000)));
        assert_eq!(t.schedule(&mut c, ms(4000) + Duration::from_nanos(1), 100), (ms(4001), ms(4001)));
    }

    /// An idle link offered a packet on a period's boundary sends it at the
    /// opportunity there, the period's last (it was skipped for the next
    /// period's first).
    #[test]
    fn the_opportunity_on_a_period_boundary_is_taken() {
        let t = DeliveryTrace::parse("3\n3\n10\n").unwrap();
        assert_eq!(t.schedule(&mut TraceCursor::default(), ms(10), 1500), (ms(10), ms(10)));
        assert_eq!(t.schedule(&mut TraceCursor::default(), ms(20), 1500), (ms(20), ms(20)));
        assert_eq!(t.schedule(&mut TraceCursor::default(), ms(0), 1500), (ms(3), ms(3)));
        let before = Instant::from_nanos(10_000_000 - 1);
        assert_eq!(t.schedule(&mut TraceCursor::default(), before, 1500), (ms(10), ms(10)));
    }
}
