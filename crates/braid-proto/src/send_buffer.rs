//! Connection-level send buffer: bytes the application wrote, from the Data
//! ACK (`una`) to the end of what was written.
//!
//! Real bytes are kept so any subflow can (re)send them. Synthetic writes
//! (length only, used by the simulator's bulk sources) store nothing while
//! no real bytes are buffered, so a bulk transfer costs no copies.

use std::collections::VecDeque;

/// A run of stream bytes: real bytes, or a run of zeros that was written as
/// synthetic data and is never materialised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    Bytes(Vec<u8>),
    Zeros(u64),
}

#[derive(Debug)]
pub struct SendBuffer {
    capacity: u64,
    /// Lowest DSN not yet acknowledged at connection level.
    una: u64,
    /// Next never-sent DSN.
    nxt: u64,
    /// End of written data.
    end: u64,
    /// Bytes `[una, end)` when any real bytes are buffered; empty otherwise.
    bytes: VecDeque<u8>,
}

impl SendBuffer {
    pub fn new(capacity: u64) -> Self {
        SendBuffer { capacity, una: 0, nxt: 0, end: 0, bytes: VecDeque::new() }
    }

    pub fn una(&self) -> u64 {
        self.una
    }
    pub fn nxt(&self) -> u64 {
        self.nxt
    }
    pub fn end(&self) -> u64 {
        self.end
    }
    /// Written but never sent.
    pub fn backlog(&self) -> u64 {
        self.end - self.nxt
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Enlarges the buffer (autotuning); it never shrinks.
    pub fn grow(&mut self, capacity: u64) {
        self.capacity = self.capacity.max(capacity);
    }
    /// Room the application may still write into.
    pub fn room(&self) -> u64 {
        self.capacity.saturating_sub(self.end - self.una)
    }

    /// Buffers as much of `data` as fits; returns the count.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = (self.room() as usize).min(data.len());
        if n == 0 {
            return 0;
        }
        if self.bytes.is_empty() && self.end > self.una {
            // Earlier synthetic bytes become explicit zeros.
            self.bytes.resize((self.end - self.una) as usize, 0);
        }
        self.bytes.extend(&data[..n]);
        self.end += n as u64;
        self.debug_check();
        n
    }

    /// Buffers up to `n` synthetic zero bytes; returns the count.
    pub fn write_zeros(&mut self, n: u64) -> u64 {
        let n = n.min(self.room());
        if !self.bytes.is_empty() {
            self.bytes.resize(self.bytes.len() + n as usize, 0);
        }
        self.end += n;
        n
    }

    /// Takes up to `max` new bytes for sending; returns their DSN and length.
    pub fn take_new(&mut self, max: u64) -> Option<(u64, u32)> {
        let len = max.min(self.backlog()).min(u64::from(u32::MAX)) as u32;
        (len > 0).then(|| {
            let dsn = self.nxt;
            self.nxt += u64::from(len);
            (dsn, len)
        })
    }

    /// Debug builds check that the buffered bytes line up with the DSNs:
    /// `[una, end)` exactly, and that `una <= nxt <= end`.
    fn debug_check(&self) {
        debug_assert!(self.una <= self.nxt && self.nxt <= self.end, "{} <= {} <= {}", self.una, self.nxt, self.end);
        debug_assert!(
            self.bytes.is_empty() || self.bytes.len() as u64 == self.end - self.una,
            "{} bytes buffered for DSNs [{}, {})",
            self.bytes.len(),
            self.una,
            self.end
        );
    }

    /// The payload of `[dsn, dsn+len)`, which must not be acknowledged yet.
    pub fn payload(&self, dsn: u64, len: u32) -> Chunk {
        debug_assert!(dsn >= self.una && dsn + u64::from(len) <= self.nxt, "payload of [{dsn}, +{len}) not in flight");
        if self.bytes.is_empty() {
            return Chunk::Zeros(u64::from(len));
        }
        let from = (dsn - self.una) as usize;
        Chunk::Bytes(self.bytes.range(from..from + len as usize).copied().collect())
    }

    /// Processes a Data ACK; returns the newly acknowledged byte count.
    /// Acknowledgements beyond what was sent are ignored as invalid.
    pub fn on_data_ack(&mut self, data_ack: u64) -> u64 {
        if data_ack <= self.una || data_ack > self.nxt {
            return 0;
        }
        let n = data_ack - self.una;
        if !self.bytes.is_empty() {
            self.bytes.drain(..n as usize);
        }
        self.una = data_ack;
        self.debug_check();
        n
    }

    /// The part of `[dsn, dsn+len)` not yet acknowledged at connection
    /// level, or `None` when all of it is. A Data ACK may land inside a
    /// queued segment; only its tail still needs sending.
    pub fn unacked_part(&self, dsn: u64, len: u32) -> Option<(u64, u32)> {
        let end = dsn + u64::from(len);
        (end > self.una).then(|| {
            let start = dsn.max(self.una);
            (start, (end - start) as u32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_send_ack_cycle_keeps_real_bytes() {
        let mut b = SendBuffer::new(8);
        assert_eq!(b.write(b"hello world"), 8);
        assert_eq!(b.take_new(5), Some((0, 5)));
        assert_eq!(b.payload(2, 3), Chunk::Bytes(b"llo".to_vec()));
        assert_eq!(b.on_data_ack(9), 0, "beyond what was sent");
        assert_eq!(b.on_data_ack(3), 3);
        assert_eq!(b.room(), 3);
        assert_eq!(b.payload(3, 2), Chunk::Bytes(b"lo".to_vec()));
        assert_eq!(b.unacked_part(0, 3), None);
        assert_eq!(b.unacked_part(2, 2), Some((3, 1)), "only the unacknowledged tail");
        assert_eq!(b.unacked_part(3, 2), Some((3, 2)));
    }

    #[test]
    fn synthetic_then_real_bytes_line_up() {
        let mut b = SendBuffer::new(100);
        assert_eq!(b.write_zeros(4), 4);
        assert_eq!(b.take_new(4), Some((0, 4)));
        assert_eq!(b.payload(0, 4), Chunk::Zeros(4));
        b.write(b"ab");
        assert_eq!(b.take_new(10), Some((4, 2)));
        assert_eq!(b.payload(3, 3), Chunk::Bytes(vec![0, b'a', b'b']));
    }

    /// Zeros and real bytes interleave at the right DSNs, also when the
    /// first real write follows acknowledged synthetic bytes.
    #[test]
    fn zeros_after_real_bytes_and_real_bytes_after_acknowledged_zeros() {
        let mut b = SendBuffer::new(100);
        b.write_zeros(10);
        b.take_new(10);
        assert_eq!(b.on_data_ack(6), 6);
        b.write(b"ab");
        b.write_zeros(3);
        b.write(b"c");
        assert_eq!(b.take_new(10), Some((10, 6)));
        assert_eq!(b.payload(8, 8), Chunk::Bytes(vec![0, 0, b'a', b'b', 0, 0, 0, b'c']));
        assert_eq!(b.take_new(10), None, "nothing left to take");
    }
}
