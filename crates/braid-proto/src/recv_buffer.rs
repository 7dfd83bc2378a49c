//! Connection-level receive buffer: reassembles the byte stream by data
//! sequence number from whatever subflows carried it, and sets the window.
//!
//! One buffer of fixed capacity holds both in-order bytes the application has
//! not read and out-of-order segments. The advertised right edge is
//! `read + capacity`, so the sender can never overrun it (RFC 8684 section
//! 3.3.4: the window is relative to the Data ACK and shared by all subflows).

use std::collections::{BTreeMap, VecDeque};

/// A run of stream bytes: real bytes, or a run of zeros that was written as
/// synthetic data and is never materialised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    Bytes(Vec<u8>),
    Zeros(u64),
}

impl Chunk {
    pub fn len(&self) -> u64 {
        match self {
            Chunk::Bytes(b) => b.len() as u64,
            Chunk::Zeros(n) => *n,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The part `[from, to)` of this chunk, offsets relative to its start.
    fn slice(&self, from: u64, to: u64) -> Chunk {
        match self {
            Chunk::Bytes(b) => Chunk::Bytes(b[from as usize..to as usize].to_vec()),
            Chunk::Zeros(_) => Chunk::Zeros(to - from),
        }
    }
}

#[derive(Debug)]
pub struct RecvBuffer {
    capacity: u64,
    /// Next expected DSN: the Data ACK.
    next: u64,
    /// DSN of the next byte the application will read.
    read: u64,
    ready: VecDeque<Chunk>,
    /// Offset already consumed within `ready.front()`.
    front_offset: u64,
    /// Out-of-order segments by starting DSN; disjoint.
    ooo: BTreeMap<u64, Chunk>,
    ooo_bytes: u64,
}

impl RecvBuffer {
    pub fn new(capacity: u64) -> Self {
        RecvBuffer {
            capacity,
            next: 0,
            read: 0,
            ready: VecDeque::new(),
            front_offset: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
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

    /// Accepts a segment at `dsn`; returns how many bytes were new to the
    /// connection. Bytes outside `[data_ack, window_end)` are discarded.
    pub fn insert(&mut self, dsn: u64, chunk: Chunk) -> u64 {
        let end = dsn.saturating_add(chunk.len()).min(self.window_end());
        let start = dsn.max(self.next);
        if start >= end {
            return 0;
        }
        let chunk = if start == dsn && end == dsn + chunk.len() { chunk } else { chunk.slice(start - dsn, end - dsn) };
        if start == self.next {
            self.deliver(start, chunk)
        } else {
            self.store_out_of_order(start, chunk)
        }
    }

    /// Appends in-order bytes, then any out-of-order segments they reach.
    fn deliver(&mut self, start: u64, chunk: Chunk) -> u64 {
        let end = start + chunk.len();
        // Out-of-order bytes this segment overlaps were already counted as new.
        let mut covered = 0;
        while let Some(entry) = self.ooo.first_entry() {
            let s = *entry.key();
            if s >= end {
                break;
            }
            let c = entry.remove();
            let e = s + c.len();
            self.ooo_bytes -= c.len();
            covered += e.min(end) - s;
            if e > end {
                self.put(end, c.slice(end - s, e - s));
            }
        }
        self.push_ready(chunk);
        self.next = end;
        self.drain_ooo();
        end - start - covered
    }

    /// Moves out-of-order segments that now start at `next` into `ready`.
    fn drain_ooo(&mut self) {
        while let Some(entry) = self.ooo.first_entry() {
            if *entry.key() != self.next {
                break;
            }
            let c = entry.remove();
            self.ooo_bytes -= c.len();
            self.next += c.len();
            self.push_ready(c);
        }
    }

    fn push_ready(&mut self, chunk: Chunk) {
        match (self.ready.back_mut(), chunk) {
            (Some(Chunk::Zeros(n)), Chunk::Zeros(m)) => *n += m,
            (_, c) if c.is_empty() => {}
            (_, c) => self.ready.push_back(c),
        }
    }

    /// Stores the parts of `[start, start+len)` not already held.
    fn store_out_of_order(&mut self, start: u64, chunk: Chunk) -> u64 {
        let end = start + chunk.len();
        let mut cursor = start;
        let mut new = 0;
        // Segments overlapping [start, end): the one starting before, and those inside.
        let before = self.ooo.range(..start).next_back().map(|(&s, c)| (s, s + c.len()));
        if let Some((_, e)) = before {
            cursor = cursor.max(e);
        }
        let inside: Vec<(u64, u64)> = self.ooo.range(start..end).map(|(&s, c)| (s, s + c.len())).collect();
        for (s, e) in inside {
            if cursor < s {
                new += self.put(cursor, chunk.slice(cursor - start, s - start));
            }
            cursor = cursor.max(e);
        }
        if cursor < end {
            new += self.put(cursor, if cursor == start { chunk } else { chunk.slice(cursor - start, end - start) });
        }
        new
    }

    fn put(&mut self, at: u64, chunk: Chunk) -> u64 {
        let n = chunk.len();
        self.ooo_bytes += n;
        self.ooo.insert(at, chunk);
        n
    }

    /// Copies in-order bytes into `buf`; synthetic data reads as zeros.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while done < buf.len() {
            let Some(front) = self.ready.front() else { break };
            let avail = front.len() - self.front_offset;
            let n = avail.min((buf.len() - done) as u64);
            let dst = &mut buf[done..done + n as usize];
            match front {
                Chunk::Bytes(b) => {
                    dst.copy_from_slice(&b[self.front_offset as usize..(self.front_offset + n) as usize])
                }
                Chunk::Zeros(_) => dst.fill(0),
            }
            done += n as usize;
            self.advance(n);
        }
        done
    }

    /// Discards up to `max` in-order bytes without copying; returns how many.
    pub fn consume(&mut self, max: u64) -> u64 {
        let mut done = 0;
        while done < max {
            let Some(front) = self.ready.front() else { break };
            let n = (front.len() - self.front_offset).min(max - done);
            done += n;
            self.advance(n);
        }
        done
    }

    fn advance(&mut self, n: u64) {
        self.read += n;
        self.front_offset += n;
        if self.ready.front().is_some_and(|f| self.front_offset >= f.len()) {
            self.ready.pop_front();
            self.front_offset = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(range: std::ops::Range<u8>) -> Chunk {
        Chunk::Bytes(range.collect())
    }

    #[test]
    fn reassembles_out_of_order_and_overlapping_segments() {
        let mut b = RecvBuffer::new(100);
        assert_eq!(b.insert(10, bytes(10..20)), 10);
        assert_eq!(b.ooo_bytes(), 10);
        assert_eq!(b.insert(5, bytes(5..15)), 5, "only 5..10 is new");
        assert_eq!(b.insert(25, bytes(25..30)), 5);
        assert_eq!(b.data_ack(), 0);
        assert_eq!(b.insert(0, bytes(0..8)), 5);
        assert_eq!(b.data_ack(), 20);
        assert_eq!(b.ooo_bytes(), 5);
        assert_eq!(b.insert(18, bytes(18..26)), 5);
        assert_eq!(b.data_ack(), 30);
        assert_eq!(b.ooo_bytes(), 0);
        let mut out = [0u8; 64];
        assert_eq!(b.read(&mut out), 30);
        assert_eq!(&out[..30], &(0..30).collect::<Vec<u8>>()[..]);
        assert_eq!(b.insert(3, bytes(3..9)), 0, "old duplicate");
    }

    #[test]
    fn window_limits_and_synthetic_data() {
        let mut b = RecvBuffer::new(10);
        assert_eq!(b.insert(0, Chunk::Zeros(15)), 10, "beyond the window is dropped");
        assert_eq!(b.window_end(), 10);
        assert_eq!(b.consume(4), 4);
        assert_eq!(b.window_end(), 14);
        let mut out = [9u8; 3];
        assert_eq!(b.read(&mut out), 3);
        assert_eq!(out, [0, 0, 0]);
        assert_eq!(b.readable(), 3);
    }
}
