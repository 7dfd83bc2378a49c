//! Application-level one-way delay: from the moment the sending application
//! wrote a byte to the moment the receiving application read it in order
//! (so it includes the time a byte waited in the send buffer).
//!
//! Kept as a byte-weighted HdrHistogram with three significant digits:
//! percentiles are within 0.1% of the true value, from integer bucket
//! arithmetic, and memory grows with the logarithm of the largest delay
//! (about 8 KB per doubling of the range), not with the number of bytes.
//! The mean is exact (a sum of delay x bytes).

use braid_proto::Duration;
use hdrhistogram::Histogram;

/// Significant decimal digits the percentiles keep.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Delays are recorded in nanoseconds; below one microsecond they share
/// buckets (no transport delay is that short).
const LOWEST_DISCERNIBLE_NS: u64 = 1_000;

#[derive(Clone, Debug)]
pub struct DelayHistogram {
    /// Bytes per delay bucket (counts are bytes, not packets).
    bytes: Histogram<u64>,
    /// Sum of delay x bytes, in nanosecond-bytes.
    weighted_ns: u128,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        let mut bytes =
            Histogram::new_with_bounds(LOWEST_DISCERNIBLE_NS, 2 * LOWEST_DISCERNIBLE_NS, SIGNIFICANT_DIGITS)
                .expect("static bounds are valid");
        bytes.auto(true);
        DelayHistogram { bytes, weighted_ns: 0 }
    }
}

impl PartialEq for DelayHistogram {
    fn eq(&self, o: &Self) -> bool {
        self.weighted_ns == o.weighted_ns && self.bytes == o.bytes
    }
}

impl DelayHistogram {
    pub fn record(&mut self, delay: Duration, bytes: u64) {
        if bytes == 0 {
            return;
        }
        // Auto-resize covers every u64 value, so recording cannot fail.
        let _ = self.bytes.record_n(delay.as_nanos(), bytes);
        self.weighted_ns += u128::from(delay.as_nanos()) * u128::from(bytes);
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Byte-weighted mean delay in milliseconds.
    pub fn mean_ms(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.weighted_ns as f64 / self.bytes.len() as f64 / 1e6)
    }

    /// The delay below which a fraction `q` of the bytes arrived, in
    /// milliseconds: the upper edge of the bucket that holds it (within
    /// 0.1% above the true value).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        (!self.is_empty()).then(|| self.bytes.value_at_quantile(q.clamp(0.0, 1.0)) as f64 / 1e6)
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
}
