//! Disjoint ranges `[start, end)` ordered by start: the receive buffer's
//! out-of-order data.
//!
//! The set nearly always holds a few ranges (the holes a slower subflow or
//! a loss leaves) and changes at its ends: a new highest range, the highest
//! growing, the lowest merging into the in-order data. A sorted deque does
//! each of those in a few instructions, where a B-tree descends from its
//! root every time. But a peer may leave a hole between every segment and
//! then fill them in any order, and a deque inserting in its middle moves up
//! to half of its entries. So past [`SMALL`] ranges the set is a B-tree,
//! whose every operation stays logarithmic, until it is down to half that
//! (the gap keeps a set that hovers around the limit from switching back
//! and forth). A deque of [`SMALL`] ranges moves at most 2 KB per insert.

use std::collections::{btree_map, vec_deque, BTreeMap, VecDeque};

/// Most ranges kept in the sorted deque.
const SMALL: usize = 256;

#[derive(Debug)]
pub enum Intervals {
    Small(VecDeque<(u64, u64)>),
    Large(BTreeMap<u64, u64>),
}

impl Default for Intervals {
    fn default() -> Self {
        Intervals::Small(VecDeque::new())
    }
}

impl Intervals {
    pub fn len(&self) -> usize {
        match self {
            Intervals::Small(d) => d.len(),
            Intervals::Large(m) => m.len(),
        }
    }

    pub fn first(&self) -> Option<(u64, u64)> {
        match self {
            Intervals::Small(d) => d.front().copied(),
            Intervals::Large(m) => m.first_key_value().map(|(&s, &e)| (s, e)),
        }
    }

    pub fn last(&self) -> Option<(u64, u64)> {
        match self {
            Intervals::Small(d) => d.back().copied(),
            Intervals::Large(m) => m.last_key_value().map(|(&s, &e)| (s, e)),
        }
    }

    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        let first = match self {
            Intervals::Small(d) => d.pop_front(),
            Intervals::Large(m) => m.pop_first(),
        };
        self.shrink();
        first
    }

    pub fn pop_last(&mut self) -> Option<(u64, u64)> {
        let last = match self {
            Intervals::Small(d) => d.pop_back(),
            Intervals::Large(m) => m.pop_last(),
        };
        self.shrink();
        last
    }

    /// Moves the end of the highest range (there must be one).
    pub fn set_last_end(&mut self, end: u64) {
        let last = match self {
            Intervals::Small(d) => d.back_mut().map(|(_, e)| e),
            Intervals::Large(m) => m.values_mut().next_back(),
        };
        *last.expect("a highest range") = end;
    }

    /// Adds `[start, end)`, which must not overlap or touch a range held.
    pub fn insert(&mut self, start: u64, end: u64) {
        match self {
            Intervals::Small(d) if d.len() < SMALL => {
                // Most often the new highest range: the search ends at once.
                let at = if d.back().is_none_or(|&(s, _)| s < start) {
                    d.len()
                } else {
                    d.partition_point(|&(s, _)| s < start)
                };
                d.insert(at, (start, end));
            }
            Intervals::Small(d) => {
                let mut m: BTreeMap<u64, u64> = d.drain(..).collect();
                m.insert(start, end);
                *self = Intervals::Large(m);
            }
            Intervals::Large(m) => {
                m.insert(start, end);
            }
        }
    }

    /// The highest range starting below `at`.
    pub fn below(&self, at: u64) -> Option<(u64, u64)> {
        match self {
            Intervals::Small(d) => d.partition_point(|&(s, _)| s < at).checked_sub(1).map(|i| d[i]),
            Intervals::Large(m) => m.range(..at).next_back().map(|(&s, &e)| (s, e)),
        }
    }

    /// The ranges starting in `[lo, hi]`, in order.
    pub fn starting_in(&self, lo: u64, hi: u64) -> Range<'_> {
        match self {
            Intervals::Small(d) => {
                let (i, j) = (d.partition_point(|&(s, _)| s < lo), d.partition_point(|&(s, _)| s <= hi));
                Range::Small(d.range(i..j.max(i)))
            }
            Intervals::Large(m) if lo <= hi => Range::Large(m.range(lo..=hi)),
            Intervals::Large(m) => Range::Large(m.range(lo..lo)),
        }
    }

    /// Removes the ranges starting in `[lo, hi]`, handing each to `removed`.
    pub fn remove_starting_in(&mut self, lo: u64, hi: u64, mut removed: impl FnMut(u64, u64)) {
        match self {
            Intervals::Small(d) => {
                let (i, j) = (d.partition_point(|&(s, _)| s < lo), d.partition_point(|&(s, _)| s <= hi));
                for (s, e) in d.drain(i..j.max(i)) {
                    removed(s, e);
                }
            }
            Intervals::Large(m) => {
                while let Some((&s, &e)) = m.range(lo..).next().filter(|(&s, _)| s <= hi) {
                    m.remove(&s);
                    removed(s, e);
                }
            }
        }
        self.shrink();
    }

    /// A B-tree down to half of [`SMALL`] ranges becomes a deque again.
    fn shrink(&mut self) {
        if let Intervals::Large(m) = self {
            if m.len() <= SMALL / 2 {
                *self = Intervals::Small(std::mem::take(m).into_iter().collect());
            }
        }
    }
}

/// The ranges [`Intervals::starting_in`] returns.
pub enum Range<'a> {
    Small(vec_deque::Iter<'a, (u64, u64)>),
    Large(btree_map::Range<'a, u64, u64>),
}

impl Iterator for Range<'_> {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        match self {
            Range::Small(i) => i.next().copied(),
            Range::Large(i) => i.next().map(|(&s, &e)| (s, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, u64),
        PopFirst,
        PopLast,
        SetLastEnd(u64),
        Remove(u64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (0u64..4_000, 1u64..5).prop_map(|(s, l)| Op::Insert(s, s + l)),
            1 => Just(Op::PopFirst),
            1 => Just(Op::PopLast),
            1 => (0u64..3).prop_map(Op::SetLastEnd),
            1 => (0u64..4_000, 0u64..100).prop_map(|(lo, w)| Op::Remove(lo, lo + w)),
        ]
    }

    proptest! {
        /// Against a B-tree map under random operations, through the switch
        /// to a B-tree past 256 ranges and back: the same ranges, the same
        /// answers to every query.
        #[test]
        fn behaves_as_an_ordered_map(ops in proptest::collection::vec(op(), 1..1_500), probes in proptest::collection::vec((0u64..4_100, 0u64..400), 8)) {
            let (mut set, mut model) = (Intervals::default(), BTreeMap::<u64, u64>::new());
            for op in ops {
                match op {
                    Op::Insert(s, e) => {
                        // Only ranges that neither overlap nor touch one held.
                        let clear = model.range(..=e).next_back().is_none_or(|(_, &me)| me < s);
                        if clear {
                            set.insert(s, e);
                            model.insert(s, e);
                        }
                    }
                    Op::PopFirst => prop_assert_eq!(set.pop_first(), model.pop_first()),
                    Op::PopLast => prop_assert_eq!(set.pop_last(), model.pop_last()),
                    Op::SetLastEnd(grow) => {
                        if let Some((&s, &e)) = model.last_key_value() {
                            set.set_last_end(e + grow);
                            model.insert(s, e + grow);
                        }
                    }
                    Op::Remove(lo, hi) => {
                        let mut got = Vec::new();
                        set.remove_starting_in(lo, hi, |s, e| got.push((s, e)));
                        let want: Vec<_> = model.range(lo..=hi).map(|(&s, &e)| (s, e)).collect();
                        for (s, _) in &want {
                            model.remove(s);
                        }
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(set.len(), model.len());
                prop_assert_eq!(set.first(), model.first_key_value().map(|(&s, &e)| (s, e)));
                prop_assert_eq!(set.last(), model.last_key_value().map(|(&s, &e)| (s, e)));
                if set.len() > SMALL {
                    prop_assert!(matches!(set, Intervals::Large(_)));
                }
                if set.len() <= SMALL / 2 {
                    prop_assert!(matches!(set, Intervals::Small(_)));
                }
                for &(at, w) in &probes {
                    prop_assert_eq!(set.below(at), model.range(..at).next_back().map(|(&s, &e)| (s, e)));
                    let got: Vec<_> = set.starting_in(at, at + w).collect();
                    let want: Vec<_> = model.range(at..=at + w).map(|(&s, &e)| (s, e)).collect();
                    prop_assert_eq!(got, want);
                }
            }
            // Emptied from both ends, back through the switch to a deque.
            for k in 0.. {
                let (got, want) = match k % 2 {
                    0 => (set.pop_first(), model.pop_first()),
                    _ => (set.pop_last(), model.pop_last()),
                };
                prop_assert_eq!(got, want);
                prop_assert_eq!(set.last(), model.last_key_value().map(|(&s, &e)| (s, e)));
                if set.len() <= SMALL / 2 {
                    prop_assert!(matches!(set, Intervals::Small(_)));
                }
                if want.is_none() {
                    break;
                }
            }
        }
    }
}
