//! Application-level one-way delay: from the moment the sending application
//! wrote a byte to the moment the receiving application read it in order
//! (so it includes the time a byte waited in the send buffer).
//!
//! Byte counts in HdrHistogram's buckets for three significant digits:
//! percentiles are within 0.1% of the true value, from integer bucket
//! arithmetic, whatever the number of bytes. The mean is exact (a sum of
//! delay x bytes).
//!
//! Why not an `hdrhistogram::Histogram` per flow while the run goes: its
//! counters form one array from zero to the largest delay seen, 1024 per
//! doubling of the range: 62 KB a flow at 1,000 flows in `braid bench`
//! (massif), half of all the memory of a run with many flows, spread so
//! thinly that each delivery touched a cold page. A flow's delays cluster,
//! so here the same buckets are kept in pages of 64 counters, allocated
//! when first used: a bulk flow whose delays wander through its slow start
//! and its buffers' filling uses a few tens of pages, 18 KB a flow in the
//! same run with 64-bit counters. Counters are 32-bit until one would
//! overflow (8 KB a flow less at 10,000 flows), and the pages' slots start
//! at the lowest delay seen (1.5 KB a flow less). The summary pours them into
//! an `hdrhistogram::Histogram` with the same settings, which computes the
//! percentiles: the same counts in the same buckets, so the same figures.

use braid_proto::Duration;
use hdrhistogram::Histogram;

/// Significant decimal digits the percentiles keep.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Delays are recorded in nanoseconds, each nanosecond discernible: a
/// data-centre path's delays are microseconds, where buckets of 512 ns
/// (a lowest discernible value of one microsecond) put p99 2.6% above a
/// 4 us delay.
const LOWEST_DISCERNIBLE_NS: u64 = 1;

/// HdrHistogram's layout for these settings: the unit is the largest power
/// of two not above the lowest discernible value (1 ns); each bucket
/// spans a doubling of the range in 2^10 sub-buckets (2^11 counters would
/// give three significant digits over a doubling from one; the first bucket
/// has them all, later ones only their upper half). Tests check every
/// bucket boundary against the crate.
const UNIT_MAGNITUDE: u32 = LOWEST_DISCERNIBLE_NS.ilog2();
const HALF_MAGNITUDE: u32 = 10;

/// Counters per page.
const PAGE: usize = 64;

/// Records held back before they are counted into their pages.
const HELD: usize = 6;

/// Bytes per delay bucket, by bucket index, in pages allocated on first use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelayHistogram {
    /// Pages `first_page`, `first_page + 1`, ...: the slots start at the
    /// lowest delay seen, not at zero (a flow with a 20 ms path needs none
    /// of the first hundred, 1.5 KB of empty slots).
    pages: Vec<Option<Page>>,
    first_page: usize,
    /// The latest records, as (bucket index, bytes), not yet counted into
    /// `pages`. With many flows a flow's own state is in the cache when it
    /// delivers (the simulator asks for it ahead) but its pages are not,
    /// and reaching a page takes two dependent misses (the page's slot,
    /// then the page): counting a few records at a time pays them once
    /// per few packets. A record in the same bucket as the last one held
    /// joins it.
    held: [(u32, u64); HELD],
    held_len: u8,
    total_bytes: u64,
    /// Sum of delay x bytes, in nanosecond-bytes.
    weighted_ns: u128,
}

/// A page of counters: 32-bit (half the memory) until one of them would
/// overflow, then all 64-bit.
#[derive(Clone, Debug, PartialEq)]
enum Page {
    Narrow(Box<[u32; PAGE]>),
    Wide(Box<[u64; PAGE]>),
}

impl Page {
    fn add(&mut self, slot: usize, bytes: u64) {
        if let Page::Narrow(c) = self {
            match u32::try_from(bytes).ok().and_then(|b| c[slot].checked_add(b)) {
                Some(sum) => return c[slot] = sum,
                None => *self = Page::Wide(Box::new(c.map(u64::from))),
            }
        }
        if let Page::Wide(c) = self {
            c[slot] += bytes;
        }
    }

    fn get(&self, slot: usize) -> u64 {
        match self {
            Page::Narrow(c) => u64::from(c[slot]),
            Page::Wide(c) => c[slot],
        }
    }
}

/// HdrHistogram's counter index for `ns` (its `index_for`).
fn bucket_index(ns: u64) -> usize {
    let sub_bucket_mask = ((1u64 << (HALF_MAGNITUDE + 1)) - 1) << UNIT_MAGNITUDE;
    let bucket = (64 - UNIT_MAGNITUDE - HALF_MAGNITUDE - 1) - (ns | sub_bucket_mask).leading_zeros();
    let sub_bucket = (ns >> (bucket + UNIT_MAGNITUDE)) as usize;
    ((bucket as usize + 1) << HALF_MAGNITUDE) + sub_bucket - (1 << HALF_MAGNITUDE)
}

/// The lowest delay, in nanoseconds, in the bucket of counter `index`
/// (HdrHistogram's `value_for`): the inverse of [`bucket_index`].
fn bucket_floor(index: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let (bucket, sub_bucket) = match (index >> HALF_MAGNITUDE).checked_sub(1) {
        Some(bucket) => (bucket as u32, (index & (half - 1)) + half),
        // The lower half of the first bucket.
        None => (0, index),
    };
    (sub_bucket as u64) << (bucket + UNIT_MAGNITUDE)
}

/// An empty histogram with the settings the buckets follow.
fn hdr() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(LOWEST_DISCERNIBLE_NS, 2 * LOWEST_DISCERNIBLE_NS, SIGNIFICANT_DIGITS)
        .expect("static bounds are valid");
    // Auto-resize covers every u64 value.
    h.auto(true);
    h
}

impl DelayHistogram {
    pub fn record(&mut self, delay: Duration, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.total_bytes += bytes;
        self.weighted_ns += u128::from(delay.as_nanos()) * u128::from(bytes);
        // Bucket indices stay below 2^16 (56,320 buckets cover every u64).
        let i = bucket_index(delay.as_nanos()) as u32;
        let len = usize::from(self.held_len);
        if let Some(last) = self.held[..len].last_mut().filter(|h| h.0 == i) {
            last.1 += bytes;
            return;
        }
        if len == HELD {
            self.count_held();
        }
        self.held[usize::from(self.held_len)] = (i, bytes);
        self.held_len += 1;
    }

    /// Counts the records held into their pages.
    fn count_held(&mut self) {
        for k in 0..usize::from(self.held_len) {
            let (i, bytes) = self.held[k];
            let (page, slot) = (i as usize / PAGE, i as usize % PAGE);
            // Below the first page, the difference wraps and is out of range too.
            let mut at = page.wrapping_sub(self.first_page);
            if at >= self.pages.len() {
                at = self.index_page(page);
            }
            self.pages[at].get_or_insert_with(|| Page::Narrow(Box::new([0; PAGE]))).add(slot, bytes);
        }
        self.held_len = 0;
    }

    /// Extends the slots to page `page`, at either end, and returns its slot.
    #[cold]
    fn index_page(&mut self, page: usize) -> usize {
        if self.pages.is_empty() {
            self.first_page = page;
        } else if page < self.first_page {
            self.pages.splice(0..0, std::iter::repeat_n(None, self.first_page - page));
            self.first_page = page;
        }
        let at = page - self.first_page;
        if at >= self.pages.len() {
            self.pages.resize(at + 1, None);
        }
        at
    }

    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Byte-weighted mean delay in milliseconds.
    pub fn mean_ms(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.weighted_ns as f64 / self.total_bytes as f64 / 1e6)
    }

    /// The delay below which a fraction `q` of the bytes arrived, in
    /// milliseconds: the upper edge of the bucket that holds it (within
    /// 0.1% above the true value).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let [v] = self.quantiles_ms([q]);
        v
    }

    /// [`quantile_ms`](Self::quantile_ms) for several fractions at once.
    pub fn quantiles_ms<const N: usize>(&self, qs: [f64; N]) -> [Option<f64>; N] {
        if self.is_empty() {
            return [None; N];
        }
        let pages = (self.pages.iter().enumerate())
            .filter_map(|(p, page)| Some(((self.first_page + p) * PAGE, page.as_ref()?)));
        let counted = pages.flat_map(|(first, page)| (0..PAGE).map(move |slot| (first + slot, page.get(slot))));
        let held = self.held[..usize::from(self.held_len)].iter().map(|&(i, b)| (i as usize, b));
        let mut h = hdr();
        for (i, bytes) in counted.chain(held).filter(|&(_, b)| b > 0) {
            // Auto-resize covers every value, so recording cannot fail.
            let _ = h.record_n(bucket_floor(i), bytes);
        }
        qs.map(|q| Some(h.value_at_quantile(q.clamp(0.0, 1.0)) as f64 / 1e6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn mean_and_quantiles_are_byte_weighted() {
        let mut h = DelayHistogram::default();
        h.record(Duration::from_millis(10), 900);
        h.record(Duration::from_millis(100), 100);
        assert!((h.mean_ms().unwrap() - 19.0).abs() < 1e-9);
        let p50 = h.quantile_ms(0.5).unwrap();
        let p99 = h.quantile_ms(0.99).unwrap();
        assert!((10.0..10.01).contains(&p50), "{p50}");
        assert!((100.0..100.1).contains(&p99), "{p99}");
        assert_eq!(DelayHistogram::default().quantile_ms(0.5), None);
    }

    /// Three significant digits: delays 1% apart get distinct percentiles
    /// (the former 12%-wide buckets gave p50 = p95 = p99 in the default run).
    #[test]
    fn percentiles_keep_three_significant_digits() {
        let mut h = DelayHistogram::default();
        for (i, ms) in [300.0, 303.0, 306.0, 309.0].into_iter().enumerate() {
            h.record(Duration::from_nanos((ms * 1e6) as u64), [50, 45, 4, 1][i]);
        }
        for (p, want) in [(0.5, 300.0), (0.95, 303.0), (0.99, 306.0), (1.0, 309.0)] {
            let got = h.quantile_ms(p).unwrap();
            assert!((got - want).abs() <= want * 1e-3, "p{p}: {got} vs {want}");
        }
        // A long tail grows the histogram as needed.
        h.record(Duration::from_secs(600), 1);
        let max = h.quantile_ms(1.0).unwrap();
        assert!((max - 600_000.0).abs() <= 600.0, "{max}");
    }

    /// Counts are bytes: far more than a 32-bit counter holds.
    #[test]
    fn counts_beyond_four_gib() {
        let mut h = DelayHistogram::default();
        h.record(Duration::from_millis(10), 3_000_000_000);
        h.record(Duration::from_millis(20), 7_000_000_000);
        let (p25, p50) = (h.quantile_ms(0.25).unwrap(), h.quantile_ms(0.5).unwrap());
        assert!((10.0..10.01).contains(&p25) && (20.0..20.02).contains(&p50), "{p25} {p50}");
        assert!((h.mean_ms().unwrap() - 17.0).abs() < 1e-9);
    }

    /// A page's counters widen to 64 bits when one of them would pass
    /// 4 GiB, keeping every byte counted.
    #[test]
    fn counters_widen_before_they_overflow() {
        let mut h = DelayHistogram::default();
        // Alternating buckets, so the records reach their pages: three
        // records of 1 GB in the 10 ms bucket, counted when a seventh
        // record comes.
        let three_gb = |h: &mut DelayHistogram| {
            for _ in 0..HELD / 2 {
                h.record(Duration::from_millis(10), 1_000_000_000);
                h.record(Duration::from_millis(20), 1);
            }
            h.record(Duration::from_millis(30), 1);
        };
        let page = |h: &DelayHistogram| h.pages[bucket_index(10_000_000) / PAGE - h.first_page].clone().unwrap();
        three_gb(&mut h);
        assert!(matches!(page(&h), Page::Narrow(_)), "3 GB fit 32 bits");
        three_gb(&mut h);
        assert!(matches!(page(&h), Page::Wide(_)), "6 GB do not");
        assert_eq!(page(&h).get(bucket_index(10_000_000) % PAGE), 6_000_000_000);
        let counted: u64 = (h.pages.iter().flatten())
            .flat_map(|p| (0..PAGE).map(move |slot| p.get(slot)))
            .chain(h.held[..usize::from(h.held_len)].iter().map(|h| h.1))
            .sum();
        assert_eq!(counted, h.total_bytes);
    }

    /// Delays from 1 ns to the largest, spread over every magnitude, and
    /// the edges of the first buckets.
    fn delays(n: usize) -> impl Iterator<Item = u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let edges = [0, 1, 511, 512, 1023, 1024, 1_048_575, 1_048_576, 2_097_151, 2_097_152, u64::MAX - 1, u64::MAX];
        edges.into_iter().chain((0..n).map(move |_| rng.gen::<u64>() >> rng.gen_range(0..64)))
    }

    /// The buckets are HdrHistogram's: the same lowest value for every
    /// delay, and the next bucket starts where the crate's next one does.
    #[test]
    fn buckets_are_hdrhistograms() {
        let h = hdr();
        for ns in delays(200_000) {
            let i = bucket_index(ns);
            assert_eq!(bucket_floor(i), h.lowest_equivalent(ns), "{ns} ns");
            // (The crate caps the top of the last bucket one below its end.)
            if ns < 1 << 63 {
                assert_eq!(bucket_index(h.highest_equivalent(ns) + 1), i + 1, "{ns} ns: the bucket after");
            }
        }
    }

    /// The percentiles are exactly those of an `hdrhistogram::Histogram`
    /// that recorded the same bytes itself, for narrow and wide spreads.
    #[test]
    fn quantiles_are_hdrhistograms() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for case in 0..200 {
            let (mut ours, mut theirs) = (DelayHistogram::default(), hdr());
            let base = rng.gen_range(1_000..1_000_000_000u64);
            let spread = [1.01, 1.5, 1e3][case % 3];
            for _ in 0..rng.gen_range(1..2_000) {
                let ns = (base as f64 * rng.gen_range(1.0..spread)) as u64;
                let bytes = rng.gen_range(1..100_000u64);
                ours.record(Duration::from_nanos(ns), bytes);
                theirs.record_n(ns, bytes).unwrap();
            }
            let qs = [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];
            let want = qs.map(|q| Some(theirs.value_at_quantile(q) as f64 / 1e6));
            assert_eq!(ours.quantiles_ms(qs), want, "case {case}");
        }
    }

    /// Every percentile is within 0.1% above the delay it stands for, from
    /// a nanosecond to hours: a flow whose bytes all took one delay reads
    /// that delay at every quantile.
    #[test]
    fn percentiles_are_within_a_thousandth_at_every_magnitude() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let singles = (1..3_000).chain((0..20_000).map(|_| rng.gen::<u64>() >> rng.gen_range(20..64)));
        for ns in singles {
            let mut h = DelayHistogram::default();
            h.record(Duration::from_nanos(ns), 1448);
            let [p50, p99] = h.quantiles_ms([0.5, 0.99]).map(|q| q.unwrap() * 1e6);
            let (low, high) = (ns as f64, ns as f64 * 1.001);
            assert!(p50 == p99 && (low..=high).contains(&p50.round()), "{ns} ns read as {p50}");
        }
    }

    /// Memory follows the spread of a flow's delays, not their size: a
    /// flow whose delays stay within 5% of 300 ms holds at most three
    /// pages of counters, where one array from zero would hold over 10,000.
    #[test]
    fn pages_cover_only_the_delays_seen() {
        let mut h = DelayHistogram::default();
        for ms in 285..=315 {
            h.record(Duration::from_millis(ms), 1448);
        }
        let pages = h.pages.iter().filter(|p| p.is_some()).count();
        assert!(pages <= 3, "{pages} pages");
        assert_eq!(h.pages.len(), pages, "the index spans only the pages used");
    }
}
