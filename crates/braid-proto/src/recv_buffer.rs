//! Connection-level receive buffer: reassembles the byte stream by data
//! sequence number from whatever subflows carried it, and sets the window.
//!
//! One buffer of fixed capacity holds both in-order bytes the application has
//! not read and out-of-order data. The advertised right edge is
//! `read + capacity`, so the sender can never overrun it (RFC 8684 section
//! 3.3.4: the window is relative to the Data ACK and shared by all subflows).
//!
//! Layout (smoltcp's ring buffer plus assembler, in spirit): the bytes from
//! the application's read position on sit in one deque, each at its offset
//! from `read`, whichever order they arrived in; which ranges above the Data
//! ACK have arrived is kept as a set of disjoint, non-touching intervals.
//! Storing a segment is one copy whatever the arrival order, and memory is
//! bounded by the window, not by the number of segments. The deque is only
//! allocated once a real byte arrives: a synthetic stream (the simulator's
//! bulk transfers) keeps nothing but the intervals and reads as zeros.
//!
//! A peer that leaves a hole between every byte could still make the
//! interval set cost many times the bytes held. Each interval is charged
//! [`INTERVAL_COST`] bytes, and when the intervals alone would cost more than
//! the buffer's capacity the highest ones are forgotten, as Linux's
//! `tcp_prune_ofo_queue` drops the tail of its out-of-order queue (a small
//! buffer may always hold [`MIN_INTERVALS`]). Their
//! data counts as missing again, and the sender's connection-level
//! retransmission timer re-sends it.

use std::collections::VecDeque;

use crate::intervals::Intervals;

/// Bookkeeping charged per out-of-order interval (at most a B-tree slot),
/// for the memory bound.
pub const INTERVAL_COST: u64 = 64;
/// Intervals always allowed, however small the buffer.
const MIN_INTERVALS: u64 = 32;

#[derive(Debug)]
pub struct RecvBuffer {
    capacity: u64,
    /// Next expected DSN: the Data ACK.
    next: u64,
    /// DSN of the next byte the application will read.
    read: u64,
    /// Out-of-order intervals that arrived, start -> end: disjoint, not
    /// touching each other, above `next`.
    ooo: Intervals,
    ooo_bytes: u64,
    /// Byte `read + k` at index `k`, once any real byte arrived; empty while
    /// the stream is synthetic.
    bytes: VecDeque<u8>,
    real: bool,
    /// Out-of-order bytes forgotten to keep bookkeeping bounded.
    pruned_bytes: u64,
}

impl RecvBuffer {
    pub fn new(capacity: u64) -> Self {
        RecvBuffer {
            capacity,
            next: 0,
            read: 0,
            ooo: Intervals::default(),
            ooo_bytes: 0,
            bytes: VecDeque::new(),
            real: false,
            pruned_bytes: 0,
        }
    }

    pub fn data_ack(&self) -> u64 {
        self.next
    }
    pub fn window_end(&self) -> u64 {
        self.read + self.capacity
    }
    pub fn readable(&self) -> u64 {
        self.next - self.read
    }
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }
    /// Out-of-order bytes forgotten to keep bookkeeping bounded.
    pub fn pruned_bytes(&self) -> u64 {
        self.pruned_bytes
    }
    pub fn bytes_read(&self) -> u64 {
        self.read
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Widens the window (autotuning); it never shrinks, so data the peer
    /// already sent stays inside it.
    pub fn grow(&mut self, capacity: u64) {
        self.capacity = self.capacity.max(capacity);
    }

    /// Accepts `len` bytes at `dsn`, real (`payload`, at least `len` long)
    /// or synthetic zeros (`None`); returns how many were new to the
    /// connection (bytes forgotten by pruning count again when they come
    /// back). Bytes outside `[data_ack, window_end)` are discarded.
    pub fn insert(&mut self, dsn: u64, len: u64, payload: Option<&[u8]>) -> u64 {
        let end = dsn.saturating_add(len).min(self.window_end());
        let start = dsn.max(self.next);
        if start >= end {
            return 0;
        }
        if payload.is_some() && !self.real {
            // The first real byte: earlier synthetic bytes become zeros.
            self.real = true;
            let held = self.ooo.last().map_or(self.next, |(_, e)| e);
            reserve_to(&mut self.bytes, self.read, held);
        }
        if start == self.next {
            return self.fill_next(start, end, dsn, payload);
        }
        let (lo, top) = self.ooo.last().unwrap_or((start, self.next));
        if start > top {
            // Above every interval held and touching none: typically the
            // next segment of a subflow ahead of the others.
            if self.ooo.len() as u64 >= self.max_intervals() {
                // It would be the first interval pruned: forget it at once
                // rather than store it (no work for a flood of these).
                self.pruned_bytes += end - start;
                return end - start;
            }
            if self.real {
                store(&mut self.bytes, self.read, start, end, dsn, payload);
            }
            self.ooo.insert(start, end);
            self.ooo_bytes += end - start;
            self.debug_check(start);
            return end - start;
        }
        if start >= lo {
            // Within or extending the highest interval, in place.
            let new = end.saturating_sub(top);
            if new > 0 {
                if self.real {
                    store(&mut self.bytes, self.read, top, end, dsn, payload);
                }
                self.ooo.set_last_end(end);
                self.ooo_bytes += new;
            }
            self.debug_check(lo);
            return new;
        }
        // The intervals this one overlaps or touches start from `lo`; the
        // gaps between them are new.
        let lo = self.ooo.below(start).filter(|&(_, e)| e >= start).map_or(start, |(s, _)| s);
        let mut new = 0;
        let mut cursor = start;
        let gaps = self.ooo.starting_in(lo, end).chain([(end, end)]);
        for (s, e) in gaps {
            if s > cursor {
                let to = s.min(end);
                if self.real {
                    store(&mut self.bytes, self.read, cursor, to, dsn, payload);
                }
                new += to - cursor;
            }
            cursor = cursor.max(e);
        }
        // Everything touched merges into one interval.
        let mut merged = (start, end);
        let ooo_bytes = &mut self.ooo_bytes;
        self.ooo.remove_starting_in(lo, end, |s, e| {
            *ooo_bytes -= e - s;
            merged = (merged.0.min(s), merged.1.max(e));
        });
        if merged.0 == self.next {
            self.next = merged.1;
        } else {
            self.ooo.insert(merged.0, merged.1);
            self.ooo_bytes += merged.1 - merged.0;
        }
        self.prune();
        self.debug_check(merged.0);
        new
    }

    /// Accepts bytes starting at the next expected DSN: they fill the
    /// gaps below the lowest intervals held, which merge into the in-order
    /// data (the slower subflow's segment closing the hole).
    fn fill_next(&mut self, start: u64, end: u64, dsn: u64, payload: Option<&[u8]>) -> u64 {
        let mut new = 0;
        let mut cursor = start;
        let mut next = end;
        while let Some((s, e)) = self.ooo.first().filter(|&(s, _)| s <= end) {
            self.ooo.pop_first();
            self.ooo_bytes -= e - s;
            if s > cursor {
                if self.real {
                    store(&mut self.bytes, self.read, cursor, s, dsn, payload);
                }
                new += s - cursor;
            }
            cursor = cursor.max(e);
            next = next.max(e);
        }
        if cursor < end {
            if self.real {
                store(&mut self.bytes, self.read, cursor, end, dsn, payload);
            }
            new += end - cursor;
        }
        self.next = next;
        self.debug_check(start);
        new
    }

    fn max_intervals(&self) -> u64 {
        (self.capacity / INTERVAL_COST).max(MIN_INTERVALS)
    }

    /// Forgets the highest out-of-order intervals while they cost more than
    /// the buffer holds.
    fn prune(&mut self) {
        let mut dropped = 0;
        while self.ooo.len() as u64 > self.max_intervals() {
            let Some((s, e)) = self.ooo.pop_last() else { break };
            self.ooo_bytes -= e - s;
            dropped += e - s;
        }
        if dropped > 0 && self.real {
            let keep = self.ooo.last().map_or(self.next, |(_, e)| e).max(self.next) - self.read;
            self.bytes.truncate(keep as usize);
        }
        self.pruned_bytes += dropped;
    }

    /// Debug builds check the invariants after every change: intervals
    /// disjoint, not touching, above the Data ACK and inside the window, the
    /// byte count right, and the deque no longer than the window. The scan
    /// covers the intervals around `at` (the one just stored), and all of
    /// them while there are few, so checking stays cheap under floods.
    fn debug_check(&self, at: u64) {
        if !cfg!(debug_assertions) {
            return;
        }
        let few = self.ooo.len() <= 64;
        // From the second interval below `at`.
        let below = |at| self.ooo.below(at).map(|(s, _)| s);
        let from = if few { 0 } else { below(at).and_then(below).unwrap_or(0) };
        let mut prev_end = self.ooo.below(from).map_or(self.next, |(_, e)| e);
        let mut total = 0;
        for (s, e) in self.ooo.starting_in(from, u64::MAX).take(if few { usize::MAX } else { 4 }) {
            debug_assert!(s > prev_end, "interval at {s} touches or overlaps the previous one (ends {prev_end})");
            debug_assert!(e > s, "empty interval at {s}");
            prev_end = e;
            total += e - s;
        }
        if few {
            debug_assert!(prev_end <= self.window_end(), "out-of-order data beyond the window");
            debug_assert_eq!(total, self.ooo_bytes, "out-of-order byte count");
        }
        debug_assert!(self.read <= self.next, "read beyond the Data ACK");
        debug_assert!(self.bytes.len() as u64 <= self.capacity, "deque longer than the window");
        debug_assert!(!self.real || self.bytes.len() as u64 >= self.next - self.read, "in-order bytes missing");
    }

    /// Copies in-order bytes into `buf`; synthetic data reads as zeros.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = (self.readable() as usize).min(buf.len());
        if self.real {
            let (a, b) = self.bytes.as_slices();
            let in_a = a.len().min(n);
            buf[..in_a].copy_from_slice(&a[..in_a]);
            buf[in_a..n].copy_from_slice(&b[..n - in_a]);
        } else {
            buf[..n].fill(0);
        }
        self.advance(n as u64);
        n
    }

    /// Discards up to `max` in-order bytes without copying; returns how many.
    pub fn consume(&mut self, max: u64) -> u64 {
        let n = self.readable().min(max);
        self.advance(n);
        n
    }

    fn advance(&mut self, n: u64) {
        self.read += n;
        if self.real {
            self.bytes.drain(..n as usize);
        }
    }
}

/// Grows `bytes` (which starts at DSN `read`) with zeros to reach DSN `end`.
fn reserve_to(bytes: &mut VecDeque<u8>, read: u64, end: u64) {
    let need = end.saturating_sub(read) as usize;
    if bytes.len() < need {
        bytes.resize(need, 0);
    }
}

/// Copies `[from, to)` of the segment at `dsn` into `bytes` (which starts at
/// DSN `read`); synthetic data (`None`) only makes room, as zeros.
fn store(bytes: &mut VecDeque<u8>, read: u64, from: u64, to: u64, dsn: u64, payload: Option<&[u8]>) {
    reserve_to(bytes, read, to);
    let Some(p) = payload else { return };
    let src = &p[(from - dsn) as usize..(to - dsn) as usize];
    let at = (from - read) as usize;
    let (a, b) = bytes.as_mut_slices();
    let a_len = a.len();
    if at >= a_len {
        b[at - a_len..at - a_len + src.len()].copy_from_slice(src);
    } else {
        let in_a = (a_len - at).min(src.len());
        a[at..at + in_a].copy_from_slice(&src[..in_a]);
        b[..src.len() - in_a].copy_from_slice(&src[in_a..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(range: std::ops::Range<u8>) -> Vec<u8> {
        range.collect()
    }

    fn put(b: &mut RecvBuffer, range: std::ops::Range<u8>) -> u64 {
        let v = bytes(range.clone());
        b.insert(u64::from(range.start), v.len() as u64, Some(&v))
    }

    #[test]
    fn reassembles_out_of_order_and_overlapping_segments() {
        let mut b = RecvBuffer::new(100);
        assert_eq!(put(&mut b, 10..20), 10);
        assert_eq!(b.ooo_bytes(), 10);
        assert_eq!(put(&mut b, 5..15), 5, "only 5..10 is new");
        assert_eq!(b.ooo.len(), 1, "touching runs merge");
        assert_eq!(put(&mut b, 25..30), 5);
        assert_eq!(b.ooo.len(), 2);
        assert_eq!(b.data_ack(), 0);
        assert_eq!(put(&mut b, 0..8), 5);
        assert_eq!(b.data_ack(), 20);
        assert_eq!(b.ooo_bytes(), 5);
        assert_eq!(put(&mut b, 18..26), 5);
        assert_eq!(b.data_ack(), 30);
        assert_eq!(b.ooo_bytes(), 0);
        let mut out = [0u8; 64];
        assert_eq!(b.read(&mut out), 30);
        assert_eq!(&out[..30], &bytes(0..30)[..]);
        assert_eq!(put(&mut b, 3..9), 0, "old duplicate");
    }

    #[test]
    fn window_limits_and_synthetic_data() {
        let mut b = RecvBuffer::new(10);
        assert_eq!(b.insert(0, 15, None), 10, "beyond the window is dropped");
        assert_eq!(b.window_end(), 10);
        assert_eq!(b.consume(4), 4);
        assert_eq!(b.window_end(), 14);
        let mut out = [9u8; 3];
        assert_eq!(b.read(&mut out), 3);
        assert_eq!(out, [0, 0, 0]);
        assert_eq!(b.readable(), 3);
    }

    #[test]
    fn synthetic_then_real_bytes_keep_their_offsets() {
        let mut b = RecvBuffer::new(100);
        b.insert(0, 4, None);
        b.insert(10, 2, Some(b"kl"));
        b.insert(4, 6, Some(b"efghij"));
        let mut out = [9u8; 12];
        assert_eq!(b.read(&mut out), 12);
        assert_eq!(&out, b"\0\0\0\0efghijkl");
    }

    /// A hole between every byte: the intervals' bookkeeping is bounded by
    /// the buffer, the forgotten bytes are not counted as received.
    #[test]
    fn a_hole_between_every_byte_is_pruned_to_the_bound() {
        let mut b = RecvBuffer::new(64 * 1024);
        let mut new = 0;
        for k in 0..32 * 1024u64 {
            new += b.insert(1 + 2 * k, 1, Some(&[7]));
        }
        assert_eq!(b.ooo.len() as u64, 64 * 1024 / INTERVAL_COST);
        assert_eq!(new, 32 * 1024, "every byte was new when it came");
        assert_eq!(b.pruned_bytes(), 32 * 1024 - b.ooo_bytes());
        assert!(b.bytes.len() <= 2 * b.ooo.len() + 1, "the deque shrank with the intervals");
    }

    /// Forgotten segments count in bytes, whole: a flood of 2-byte segments
    /// with holes prunes 2 bytes per segment beyond the bound.
    #[test]
    fn pruned_segments_count_all_their_bytes() {
        let mut b = RecvBuffer::new(64 * 1024);
        let cap = 64 * 1024 / INTERVAL_COST;
        let new: u64 = (0..cap + 10).map(|k| b.insert(1 + 3 * k, 2, Some(&[7, 7]))).sum();
        assert_eq!(new, 2 * (cap + 10), "every byte was new when it came");
        assert_eq!((b.ooo_bytes(), b.pruned_bytes()), (2 * cap, 20));
        // Arriving downwards, the highest intervals are forgotten instead.
        let mut b = RecvBuffer::new(64 * 1024);
        for k in (0..cap + 10).rev() {
            b.insert(1 + 3 * k, 2, Some(&[7, 7]));
        }
        assert_eq!((b.ooo_bytes(), b.pruned_bytes()), (2 * cap, 20));
    }

    /// Growing the buffer (autotuning) moves the window's right edge; it
    /// never shrinks.
    #[test]
    fn growing_moves_the_window_edge_and_never_shrinks() {
        let mut b = RecvBuffer::new(10_000);
        assert_eq!(b.window_end(), 10_000);
        b.grow(30_000);
        assert_eq!((b.capacity(), b.window_end()), (30_000, 30_000));
        b.grow(20_000);
        assert_eq!(b.capacity(), 30_000);
    }

    /// Holes filled from the top down: every new interval lands below the
    /// others, so the bound is kept by forgetting the highest intervals
    /// (those the sender will re-send last), never the lowest.
    #[test]
    fn intervals_arriving_downwards_are_pruned_from_the_top() {
        let mut b = RecvBuffer::new(64 * 1024);
        let cap = 64 * 1024 / INTERVAL_COST;
        // Some data read first, so offsets in the deque start past zero.
        b.insert(0, 1000, Some(&[1; 1000]));
        assert_eq!(b.read(&mut [0; 1000]), 1000);
        for k in (0..2 * cap).rev() {
            b.insert(1001 + 2 * k, 1, Some(&[7]));
        }
        assert_eq!(b.ooo.len() as u64, cap);
        assert_eq!(b.ooo_bytes(), cap);
        assert_eq!(b.pruned_bytes(), cap, "the upper half was forgotten");
        let top = 1000 + 2 * cap;
        assert_eq!(b.ooo.last(), Some((top - 1, top)), "the lowest intervals are kept");
        assert!(b.bytes.len() as u64 <= 2 * cap + 1, "the deque shrank with the intervals");
        // Filling the holes below them delivers the kept bytes intact.
        for k in 0..cap {
            b.insert(1000 + 2 * k, 1, Some(&[5]));
        }
        let mut out = vec![0; 2 * cap as usize];
        assert_eq!(b.read(&mut out), out.len());
        assert!(out.chunks(2).all(|c| c == [5, 7]), "{:?}", &out[..8]);
    }

    proptest::proptest! {
        /// Segments of a random stream arrive in random order, overlapping,
        /// duplicated, the first part synthetic, with reads in between: the
        /// reader gets the stream exactly, every byte is counted new once
        /// (again if it was pruned), and memory stays within the window.
        /// Debug builds also run `debug_check` after every insert.
        #[test]
        fn reassembly_delivers_the_stream_exactly(
            len in 1usize..3000,
            capacity in 64u64..4000,
            cuts in proptest::collection::vec((0usize..3000, 1usize..400, proptest::bool::ANY), 1..200),
            synthetic_prefix in proptest::bool::ANY,
            seed in 0u64..u64::MAX,
        ) {
            let stream: Vec<u8> = (0..len).map(|i| (i as u64).wrapping_mul(seed | 1).to_le_bytes()[3]).collect();
            let zeros = if synthetic_prefix { len / 4 } else { 0 };
            let mut b = RecvBuffer::new(capacity);
            let (mut out, mut new) = (Vec::new(), 0u64);
            let mut send = |b: &mut RecvBuffer, s: usize, e: usize| {
                for (s, e) in [(s, e.min(zeros)), (s.max(zeros), e)] {
                    if s < e {
                        let payload = (s >= zeros).then(|| &stream[s..e]);
                        new += b.insert(s as u64, (e - s) as u64, payload);
                    }
                }
                proptest::prop_assert!(b.bytes.len() as u64 <= b.capacity());
                proptest::prop_assert!(b.ooo_bytes() <= b.capacity());
                Ok(())
            };
            let mut read = |b: &mut RecvBuffer, max: usize| {
                let mut buf = vec![9u8; max];
                let got = b.read(&mut buf);
                out.extend_from_slice(&buf[..got]);
            };
            for (k, &(start, n, read_after)) in cuts.iter().enumerate() {
                let start = start % len;
                send(&mut b, start, (start + n).min(len))?;
                if read_after {
                    read(&mut b, 1 + k % 500);
                }
            }
            // Then the sender re-sends whatever is missing until it is all read.
            for _ in 0..len {
                let from = b.data_ack() as usize;
                if from == len {
                    break;
                }
                send(&mut b, from, (from + 97).min(len))?;
                read(&mut b, len);
            }
            read(&mut b, len);
            proptest::prop_assert_eq!(out.len(), len);
            for (i, &byte) in out.iter().enumerate() {
                let expect = if i < zeros { 0 } else { stream[i] };
                proptest::prop_assert_eq!(byte, expect, "byte {}", i);
            }
            proptest::prop_assert_eq!(new, len as u64 + b.pruned_bytes());
            proptest::prop_assert_eq!(b.ooo_bytes(), 0);
        }
    }
}
