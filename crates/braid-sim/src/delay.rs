//! Application-level one-way delay: from the moment the sending application
//! wrote a byte to the moment the receiving application read it in order
//! (so it includes the time a byte waited in the send buffer).
//!
//! Kept as a byte-weighted HdrHistogram with three significant digits:
//! percentiles are within 0.1% of the true value, from integer bucket
//! arithmetic, and memory grows with the logarithm of the largest delay
//! (1024 counters per doubling of the range), not with the number of bytes.
//! Counters are 32-bit until the flow has delivered 4 GiB (so none can
//! have overflowed), then 64-bit: half the memory for the common case,
//! which matters with thousands of flows. The mean is exact (a sum of
//! delay x bytes).

use braid_proto::Duration;
use hdrhistogram::Histogram;

/// Significant decimal digits the percentiles keep.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Delays are recorded in nanoseconds; below one microsecond they share
/// buckets (no transport delay is that short).
const LOWEST_DISCERNIBLE_NS: u64 = 1_000;

/// Bytes per delay bucket (counts are bytes, not packets).
#[derive(Clone, Debug, PartialEq)]
enum Counts {
    Small(Histogram<u32>),
    Large(Histogram<u64>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct DelayHistogram {
    counts: Counts,
    total_bytes: u64,
    /// Sum of delay x bytes, in nanosecond-bytes.
    weighted_ns: u128,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        let mut h = Histogram::new_with_bounds(LOWEST_DISCERNIBLE_NS, 2 * LOWEST_DISCERNIBLE_NS, SIGNIFICANT_DIGITS)
            .expect("static bounds are valid");
        h.auto(true);
        DelayHistogram { counts: Counts::Small(h), total_bytes: 0, weighted_ns: 0 }
    }
}

impl DelayHistogram {
    pub fn record(&mut self, delay: Duration, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.total_bytes += bytes;
        self.weighted_ns += u128::from(delay.as_nanos()) * u128::from(bytes);
        let ns = delay.as_nanos();
        // Auto-resize covers every u64 value, so recording cannot fail.
        match &mut self.counts {
            Counts::Small(h) if self.total_bytes <= u64::from(u32::MAX) => {
                let _ = h.record_n(ns, bytes as u32);
            }
            Counts::Small(h) => {
                let mut large = Histogram::<u64>::new_from(h);
                for v in h.iter_recorded() {
                    let _ = large.record_n(v.value_iterated_to(), u64::from(v.count_at_value()));
                }
                let _ = large.record_n(ns, bytes);
                self.counts = Counts::Large(large);
            }
            Counts::Large(h) => {
                let _ = h.record_n(ns, bytes);
            }
        }
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
        let q = q.clamp(0.0, 1.0);
        let ns = match &self.counts {
            Counts::Small(h) => h.value_at_quantile(q),
            Counts::Large(h) => h.value_at_quantile(q),
        };
        (!self.is_empty()).then_some(ns as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Past 4 GiB the counters widen without losing what they held.
    #[test]
    fn counters_widen_before_they_could_overflow() {
        let mut h = DelayHistogram::default();
        h.record(Duration::from_millis(10), 3_000_000_000);
        h.record(Duration::from_millis(20), 1_000_000_000);
        assert!(matches!(h.counts, Counts::Small(_)));
        h.record(Duration::from_millis(20), 1_000_000_000);
        assert!(matches!(h.counts, Counts::Large(_)));
        h.record(Duration::from_millis(20), 5_000_000_000);
        let (p25, p50) = (h.quantile_ms(0.25).unwrap(), h.quantile_ms(0.5).unwrap());
        assert!((10.0..10.01).contains(&p25) && (20.0..20.02).contains(&p50), "{p25} {p50}");
        assert!((h.mean_ms().unwrap() - 17.0).abs() < 1e-9);
    }
}
