//! One emulated link in one direction: the simulator's link model
//! (`braid_sim::LinkSpec`: a FIFO serialiser at a fixed rate, or at the
//! opportunities of a mahimahi delivery trace, behind a drop-tail queue,
//! optional RED, random loss, a propagation delay and outages) computed
//! for real packets.
//!
//! A serialiser needs no timer of its own: when a segment is accepted, the
//! time it starts and finishes serialising follows from when the previous
//! one finishes (at a fixed rate) or from the trace's opportunities after
//! it (`braid_sim::trace::DeliveryTrace::schedule`, the simulator's own
//! code), so its exit time (finish + delay) is known at once and exits
//! come out in order. The link is therefore one FIFO of runs
//! of segments with their exit times, plus the service start times of the
//! segments still waiting, which is what the queue limit counts. The
//! decisions and their order match `braid_sim`'s `Link::offer`: down, then
//! the MTU, then the policer, then random loss, then RED, then the queue limit; the queue does not count
//! the segment being serialised; an outage drops what is offered and what
//! waits, while segments already serialising or propagating arrive.

use std::collections::VecDeque;

use braid_proto::{Duration, Instant};
use braid_sim::loss::{LossModel, LossSpec};
use braid_sim::policer::TokenBucket;
use braid_sim::trace::TraceCursor;
use braid_sim::{Aqm, LinkSpec, LinkStats, QueueLimit, Red, Serialisation, RED_PACKET_BYTES};
use rand_chacha::ChaCha8Rng;

use crate::packet::Meta;

/// Consecutive segments of one packet on one link, leaving it at evenly
/// spaced times except the last: segment `i < count - 1` exits at
/// `exit + i * step`, the last at `last_exit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub buf: u32,
    pub first: u16,
    pub count: u16,
    pub exit: Instant,
    pub step: Duration,
    pub last_exit: Instant,
    /// Route and position on it, for the engine.
    pub route: u16,
    pub hop: u8,
}

impl Run {
    fn exit_of(&self, i: u16) -> Instant {
        if i + 1 == self.count {
            self.last_exit
        } else {
            self.exit + self.step.saturating_mul(u64::from(i))
        }
    }

    /// How many leading segments have exited by `now`.
    pub fn due(&self, now: Instant) -> u16 {
        if self.last_exit <= now {
            return self.count;
        }
        if self.exit > now {
            return 0;
        }
        let n = (now - self.exit).as_nanos().checked_div(self.step.as_nanos()).map_or(u64::from(self.count), |q| q + 1);
        n.min(u64::from(self.count - 1)) as u16
    }

    /// Splits off the first `n` segments (`0 < n < count`).
    pub fn split_front(&mut self, n: u16) -> Run {
        let mut front = *self;
        front.count = n;
        front.last_exit = self.exit_of(n - 1);
        self.exit = self.exit_of(n);
        self.first += n;
        self.count -= n;
        front
    }

    /// Arrival time of segment `i` at the next hop (its exit here).
    pub fn arrival(&self, i: u16) -> Instant {
        self.exit_of(i)
    }
}

/// Segments `[first, first + count)` of packet `buf`, on hop `hop` of
/// route `route`: what is offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    pub buf: u32,
    pub first: u16,
    pub count: u16,
    pub route: u16,
    pub hop: u8,
}

/// Runs leaving a link, in the order they were accepted.
#[derive(Debug)]
pub struct Link {
    pub spec: LinkSpec,
    loss: LossModel,
    rng: ChaCha8Rng,
    /// The policer's tokens, if the spec has one.
    bucket: Option<TokenBucket>,
    up: bool,
    /// Index of the next outage in `spec.outages` whose end is not past.
    outage: usize,
    /// When the serialiser finishes the last accepted segment: `busy_until`
    /// plus `busy_fraction` / 2^32 ns, as in the simulator.
    busy_until: Instant,
    busy_fraction: u32,
    /// The last serialisation time computed, by segment size.
    last_serialisation: Serialisation,
    /// Where a trace-driven link is in its trace.
    trace_at: TraceCursor,
    /// Service start and size of accepted segments not yet serialising.
    waiting: VecDeque<(Instant, u32)>,
    waiting_bytes: u64,
    red_avg: f64,
    /// Offers are processed in time order; a late one is treated as now.
    last_offer: Instant,
    runs: VecDeque<Run>,
    pub stats: LinkStats,
}

fn before(t: Instant, d: Duration) -> Instant {
    Instant::from_nanos(t.as_nanos().saturating_sub(d.as_nanos()))
}

impl Link {
    /// `loss` replaces the spec's Bernoulli `loss` (Gilbert–Elliott); the
    /// random stream is seeded per link.
    pub fn new(spec: LinkSpec, loss: Option<LossSpec>, rng: ChaCha8Rng) -> Link {
        let loss = LossModel::new(loss.unwrap_or(spec.loss));
        Link {
            bucket: spec.policer.map(TokenBucket::new),
            spec,
            loss,
            rng,
            up: true,
            outage: 0,
            busy_until: Instant::ZERO,
            busy_fraction: 0,
            last_serialisation: Serialisation::default(),
            trace_at: TraceCursor::default(),
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            red_avg: 0.0,
            last_offer: Instant::ZERO,
            runs: VecDeque::new(),
            stats: LinkStats::default(),
        }
    }

    /// Time to put `bytes` on the link at its rate, rounded up (RED's
    /// idle decay, as in the simulator).
    fn serialisation(&self, bytes: u32) -> Duration {
        Duration::from_nanos((u64::from(bytes) * 8 * 1_000_000_000).div_ceil(self.spec.rate_bps.max(1)))
    }

    /// Exit time of the first run waiting to leave.
    pub fn next_exit(&self) -> Option<Instant> {
        self.runs.front().map(|r| r.exit)
    }

    /// The first run, for the engine to take its due segments from.
    pub fn front_mut(&mut self) -> Option<&mut Run> {
        self.runs.front_mut()
    }

    pub fn pop_front(&mut self) -> Option<Run> {
        self.runs.pop_front()
    }

    /// Applies the outage schedule up to `now`; pushes the buffers of runs
    /// whose every segment an outage removed (to release) onto `dropped`.
    pub fn advance(&mut self, now: Instant, dropped: &mut Vec<u32>) {
        while let Some(&(down, up)) = self.spec.outages.get(self.outage) {
            if now < down {
                break;
            }
            if self.up {
                self.up = false;
                self.flush(down, dropped);
            }
            if now < up {
                break;
            }
            self.up = true;
            self.outage += 1;
        }
    }

    /// The link goes down at `at`: as in the simulator's `go_down`, the
    /// segments still waiting for service are dropped, while those
    /// serialising or propagating arrive. Waiting segments are the last
    /// ones accepted, so they sit at the tail of the FIFO.
    fn flush(&mut self, at: Instant, dropped: &mut Vec<u32>) {
        self.settle(at);
        let mut cut = self.waiting.len();
        if cut == 0 {
            return;
        }
        self.stats.packets_sent -= cut as u64;
        self.stats.bytes_sent -= self.waiting_bytes;
        self.stats.drops_down += cut as u64;
        // As in the simulator: the dropped segments' trace opportunities are free again.
        self.trace_at.rewind(self.waiting_bytes);
        self.waiting.clear();
        self.waiting_bytes = 0;
        while cut > 0 {
            let run = self.runs.back_mut().expect("waiting segments have not left");
            if usize::from(run.count) <= cut {
                cut -= usize::from(run.count);
                dropped.push(run.buf);
                self.runs.pop_back();
            } else {
                let keep = run.count - cut as u16;
                run.last_exit = run.exit_of(keep - 1);
                run.count = keep;
                cut = 0;
            }
        }
        // Free once the last segment kept finishes; with none left, from `at`.
        self.busy_until = self.runs.back().map_or(at.min(self.busy_until), |r| before(r.last_exit, self.spec.delay));
        self.busy_fraction = 0;
    }

    /// Offers segments `s` of a packet described by `meta`, the `i`-th
    /// arriving at `arrival(i)`. Accepted segments join the FIFO as runs;
    /// the caller adds one reference to `s.buf` per run this returns.
    pub fn offer(&mut self, s: Segments, meta: &Meta, arrival: impl Fn(u16) -> Instant) -> usize {
        let Segments { buf, first, count, route, hop } = s;
        let mut runs = 0;
        let mut open = false;
        for i in 0..count {
            let t = arrival(i).max(self.last_offer);
            self.last_offer = t;
            let seg = first + i;
            let Some(exit) = self.accept(t, meta.segment_bytes(seg)) else {
                open = false;
                continue;
            };
            if open && self.extend(exit) {
                continue;
            }
            self.runs.push_back(Run {
                buf,
                first: seg,
                count: 1,
                exit,
                step: Duration::ZERO,
                last_exit: exit,
                route,
                hop,
            });
            runs += 1;
            open = true;
        }
        runs
    }

    /// Appends a segment exiting at `exit` to the last run if it keeps the
    /// run's even spacing.
    fn extend(&mut self, exit: Instant) -> bool {
        let run = self.runs.back_mut().expect("an open run exists");
        if run.count == 1 {
            run.step = exit - run.exit;
        } else if run.last_exit != run.exit + run.step.saturating_mul(u64::from(run.count - 1)) {
            return false;
        }
        run.count += 1;
        run.last_exit = exit;
        true
    }

    /// Decides one segment of `bytes` arriving at `t`: its exit time, or
    /// `None` if dropped.
    fn accept(&mut self, t: Instant, bytes: u32) -> Option<Instant> {
        if !self.up {
            self.stats.drops_down += 1;
            return None;
        }
        if self.spec.mtu.is_some_and(|mtu| bytes > mtu) {
            self.stats.drops_mtu += 1;
            return None;
        }
        if self.bucket.as_mut().is_some_and(|b| !b.admits(t.as_nanos(), bytes)) {
            self.stats.drops_policed += 1;
            return None;
        }
        if self.loss.drops(&mut self.rng) {
            self.stats.drops_random += 1;
            return None;
        }
        self.settle(t);
        if self.aqm_drops(t, bytes) {
            self.stats.drops_early += 1;
            return None;
        }
        let busy = self.busy_until > t;
        if busy {
            let full = match self.spec.queue {
                QueueLimit::Packets(n) => self.waiting.len() >= n as usize,
                QueueLimit::Bytes(b) => self.waiting_bytes + u64::from(bytes) > b,
            };
            if full {
                self.stats.drops_queue += 1;
                return None;
            }
        }
        if !busy {
            self.busy_fraction = 0;
        }
        let (start, end) = self.schedule(self.busy_until.max(t), bytes);
        if busy {
            self.waiting.push_back((start, bytes));
            self.waiting_bytes += u64::from(bytes);
        }
        self.busy_until = end;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(bytes);
        Some(end + self.spec.delay)
    }

    /// When a segment of `bytes` that may start at `earliest` starts and
    /// finishes serialising: at the link's rate, or at the trace's next
    /// opportunities, exactly as the simulator schedules them.
    fn schedule(&mut self, earliest: Instant, bytes: u32) -> (Instant, Instant) {
        match &self.spec.trace {
            None => {
                let time = self.last_serialisation.remembered(bytes, self.spec.rate_bps);
                (earliest, earliest + time.after(&mut self.busy_fraction))
            }
            Some(trace) => trace.schedule(&mut self.trace_at, earliest, bytes),
        }
    }

    /// Segments whose service has started by `t` no longer wait.
    fn settle(&mut self, t: Instant) {
        while let Some(&(start, b)) = self.waiting.front() {
            if start > t {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= u64::from(b);
        }
    }

    /// The simulator's AQM: RED (the average queue decays over idle time as
    /// if small packets had been served, then moves towards the current
    /// queue; an early drop is drawn from the gentle ramp) or random drop.
    fn aqm_drops(&mut self, t: Instant, bytes: u32) -> bool {
        let red = match self.spec.aqm {
            Aqm::DropTail => return false,
            Aqm::RandomDrop(r) => {
                let busy = self.busy_until > t;
                return busy && r.drops(self.spec.queue, self.waiting.len(), self.waiting_bytes, bytes, &mut self.rng);
            }
            Aqm::Red(red) => red,
        };
        let queue = Red::queue_measure(self.spec.queue, self.waiting.len(), self.waiting_bytes);
        let per_packet = self.serialisation(RED_PACKET_BYTES);
        red.arrival(&mut self.red_avg, t.saturating_since(self.busy_until), per_packet, queue, &mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{tests::super_packet, Meta};
    use rand::{Rng, SeedableRng};

    fn spec(rate_bps: u64, delay_ms: u64, queue: QueueLimit, loss: f64) -> LinkSpec {
        LinkSpec {
            name: "l".into(),
            rate_bps,
            delay: Duration::from_millis(delay_ms),
            queue,
            loss: LossSpec::Bernoulli { p: loss },
            outages: vec![],
            aqm: Aqm::DropTail,
            trace: None,
            policer: None,
            mtu: None,
        }
    }

    fn segs(buf: u32, first: u16, count: u16) -> Segments {
        Segments { buf, first, count, route: 0, hop: 0 }
    }

    fn link(s: LinkSpec) -> Link {
        Link::new(s, None, ChaCha8Rng::seed_from_u64(1))
    }

    fn at(us: u64) -> Instant {
        Instant::from_nanos(us * 1000)
    }

    /// Every segment's exit time, in FIFO order.
    fn exits(l: &Link) -> Vec<Instant> {
        l.runs.iter().flat_map(|r| (0..r.count).map(move |i| r.exit_of(i))).collect()
    }

    #[test]
    fn a_super_packet_serialises_segment_by_segment() {
        // 1500-byte segments at 12 Mbit/s take 1 ms each; 5 ms delay.
        let mut l = link(spec(12_000_000, 5, QueueLimit::Packets(100), 0.0));
        let m = Meta::parse(&super_packet(3 * 1448 + 448, 1448, 0)).unwrap();
        assert_eq!(l.offer(segs(0, 0, m.segments), &m, |_| at(0)), 1, "one evenly spaced run");
        // The last segment is 500 bytes: 1/3 ms.
        let want: Vec<Instant> = [6000, 7000, 8000, 8334].iter().map(|&us| at(us)).collect();
        let got = exits(&l);
        for (g, w) in got.iter().zip(&want) {
            assert!(g.as_nanos().abs_diff(w.as_nanos()) < 1000, "{got:?} vs {want:?}");
        }
        let run = l.runs[0];
        assert_eq!((run.due(at(5999)), run.due(at(6000)), run.due(at(7500)), run.due(at(8400))), (0, 1, 2, 4));
        let mut r = run;
        let front = r.split_front(2);
        assert_eq!((front.first, front.count, front.last_exit), (0, 2, at(7000)));
        assert_eq!((r.first, r.count, r.exit, r.last_exit), (2, 2, at(8000), run.last_exit));
    }

    #[test]
    fn queue_limit_counts_waiting_segments_only() {
        let mut l = link(spec(12_000_000, 0, QueueLimit::Packets(2), 0.0));
        let m = Meta::parse(&super_packet(5 * 1448, 1448, 0)).unwrap();
        // One serialising + two waiting are accepted; the other two dropped.
        assert_eq!(l.offer(segs(0, 0, 5), &m, |_| at(0)), 1);
        assert_eq!(l.stats.packets_sent, 3);
        assert_eq!(l.stats.drops_queue, 2);
        // 1.5 ms later one has left and the next is serialising: room for one.
        assert_eq!(l.offer(segs(1, 0, 5), &m, |_| at(1500)), 1);
        assert_eq!(l.stats.packets_sent, 4);
        let e = exits(&l);
        assert_eq!(e, [at(1000), at(2000), at(3000), at(4000)]);
    }

    /// A policer as in the simulator, per segment: a 3000-byte bucket
    /// passes two of a super-packet's segments (at most 1500 bytes each on
    /// the wire) and drops the rest, then refills at its rate.
    #[test]
    fn a_policer_passes_its_burst_then_its_rate() {
        let mut l = link(LinkSpec {
            policer: Some(braid_sim::PolicerSpec { rate_bps: 12_000_000, burst_bytes: 3000 }),
            ..spec(1_000_000_000, 0, QueueLimit::Packets(100), 0.0)
        });
        let m = Meta::parse(&super_packet(5 * 1448, 1448, 0)).unwrap();
        l.offer(segs(0, 0, 5), &m, |_| at(0));
        assert_eq!((l.stats.packets_sent, l.stats.drops_policed), (2, 3));
        // 12 Mbit/s refills 1500 bytes a millisecond: one more segment.
        l.offer(segs(1, 0, 5), &m, |_| at(1000));
        assert_eq!((l.stats.packets_sent, l.stats.drops_policed), (3, 7));
    }

    /// An MTU as in the simulator, per segment: of a super-packet's two
    /// full segments and a 500-byte tail, only the tail fits 1000 bytes.
    #[test]
    fn an_mtu_drops_larger_segments() {
        let mut l = link(LinkSpec { mtu: Some(1000), ..spec(1_000_000_000, 0, QueueLimit::Packets(100), 0.0) });
        let m = Meta::parse(&super_packet(2 * 1448 + 500, 1448, 0)).unwrap();
        l.offer(segs(0, 0, 3), &m, |_| at(0));
        assert_eq!((l.stats.packets_sent, l.stats.drops_mtu, l.stats.drops()), (1, 2, 2));
    }

    #[test]
    fn loss_cuts_runs_per_segment() {
        let mut l = link(spec(1_000_000_000_000, 1, QueueLimit::Packets(1_000_000), 0.2));
        let m = Meta::parse(&super_packet(44 * 1448, 1448, 0)).unwrap();
        let mut runs = 0;
        for k in 0..1000 {
            runs += l.offer(segs(k, 0, 44), &m, |_| at(u64::from(k) * 100));
        }
        let s = l.stats;
        let rate = s.drops_random as f64 / 44_000.0;
        assert!((rate - 0.2).abs() < 0.01, "per-segment loss {rate}");
        assert_eq!(s.packets_sent + s.drops_random, 44_000);
        // Losses fall inside super-packets, so most are cut into several runs.
        assert!(runs > 5 * 1000, "{runs} runs");
    }

    #[test]
    fn outage_drops_waiting_segments_and_offers_but_not_those_in_flight() {
        let mut s = spec(12_000_000, 10, QueueLimit::Packets(100), 0.0);
        s.outages = vec![(at(2500), at(6000))];
        let mut l = link(s);
        let m = Meta::parse(&super_packet(5 * 1448, 1448, 0)).unwrap();
        l.offer(segs(0, 0, 5), &m, |_| at(0));
        let mut dropped = vec![];
        l.advance(at(3000), &mut dropped);
        // Segments starting at 0, 1, 2 ms survive; those starting at 3, 4 ms are dropped.
        assert_eq!(exits(&l), [at(11000), at(12000), at(13000)]);
        assert_eq!((l.stats.packets_sent, l.stats.drops_down), (3, 2));
        assert!(dropped.is_empty());
        assert_eq!(l.offer(segs(0, 0, 1), &m, |_| at(4000)), 0);
        assert_eq!(l.stats.drops_down, 3);
        l.advance(at(6000), &mut dropped);
        assert_eq!(l.offer(segs(0, 0, 1), &m, |_| at(6000)), 1);
        assert_eq!(*exits(&l).last().unwrap(), at(17000));
    }

    #[test]
    fn outage_removes_whole_runs_and_reports_their_buffers() {
        let mut s = spec(12_000_000, 0, QueueLimit::Packets(100), 0.0);
        s.outages = vec![(at(500), at(600))];
        let mut l = link(s);
        let m = Meta::parse(&super_packet(1448, 1448, 0)).unwrap();
        l.offer(segs(7, 0, 1), &m, |_| at(0));
        l.offer(segs(8, 0, 1), &m, |_| at(0));
        let mut dropped = vec![];
        l.advance(at(600), &mut dropped);
        assert_eq!(dropped, [8]);
        assert_eq!(l.runs.len(), 1);
        // Back up at 600 us: the serialiser is free once segment 7 is
        // through (1 ms), not after the dropped one.
        assert_eq!(l.offer(segs(9, 0, 1), &m, |_| at(600)), 1);
        assert_eq!(exits(&l), [at(1000), at(2000)]);
    }

    #[test]
    fn red_drops_early_under_a_standing_queue() {
        let mut s = spec(8_000_000, 0, QueueLimit::Packets(100), 0.0);
        s.aqm = braid_sim::Aqm::Red(braid_sim::Red::for_limit(100.0));
        let mut l = link(s);
        let m = Meta::parse(&super_packet(900, 1448, 0)).unwrap();
        for k in 0..5000 {
            l.offer(segs(k, 0, 1), &m, |_| at(0));
        }
        assert!(l.stats.drops_early > 0, "{:?}", l.stats);
    }

    /// As in the simulator, the trace opportunities of segments an outage
    /// drops are free again when the link comes back up.
    #[test]
    fn an_outage_frees_the_dropped_segments_opportunities() {
        use braid_sim::trace::DeliveryTrace;
        use std::sync::Arc;
        let mut s = spec(1_000_000, 1, QueueLimit::Packets(10), 0.0);
        s.trace = Some(Arc::new(DeliveryTrace::parse("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n").unwrap()));
        s.outages = vec![(at(1500), at(1550))];
        let mut l = link(s);
        let packet = |bytes: usize| Meta::parse(&super_packet(bytes - 52, 2000, 0)).unwrap();
        for (k, bytes) in [700, 700, 1000, 1504, 1504].into_iter().enumerate() {
            l.offer(segs(k as u32, 0, 1), &packet(bytes), |_| at(0));
        }
        // 0 and 1 share the 1 ms opportunity, 2 ends in the 2 ms one; the
        // outage drops 3 and 4, which would have used 2-3 ms and 3-4 ms.
        let mut dropped = vec![];
        l.advance(at(1600), &mut dropped);
        assert_eq!((dropped.len(), l.stats.drops_down), (2, 2));
        l.offer(segs(9, 0, 1), &packet(2000), |_| at(1600));
        // 2000 bytes take the 608 left at 2 ms and 1392 at 3 ms; exit after 1 ms.
        assert_eq!(*exits(&l).last().unwrap(), at(4000));
    }

    /// A trace-driven link exits every segment when the simulator's link
    /// fed the same offers delivers it, drops the same ones to the queue
    /// limit and to an outage: one model, not two that agree on average.
    #[test]
    fn trace_link_matches_the_simulator() {
        use braid_sim::trace::DeliveryTrace;
        use std::sync::Arc;
        // Bursts (several lines at one time), gaps and a 60 ms period.
        let trace = Arc::new(DeliveryTrace::parse("2\n2\n2\n5\n9\n9\n20\n21\n22\n40\n41\n60\n").unwrap());
        let mut s = spec(1_000_000, 3, QueueLimit::Packets(4), 0.0);
        s.trace = Some(trace);
        matches_the_simulator(s);
    }

    /// So does a link at a rate whose segments take fractions of a
    /// nanosecond (3 Mbit/s), which both carry from one to the next.
    #[test]
    fn fixed_rate_link_matches_the_simulator() {
        matches_the_simulator(spec(3_000_000, 3, QueueLimit::Packets(4), 0.0));
    }

    /// Offers the same 400 segments at random times, through an outage,
    /// to `s` as the emulator's link and as the simulator's.
    fn matches_the_simulator(mut s: LinkSpec) {
        s.outages = vec![(at(230_000), at(260_000))];
        let mut sim = braid_sim::Link::new(s.clone(), ChaCha8Rng::seed_from_u64(1));
        let mut emu = link(s);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut t, mut down, mut up) = (0, false, false);
        let mut dropped = vec![];
        for k in 0..400u32 {
            t += rng.gen_range(0..2_000u64);
            if t >= 230_000 && !down {
                down = true;
                sim.go_down(at(230_000)).for_each(drop);
            }
            if t >= 260_000 && !up {
                up = true;
                sim.up = true;
            }
            emu.advance(at(t), &mut dropped);
            // 752 and 1504 fill opportunities exactly, 1500 nearly.
            let bytes = [60, 752, 1500, 1504][rng.gen_range(0..4)];
            let m = Meta::parse(&super_packet(bytes - 52, 1500, 0)).unwrap();
            assert_eq!(m.segment_bytes(0), bytes as u32);
            sim.offer(at(t), k, bytes as u32);
            emu.offer(segs(k, 0, 1), &m, |_| at(t));
        }
        let mut want = vec![];
        while let Some(arrives) = sim.next_arrival() {
            want.push((sim.arrive(arrives).0, arrives));
        }
        let got: Vec<(u32, Instant)> = emu.runs.iter().map(|r| (r.buf, r.exit)).collect();
        assert_eq!(got, want);
        let (a, b) = (sim.stats(at(t)), emu.stats);
        assert_eq!((a.packets_sent, a.bytes_sent), (b.packets_sent, b.bytes_sent));
        assert_eq!((a.drops_queue, a.drops_down), (b.drops_queue, b.drops_down));
        assert!(b.drops_queue > 10 && b.drops_down > 10 && b.packets_sent > 100, "{b:?}");
    }
}
