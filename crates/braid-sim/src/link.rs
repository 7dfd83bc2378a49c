//! A unidirectional link: a queue feeding a serialiser of fixed rate (or of
//! the time-varying capacity of a delivery trace, [`crate::trace`]), then a
//! fixed propagation delay. Random loss (Bernoulli or Gilbert–Elliott,
//! [`crate::loss`]) is drawn when a packet is offered; a link that is down
//! drops everything offered and flushes its queue. A token-bucket policer
//! ([`crate::policer`]) may stand in front of the queue.
//!
//! The queue is drop-tail, optionally with RED in front (Floyd & Jacobson,
//! "Random Early Detection Gateways for Congestion Avoidance", 1993, with
//! the "gentle" extension): the average queue length is an EWMA updated on
//! every arrival and decayed over idle time as in the paper; the early-drop
//! probability rises linearly from 0 at `min_th` to `max_p` at `max_th`, and
//! on to 1 at `2 max_th`. As in the authors' ns-2 code (`queue/red.cc`), an
//! arrival that finds at most one packet waiting is never dropped early
//! (`qlen > 1`), so one that reaches an idle link always starts it and its
//! idle time decays the average once. Under a byte limit the queue is
//! measured in bytes over 1500 (ns-2's `queue-in-bytes`). Deviation: the
//! paper spreads drops with a count since the last drop (p_a = p_b / (1 -
//! count p_b)); Braid uses p_b as is.
//! RED exists here because a deterministic drop-tail queue shared by a few
//! flows shows phase effects (Floyd & Jacobson 1991): which flow loses a
//! packet depends on timing, not on its rate.
//!
//! Or random drop as htsim's `RandomQueue` does it (`sim/randomqueue.cpp`
//! of Broadcom/csg-htsim, the queue of its FatTree and BCube topologies and
//! so of the NSDI 2011 paper's data-centre results): drop-tail, plus a drop
//! with probability 0.1 of any arrival that finds the queue within 3
//! packets of full, which breaks the same phase effects with one draw per
//! arrival near the top and no state. Deviation: htsim counts the packet
//! in service in its queue, Braid's limit does not (as for drop-tail).

use std::collections::VecDeque;
use std::sync::Arc;

use braid_proto::{Duration, Instant};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::loss::{LossModel, LossSpec};
use crate::policer::{PolicerSpec, TokenBucket};
use crate::trace::{DeliveryTrace, TraceCursor};

/// Drop-tail queue capacity, not counting the packet being serialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// The packet size RED's idle decay and byte-limit measure assume.
pub const RED_PACKET_BYTES: u32 = 1500;

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

    /// An arrival that finds `queue` packets waiting (not counting the one
    /// in service) after the link was idle for `idle` (zero when busy),
    /// with `per_packet` the time a 1500-byte packet takes: moves the
    /// average `avg` (decayed as if the `idle / per_packet` packets that
    /// fit, a whole number as in ns-2, had been served, then one EWMA step
    /// towards `queue`) and draws an early drop.
    pub fn arrival(&self, avg: &mut f64, idle: Duration, per_packet: Duration, queue: f64, rng: &mut impl Rng) -> bool {
        let m = idle.as_nanos() / per_packet.as_nanos().max(1);
        if m > 0 {
            *avg *= power(1.0 - self.weight, m);
        }
        *avg = (1.0 - self.weight) * *avg + self.weight * queue;
        let p = if queue > 1.0 { self.drop_probability(*avg) } else { 0.0 };
        p > 0.0 && rng.gen::<f64>() < p
    }

    /// The queue RED measures: packets waiting, or under a byte limit
    /// their bytes over 1500.
    pub fn queue_measure(limit: QueueLimit, waiting: usize, waiting_bytes: u64) -> f64 {
        match limit {
            QueueLimit::Packets(_) => waiting as f64,
            QueueLimit::Bytes(_) => waiting_bytes as f64 / f64::from(RED_PACKET_BYTES),
        }
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

/// `base^exp` by squaring: IEEE multiplications only, so the same on
/// every platform (`powf` and `powi` may round differently by platform).
fn power(mut base: f64, mut exp: u64) -> f64 {
    let mut result = 1.0;
    while exp > 0 {
        if exp & 1 == 1 {
            result *= base;
        }
        base *= base;
        exp >>= 1;
    }
    result
}

/// htsim's random drop near the top of the queue: an arrival that would
/// take one of the top `zone_packets` places is dropped with probability `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomDrop {
    pub zone_packets: u32,
    pub p: f64,
}

impl RandomDrop {
    /// htsim's `RANDOM_BUFFER` (3 packets) and its 0.1.
    pub const HTSIM: RandomDrop = RandomDrop { zone_packets: 3, p: 0.1 };

    /// Draws the fate of an arrival of `bytes` at a busy link whose queue
    /// holds `waiting` packets and `queue_bytes` bytes (limit `limit`): true
    /// to drop it early.
    pub fn drops(&self, limit: QueueLimit, waiting: usize, queue_bytes: u64, bytes: u32, rng: &mut impl Rng) -> bool {
        self.in_zone(limit, waiting, queue_bytes, bytes) && rng.gen::<f64>() < self.p
    }

    /// True when an arrival of `bytes` into a queue holding `waiting`
    /// packets and `queue_bytes` bytes (limit `limit`) falls in the zone
    /// (in bytes, the top `zone_packets` x 1500).
    pub fn in_zone(&self, limit: QueueLimit, waiting: usize, queue_bytes: u64, bytes: u32) -> bool {
        match limit {
            QueueLimit::Packets(n) => waiting + 1 > n.saturating_sub(self.zone_packets) as usize,
            QueueLimit::Bytes(b) => {
                queue_bytes + u64::from(bytes) > b.saturating_sub(u64::from(self.zone_packets) * 1500)
            }
        }
    }
}

/// What a queue does before its drop-tail limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Aqm {
    #[default]
    DropTail,
    Red(Red),
    RandomDrop(RandomDrop),
}

/// Static description of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub rate_bps: u64,
    pub delay: Duration,
    pub queue: QueueLimit,
    /// Random loss of offered packets (Bernoulli `p = 0` for none).
    pub loss: LossSpec,
    /// Intervals `[down, up)` during which the link takes nothing: what
    /// waits in its queue at `down` is dropped, the packet in service and
    /// those propagating arrive. In time order and apart, as the scenario
    /// parser makes them: the simulator and the emulator both rely on it.
    pub outages: Vec<(Instant, Instant)>,
    /// Early drops in front of the drop-tail limit (RED, random drop).
    pub aqm: Aqm,
    /// Capacity from a delivery trace instead of `rate_bps` (which then
    /// only describes the link: its mean rate).
    pub trace: Option<Arc<DeliveryTrace>>,
    /// A token-bucket policer in front of the queue.
    pub policer: Option<PolicerSpec>,
    /// The largest packet (IP bytes) the link carries: larger ones are
    /// dropped without a word, a path-MTU black hole. `None`: any size.
    pub mtu: Option<u32>,
}

impl LinkSpec {
    /// A lossless drop-tail link without outages or trace.
    pub fn new(name: impl Into<String>, rate_bps: u64, delay: Duration, queue: QueueLimit) -> LinkSpec {
        LinkSpec {
            name: name.into(),
            rate_bps,
            delay,
            queue,
            loss: LossSpec::Bernoulli { p: 0.0 },
            outages: Vec::new(),
            aqm: Aqm::DropTail,
            trace: None,
            policer: None,
            mtu: None,
        }
    }
}

/// Counters per link, cumulative from the start of the run. In this order
/// (`repr(C)`): those that move per packet first, see [`Link`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LinkStats {
    /// Packets offered to the link (dropped or not).
    pub arrivals: u64,
    /// Packets and bytes that finished serialising (a packet still being
    /// serialised is not counted yet).
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Time spent serialising finished packets; see [`Link::busy_time`].
    pub busy: Duration,
    pub drops_queue: u64,
    /// Early drops by the AQM (RED, random drop).
    pub drops_early: u64,
    pub drops_random: u64,
    pub drops_down: u64,
    /// Dropped by the policer, for want of tokens.
    pub drops_policed: u64,
    /// Larger than the link's MTU.
    pub drops_mtu: u64,
}

impl LinkStats {
    /// Every packet dropped, whatever the reason.
    pub fn drops(&self) -> u64 {
        self.drops_queue + self.drops_early + self.drops_random + self.drops_down + self.drops_policed + self.drops_mtu
    }

    /// The counts between `earlier` (counters taken before) and these.
    pub fn since(&self, earlier: &LinkStats) -> LinkStats {
        LinkStats {
            arrivals: self.arrivals - earlier.arrivals,
            packets_sent: self.packets_sent - earlier.packets_sent,
            bytes_sent: self.bytes_sent - earlier.bytes_sent,
            busy: self.busy - earlier.busy,
            drops_queue: self.drops_queue - earlier.drops_queue,
            drops_early: self.drops_early - earlier.drops_early,
            drops_random: self.drops_random - earlier.drops_random,
            drops_down: self.drops_down - earlier.drops_down,
            drops_policed: self.drops_policed - earlier.drops_policed,
            drops_mtu: self.drops_mtu - earlier.drops_mtu,
        }
    }

    /// Dropped packets over offered packets (0 when none was offered): the
    /// loss rate `p` of the link as a congestion controller sees it.
    pub fn loss_rate(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            self.drops() as f64 / self.arrivals as f64
        }
    }
}

/// What became of a packet offered to a link.
#[derive(Debug, PartialEq, Eq)]
pub enum Offer<T> {
    /// On its way. `first` when no other packet is on the link, so the
    /// caller must schedule the link's next arrival, at `arrives`.
    Accepted { first: bool, arrives: Instant },
    /// Dropped (down, policed, random loss, RED or a full queue); the packet is
    /// handed back.
    Dropped(T),
}

/// A packet on the link: waiting, being serialised or propagating. Its
/// times are fixed when it is accepted, because service is first in,
/// first out at a fixed rate and the delay is fixed.
#[derive(Debug)]
struct OnLink<T> {
    packet: T,
    bytes: u32,
    start: Instant,
    end: Instant,
}

/// The first two cache lines of a [`Link`]: all that an offer and an
/// arrival on a lossless drop-tail link touch.
const PER_PACKET_BYTES: usize = 128;

/// A link carrying packets of type `T`.
///
/// Like htsim's pipe, the link keeps every packet it carries, from the
/// queue to the far end, in one FIFO: departure and arrival times are
/// known when a packet is accepted, so the simulator needs one pending
/// event per link (for the head's arrival) instead of two per packet. The
/// queue is the FIFO's tail, brought up to date lazily when an offer asks
/// about it; a packet is counted as sent when it leaves at the far end, and
/// [`Link::stats`] adds those that finished serialising but are still
/// propagating.
///
/// Laid out by hand: with thousands of flows a packet meets its flow's
/// access links cold, and what an offer and an arrival touch (the FIFO,
/// the queue, the flags, the delay, the queue limit and the counters
/// that move per packet) fills the first two cache lines, not six of the
/// seven a link spanned with the fields in the compiler's order. `delay`,
/// `queue` and the flags are copies of the (private, fixed) spec.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link<T> {
    fifo: VecDeque<OnLink<T>>,
    /// When the serialiser is free for the next packet: `free_at` plus
    /// `free_at_fraction` / 2^32 ns.
    free_at: Instant,
    /// The last `waiting` packets of `fifo` had not started serialising at
    /// the last offer, and hold `queue_bytes`.
    queue_bytes: u64,
    waiting: u32,
    pub up: bool,
    /// The spec has a policer or a loss model that can drop: offers go
    /// through [`Link::screen_drops`]; lossless, unpoliced links skip it.
    screened: bool,
    /// The spec has an AQM (early drops before the drop-tail limit).
    early_drops: bool,
    /// The spec has a delivery trace.
    traced: bool,
    delay: Duration,
    /// The last serialisation time computed, by wire size: packets come in
    /// two or three sizes, and a division per packet is not free.
    last_serialisation: Serialisation,
    /// The drop-tail limit: `queue` in two fields, so that one offer tests
    /// both and the fraction below fits in the line.
    limit_bytes: u64,
    limit_packets: u32,
    /// The fraction of a nanosecond past `free_at` at which the serialiser
    /// is free, in 2^-32 ns: a packet's time is rarely a whole number of
    /// nanoseconds (a 1500-byte packet takes 1.2 ns at 10 Tbit/s), and
    /// rounding each up would take capacity from fast links (10 Tbit/s
    /// carried 6).
    free_at_fraction: u32,
    /// Counters, with packets counted as they leave; see [`Link::stats`].
    /// Those that move per packet come first, in the second line.
    stats: LinkStats,
    spec: LinkSpec,
    /// RED's average queue length.
    red_avg: f64,
    /// The loss model's state.
    loss: LossModel,
    /// Where a trace-driven link is in its trace.
    trace_at: TraceCursor,
    /// The policer's tokens.
    bucket: Option<TokenBucket>,
    /// Boxed: it is 320 bytes, used only by lossy and AQM links.
    rng: Box<ChaCha8Rng>,
}

impl<T> Link<T> {
    pub fn new(spec: LinkSpec, rng: ChaCha8Rng) -> Self {
        let bucket = spec.policer.map(TokenBucket::new);
        Link {
            fifo: VecDeque::new(),
            free_at: Instant::ZERO,
            queue_bytes: 0,
            waiting: 0,
            up: true,
            screened: spec.policer.is_some() || !spec.loss.is_lossless() || spec.mtu.is_some(),
            early_drops: !matches!(spec.aqm, Aqm::DropTail),
            traced: spec.trace.is_some(),
            delay: spec.delay,
            last_serialisation: Serialisation::default(),
            limit_bytes: match spec.queue {
                QueueLimit::Packets(_) => u64::MAX,
                QueueLimit::Bytes(b) => b,
            },
            limit_packets: match spec.queue {
                QueueLimit::Packets(n) => n,
                QueueLimit::Bytes(_) => u32::MAX,
            },
            free_at_fraction: 0,
            stats: LinkStats::default(),
            loss: LossModel::new(spec.loss),
            spec,
            red_avg: 0.0,
            trace_at: TraceCursor::default(),
            bucket,
            rng: Box::new(rng),
        }
    }

    /// Asks the cache for what an offer or an arrival touches (a hint,
    /// with no effect on results).
    #[inline(always)]
    pub fn prefetch(&self) {
        braid_proto::prefetch::prefetch_first(self, PER_PACKET_BYTES);
    }

    pub fn spec(&self) -> &LinkSpec {
        &self.spec
    }

    /// The time `bytes` take at the link's rate, rounded up to a whole
    /// nanosecond.
    pub fn serialisation(&self, bytes: u32) -> Duration {
        Duration::from_nanos((u64::from(bytes) * 8 * 1_000_000_000).div_ceil(self.spec.rate_bps.max(1)))
    }

    /// Packets waiting to be serialised at `now` (not the one in service).
    pub fn queue_len(&self, now: Instant) -> usize {
        self.tail(self.waiting as usize).filter(|p| p.start > now).count()
    }

    /// Counters at `now`: packets count as sent once they finished serialising.
    pub fn stats(&self, now: Instant) -> LinkStats {
        let mut s = self.stats;
        for p in self.fifo.iter().take_while(|p| p.end <= now) {
            count_sent(&mut s, p);
        }
        if let Some(trace) = self.spec.trace.as_ref().filter(|_| self.traced) {
            s.busy = trace.busy_time(s.bytes_sent);
        }
        s
    }

    /// Time the link has spent serialising up to `now`, the packet in
    /// service counted up to `now`: never more than the time elapsed, so
    /// utilisation computed from it never exceeds 1, over any interval.
    ///
    /// A trace link's opportunities deliver at instants, so its packets
    /// count for the time their bytes take at the trace's mean rate, once
    /// delivered: utilisation is then the share of the trace's capacity
    /// used, exact over whole periods of the trace, and above 1 over a
    /// shorter interval where the trace is above its mean.
    pub fn busy_time(&self, now: Instant) -> Duration {
        let in_service = self.fifo.iter().find(|p| p.end > now).filter(|p| p.start <= now && !self.traced);
        self.stats(now).busy + in_service.map_or(Duration::ZERO, |p| now - p.start)
    }

    /// The last `n` packets of the FIFO, oldest first.
    fn tail(&self, n: usize) -> impl Iterator<Item = &OnLink<T>> {
        self.fifo.range(self.fifo.len() - n..)
    }

    /// Brings the queue up to `now`: packets that started serialising
    /// leave it.
    fn settle(&mut self, now: Instant) {
        while self.waiting > 0 {
            let p = &self.fifo[self.fifo.len() - self.waiting as usize];
            if p.start > now {
                break;
            }
            self.waiting -= 1;
            self.queue_bytes -= u64::from(p.bytes);
        }
    }

    /// When the head packet reaches the far end.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.fifo.front().map(|p| p.end + self.delay)
    }

    /// The `i`-th packet on the link, counting from the next to reach the far end.
    #[inline]
    pub fn queued(&self, i: usize) -> Option<&T> {
        self.fifo.get(i).map(|p| &p.packet)
    }

    /// Takes the head packet, which reaches the far end at `now`, and its
    /// wire bytes.
    #[inline]
    pub fn arrive(&mut self, now: Instant) -> (T, u32) {
        let p = self.fifo.pop_front().expect("a link event has a packet");
        debug_assert!(p.end <= now, "the head has finished serialising");
        if self.waiting as usize > self.fifo.len() {
            // It was still counted as waiting: no offer came since it started.
            self.waiting -= 1;
            self.queue_bytes -= u64::from(p.bytes);
        }
        count_sent(&mut self.stats, &p);
        (p.packet, p.bytes)
    }

    /// Offers `packet` of `bytes` wire bytes to the link at `now`.
    #[inline]
    pub fn offer(&mut self, now: Instant, packet: T, bytes: u32) -> Offer<T> {
        self.stats.arrivals += 1;
        if !self.up {
            self.stats.drops_down += 1;
            return Offer::Dropped(packet);
        }
        if self.screened && self.screen_drops(now, bytes) {
            return Offer::Dropped(packet);
        }
        self.settle(now);
        // Most links are drop-tail: decide that here, inline.
        if self.early_drops && self.aqm_drops(now, bytes) {
            self.stats.drops_early += 1;
            return Offer::Dropped(packet);
        }
        let start = if self.free_at <= now {
            self.free_at_fraction = 0;
            now
        } else {
            if self.waiting >= self.limit_packets || self.queue_bytes + u64::from(bytes) > self.limit_bytes {
                self.stats.drops_queue += 1;
                return Offer::Dropped(packet);
            }
            self.waiting += 1;
            self.queue_bytes += u64::from(bytes);
            self.free_at
        };
        let (start, end) = match self.traced {
            false => {
                let time = self.last_serialisation.remembered(bytes, self.spec.rate_bps);
                (start, start + time.after(&mut self.free_at_fraction))
            }
            true => self.trace_schedule(start, bytes),
        };
        self.free_at = end;
        self.fifo.push_back(OnLink { packet, bytes, start, end });
        Offer::Accepted { first: self.fifo.len() == 1, arrives: end + self.delay }
    }

    /// A trace-driven link's service of `bytes` from `start`: (start, end).
    #[cold]
    fn trace_schedule(&mut self, start: Instant, bytes: u32) -> (Instant, Instant) {
        let trace = self.spec.trace.as_ref().expect("a traced link has a trace");
        trace.schedule(&mut self.trace_at, start, bytes)
    }

    /// The MTU's verdict on `bytes` offered at `now`, then the policer's,
    /// then the loss model's; true (and the drop counted) if one drops them.
    fn screen_drops(&mut self, now: Instant, bytes: u32) -> bool {
        if self.spec.mtu.is_some_and(|mtu| bytes > mtu) {
            self.stats.drops_mtu += 1;
            return true;
        }
        if self.bucket.as_mut().is_some_and(|b| !b.admits(now.as_nanos(), bytes)) {
            self.stats.drops_policed += 1;
            return true;
        }
        if self.loss.drops(&mut *self.rng) {
            self.stats.drops_random += 1;
            return true;
        }
        false
    }

    /// Draws an early drop: RED (its average updated first) or random drop.
    fn aqm_drops(&mut self, now: Instant, bytes: u32) -> bool {
        let red = match self.spec.aqm {
            Aqm::DropTail => return false,
            Aqm::RandomDrop(r) => {
                let busy = self.free_at > now;
                return busy
                    && r.drops(self.spec.queue, self.waiting as usize, self.queue_bytes, bytes, &mut *self.rng);
            }
            Aqm::Red(red) => red,
        };
        let queue = Red::queue_measure(self.spec.queue, self.waiting as usize, self.queue_bytes);
        let per_packet = self.serialisation(RED_PACKET_BYTES);
        red.arrival(&mut self.red_avg, now.saturating_since(self.free_at), per_packet, queue, &mut *self.rng)
    }

    /// Takes the link down at `now`: the packets still waiting are dropped
    /// and handed back; the one in service and those propagating go on.
    /// So does the head of a trace link's FIFO, given its opportunity but
    /// waiting for it: the link's arrival event is its (a trace link's
    /// head can wait, where a fixed-rate link's head has always started).
    pub fn go_down(&mut self, now: Instant) -> impl Iterator<Item = T> + '_ {
        self.up = false;
        self.settle(now);
        let keep = (self.fifo.len() - self.waiting as usize).max(usize::from(!self.fifo.is_empty()));
        self.stats.drops_down += (self.fifo.len() - keep) as u64;
        self.waiting = 0;
        self.queue_bytes = 0;
        if let Some(last) = keep.checked_sub(1).map(|i| self.fifo[i].end) {
            self.free_at = last;
            self.free_at_fraction = 0;
        }
        if self.traced {
            // The dropped packets had the opportunities after the kept ones,
            // back to back: hand them back to the trace.
            self.trace_at.rewind(self.fifo.range(keep..).map(|p| u64::from(p.bytes.max(1))).sum());
        }
        self.fifo.drain(keep..).map(|p| p.packet)
    }
}

fn count_sent<T>(s: &mut LinkStats, p: &OnLink<T>) {
    s.packets_sent += 1;
    s.bytes_sent += u64::from(p.bytes);
    s.busy = s.busy + (p.end - p.start);
}

/// A packet's time on the wire at a fixed rate: whole nanoseconds and a
/// fraction, which a serialiser carries from one packet to the next (the
/// emulator's links too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Serialisation {
    bytes: u32,
    /// In 2^-32 ns, rounded down: the drift is under a nanosecond in four
    /// billion packets.
    fraction: u32,
    nanos: u64,
}

impl Serialisation {
    pub fn of(bytes: u32, rate_bps: u64) -> Serialisation {
        let rate = u128::from(rate_bps.max(1));
        let bits_ns = u128::from(bytes) * 8 * 1_000_000_000;
        let fraction = ((bits_ns % rate) << 32) / rate;
        Serialisation { bytes, fraction: fraction as u32, nanos: (bits_ns / rate) as u64 }
    }

    /// The time of `bytes` at `rate_bps`: `self` if it is theirs, else
    /// computed and kept in `self` (packets come in two or three sizes,
    /// and a division per packet is not free).
    #[inline]
    pub fn remembered(&mut self, bytes: u32, rate_bps: u64) -> Serialisation {
        if self.bytes != bytes {
            *self = Serialisation::of(bytes, rate_bps);
        }
        *self
    }

    /// The time on the wire of a packet that starts `fraction` (in 2^-32
    /// ns) past a whole nanosecond, in whole nanoseconds; `fraction`
    /// becomes where it ends.
    #[inline]
    pub fn after(&self, fraction: &mut u32) -> Duration {
        let (end, carry) = fraction.overflowing_add(self.fraction);
        *fraction = end;
        Duration::from_nanos(self.nanos + u64::from(carry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn link(queue: QueueLimit, loss: f64) -> Link<u32> {
        link_with(queue, |spec| spec.loss = LossSpec::Bernoulli { p: loss })
    }

    /// An 8 Mbit/s link with 1 ms of delay and `queue`, its spec changed by `f`.
    fn link_with(queue: QueueLimit, f: impl FnOnce(&mut LinkSpec)) -> Link<u32> {
        let mut spec = LinkSpec::new("l", 8_000_000, Duration::from_millis(1), queue);
        f(&mut spec);
        Link::new(spec, ChaCha8Rng::seed_from_u64(1))
    }

    fn accepted(first: bool, ms: u64) -> Offer<u32> {
        Offer::Accepted { first, arrives: Instant::from_nanos(ms * 1_000_000) }
    }

    /// What an offer and an arrival of a lossless drop-tail link touch lies
    /// in its first two cache lines (see [`Link`]).
    #[test]
    fn per_packet_fields_fill_two_cache_lines() {
        use std::mem::{align_of, offset_of, size_of};
        type L = Link<crate::sim::SimPacket>;
        assert_eq!(align_of::<L>(), 64);
        let ends = [
            offset_of!(L, fifo) + size_of::<VecDeque<OnLink<crate::sim::SimPacket>>>(),
            offset_of!(L, free_at) + 8,
            offset_of!(L, queue_bytes) + 8,
            offset_of!(L, waiting) + 4,
            offset_of!(L, up) + 1,
            offset_of!(L, screened) + 1,
            offset_of!(L, early_drops) + 1,
            offset_of!(L, traced) + 1,
            offset_of!(L, delay) + 8,
            offset_of!(L, last_serialisation) + size_of::<Serialisation>(),
            offset_of!(L, limit_bytes) + 8,
            offset_of!(L, limit_packets) + 4,
            offset_of!(L, free_at_fraction) + 4,
            offset_of!(L, stats) + offset_of!(LinkStats, busy) + 8,
        ];
        assert!(ends.iter().all(|&end| end <= PER_PACKET_BYTES), "{ends:?}");
    }

    #[test]
    fn serialises_at_rate_and_drops_tail() {
        let mut l = link(QueueLimit::Packets(1), 0.0);
        let t0 = Instant::ZERO;
        // 1000 bytes at 8 Mbit/s = 1 ms, then 1 ms of propagation.
        assert_eq!(l.offer(t0, 0, 1000), accepted(true, 2));
        assert_eq!(l.offer(t0, 1, 1000), accepted(false, 3));
        assert_eq!(l.offer(t0, 2, 1000), Offer::Dropped(2));
        assert_eq!(l.queue_len(t0), 1);
        // At 1 ms the first has left the serialiser and the second started.
        let t1 = Instant::from_nanos(1_000_000);
        assert_eq!(l.queue_len(t1), 0);
        assert_eq!(l.offer(t1, 3, 1000), accepted(false, 4));
        assert_eq!(l.next_arrival(), Some(Instant::from_nanos(2_000_000)));
        assert_eq!(l.arrive(Instant::from_nanos(2_000_000)).0, 0);
        assert_eq!(l.next_arrival(), Some(Instant::from_nanos(3_000_000)));
        let s = l.stats(Instant::from_nanos(2_000_000));
        assert_eq!((s.drops_queue, s.packets_sent), (1, 2));
    }

    /// A link carries its rate however few nanoseconds a packet takes: the
    /// fractions add up (each packet's time rounded up, 10 Tbit/s carried
    /// 6, and 10 Gbit/s carried 61-byte packets 0.4% slowly).
    #[test]
    fn fast_links_carry_their_rate() {
        for (rate_bps, bytes, exact_ns) in
            [(10_000_000_000_000, 1500, 1.2), (10_000_000_000, 61, 48.8), (3_000_000, 1000, 8e12 / 3e6)]
        {
            let mut l = link_with(QueueLimit::Packets(u32::MAX), |spec| spec.rate_bps = rate_bps);
            let n = 100_000u32;
            for i in 0..n {
                assert!(matches!(l.offer(Instant::ZERO, i, bytes), Offer::Accepted { .. }));
            }
            let busy = (l.free_at - Instant::ZERO).as_nanos() as f64;
            // Short by less than the last fraction and 2^-32 ns a packet.
            let exact = exact_ns * f64::from(n);
            let short = 1.0 + f64::from(n) / 2f64.powi(32);
            assert!(busy <= exact + 1e-6 && busy > exact - short, "{rate_bps} bit/s: {busy} ns for {exact} ns");
        }
    }

    #[test]
    fn byte_limit_and_random_loss_rate() {
        let mut l = link(QueueLimit::Bytes(1500), 0.0);
        l.offer(Instant::ZERO, 0, 1000);
        assert_eq!(l.offer(Instant::ZERO, 1, 1000), accepted(false, 3));
        assert_eq!(l.offer(Instant::ZERO, 2, 1000), Offer::Dropped(2));
        let mut lossy = link(QueueLimit::Packets(u32::MAX), 0.1);
        let dropped = (0..10_000).filter(|&i| matches!(lossy.offer(Instant::ZERO, i, 100), Offer::Dropped(_))).count();
        assert!((850..1150).contains(&dropped), "{dropped} of 10000 at p = 0.1");
    }

    /// Bytes count when they have left the link and busy time is clipped
    /// at `now`: a link serialising a packet longer than the interval that
    /// is asked about is busy for exactly that interval, never more.
    #[test]
    fn busy_time_never_exceeds_elapsed_time() {
        let mut l = link_with(QueueLimit::Packets(10), |spec| spec.rate_bps = 1);
        let t0 = Instant::from_nanos(5);
        // 1500 bytes at 1 bit/s: 12,000 s on the wire.
        let end = t0 + Duration::from_secs(12_000);
        assert_eq!(l.offer(t0, 0, 1500), Offer::Accepted { first: true, arrives: end + l.spec.delay });
        let t1 = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(l.busy_time(t1), t1 - t0);
        assert_eq!(l.stats(t1).bytes_sent, 0, "nothing has left the link yet");
        assert_eq!((l.stats(end).bytes_sent, l.busy_time(end)), (1500, end - t0));
        assert_eq!(l.busy_time(end + Duration::from_secs(1)), end - t0, "idle time is not busy");
    }

    #[test]
    fn going_down_drops_the_queue_but_not_the_packet_in_service() {
        let mut l = link(QueueLimit::Packets(10), 0.0);
        for i in 0..4 {
            l.offer(Instant::ZERO, i, 1000);
        }
        let t = Instant::from_nanos(1_500_000);
        assert_eq!(l.go_down(t).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(l.stats(t).drops_down, 2);
        assert!(matches!(l.offer(t, 9, 1000), Offer::Dropped(9)));
        l.up = true;
        // The packet in service finishes at 2 ms; the next starts then.
        assert_eq!(l.offer(t, 4, 1000), accepted(false, 4));
        assert_eq!((l.arrive(Instant::from_nanos(2_000_000)).0, l.arrive(Instant::from_nanos(3_000_000)).0), (0, 1));
        assert_eq!(l.arrive(Instant::from_nanos(4_000_000)).0, 4);
        assert_eq!(l.next_arrival(), None);
    }

    #[test]
    fn power_by_squaring() {
        assert_eq!(power(0.5, 0), 1.0);
        assert_eq!(power(0.5, 10), 1.0 / 1024.0);
        assert_eq!(power(3.0, 5), 243.0);
        assert!((power(0.998, 1000) / 0.998f64.powf(1000.0) - 1.0).abs() < 1e-12);
        assert_eq!(power(0.998, u64::MAX), 0.0);
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

    /// htsim's random drop: nothing below the top 3 places of the queue,
    /// then about one arrival in ten dropped early (the rest of a full
    /// queue's arrivals drop at its tail).
    #[test]
    fn random_drop_acts_only_near_the_top() {
        let mut l = link_with(QueueLimit::Packets(100), |spec| spec.aqm = Aqm::RandomDrop(RandomDrop::HTSIM));
        let t = Instant::ZERO;
        // One in service and 96 waiting: below the zone. Four places are
        // left, the top three of them the zone.
        for i in 0..97 {
            l.offer(t, i, 1000);
        }
        assert_eq!(l.stats(t).drops(), 0, "{:?}", l.stats(t));
        for i in 0..2000 {
            l.offer(t, i, 1000);
        }
        let s = l.stats(t);
        assert!((150..=250).contains(&s.drops_early), "{s:?}");
        assert_eq!(s.drops_early + s.drops_queue, 2000 - 4, "{s:?}");
    }

    #[test]
    fn random_drop_zone_in_bytes() {
        let r = RandomDrop::HTSIM;
        // 100 places: an arrival finding 97 or more waiting would take one
        // of the top three.
        assert!(!r.in_zone(QueueLimit::Packets(100), 96, 0, 1500));
        assert!(r.in_zone(QueueLimit::Packets(100), 97, 0, 1500));
        let limit = QueueLimit::Bytes(15_000);
        // The zone is the top 4,500 bytes: an arrival ending at 10,500 is
        // below it, one byte more is in it.
        assert!(!r.in_zone(limit, 6, 9_000, 1500));
        assert!(r.in_zone(limit, 6, 9_001, 1500));
        assert!(r.in_zone(QueueLimit::Packets(2), 0, 0, 1500), "a queue smaller than the zone is all zone");
    }

    #[test]
    fn red_drops_early_under_a_standing_queue() {
        let mut l = link_with(QueueLimit::Packets(100), |spec| spec.aqm = Aqm::Red(Red::for_limit(100.0)));
        let t = Instant::ZERO;
        // Offered far faster than served: the queue stands and RED must act
        // before the 100-packet limit is reached.
        for i in 0..5000 {
            l.offer(t, i, 1000);
        }
        assert!(l.stats(t).drops_early > 0, "{:?}", l.stats(t));
    }

    /// As in ns-2: an arrival that finds at most one packet waiting is not
    /// dropped early, whatever the average, so one that reaches an idle link
    /// starts it and the idle time decays the average once (an early drop
    /// there left the link idle, and the next arrival decayed it again).
    #[test]
    fn red_decays_idle_time_once_and_spares_a_short_queue() {
        for seed in 0..20 {
            let mut l = link_with(QueueLimit::Packets(100), |spec| spec.aqm = Aqm::Red(Red::for_limit(100.0)));
            *l.rng = ChaCha8Rng::seed_from_u64(seed);
            let red = Red::for_limit(100.0);
            let t0 = Instant::ZERO;
            for i in 0..5000 {
                l.offer(t0, i, 1000);
            }
            assert!(l.red_avg > 60.0, "a standing queue raised the average: {}", l.red_avg);
            // Idle for 100 packet times of 1500 bytes (1.5 ms each at 8 Mbit/s).
            let idle = Duration::from_millis(150);
            let t1 = l.free_at + idle;
            let expected = l.red_avg * (1.0 - red.weight).powf(100.0) * (1.0 - red.weight);
            assert!(red.drop_probability(expected) > 0.5, "{expected}");
            assert!(matches!(l.offer(t1, 1, 1000), Offer::Accepted { .. }), "seed {seed}: dropped at an idle link");
            assert!((l.red_avg - expected).abs() < 1e-9, "{} against {expected}", l.red_avg);
            // Busy, none then one waiting: still spared; the average takes
            // one step each, with no idle decay.
            assert!(matches!(l.offer(t1, 2, 1000), Offer::Accepted { .. }), "seed {seed}: none waiting");
            let busy = (1.0 - red.weight) * expected;
            assert!((l.red_avg - busy).abs() < 1e-9);
            assert!(matches!(l.offer(t1, 3, 1000), Offer::Accepted { .. }), "seed {seed}: one waiting");
            assert!((l.red_avg - ((1.0 - red.weight) * busy + red.weight)).abs() < 1e-9);
        }
        // Under a byte limit RED measures bytes in 1500-byte packets.
        assert_eq!(Red::queue_measure(QueueLimit::Bytes(150_000), 10, 600), 0.4);
        assert_eq!(Red::queue_measure(QueueLimit::Packets(100), 10, 600), 10.0);
    }

    /// A policer drops before the queue, whatever the queue holds, and
    /// its drops count towards the loss rate.
    #[test]
    fn a_policer_drops_in_front_of_the_queue() {
        let mut l = link_with(QueueLimit::Packets(100), |spec| {
            spec.policer = Some(PolicerSpec { rate_bps: 8_000_000, burst_bytes: 2000 })
        });
        let t0 = Instant::ZERO;
        assert!(matches!(l.offer(t0, 0, 1000), Offer::Accepted { .. }));
        assert!(matches!(l.offer(t0, 1, 1000), Offer::Accepted { .. }));
        assert_eq!(l.offer(t0, 2, 1000), Offer::Dropped(2), "an empty bucket, an empty queue");
        // 8 Mbit/s: 1000 bytes of tokens a millisecond.
        assert!(matches!(l.offer(Instant::from_nanos(1_000_000), 3, 1000), Offer::Accepted { .. }));
        let s = l.stats(t0);
        assert_eq!((s.drops_policed, s.drops(), s.arrivals), (1, 1, 4));
    }

    /// Drops over arrivals counts every reason; Gilbert–Elliott loss on a
    /// link loses packets in bursts, at its stationary rate.
    #[test]
    fn loss_rate_counts_every_drop_and_bursty_loss_comes_in_bursts() {
        let mut spec = LinkSpec::new("l", 8_000_000, Duration::from_millis(1), QueueLimit::Packets(u32::MAX));
        spec.loss = LossSpec::GilbertElliott { p: 0.01, r: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        let mut l = Link::new(spec, ChaCha8Rng::seed_from_u64(4));
        let (mut lost, mut bursts, mut prev) = (0u32, 0u32, false);
        for i in 0..200_000 {
            let dropped = matches!(l.offer(Instant::ZERO, i, 100), Offer::Dropped(_));
            lost += u32::from(dropped);
            bursts += u32::from(dropped && !prev);
            prev = dropped;
        }
        let s = l.stats(Instant::ZERO);
        assert_eq!((s.arrivals, s.drops_random), (200_000, u64::from(lost)));
        assert!((s.loss_rate() - 0.01 / 0.26).abs() < 0.004, "{}", s.loss_rate());
        let burst = f64::from(lost) / f64::from(bursts);
        assert!((burst - 4.0).abs() < 0.4, "mean burst {burst}, 1 / r = 4");
        let mut full = link(QueueLimit::Packets(1), 0.0);
        for i in 0..4 {
            full.offer(Instant::ZERO, i, 1000);
        }
        assert_eq!(full.stats(Instant::ZERO).loss_rate(), 0.5, "2 of 4 overflow a 1-packet queue");
    }

    /// A trace-driven link delivers at its opportunities, not at `rate_bps`.
    #[test]
    fn trace_link_follows_its_opportunities() {
        let trace = Arc::new(DeliveryTrace::parse("3\n3\n10\n").unwrap());
        let mut l = link_with(QueueLimit::Packets(10), |spec| spec.trace = Some(trace));
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        // Two opportunities at 3 ms, one at 10 ms; then 1 ms of propagation.
        assert_eq!(l.offer(Instant::ZERO, 0, 1500), accepted(true, 4));
        assert_eq!(l.offer(Instant::ZERO, 1, 1500), accepted(false, 4));
        assert_eq!(l.offer(Instant::ZERO, 2, 1500), accepted(false, 11));
        assert_eq!(l.arrive(ms(4)).0, 0);
        // Idle until 12 ms: the next opportunity is at 13 ms (3 ms into the
        // second period).
        assert_eq!(l.offer(ms(12), 3, 1500), accepted(false, 14));
    }

    /// A trace link's head can wait for its opportunity after the packet
    /// before it arrived; an outage then keeps it, since the link's
    /// arrival event is its (dropping it left the event with no packet,
    /// and the run panicked), and drops only the packets behind it.
    #[test]
    fn an_outage_keeps_a_trace_link_s_waiting_head() {
        let trace = Arc::new(DeliveryTrace::parse("3\n100\n").unwrap());
        let mut l = link_with(QueueLimit::Packets(10), |spec| spec.trace = Some(trace));
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        // Each packet fills an opportunity: 1 waits for the one at 100 ms.
        for i in 0..3 {
            l.offer(Instant::ZERO, i, crate::trace::OPPORTUNITY_BYTES);
        }
        assert_eq!(l.arrive(ms(4)).0, 0);
        assert_eq!(l.next_arrival(), Some(ms(101)), "1 waits for the opportunity at 100 ms");
        assert_eq!(l.go_down(ms(50)).collect::<Vec<_>>(), [2]);
        assert_eq!(l.stats(ms(50)).drops_down, 1);
        assert_eq!(l.next_arrival(), Some(ms(101)));
        assert_eq!(l.arrive(ms(101)).0, 1);
    }

    /// A trace link kept busy is fully utilised: its packets count for
    /// their bytes at the trace's mean rate (they counted for nothing,
    /// delivered at an instant), and packets of half an opportunity for half.
    #[test]
    fn a_saturated_trace_link_is_fully_utilised() {
        let trace = Arc::new(DeliveryTrace::parse("1\n1\n3\n4\n").unwrap());
        for (bytes, busy_ms) in [(1504, 400), (752, 200)] {
            let mut l = link_with(QueueLimit::Packets(u32::MAX), |spec| spec.trace = Some(trace.clone()));
            for i in 0..400 {
                l.offer(Instant::ZERO, i, bytes);
            }
            // 400 opportunities of 1504 bytes, four every 4 ms.
            let t = Instant::from_nanos(400_000_000);
            assert_eq!(l.stats(t).packets_sent, 400);
            assert_eq!(l.busy_time(t), Duration::from_millis(busy_ms), "{bytes}-byte packets");
        }
    }

    /// The opportunities an outage's dropped packets had are free again
    /// when the link comes back up (the next packet waited for the
    /// opportunity after theirs).
    #[test]
    fn an_outage_frees_the_dropped_packets_opportunities() {
        let trace = Arc::new(DeliveryTrace::parse("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n").unwrap());
        let mut l = link_with(QueueLimit::Packets(10), |spec| spec.trace = Some(trace));
        let us = |t: u64| Instant::from_nanos(t * 1_000);
        for (i, bytes) in [700, 700, 1000, 1504, 1504].into_iter().enumerate() {
            l.offer(Instant::ZERO, i as u32, bytes);
        }
        // 0 and 1 share the 1 ms opportunity, 2 takes its last 104 bytes and
        // 896 of the 2 ms one; 3 and 4 would take 2-3 ms and 3-4 ms.
        assert_eq!(l.go_down(us(1500)).collect::<Vec<_>>(), [3, 4]);
        l.up = true;
        // 2000 bytes take the 608 left at 2 ms and 1392 at 3 ms, 1504 bytes
        // the last 112 at 3 ms and 1392 at 4 ms.
        let delay = l.spec.delay;
        assert_eq!(l.offer(us(1600), 9, 2000), Offer::Accepted { first: false, arrives: us(3000) + delay });
        assert_eq!(l.offer(us(1600), 10, 1504), Offer::Accepted { first: false, arrives: us(4000) + delay });
    }
}
