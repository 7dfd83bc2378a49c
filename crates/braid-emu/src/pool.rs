//! Packet buffers, reused: the hot path allocates nothing once the pool has
//! grown to the number of packets in flight.
//!
//! A TUN read needs room for a 64 KiB super-packet, but most packets (ACKs)
//! are tiny, and a link with a long delay holds thousands of them. So a
//! packet that turns out small is copied into a small buffer and its large
//! one goes straight back to the pool. A packet can be cut into several
//! runs of segments that travel separately, so buffers are reference
//! counted by the runs that point at them.

use crate::packet::{Meta, PacketError, MAX_PACKET};

/// Packets up to this size (vnet header included) live in small buffers.
const SMALL: usize = 2048;

struct Slot {
    data: Box<[u8]>,
    len: usize,
    meta: Option<Meta>,
    refs: u32,
}

/// A set of buffers addressed by index.
#[derive(Default)]
pub struct Pool {
    slots: Vec<Slot>,
    free_large: Vec<u32>,
    free_small: Vec<u32>,
}

impl Pool {
    fn take(&mut self, large: bool) -> u32 {
        let free = if large { &mut self.free_large } else { &mut self.free_small };
        if let Some(id) = free.pop() {
            return id;
        }
        let size = if large { MAX_PACKET } else { SMALL };
        self.slots.push(Slot { data: vec![0; size].into_boxed_slice(), len: 0, meta: None, refs: 0 });
        (self.slots.len() - 1) as u32
    }

    /// A large buffer to read a packet into; give it back with [`Pool::commit`]
    /// (or [`Pool::discard`] if the read failed).
    pub fn reserve(&mut self) -> (u32, &mut [u8]) {
        let id = self.take(true);
        (id, &mut self.slots[id as usize].data[..])
    }

    /// Returns an unused reserved buffer.
    pub fn discard(&mut self, id: u32) {
        self.free_large.push(id);
    }

    /// Records that `len` bytes were read into reserved buffer `id` and
    /// parses them; returns the buffer now holding the packet (a small one
    /// if it fits) with one reference, or frees it if the packet is invalid.
    pub fn commit(&mut self, id: u32, len: usize) -> Result<u32, PacketError> {
        let parsed = Meta::parse(&self.slots[id as usize].data[..len]);
        let meta = match parsed {
            Ok(m) => m,
            Err(e) => {
                self.discard(id);
                return Err(e);
            }
        };
        let id = if len <= SMALL {
            let small = self.take(false);
            let (a, b) = (id.min(small) as usize, id.max(small) as usize);
            let (lo, hi) = self.slots.split_at_mut(b);
            let (from, to) = if id < small { (&lo[a], &mut hi[0]) } else { (&hi[0], &mut lo[a]) };
            to.data[..len].copy_from_slice(&from.data[..len]);
            self.free_large.push(id);
            small
        } else {
            id
        };
        let slot = &mut self.slots[id as usize];
        slot.len = len;
        slot.meta = Some(meta);
        slot.refs = 1;
        Ok(id)
    }

    pub fn bytes(&self, id: u32) -> &[u8] {
        let s = &self.slots[id as usize];
        &s.data[..s.len]
    }

    pub fn meta(&self, id: u32) -> &Meta {
        self.slots[id as usize].meta.as_ref().expect("committed buffer has its metadata")
    }

    /// One more run points at buffer `id`.
    pub fn retain(&mut self, id: u32) {
        self.slots[id as usize].refs += 1;
    }

    /// A run pointing at buffer `id` is gone; the last one frees it.
    pub fn release(&mut self, id: u32) {
        let s = &mut self.slots[id as usize];
        s.refs -= 1;
        if s.refs == 0 {
            s.meta = None;
            if s.data.len() == SMALL {
                self.free_small.push(id);
            } else {
                self.free_large.push(id);
            }
        }
    }

    /// Buffers allocated so far (a measure of the pool's high-water mark).
    pub fn allocated(&self) -> usize {
        self.slots.len()
    }

    /// Buffers holding packets right now.
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free_large.len() - self.free_small.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::super_packet;

    fn load(pool: &mut Pool, pkt: &[u8]) -> Result<u32, PacketError> {
        let (id, buf) = pool.reserve();
        buf[..pkt.len()].copy_from_slice(pkt);
        pool.commit(id, pkt.len())
    }

    #[test]
    fn small_packets_move_to_small_buffers_and_buffers_are_reused() {
        let mut pool = Pool::default();
        let small = super_packet(100, 1448, 0);
        let large = super_packet(20_000, 1448, 0);
        let a = load(&mut pool, &small).unwrap();
        let b = load(&mut pool, &large).unwrap();
        assert_eq!(pool.bytes(a), &small[..]);
        assert_eq!(pool.bytes(b), &large[..]);
        assert_eq!(pool.meta(b).segments, 14);
        assert_eq!(pool.in_use(), 2);
        pool.retain(b);
        pool.release(b);
        assert_eq!(pool.in_use(), 2, "one run still points at it");
        pool.release(b);
        pool.release(a);
        assert_eq!(pool.in_use(), 0);
        let allocated = pool.allocated();
        for _ in 0..100 {
            let x = load(&mut pool, &small).unwrap();
            let y = load(&mut pool, &large).unwrap();
            pool.release(x);
            pool.release(y);
        }
        assert_eq!(pool.allocated(), allocated, "steady state allocates nothing");
    }

    #[test]
    fn invalid_packets_are_refused_and_their_buffer_freed() {
        let mut pool = Pool::default();
        assert_eq!(load(&mut pool, &[0x45, 0, 0]), Err(PacketError::Truncated));
        assert_eq!(pool.in_use(), 0);
    }
}
