//! One direction of the emulator: the links packets cross in that
//! direction and the routes over them, driven by the caller's clock.
//!
//! The engine never reads a clock or touches a device, so its timing is
//! tested in virtual time; the runtime calls [`Engine::ingress`] for each
//! packet it reads, [`Engine::poll`] to collect what is due, and sleeps
//! until [`Engine::next_due`]. Runs of segments move from link to link in
//! exit-time order (the link whose first run exits earliest goes first),
//! each segment arriving at the next link at its own exit time.

use braid_proto::Instant;

use crate::link::{Link, Run, Segments};
use crate::pool::Pool;

/// Links a route crosses in order, and where it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub links: Vec<usize>,
    /// Index of the device packets on this route are written to.
    pub egress: usize,
}

/// Segments `[first, first + count)` of buffer `buf` are due at `egress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub egress: usize,
    pub buf: u32,
    pub first: u16,
    pub count: u16,
}

pub struct Engine {
    links: Vec<Link>,
    routes: Vec<Route>,
    pool: Pool,
    /// Scratch: buffers whose runs an outage removed.
    dropped: Vec<u32>,
}

impl Engine {
    /// Every route must name at least one link, all within `links`.
    pub fn new(links: Vec<Link>, routes: Vec<Route>) -> Engine {
        assert!(routes.iter().all(|r| !r.links.is_empty() && r.links.iter().all(|&l| l < links.len())));
        Engine { links, routes, pool: Pool::default(), dropped: Vec::new() }
    }

    pub fn pool(&mut self) -> &mut Pool {
        &mut self.pool
    }

    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Packet `buf` (committed to the pool, one reference that the engine
    /// now owns) entered `route` at `now`.
    pub fn ingress(&mut self, now: Instant, route: usize, buf: u32) {
        let link = self.routes[route].links[0];
        self.advance(link, now);
        let meta = *self.pool.meta(buf);
        let segments = Segments { buf, first: 0, count: meta.segments, route: route as u16, hop: 0 };
        let runs = self.links[link].offer(segments, &meta, |_| now);
        for _ in 0..runs {
            self.pool.retain(buf);
        }
        self.pool.release(buf);
    }

    fn advance(&mut self, link: usize, now: Instant) {
        self.links[link].advance(now, &mut self.dropped);
        for id in self.dropped.drain(..) {
            self.pool.release(id);
        }
    }

    /// When the next segment leaves a link.
    pub fn next_due(&self) -> Option<Instant> {
        self.links.iter().filter_map(Link::next_exit).min()
    }

    /// Moves every segment that has left its link by `now` on to the next
    /// link of its route, or hands it to `deliver` at the route's end. The
    /// buffer is valid during the call only.
    pub fn poll(&mut self, now: Instant, deliver: &mut dyn FnMut(&Pool, Delivery)) {
        for l in 0..self.links.len() {
            self.advance(l, now);
        }
        loop {
            let next = self
                .links
                .iter()
                .enumerate()
                .filter_map(|(i, l)| l.next_exit().filter(|&t| t <= now).map(|t| (t, i)))
                .min();
            let Some((_, l)) = next else { break };
            let part = self.take_due(l, now);
            let route = &self.routes[usize::from(part.route)];
            let hop = usize::from(part.hop) + 1;
            match route.links.get(hop) {
                Some(&next_link) => {
                    let meta = *self.pool.meta(part.buf);
                    let segments = Segments {
                        buf: part.buf,
                        first: part.first,
                        count: part.count,
                        route: part.route,
                        hop: hop as u8,
                    };
                    let runs = self.links[next_link].offer(segments, &meta, |i| part.arrival(i));
                    for _ in 0..runs {
                        self.pool.retain(part.buf);
                    }
                }
                None => deliver(
                    &self.pool,
                    Delivery { egress: route.egress, buf: part.buf, first: part.first, count: part.count },
                ),
            }
            self.pool.release(part.buf);
        }
    }

    /// Takes the segments of link `l`'s first run that have exited by
    /// `now` (at least one), as a run holding its own buffer reference.
    fn take_due(&mut self, l: usize, now: Instant) -> Run {
        let link = &mut self.links[l];
        let run = link.front_mut().expect("a due run exists");
        let due = run.due(now);
        if due == run.count {
            return link.pop_front().expect("front exists");
        }
        let part = run.split_front(due);
        self.pool.retain(part.buf);
        part
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::super_packet;
    use braid_proto::Duration;
    use braid_sim::{LinkSpec, QueueLimit};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn link(rate_bps: u64, delay_us: u64, loss: f64) -> Link {
        let spec = LinkSpec {
            name: "l".into(),
            rate_bps,
            delay: Duration::from_micros(delay_us),
            queue: QueueLimit::Packets(1000),
            loss: braid_sim::loss::LossSpec::Bernoulli { p: loss },
            outages: vec![],
            aqm: braid_sim::Aqm::DropTail,
            trace: None,
            policer: None,
            mtu: None,
        };
        Link::new(spec, None, ChaCha8Rng::seed_from_u64(3))
    }

    fn load(e: &mut Engine, pkt: &[u8]) -> u32 {
        let (id, buf) = e.pool().reserve();
        buf[..pkt.len()].copy_from_slice(pkt);
        e.pool().commit(id, pkt.len()).unwrap()
    }

    fn us(t: u64) -> Instant {
        Instant::from_nanos(t * 1000)
    }

    /// Polls every `tick` microseconds until `end`, recording deliveries as
    /// (time, egress, segments).
    fn drive(e: &mut Engine, tick: u64, end: u64) -> Vec<(u64, usize, u16)> {
        let mut out = vec![];
        let mut t = 0;
        while t <= end {
            e.poll(us(t), &mut |_, d| out.push((t, d.egress, d.count)));
            t += tick;
        }
        out
    }

    #[test]
    fn two_hops_add_serialisation_and_delay_and_deliver_in_batches() {
        // Access link 12 Mbit/s (1 ms per 1500 B), 2 ms; core 1.2 Gbit/s, 0 ms.
        let mut e = Engine::new(
            vec![link(12_000_000, 2000, 0.0), link(1_200_000_000, 0, 0.0)],
            vec![Route { links: vec![0, 1], egress: 5 }],
        );
        let b = load(&mut e, &super_packet(4 * 1448, 1448, 0));
        e.ingress(us(0), 0, b);
        assert_eq!(e.next_due(), Some(us(3000)));
        // Segments reach the core at 3, 4, 5, 6 ms and leave it 10 us later.
        let got = drive(&mut e, 500, 10_000);
        assert_eq!(got, [(3500, 5, 1), (4500, 5, 1), (5500, 5, 1), (6500, 5, 1)]);
        // Polled rarely, due segments leave together as one write.
        let b = load(&mut e, &super_packet(4 * 1448, 1448, 0));
        e.ingress(us(20_000), 0, b);
        let mut out = vec![];
        e.poll(us(25_500), &mut |_, d| out.push(d.count));
        assert_eq!(out, [3]);
        assert_eq!(e.pool.in_use(), 1);
        e.poll(us(30_000), &mut |_, d| out.push(d.count));
        assert_eq!(out, [3, 1]);
        assert_eq!(e.pool.in_use(), 0, "every buffer released");
    }

    #[test]
    fn rate_holds_over_many_packets() {
        // 100 Mbit/s: 8333 full segments per second.
        let mut e = Engine::new(vec![link(100_000_000, 0, 0.0)], vec![Route { links: vec![0], egress: 0 }]);
        let mut delivered = 0u64;
        let mut last = 0;
        for ms in 0..1000u64 {
            // Offer 200 Mbit/s: two 10-segment super-packets per ms.
            for _ in 0..2 {
                let b = load(&mut e, &super_packet(10 * 1448, 1448, 0));
                e.ingress(us(ms * 1000), 0, b);
            }
            e.poll(us(ms * 1000), &mut |pool, d| {
                delivered += u64::from(d.count);
                last = pool.meta(d.buf).segment_bytes(d.first);
            });
        }
        assert_eq!(last, 1500);
        // 1 s at 100 Mbit/s, minus what is still serialising.
        assert!((8300..=8334).contains(&delivered), "{delivered}");
        assert!(e.links()[0].stats.drops_queue > 9000);
    }

    #[test]
    fn loss_applies_per_segment_of_super_packets() {
        let mut e = Engine::new(vec![link(10_000_000_000, 100, 0.01)], vec![Route { links: vec![0], egress: 0 }]);
        let mut segs = 0u64;
        for k in 0..10_000u64 {
            let b = load(&mut e, &super_packet(20 * 1448, 1448, 0));
            e.ingress(us(k * 50), 0, b);
            e.poll(us(k * 50), &mut |_, d| segs += u64::from(d.count));
        }
        e.poll(us(10_000_000), &mut |_, d| segs += u64::from(d.count));
        let lost = 200_000 - segs;
        assert_eq!(lost, e.links()[0].stats.drops_random);
        let rate = lost as f64 / 200_000.0;
        assert!((rate - 0.01).abs() < 0.001, "{rate}");
        assert_eq!(e.pool.in_use(), 0);
    }

    /// One link following delivery trace `text`, 1000-packet queue.
    fn trace_link(text: &str) -> Link {
        let trace = braid_sim::trace::DeliveryTrace::parse(text).unwrap();
        let mut l = link(trace.mean_rate_bps() as u64, 0, 0.0);
        l.spec.trace = Some(std::sync::Arc::new(trace));
        l
    }

    /// Offers a 1500-byte segment every `gap_us` until `end_us` and polls
    /// each time: the delivery times in microseconds, one per segment.
    fn saturate(e: &mut Engine, gap_us: u64, end_us: u64) -> Vec<u64> {
        let mut out = vec![];
        for t in (0..=end_us).step_by(gap_us as usize) {
            let b = load(e, &super_packet(1448, 1448, 0));
            e.ingress(us(t), 0, b);
            e.poll(us(t), &mut |_, d| out.extend(std::iter::repeat_n(t, usize::from(d.count))));
        }
        out
    }

    #[test]
    fn trace_delivers_its_opportunities_times_1504_bytes() {
        // 1200 opportunities a second: one each ms, two every fifth ms.
        let text: String =
            (1..=1000).map(|ms| if ms % 5 == 0 { format!("{ms}\n{ms}\n") } else { format!("{ms}\n") }).collect();
        let mut e = Engine::new(vec![trace_link(&text)], vec![Route { links: vec![0], egress: 0 }]);
        // Offered at 2000 segments a second for 3 s: the queue never empties.
        let got = saturate(&mut e, 500, 3_000_000);
        let bytes = got.len() as u64 * 1500;
        let want = 3 * 1200 * u64::from(braid_sim::trace::OPPORTUNITY_BYTES);
        // Each delivered segment has its last byte in an opportunity by 3 s.
        assert!(bytes <= want && want - bytes < 1500, "{bytes} bytes delivered, the trace allows {want}");
        let s = e.links()[0].stats;
        assert!(s.drops_queue > 1000, "{s:?}");
    }

    #[test]
    fn trace_repeats_with_its_last_time_as_period() {
        // Opportunities at 1..=10 ms and at 100 ms, which is also the period.
        let text: String = (1..=10).chain([100]).map(|ms| format!("{ms}\n")).collect();
        let mut e = Engine::new(vec![trace_link(&text)], vec![Route { links: vec![0], egress: 0 }]);
        let b = load(&mut e, &super_packet(40 * 1448, 1448, 0));
        e.ingress(us(0), 0, b);
        let got = drive(&mut e, 1000, 400_000);
        let times: Vec<u64> = got.iter().flat_map(|&(t, _, n)| std::iter::repeat_n(t / 1000, usize::from(n))).collect();
        // Segment j (1-based) of 1500 bytes ends in opportunity ceil(1500 j / 1504):
        // opportunities 1-11 in the first period, 12-22 in the second...
        let opportunity_ms =
            |k: u64| 100 * ((k - 1) / 11) + [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100][((k - 1) % 11) as usize];
        let want: Vec<u64> = (1..=40).map(|j: u64| opportunity_ms((1500 * j).div_ceil(1504))).collect();
        assert_eq!(times, want);
        assert_eq!(*times.last().unwrap(), 307, "the fourth period's 7th opportunity");
        assert_eq!(e.pool.in_use(), 0);
    }
}
