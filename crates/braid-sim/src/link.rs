//! A unidirectional link: a queue feeding a serialiser of fixed rate, then a
//! fixed propagation delay. Random loss is drawn when a packet is offered;
//! a link that is down drops everything offered and flushes its queue.
//!
//! The queue is drop-tail, optionally with RED in front (Floyd & Jacobson,
//! "Random Early Detection Gateways for Congestion Avoidance", 1993, with
//! the "gentle" extension): the average queue length is an EWMA updated on
//! every arrival and decayed over idle time as in the paper; the early-drop
//! probability rises linearly from 0 at `min_th` to `max_p` at `max_th`, and
//! on to 1 at `2 max_th`. Deviation: the paper spreads drops with a count
//! since the last drop (p_a = p_b / (1 - count p_b)); Braid uses p_b as is.
//! RED exists here because a deterministic drop-tail queue shared by a few
//! flows shows phase effects (Floyd & Jacobson 1991): which flow loses a
//! packet depends on timing, not on its rate.

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

/// RED parameters, queue lengths in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Red {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    /// EWMA weight w_q.
    pub weight: f64,
}

impl Red {
    /// Floyd's recommended shape for a buffer of `limit` packets: max_th = 3
    /// min_th, with the gentle region ending at the buffer limit; w_q = 0.002,
    /// max_p = 0.1.
    pub fn for_limit(limit_packets: f64) -> Red {
        let max_th = (limit_packets / 2.0).max(3.0);
        Red { min_th: max_th / 3.0, max_th, max_p: 0.1, weight: 0.002 }
    }

    /// Early-drop probability at average queue `avg` (gentle RED).
    pub fn drop_probability(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }
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
    /// Random early detection in front of the drop-tail limit.
    pub red: Option<Red>,
}

/// Counters per link, cumulative from the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets and bytes that finished serialising (a packet still being
    /// serialised is not counted yet).
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Time spent serialising finished packets; see [`Link::busy_time`].
    pub busy: Duration,
    pub drops_queue: u64,
    /// Early drops by RED.
    pub drops_early: u64,
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
    /// Packet being serialised: its id, wire bytes and start time.
    in_service: Option<(u32, u32, Instant)>,
    /// Packets waiting, with their wire sizes.
    queue: VecDeque<(u32, u32)>,
    queue_bytes: u64,
    /// RED's average queue length, and when the link last went idle.
    red_avg: f64,
    idle_since: Option<Instant>,
    rng: ChaCha8Rng,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(spec: LinkSpec, rng: ChaCha8Rng) -> Self {
        Link {
            spec,
            up: true,
            in_service: None,
            queue: VecDeque::new(),
            queue_bytes: 0,
            red_avg: 0.0,
            idle_since: Some(Instant::ZERO),
            rng,
            stats: LinkStats::default(),
        }
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

    /// Time the link has spent serialising up to `now`, the packet in
    /// service counted up to `now`: never more than the time elapsed, so
    /// utilisation computed from it never exceeds 1, over any interval.
    pub fn busy_time(&self, now: Instant) -> Duration {
        self.stats.busy + self.in_service.map_or(Duration::ZERO, |(_, _, start)| now - start)
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
        if self.red_drops(now) {
            self.stats.drops_early += 1;
            return Offer::Dropped;
        }
        if self.in_service.is_none() {
            self.idle_since = None;
            self.in_service = Some((id, bytes, now));
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
        let done = self.in_service.take().map(|(id, bytes, start)| {
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += u64::from(bytes);
            self.stats.busy = self.stats.busy + (now - start);
            id
        });
        if self.queue.is_empty() {
            self.idle_since = Some(now);
        }
        let next = self.queue.pop_front().map(|(id, bytes)| {
            self.queue_bytes -= u64::from(bytes);
            self.in_service = Some((id, bytes, now));
            now + self.serialisation(bytes)
        });
        (done, next)
    }

    /// Updates RED's average and draws an early drop.
    fn red_drops(&mut self, now: Instant) -> bool {
        let Some(red) = self.spec.red else { return false };
        let q = self.queue.len() as f64;
        if let Some(idle) = self.idle_since {
            // Decay as if `m` small packets had been served while idle.
            let m = (now - idle).as_nanos() as f64 / self.serialisation(1500).as_nanos().max(1) as f64;
            self.red_avg *= (1.0 - red.weight).powf(m);
        }
        self.red_avg = (1.0 - red.weight) * self.red_avg + red.weight * q;
        let p = red.drop_probability(self.red_avg);
        p > 0.0 && self.rng.gen::<f64>() < p
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
            red: None,
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

    /// Bytes count when they have left the link and busy time is clipped
    /// at `now`: a link serialising a packet longer than the interval that
    /// is asked about is busy for exactly that interval, never more.
    #[test]
    fn busy_time_never_exceeds_elapsed_time() {
        let mut l = link(QueueLimit::Packets(10), 0.0);
        l.spec.rate_bps = 1;
        let t0 = Instant::from_nanos(5);
        // 1500 bytes at 1 bit/s: 12,000 s on the wire.
        assert_eq!(l.offer(t0, 0, 1500), Offer::Transmitting(t0 + Duration::from_secs(12_000)));
        let t1 = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(l.busy_time(t1), t1 - t0);
        assert_eq!(l.stats.bytes_sent, 0, "nothing has left the link yet");
        let end = t0 + Duration::from_secs(12_000);
        l.complete(end);
        assert_eq!((l.stats.bytes_sent, l.busy_time(end)), (1500, end - t0));
        assert_eq!(l.busy_time(end + Duration::from_secs(1)), end - t0, "idle time is not busy");
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

    #[test]
    fn red_probability_follows_the_gentle_ramp() {
        let red = Red { min_th: 10.0, max_th: 30.0, max_p: 0.1, weight: 0.002 };
        assert_eq!(red.drop_probability(5.0), 0.0);
        assert!((red.drop_probability(20.0) - 0.05).abs() < 1e-12);
        assert!((red.drop_probability(45.0) - 0.55).abs() < 1e-12);
        assert_eq!(red.drop_probability(60.0), 1.0);
        assert_eq!(Red::for_limit(90.0), Red { min_th: 15.0, max_th: 45.0, max_p: 0.1, weight: 0.002 });
    }

    #[test]
    fn red_drops_early_under_a_standing_queue() {
        let mut l = link(QueueLimit::Packets(100), 0.0);
        l.spec.red = Some(Red::for_limit(100.0));
        let t = Instant::ZERO;
        // Offered far faster than served: the queue stands and RED must act
        // before the 100-packet limit is reached.
        for i in 0..5000 {
            l.offer(t, i, 1000);
        }
        assert!(l.stats.drops_early > 0, "{:?}", l.stats);
    }
}
