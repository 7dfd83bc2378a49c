//! Application-level one-way delay: from the moment the sending application
//! wrote a byte to the moment the receiving application read it in order.
//! Kept as a byte-weighted histogram with 20 log-spaced buckets per decade
//! from 1 us to 1000 s, so percentiles cost constant memory and are exact
//! to within a bucket (12%).

use braid_proto::Duration;

const BUCKETS_PER_DECADE: f64 = 20.0;
const DECADES: usize = 9;
const BUCKETS: usize = DECADES * 20 + 1;
const FLOOR_NS: f64 = 1_000.0;

#[derive(Clone, Debug, PartialEq)]
pub struct DelayHistogram {
    bytes: Vec<u64>,
    total_bytes: u64,
    /// Sum of delay x bytes, in nanosecond-bytes.
    weighted_ns: u128,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram { bytes: vec![0; BUCKETS], total_bytes: 0, weighted_ns: 0 }
    }
}

fn bucket(ns: u64) -> usize {
    let x = (ns as f64).max(FLOOR_NS) / FLOOR_NS;
    ((x.log10() * BUCKETS_PER_DECADE).floor() as usize).min(BUCKETS - 1)
}

/// Upper edge of bucket `b`, in nanoseconds.
fn upper_ns(b: usize) -> f64 {
    FLOOR_NS * 10f64.powf((b + 1) as f64 / BUCKETS_PER_DECADE)
}

impl DelayHistogram {
    pub fn record(&mut self, delay: Duration, bytes: u64) {
        self.bytes[bucket(delay.as_nanos())] += bytes;
        self.total_bytes += bytes;
        self.weighted_ns += u128::from(delay.as_nanos()) * u128::from(bytes);
    }

    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Byte-weighted mean delay in milliseconds.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.total_bytes > 0).then(|| self.weighted_ns as f64 / self.total_bytes as f64 / 1e6)
    }

    /// The delay below which a fraction `q` of the bytes arrived, in
    /// milliseconds (upper edge of the bucket that holds it).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.total_bytes == 0 {
            return None;
        }
        let target = (q.clamp(0.0, 1.0) * self.total_bytes as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, &n) in self.bytes.iter().enumerate() {
            seen += n;
            if seen >= target {
                return Some(upper_ns(b) / 1e6);
            }
        }
        Some(upper_ns(BUCKETS - 1) / 1e6)
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
        assert!((10.0..11.3).contains(&p50), "{p50}");
        assert!((100.0..113.0).contains(&p99), "{p99}");
        assert_eq!(DelayHistogram::default().quantile_ms(0.5), None);
    }
}
