//! A unidirectional link: a drop-tail queue feeding a serialiser of fixed
//! rate, then a fixed propagation delay. Random loss is drawn when a packet
//! is accepted onto the link; a link that is down drops everything offered
//! and flushes its queue.

use std::collections::VecDeque;

use braid_proto::{Duration, Instant};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Drop-tail queue capacity, not counting the packet being serialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Static description of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub rate_bps: u64,
    pub delay: Duration,
    pub queue: QueueLimit,
    /// Bernoulli loss probability per packet, in [0, 1).
    pub loss: f64,
    /// Intervals `[down, up)` during which the link carries nothing.
    pub outages: Vec<(Instant, Instant)>,
}

/// Counters per link, cumulative from the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
    pub drops_down: u64,
}

/// Why a packet offered to a link did not get on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The link was idle: serialisation finishes at the given time.
    Transmitting(Instant),
    Queued,
    Dropped,
}

#[derive(Debug)]
pub struct Link {
    pub spec: LinkSpec,
    pub up: bool,
    /// Packet being serialised.
    in_service: Option<u32>,
    /// Packets waiting, with their wire sizes.
    queue: VecDeque<(u32, u32)>,
    queue_bytes: u64,
    rng: ChaCha8Rng,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(spec: LinkSpec, rng: ChaCha8Rng) -> Self {
        Link { spec, up: true, in_service: None, queue: VecDeque::new(), queue_bytes: 0, rng, stats: LinkStats::default() }
    }

    pub fn serialisation(&self, bytes: u32) -> Duration {
        Duration::from_nanos((u64::from(bytes) * 8 * 1_000_000_000).div_ceil(self.spec.rate_bps.max(1)))
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }

    /// Offers packet `id` of `bytes` wire bytes to the link at `now`.
    pub fn offer(&mut self, now: Instant, id: u32, bytes: u32) -> Offer {
        if !self.up {
            self.stats.drops_down += 1;
            return Offer::Dropped;
        }
        if self.spec.loss > 0.0 && self.rng.gen::<f64>() < self.spec.loss {
            self.stats.drops_random += 1;
            return Offer::Dropped;
        }
        if self.in_service.is_none() {
            self.in_service = Some(id);
            self.count_sent(bytes);
            return Offer::Transmitting(now + self.serialisation(bytes));
        }
        let full = match self.spec.queue {
            QueueLimit::Packets(n) => self.queue.len() >= n as usize,
            QueueLimit::Bytes(b) => self.queue_bytes + u64::from(bytes) > b,
        };
        if full {
            self.stats.drops_queue += 1;
            return Offer::Dropped;
        }
        self.queue.push_back((id, bytes));
        self.queue_bytes += u64::from(bytes);
        Offer::Queued
    }

    /// The packet in service finished serialising: returns it, and the end
    /// time of the next one if the queue had one.
    pub fn complete(&mut self, now: Instant) -> (Option<u32>, Option<Instant>) {
        let done = self.in_service.take();
        let next = self.queue.pop_front().map(|(id, bytes)| {
            self.queue_bytes -= u64::from(bytes);
            self.count_sent(bytes);
            self.in_service = Some(id);
            now + self.serialisation(bytes)
        });
        (done, next)
    }

    fn count_sent(&mut self, bytes: u32) {
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(bytes);
    }

    /// Takes the link down; returns the queued packets, now dropped.
    pub fn go_down(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.up = false;
        self.stats.drops_down += self.queue.len() as u64;
        self.queue_bytes = 0;
        self.queue.drain(..).map(|(id, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn link(queue: QueueLimit, loss: f64) -> Link {
        let spec = LinkSpec {
            name: "l".into(),
            rate_bps: 8_000_000,
            delay: Duration::from_millis(1),
            queue,
            loss,
            outages: vec![],
        };
        Link::new(spec, ChaCha8Rng::seed_from_u64(1))
    }

    #[test]
    fn serialises_at_rate_and_drops_tail() {
        let mut l = link(QueueLimit::Packets(1), 0.0);
        let t0 = Instant::ZERO;
        // 1000 bytes at 8 Mbit/s = 1 ms.
        assert_eq!(l.offer(t0, 0, 1000), Offer::Transmitting(Instant::from_nanos(1_000_000)));
        assert_eq!(l.offer(t0, 1, 1000), Offer::Queued);
        assert_eq!(l.offer(t0, 2, 1000), Offer::Dropped);
        assert_eq!(l.complete(Instant::from_nanos(1_000_000)), (Some(0), Some(Instant::from_nanos(2_000_000))));
        assert_eq!(l.complete(Instant::from_nanos(2_000_000)), (Some(1), None));
        assert_eq!(l.stats.drops_queue, 1);
        assert_eq!(l.stats.packets_sent, 2);
    }

    #[test]
    fn byte_limit_and_random_loss_rate() {
        let mut l = link(QueueLimit::Bytes(1500), 0.0);
        l.offer(Instant::ZERO, 0, 1000);
        assert_eq!(l.offer(Instant::ZERO, 1, 1000), Offer::Queued);
        assert_eq!(l.offer(Instant::ZERO, 2, 1000), Offer::Dropped);
        let mut lossy = link(QueueLimit::Packets(u32::MAX), 0.1);
        let dropped = (0..10_000).filter(|&i| lossy.offer(Instant::ZERO, i, 100) == Offer::Dropped).count();
        assert!((850..1150).contains(&dropped), "{dropped} of 10000 at p = 0.1");
    }
}
