//! Traffic sources: what a flow's application writes, and when.
//!
//! A bulk source keeps the send buffer full, so the transport is never
//! short of data and delay is dominated by the buffer. A constant-rate
//! source writes one message every `message * 8 / rate` seconds, like a
//! video call or a sensor feed: the connection is application-limited, so
//! delay measures the transport (loss recovery, reordering across
//! subflows) rather than queueing in the send buffer.

use braid_proto::{Duration, Instant};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Write whatever the send buffer takes.
    #[default]
    Bulk,
    /// Write `message` bytes at a steady `bits_per_sec`.
    ConstantRate { bits_per_sec: u64, message: u64 },
}

impl Source {
    /// When message `k` (from 0) is written by a constant-rate source that
    /// started at `start`. Computed from `k` rather than by adding
    /// intervals, so rounding never accumulates.
    pub fn message_time(&self, start: Instant, k: u64) -> Option<Instant> {
        match *self {
            Source::Bulk => None,
            Source::ConstantRate { bits_per_sec, message } => {
                let ns = u128::from(k) * u128::from(message) * 8 * 1_000_000_000 / u128::from(bits_per_sec.max(1));
                Some(start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_evenly_spaced_without_drift() {
        // 1448 B at 1 Mbit/s: 11.584 ms apart.
        let s = Source::ConstantRate { bits_per_sec: 1_000_000, message: 1448 };
        let t0 = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(s.message_time(t0, 0), Some(t0));
        assert_eq!(s.message_time(t0, 1), Some(t0 + Duration::from_micros(11_584)));
        // 3 B at 7 bit/s: 24/7 s each; the millionth lands on 24e6/7 s to the ns.
        let odd = Source::ConstantRate { bits_per_sec: 7, message: 3 };
        assert_eq!(
            odd.message_time(Instant::ZERO, 1_000_000),
            Some(Instant::ZERO + Duration::from_nanos(3_428_571_428_571_428))
        );
        assert_eq!(Source::Bulk.message_time(t0, 3), None);
    }
}
