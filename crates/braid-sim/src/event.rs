//! The event queue: ordered by (time, insertion sequence), so two events at
//! the same instant always run in the order they were scheduled and a run is
//! reproducible bit for bit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use braid_proto::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of a link reached its far end.
    Arrive { link: u32 },
    /// An endpoint's connection timer.
    Timer { endpoint: u32 },
    /// A flow's application starts.
    FlowStart { flow: u32 },
    /// A constant-rate application writes its next message.
    AppWrite { flow: u32 },
    /// A link goes down or comes back.
    LinkState { link: u32, up: bool },
    /// A cross-traffic source sends its next packet.
    CrossSend { source: u32 },
}

/// Keys order events by (time, insertion sequence) in one integer
/// comparison: the time in nanoseconds in the high 64 bits, the sequence
/// number in the next 32, and in the low 32 the link of an arrival (0 for
/// other events). Sequence numbers are unique among pending events, so the
/// low bits never decide the order; an arrival is its key alone, 16 bytes,
/// which its heap moves at every sift.
type Key = u128;

/// Any other event, with its key.
#[derive(Debug)]
struct Entry {
    key: Key,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// The pending events, in two heaps that together hold one order.
///
/// Arrivals (one per busy link) are nearly all the events run, while
/// connection timers (one per endpoint, mostly a retransmission timeout
/// far ahead) are nearly all the events waiting. Kept apart, the heap
/// worked on per packet stays as small as the number of busy links, and
/// its cache lines stay warm, whatever the number of flows; the next event
/// is the earlier of the two heads. Keys are unique, so the order is the
/// same as one heap's.
#[derive(Debug)]
pub struct EventQueue {
    arrivals: BinaryHeap<Reverse<Key>>,
    others: BinaryHeap<Reverse<Entry>>,
    /// The last sequence number given out.
    seq: u32,
    /// When `seq` reaches this, the pending events are numbered afresh.
    seq_limit: u32,
    /// Whether the last peeked event heads `others`.
    next_is_other: bool,
    /// The head of `arrivals` has run and is no longer pending. It leaves
    /// the heap when the next arrival is pushed, which takes its place (one
    /// sift through the heap rather than one for the removal and one for
    /// the push: a packet that leaves one idle link for another costs
    /// both), or at the next peek.
    arrival_done: bool,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_seq_limit(u32::MAX)
    }
}

impl EventQueue {
    fn with_seq_limit(seq_limit: u32) -> Self {
        EventQueue {
            arrivals: BinaryHeap::new(),
            others: BinaryHeap::new(),
            seq: 0,
            seq_limit,
            next_is_other: false,
            arrival_done: false,
        }
    }

    /// The key of an event at `time` scheduled now, without its low bits.
    fn key(&mut self, time: Instant) -> Key {
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        self.seq += 1;
        Key::from(time.as_nanos()) << 64 | Key::from(self.seq) << 32
    }

    /// Numbers the pending events 1, 2, ... in their order, so sequence
    /// numbers never wrap (after 4 billion events scheduled, a long run's
    /// worth: about once per 1.3 billion packets).
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        self.drop_done_arrival();
        let mut keys: Vec<(Key, Option<Event>)> = self.arrivals.drain().map(|k| (k.0, None)).collect();
        keys.extend(self.others.drain().map(|e| (e.0.key, Some(e.0.event))));
        keys.sort_unstable_by_key(|&(key, _)| key);
        for (seq, (key, event)) in (1u32..).zip(keys) {
            let key = key & !(Key::from(u32::MAX) << 32) | Key::from(seq) << 32;
            match event {
                None => self.arrivals.push(Reverse(key)),
                Some(event) => self.others.push(Reverse(Entry { key, event })),
            }
            self.seq = seq;
        }
    }

    #[inline]
    pub fn push(&mut self, time: Instant, event: Event) {
        let key = self.key(time);
        match event {
            Event::Arrive { link } => {
                let arrival = Reverse(key | Key::from(link));
                match self.arrival_done {
                    true => {
                        self.arrival_done = false;
                        *self.arrivals.peek_mut().expect("the arrival done is still in the heap") = arrival;
                    }
                    false => self.arrivals.push(arrival),
                }
            }
            _ => self.others.push(Reverse(Entry { key, event })),
        }
    }

    /// Takes the arrival that has run out of the heap, if it is still there.
    #[inline]
    fn drop_done_arrival(&mut self) {
        if self.arrival_done {
            self.arrival_done = false;
            self.arrivals.pop();
        }
    }

    #[cfg(test)]
    fn pop(&mut self) -> Option<(Instant, Event)> {
        let next = self.peek_until(Instant::from_nanos(u64::MAX))?;
        self.remove_next();
        Some(next)
    }

    /// The next event if it is due at or before `until`, left in the queue:
    /// the caller then removes it ([`remove_next`]) or moves it later
    /// ([`reschedule_next`]), before pushing any event earlier than it. A
    /// later event stays where it is (popping and re-pushing it would change
    /// its place among events at the same instant).
    ///
    /// [`remove_next`]: EventQueue::remove_next
    /// [`reschedule_next`]: EventQueue::reschedule_next
    #[inline]
    pub fn peek_until(&mut self, until: Instant) -> Option<(Instant, Event)> {
        self.drop_done_arrival();
        let (key, event) = match (self.arrivals.peek(), self.others.peek()) {
            (Some(a), Some(o)) if o.0.key < a.0 => (o.0.key, o.0.event),
            (Some(a), _) => (a.0, Event::Arrive { link: a.0 as u32 }),
            (None, o) => o.map(|o| (o.0.key, o.0.event))?,
        };
        // Only arrivals are in `arrivals`.
        self.next_is_other = !matches!(event, Event::Arrive { .. });
        let time = (key >> 64) as u64;
        (time <= until.as_nanos()).then_some((Instant::from_nanos(time), event))
    }

    pub fn remove_next(&mut self) {
        if self.next_is_other {
            self.others.pop();
        } else {
            debug_assert!(!self.arrival_done, "an arrival removed twice");
            self.arrival_done = true;
        }
    }

    /// Moves the next event to `time` (not earlier than its current time),
    /// as a new event scheduled now would be ordered: one sift through the
    /// heap instead of a pop and a push.
    pub fn reschedule_next(&mut self, time: Instant) {
        let key = self.key(time);
        if self.next_is_other {
            let mut next = self.others.peek_mut().expect("an event to reschedule");
            debug_assert!(key > next.0.key, "events only move later");
            next.0.key = key;
        } else {
            debug_assert!(!self.arrival_done, "a removed arrival rescheduled");
            let mut next = self.arrivals.peek_mut().expect("an event to reschedule");
            debug_assert!(key > next.0, "events only move later");
            next.0 = key | next.0 & Key::from(u32::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        let t = Instant::from_nanos(5);
        q.push(t, Event::FlowStart { flow: 0 });
        q.push(Instant::from_nanos(1), Event::Timer { endpoint: 9 });
        q.push(t, Event::Timer { endpoint: 1 });
        assert_eq!(q.pop(), Some((Instant::from_nanos(1), Event::Timer { endpoint: 9 })));
        assert_eq!(q.pop(), Some((t, Event::FlowStart { flow: 0 })));
        assert_eq!(q.pop(), Some((t, Event::Timer { endpoint: 1 })));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn peek_leaves_later_events_in_place_and_rescheduling_reorders() {
        let mut q = EventQueue::default();
        let t = Instant::from_nanos(10);
        q.push(t, Event::Timer { endpoint: 1 });
        q.push(t, Event::Timer { endpoint: 2 });
        assert_eq!(q.peek_until(Instant::from_nanos(9)), None);
        q.push(t, Event::Timer { endpoint: 3 });
        let e = |endpoint| (t, Event::Timer { endpoint });
        assert_eq!(q.peek_until(t), Some(e(1)));
        // Moved to the same instant, it now comes after those already there.
        q.reschedule_next(t);
        let order: Vec<_> = std::iter::from_fn(|| {
            let next = q.peek_until(t)?;
            q.remove_next();
            Some(next)
        })
        .collect();
        assert_eq!(order, [e(2), e(3), e(1)]);
    }

    /// Against one sorted list, under random pushes of both kinds, removals
    /// and reschedules: the same events in the same order; also when
    /// sequence numbers run out every few events and are given out afresh.
    #[test]
    fn two_heaps_keep_one_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for round in 0..400 {
            let q = match round % 2 {
                0 => EventQueue::default(),
                _ => EventQueue::with_seq_limit(rng.gen_range(1..40)),
            };
            let (mut q, mut model) = (q, Vec::<(u64, u64, Event)>::new());
            let (mut seq, mut now) = (0u64, 0u64);
            for _ in 0..rng.gen_range(1..300) {
                match rng.gen_range(0..4) {
                    0 | 1 => {
                        let t = now + rng.gen_range(0..50);
                        let event = match rng.gen_bool(0.5) {
                            true => Event::Arrive { link: rng.gen_range(0..5) },
                            false => Event::Timer { endpoint: rng.gen_range(0..5) },
                        };
                        seq += 1;
                        q.push(Instant::from_nanos(t), event);
                        model.push((t, seq, event));
                    }
                    op => {
                        model.sort_by_key(|m| (m.0, m.1));
                        let until = now + rng.gen_range(0..20);
                        let want = model.first().filter(|m| m.0 <= until).map(|m| (Instant::from_nanos(m.0), m.2));
                        assert_eq!(q.peek_until(Instant::from_nanos(until)), want);
                        let Some(&(t, _, event)) = model.first().filter(|m| m.0 <= until) else { continue };
                        now = t;
                        if op == 2 {
                            q.remove_next();
                            model.remove(0);
                        } else {
                            let later = t + rng.gen_range(1..30);
                            seq += 1;
                            q.reschedule_next(Instant::from_nanos(later));
                            model[0] = (later, seq, event);
                        }
                    }
                }
            }
            model.sort_by_key(|m| (m.0, m.1));
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            assert_eq!(rest, model.iter().map(|m| (Instant::from_nanos(m.0), m.2)).collect::<Vec<_>>());
        }
    }
}
