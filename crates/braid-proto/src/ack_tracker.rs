//! Receiver side of one subflow: which packet numbers arrived, and when to
//! acknowledge them.
//!
//! Delayed ACKs follow RFC 1122/5681 as Linux applies them: acknowledge every
//! `ack_every`-th packet, or after `max_ack_delay`, and at once when a packet
//! arrives out of order, fills a hole, or is a duplicate (so the sender's
//! loss detection is not slowed down).
//!
//! Quick-ack mode (Linux's `tcp_incr_quickack`, called from
//! `tcp_event_data_recv`): when a subflow starts receiving, and when a
//! packet arrives after a silence longer than the RTO, the next
//! `quickacks` acknowledgements go out at once. A sender whose subflow
//! carries a lone segment now and then (a scheduler's second choice) then
//! measures its RTT rather than the delayed-ACK timer. Deviations: Linux
//! enters the mode on the first data segment and sizes it by the initial
//! receive window (`rcv_wnd / (2 MSS)`, at most 16); Braid enters it on the
//! subflow's opening probe and always grants `quickacks`.

use crate::packet::MAX_SACK_BLOCKS;
use crate::time::{Duration, Instant};

/// Most received ranges remembered above the cumulative point.
const MAX_RANGES: usize = 256;

/// When to acknowledge (from the connection's `Config`).
#[derive(Clone, Copy, Debug)]
pub struct AckPolicy {
    /// Acknowledge every this many packets (1: no delayed ACKs).
    pub every: u32,
    /// Longest an acknowledgement waits.
    pub max_delay: Duration,
    /// Acknowledgements sent at once in quick-ack mode (0: never).
    pub quickacks: u32,
    /// A silence longer than this re-enters quick-ack mode (the RTO).
    pub idle: Duration,
}

#[derive(Clone, Debug, Default)]
pub struct AckTracker {
    /// All packet numbers below this have arrived.
    cumulative: u64,
    /// Arrived ranges `[start, end)` above `cumulative`, ascending, disjoint,
    /// not adjacent to each other or to `cumulative`.
    ranges: Vec<(u64, u64)>,
    /// Most recently arrived packet number, for the first SACK block.
    last_pn: u64,
    unacked: u32,
    deadline: Option<Instant>,
    immediate: bool,
    /// Quick acknowledgements left, and when the last packet arrived.
    quick: u32,
    last_arrival: Option<Instant>,
}

impl AckTracker {
    /// Records `pn`, after moving the cumulative point up to the sender's
    /// `floor`; returns false if `pn` was a duplicate.
    pub fn on_packet(&mut self, now: Instant, pn: u64, floor: u64, policy: &AckPolicy) -> bool {
        if policy.quickacks > 0 {
            if self.last_arrival.is_none_or(|t| now.saturating_since(t) > policy.idle) {
                self.quick = policy.quickacks;
            }
            self.last_arrival = Some(now);
        }
        self.advance_floor(floor);
        self.last_pn = pn;
        let fresh = self.insert(pn);
        self.unacked += 1;
        if !fresh || !self.ranges.is_empty() || self.unacked >= policy.every.max(1) || self.quick > 0 {
            self.immediate = true;
        } else if self.deadline.is_none() {
            self.deadline = Some(now + policy.max_delay);
        }
        fresh
    }

    /// Packet numbers below `floor` will never be sent again: stop waiting.
    fn advance_floor(&mut self, floor: u64) {
        if floor <= self.cumulative {
            return;
        }
        self.cumulative = floor;
        let keep = self.ranges.partition_point(|&(_, end)| end <= floor);
        self.ranges.drain(..keep);
        if let Some(&(start, end)) = self.ranges.first() {
            if start <= self.cumulative {
                self.cumulative = end;
                self.ranges.remove(0);
            }
        }
    }

    fn insert(&mut self, pn: u64) -> bool {
        if pn < self.cumulative {
            return false;
        }
        if pn == self.cumulative {
            self.cumulative += 1;
            if let Some(&(start, end)) = self.ranges.first() {
                if start == self.cumulative {
                    self.cumulative = end;
                    self.ranges.remove(0);
                    // Filling a hole is acknowledged at once.
                    self.immediate = true;
                }
            }
            return true;
        }
        if self.ranges.len() >= MAX_RANGES {
            // A sender never leaves this many holes; a hostile one might.
            // Forget the lowest range: at worst it is re-sent.
            self.ranges.remove(0);
        }
        // Index of the first range that ends at or after pn.
        let i = self.ranges.partition_point(|&(_, end)| end < pn);
        match self.ranges.get(i).copied() {
            Some((start, end)) if start <= pn && pn < end => return false,
            // The range before `i` ends below `pn`, so extending range `i`
            // downwards never joins it.
            Some((start, _)) if start == pn + 1 => self.ranges[i].0 = pn,
            Some((_, end)) if end == pn => {
                self.ranges[i].1 = pn + 1;
                self.merge_with_next(i);
            }
            _ => self.ranges.insert(i, (pn, pn + 1)),
        }
        true
    }

    fn merge_with_next(&mut self, i: usize) {
        if i + 1 < self.ranges.len() && self.ranges[i].1 == self.ranges[i + 1].0 {
            self.ranges[i].1 = self.ranges[i + 1].1;
            self.ranges.remove(i + 1);
        }
    }

    /// True when an acknowledgement should go out now.
    pub fn ack_due(&self, now: Instant) -> bool {
        self.immediate || self.deadline.is_some_and(|d| d <= now)
    }

    /// Asks for an acknowledgement at the next transmit opportunity.
    pub fn request_immediate(&mut self) {
        self.immediate = true;
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Cumulative point and SACK blocks (the most recent first, then the
    /// highest), and resets the delayed-ACK state.
    pub fn take_ack(&mut self) -> (u64, [(u64, u64); MAX_SACK_BLOCKS], u8) {
        self.unacked = 0;
        self.quick = self.quick.saturating_sub(1);
        self.deadline = None;
        self.immediate = false;
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        let recent = self.ranges.iter().position(|&(s, e)| s <= self.last_pn && self.last_pn < e);
        if let Some(r) = recent {
            blocks[0] = self.ranges[r];
            n = 1;
        }
        for (i, &range) in self.ranges.iter().enumerate().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if Some(i) != recent {
                blocks[n] = range;
                n += 1;
            }
        }
        (self.cumulative, blocks, n as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Duration = Duration::from_millis(40);
    /// Delayed ACKs without quick-ack mode.
    const P: AckPolicy = AckPolicy { every: 2, max_delay: D, quickacks: 0, idle: Duration::from_secs(1) };

    #[test]
    fn in_order_packets_are_acked_every_second_or_after_delay() {
        let mut t = AckTracker::default();
        let now = Instant::ZERO;
        assert!(t.on_packet(now, 0, 0, &P));
        assert!(!t.ack_due(now));
        assert!(t.ack_due(now + D));
        assert!(t.on_packet(now, 1, 0, &P));
        assert!(t.ack_due(now));
        let (cum, _, n) = t.take_ack();
        assert_eq!((cum, n), (2, 0));
        assert!(!t.ack_due(now));
    }

    /// Linux's quick-ack mode: the first `quickacks` packets are
    /// acknowledged one by one, then every second; after a silence longer
    /// than the RTO, quick again.
    #[test]
    fn quick_acks_at_the_start_and_after_idle() {
        let policy = AckPolicy { quickacks: 3, ..P };
        let mut t = AckTracker::default();
        let mut now = Instant::ZERO;
        let mut pn = 0;
        let mut arrive = |t: &mut AckTracker, at: Instant| {
            t.on_packet(at, pn, 0, &policy);
            pn += 1;
            let due = t.ack_due(at);
            if due {
                t.take_ack();
            }
            due
        };
        let start: Vec<bool> = (0..7).map(|_| arrive(&mut t, now)).collect();
        assert_eq!(start, [true, true, true, false, true, false, true]);
        // A silence of exactly the RTO is not idle; a longer one is.
        now += Duration::from_secs(1);
        assert!(!arrive(&mut t, now));
        assert!(arrive(&mut t, now));
        now += Duration::from_millis(1001);
        let after: Vec<bool> = (0..5).map(|_| arrive(&mut t, now)).collect();
        assert_eq!(after, [true, true, true, false, true]);
    }

    #[test]
    fn holes_produce_sack_blocks_and_immediate_acks() {
        let mut t = AckTracker::default();
        let now = Instant::ZERO;
        for pn in [0, 2, 3, 6, 4] {
            t.on_packet(now, pn, 0, &P);
        }
        assert!(t.ack_due(now));
        let (cum, blocks, n) = t.take_ack();
        assert_eq!(cum, 1);
        assert_eq!(&blocks[..n as usize], &[(2, 5), (6, 7)]);
        assert!(!t.on_packet(now, 3, 0, &P), "duplicate");
        t.on_packet(now, 1, 0, &P);
        t.on_packet(now, 5, 0, &P);
        let (cum, _, n) = t.take_ack();
        assert_eq!((cum, n), (7, 0));
    }

    #[test]
    fn sender_floor_closes_holes_that_will_never_fill() {
        let mut t = AckTracker::default();
        let now = Instant::ZERO;
        for pn in [0, 2, 3, 5, 6] {
            t.on_packet(now, pn, 0, &P);
        }
        // Packet 1 was lost and its data re-sent as packet 7; the sender now
        // waits for nothing below 4.
        t.on_packet(now, 7, 4, &P);
        let (cum, blocks, n) = t.take_ack();
        assert_eq!((cum, n), (4, 1));
        assert_eq!(blocks[0], (5, 8));
        t.on_packet(now, 8, 5, &P);
        let (cum, _, n) = t.take_ack();
        assert_eq!((cum, n), (9, 0));
    }

    proptest::proptest! {
        /// Against a model (the set of packet numbers that arrived, with
        /// everything below the sender's floor counted as arrived): the
        /// cumulative point is the first missing number, the SACK blocks are
        /// maximal runs above it (the most recent arrival's run first, then
        /// the highest), duplicates are reported, and an ACK is due at once
        /// whenever a hole is open.
        #[test]
        fn acknowledgements_match_a_model(
            arrivals in proptest::collection::vec((0u64..120, 0u64..8), 1..150),
        ) {
            let mut t = AckTracker::default();
            let mut seen = std::collections::BTreeSet::new();
            let mut floor = 0;
            for (pn, raise) in arrivals {
                // Each packet carries a floor no higher than its own number;
                // reordered packets may carry older, lower floors.
                let carried = (floor + raise / 7).min(pn);
                floor = floor.max(carried);
                let arrived_before = pn < floor || seen.contains(&pn);
                seen.insert(pn);
                let fresh = t.on_packet(Instant::ZERO, pn, carried, &P);
                proptest::prop_assert_eq!(fresh, !arrived_before);
                let mut cum = floor;
                while seen.contains(&cum) {
                    cum += 1;
                }
                let mut runs: Vec<(u64, u64)> = Vec::new();
                for &n in seen.range(cum..) {
                    match runs.last_mut() {
                        Some(r) if r.1 == n => r.1 += 1,
                        _ => runs.push((n, n + 1)),
                    }
                }
                if !runs.is_empty() {
                    proptest::prop_assert!(t.ack_due(Instant::ZERO), "a hole is open");
                }
                let recent = runs.iter().position(|&(a, b)| a <= pn && pn < b);
                let mut want: Vec<(u64, u64)> = recent.map(|r| runs[r]).into_iter().collect();
                want.extend(runs.iter().enumerate().rev().filter(|&(i, _)| Some(i) != recent).map(|(_, &r)| r));
                // Three blocks, as TCP carries beside timestamps (RFC 2018).
                want.truncate(3);
                let (c, blocks, n) = t.take_ack();
                proptest::prop_assert_eq!(c, cum);
                proptest::prop_assert_eq!(&blocks[..n as usize], &want[..]);
            }
        }
    }
}
