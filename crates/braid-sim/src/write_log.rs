//! When each byte of a flow's stream was written, so that the reader can
//! time it from write to read.
//!
//! One entry per write not yet read out. A bulk sender writes once per ACK
//! that frees room, so its log holds an entry for every few packets in its
//! send buffer and in flight: with 16-byte entries (stream end, time) that
//! was half of a flow's memory in `braid bench` (32 KB a flow at 1,000
//! flows, heaptrack). Here an entry is 8 bytes: the write's length and its
//! time since the write before, 32 bits each. A longer write takes more
//! entries at the same time, and a longer pause empty entries that only
//! move time on, so nothing is rounded.

use std::collections::VecDeque;

use braid_proto::prefetch::prefetch;
use braid_proto::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Write {
    /// Bytes of this write not yet read.
    bytes: u32,
    /// Nanoseconds since the write before (the last one read out, for the
    /// first entry).
    gap: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct WriteLog {
    writes: VecDeque<Write>,
    /// Time of the last write read out completely: the first entry's gap
    /// counts from it.
    read_time: Instant,
    /// Time of the last entry (`read_time` when there is none).
    last_time: Instant,
}

impl WriteLog {
    /// The application wrote `bytes` more at `now` (not before the last
    /// write). Writes at one instant share an entry.
    pub(crate) fn wrote(&mut self, bytes: u64, now: Instant) {
        if bytes == 0 {
            return;
        }
        let small = u32::try_from(bytes).ok();
        if now == self.last_time {
            if let Some(last) = self.writes.back_mut() {
                if let Some(sum) = small.and_then(|b| last.bytes.checked_add(b)) {
                    last.bytes = sum;
                    return;
                }
            }
        }
        match (small, u32::try_from(now.saturating_since(self.last_time).as_nanos())) {
            (Some(bytes), Ok(gap)) if now != self.last_time || self.writes.is_empty() => {
                self.writes.push_back(Write { bytes, gap });
                self.last_time = now;
            }
            _ => self.wrote_in_parts(bytes, now),
        }
    }

    /// [`WriteLog::wrote`] for a write or a pause too long for one entry.
    #[cold]
    fn wrote_in_parts(&mut self, mut bytes: u64, now: Instant) {
        if now == self.last_time {
            if let Some(last) = self.writes.back_mut() {
                let joined = bytes.min(u64::from(u32::MAX - last.bytes));
                last.bytes += joined as u32;
                bytes -= joined;
            }
        }
        let mut gap = now.saturating_since(self.last_time).as_nanos();
        self.last_time = now;
        while bytes > 0 {
            let step = Write { bytes: bytes.min(u64::from(u32::MAX)) as u32, gap: gap.min(u64::from(u32::MAX)) as u32 };
            // A gap too long for one entry moves time on first, empty-handed.
            let step = if u64::from(step.gap) < gap { Write { bytes: 0, ..step } } else { step };
            self.writes.push_back(step);
            bytes -= u64::from(step.bytes);
            gap -= u64::from(step.gap);
        }
    }

    /// The application read `bytes` more, in order: `each` gets their
    /// write times, oldest first, with how many bytes each one covers
    /// (none, for an entry that only moves time on). Bytes beyond what was
    /// logged are not timed.
    pub(crate) fn read(&mut self, mut bytes: u64, mut each: impl FnMut(Instant, u64)) {
        while bytes > 0 {
            let Some(first) = self.writes.front_mut() else { return };
            let written_at = self.read_time + Duration::from_nanos(u64::from(first.gap));
            if bytes < u64::from(first.bytes) {
                first.bytes -= bytes as u32;
                return each(written_at, bytes);
            }
            bytes -= u64::from(first.bytes);
            each(written_at, u64::from(first.bytes));
            self.read_time = written_at;
            self.writes.pop_front();
        }
    }

    /// Asks the cache for the entries the next write and read use.
    pub(crate) fn prefetch(&self) {
        for entry in [self.writes.front(), self.writes.back()].into_iter().flatten() {
            prefetch(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The log as it was: (end of the written stream, write time) per write.
    #[derive(Default)]
    struct Model {
        log: VecDeque<(u64, Instant)>,
        written: u64,
        read: u64,
    }

    impl Model {
        fn wrote(&mut self, bytes: u64, now: Instant) {
            self.written += bytes;
            match self.log.back_mut() {
                Some((end, t)) if *t == now => *end = self.written,
                _ => self.log.push_back((self.written, now)),
            }
        }

        fn read(&mut self, bytes: u64, out: &mut Vec<(Instant, u64)>) {
            let (mut from, to) = (self.read, self.read + bytes);
            while from < to {
                let Some(&(end, written_at)) = self.log.front() else { break };
                let upto = end.min(to);
                out.push((written_at, upto - from));
                from = upto;
                if end <= to {
                    self.log.pop_front();
                }
            }
            self.read = to;
        }
    }

    /// Byte counts per write time, merging neighbours at one time (the
    /// log may split a write the model keeps whole) and dropping empty ones.
    fn merged(records: &[(Instant, u64)]) -> Vec<(Instant, u64)> {
        let mut out: Vec<(Instant, u64)> = Vec::new();
        for &(t, b) in records.iter().filter(|r| r.1 > 0) {
            match out.last_mut() {
                Some(last) if last.0 == t => last.1 += b,
                _ => out.push((t, b)),
            }
        }
        out
    }

    /// Random writes and reads, with pauses and write sizes now and then
    /// beyond 32 bits: the log times every byte as the 16-byte log did.
    #[test]
    fn times_every_byte_as_the_wide_log() {
        for seed in 0..300 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (mut log, mut model) = (WriteLog::default(), Model::default());
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut now = Instant::ZERO;
            for _ in 0..400 {
                now += Duration::from_nanos(match rng.gen_range(0..10) {
                    0..=3 => 0,
                    4..=7 => rng.gen_range(1..50_000_000),
                    8 => rng.gen_range(4_000_000_000..20_000_000_000),
                    _ => u64::from(u32::MAX) + rng.gen_range(0..2),
                });
                let bytes = match rng.gen_range(0..20) {
                    0 => 0,
                    1 => rng.gen_range(4_000_000_000..10_000_000_000),
                    _ => rng.gen_range(1..100_000),
                };
                log.wrote(bytes, now);
                model.wrote(bytes, now);
                let unread = model.written - model.read;
                let bytes = match rng.gen_range(0..3) {
                    0 => 0,
                    1 => unread,
                    _ => rng.gen_range(0..=unread),
                };
                log.read(bytes, |t, b| got.push((t, b)));
                model.read(bytes, &mut want);
            }
            assert_eq!(merged(&got), merged(&want), "seed {seed}");
        }
    }

    #[test]
    fn an_entry_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Write>(), 8);
    }

    #[test]
    fn a_long_pause_and_a_long_write_are_exact() {
        let mut log = WriteLog::default();
        let late = Instant::ZERO + Duration::from_secs(30);
        log.wrote(5_000_000_000, late);
        let mut got = Vec::new();
        log.read(u64::MAX, |t, b| got.push((t, b)));
        assert_eq!(merged(&got), [(late, 5_000_000_000)]);
    }
}
