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

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, time: Instant, event: Event) {
        self.seq += 1;
        let key = u128::from(time.as_nanos()) << 64 | u128::from(self.seq);
        self.heap.push(Reverse(Entry { key, event }));
    }

    #[cfg(test)]
    fn pop(&mut self) -> Option<(Instant, Event)> {
        self.heap.pop().map(|Reverse(e)| (Instant::from_nanos((e.key >> 64) as u64), e.event))
    }

    /// The next event if it is due at or before `until`, left in the queue:
    /// the caller then removes it ([`remove_next`]) or moves it later
    /// ([`reschedule_next`]). A later event stays where it is (popping and
    /// re-pushing it would change its place among events at the same instant).
    ///
    /// [`remove_next`]: EventQueue::remove_next
    /// [`reschedule_next`]: EventQueue::reschedule_next
    pub fn peek_until(&self, until: Instant) -> Option<(Instant, Event)> {
        let next = &self.heap.peek()?.0;
        let time = (next.key >> 64) as u64;
        (time <= until.as_nanos()).then_some((Instant::from_nanos(time), next.event))
    }

    pub fn remove_next(&mut self) {
        self.heap.pop();
    }

    /// Moves the next event to `time` (not earlier than its current time),
    /// as a new event scheduled now would be ordered: one sift through the
    /// heap instead of a pop and a push.
    pub fn reschedule_next(&mut self, time: Instant) {
        self.seq += 1;
        let key = u128::from(time.as_nanos()) << 64 | u128::from(self.seq);
        let mut next = self.heap.peek_mut().expect("an event to reschedule");
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
}
