//! Traffic sources: what a flow's application writes, and when.
//!
//! A bulk source keeps the send buffer full, so the transport is never
//! short of data and delay is dominated by the buffer. Either kind, once it
//! has filled the buffer, waits as a Linux application does: it is woken
//! when a third of the buffer is free (`Connection::may_write`, Linux's
//! `sk_stream_is_writeable`), not by every Data ACK, and refills it then;
//! so a bulk sender's buffer holds between two thirds and all of its
//! size.
//!
//! A constant-rate source writes one message every `message * 8 / rate`
//! seconds, like a video call or a sensor feed: the connection is
//! application-limited, so delay measures the transport (loss recovery,
//! reordering across subflows) rather than queueing in the send buffer.
//!
//! The application wakes at most every [`MIN_WAKE_GAP`] (10 µs): messages
//! due in between are written together at the wake-up, so tiny messages at
//! high rates cost one event per gap rather than one per message, at the
//! price of up to 10 µs of error in their write times.

use braid_proto::{Duration, Instant};

/// Shortest time between two wake-ups of a constant-rate application.
pub const MIN_WAKE_GAP: Duration = Duration::from_micros(10);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Write whatever the send buffer takes.
    #[default]
    Bulk,
    /// Write `message` bytes at a steady `bits_per_sec`.
    ConstantRate { bits_per_sec: u64, message: u64 },
}

impl Source {
    /// How many messages a constant-rate source that started at `start`
    /// has written by `now` (message 0 goes at `start`).
    pub fn messages_due(&self, start: Instant, now: Instant) -> u64 {
        match *self {
            Source::Bulk => 0,
            Source::ConstantRate { bits_per_sec, message } => {
                let ns = u128::from(now.saturating_since(start).as_nanos());
                let per_message = u128::from(message.max(1)) * 8 * 1_000_000_000;
                u64::try_from(ns * u128::from(bits_per_sec) / per_message + 1).unwrap_or(u64::MAX)
            }
        }
    }

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
        // Due by a time: messages 0..=k whose times are at or before it.
        assert_eq!(s.messages_due(t0, t0), 1);
        assert_eq!(s.messages_due(t0, t0 + Duration::from_micros(11_583)), 1);
        assert_eq!(s.messages_due(t0, t0 + Duration::from_micros(11_584)), 2);
        assert_eq!(s.messages_due(t0, t0 + Duration::from_secs(1)), 87);
    }
}
