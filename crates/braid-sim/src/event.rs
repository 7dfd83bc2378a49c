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

/// One queued event, ordered by `key`: the time in nanoseconds in the high
/// 64 bits and the insertion sequence in the low 64, so one integer
/// comparison orders by (time, seq).
#[derive(Debug)]
struct Entry {
    key: u128,
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
#[derive(Debug, Default)]
pub struct EventQueue {
    arrivals: BinaryHeap<Reverse<Entry>>,
    others: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    /// Whether the last peeked event heads `others`.
    next_is_other: bool,
}

impl EventQueue {
    /// The key of an event at `time` scheduled now.
    fn key(&mut self, time: Instant) -> u128 {
        self.seq += 1;
        u128::from(time.as_nanos()) << 64 | u128::from(self.seq)
    }

    pub fn push(&mut self, time: Instant, event: Event) {
        let key = self.key(time);
        let heap = match event {
            Event::Arrive { .. } => &mut self.arrivals,
            _ => &mut self.others,
        };
        heap.push(Reverse(Entry { key, event }));
    }

    #[cfg(test)]
    fn pop(&mut self) -> Option<(Instant, Event)> {
        let next = self.peek_until(Instant::from_nanos(u64::MAX))?;
        self.remove_next();
        Some(next)
    }

    /// The heap holding the event [`peek_until`] returned.
    ///
    /// [`peek_until`]: EventQueue::peek_until
    fn next_heap(&mut self) -> &mut BinaryHeap<Reverse<Entry>> {
        match self.next_is_other {
            true => &mut self.others,
            false => &mut self.arrivals,
        }
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
        let next = match (self.arrivals.peek(), self.others.peek()) {
            (Some(a), Some(o)) if o.0.key < a.0.key => &o.0,
            (Some(a), _) => &a.0,
            (None, o) => &o?.0,
        };
        let (time, event) = ((next.key >> 64) as u64, next.event);
        // Only arrivals are in `arrivals`.
        self.next_is_other = !matches!(event, Event::Arrive { .. });
        (time <= until.as_nanos()).then_some((Instant::from_nanos(time), event))
    }

    pub fn remove_next(&mut self) {
        self.next_heap().pop();
    }

    /// Moves the next event to `time` (not earlier than its current time),
    /// as a new event scheduled now would be ordered: one sift through the
    /// heap instead of a pop and a push.
    pub fn reschedule_next(&mut self, time: Instant) {
        let key = self.key(time);
        let mut next = self.next_heap().peek_mut().expect("an event to reschedule");
        debug_assert!(key > next.0.key, "events only move later");
        next.0.key = key;
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
    /// and reschedules: the same events in the same order.
    #[test]
    fn two_heaps_keep_one_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let (mut q, mut model) = (EventQueue::default(), Vec::<(u64, u64, Event)>::new());
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
