//! The connection's own timers, one fixed table (quinn-proto's
//! `connection/timer.rs` habit). Per-subflow timers (retransmission,
//! delayed ACK) live in the subflows.

use crate::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// Probe a closed peer window when nothing is in flight (RFC 9293).
    Persist,
    /// A subflow the pacer held back may send again.
    Pacing,
    /// The oldest unacknowledged data has waited a connection-level RTO.
    DataRetransmit,
    /// No subflow has been usable since this deadline's start: give up.
    Failure,
}

const COUNT: usize = 4;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TimerTable([Option<Instant>; COUNT]);

impl TimerTable {
    pub(super) fn set(&mut self, timer: Timer, at: Instant) {
        self.0[timer as usize] = Some(at);
    }
    pub(super) fn stop(&mut self, timer: Timer) {
        self.0[timer as usize] = None;
    }
    pub(super) fn get(&self, timer: Timer) -> Option<Instant> {
        self.0[timer as usize]
    }
    /// Sets `timer` to `at` unless it is already due earlier.
    pub(super) fn set_earliest(&mut self, timer: Timer, at: Instant) {
        let t = &mut self.0[timer as usize];
        *t = Some(t.map_or(at, |cur| cur.min(at)));
    }
    /// True, and stops it, if `timer` is due at `now`.
    pub(super) fn expire(&mut self, timer: Timer, now: Instant) -> bool {
        let due = self.0[timer as usize].is_some_and(|t| t <= now);
        if due {
            self.stop(timer);
        }
        due
    }
    /// The earliest deadline set.
    pub(super) fn next(&self) -> Option<Instant> {
        self.0.iter().flatten().min().copied()
    }
}
