//! A token-bucket policer in front of a link: what an ISP's traffic
//! policing does to a flow (Flach et al., "An Internet-Wide Analysis of
//! Traffic Policing", SIGCOMM 2016, the study BBR's long-term mode cites).
//!
//! Tokens accrue at `rate_bps` up to `burst_bytes`; a packet that finds
//! enough tokens for its wire size takes them and goes on to the link's
//! queue, any other is dropped, whatever the queue holds. Unlike a shaper
//! (Linux's `tbf`, or the link's own rate) nothing waits: past the burst a
//! sender faster than the rate loses the excess. The bucket starts full.
//!
//! Tokens are kept as whole nanobits (bits x 10^9), so that a rate in bit/s
//! times nanoseconds elapsed adds them exactly: no floating point, the same
//! result on every machine.

/// A policer's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicerSpec {
    /// Token rate, bit/s.
    pub rate_bps: u64,
    /// Bucket depth, bytes: the largest burst let through at once.
    pub burst_bytes: u64,
}

impl PolicerSpec {
    /// The deepest bucket a spec may ask for (1 GB), so that nanobits fit
    /// in 64 bits.
    pub const MAX_BURST_BYTES: u64 = 1_000_000_000;
}

/// Nanobits in `bytes` bytes.
fn nanobits(bytes: u64) -> u64 {
    bytes.saturating_mul(8_000_000_000)
}

/// A policer's state.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    /// The bucket's depth, nanobits.
    depth: u64,
    /// Tokens, nanobits, as of `at_ns`.
    tokens: u64,
    at_ns: u64,
}

impl TokenBucket {
    pub fn new(spec: PolicerSpec) -> TokenBucket {
        let depth = nanobits(spec.burst_bytes.min(PolicerSpec::MAX_BURST_BYTES));
        TokenBucket { rate_bps: spec.rate_bps, depth, tokens: depth, at_ns: 0 }
    }

    /// True if a packet of `bytes` arriving at `now_ns` conforms (and takes
    /// its tokens); false if the policer drops it.
    pub fn admits(&mut self, now_ns: u64, bytes: u32) -> bool {
        let accrued = self.rate_bps.saturating_mul(now_ns.saturating_sub(self.at_ns));
        self.tokens = self.tokens.saturating_add(accrued).min(self.depth);
        self.at_ns = self.at_ns.max(now_ns);
        let cost = nanobits(u64::from(bytes));
        if cost > self.tokens {
            return false;
        }
        self.tokens -= cost;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 8 Mbit/s is 1 byte per microsecond; a 3000-byte bucket
    /// passes two 1500-byte packets at once, drops the third, and 1.5 ms
    /// later has tokens for exactly one more.
    #[test]
    fn a_full_bucket_passes_its_burst_then_the_rate() {
        let mut b = TokenBucket::new(PolicerSpec { rate_bps: 8_000_000, burst_bytes: 3000 });
        assert!(b.admits(0, 1500));
        assert!(b.admits(0, 1500));
        assert!(!b.admits(0, 1500), "the bucket is empty");
        assert!(!b.admits(1_499_999, 1500), "one byte short");
        assert!(b.admits(1_500_000, 1500));
        assert!(!b.admits(1_500_000, 1), "nothing left");
        // A millisecond refills 1000 bytes; an idle second only the depth.
        assert!(!b.admits(2_500_000, 1001));
        assert!(b.admits(2_500_000, 1000));
        assert!(b.admits(1_002_500_000, 1500));
        assert!(b.admits(1_002_500_000, 1500));
        assert!(!b.admits(1_002_500_000, 40));
    }

    /// Offered far above its rate for a long time, a policer passes the
    /// burst plus the rate, to the byte (the packet that overdraws is
    /// dropped, so the count can fall short by less than one packet).
    #[test]
    fn long_run_throughput_is_the_rate_plus_the_burst() {
        let spec = PolicerSpec { rate_bps: 10_000_000, burst_bytes: 20_000 };
        let mut b = TokenBucket::new(spec);
        let mut passed = 0u64;
        // 1000-byte packets every 100 us (80 Mbit/s) for 2 s.
        for i in 0..20_000u64 {
            if b.admits(i * 100_000, 1000) {
                passed += 1000;
            }
        }
        // 1.9999 s of tokens: the last packet is offered at 1.9999 s.
        let allowed = 20_000 + 10_000_000 / 8 * 19_999 / 10_000;
        assert!(passed <= allowed && passed + 1000 > allowed, "{passed} of {allowed}");
    }

    /// Huge rates and long idle times saturate instead of wrapping.
    #[test]
    fn no_overflow_at_extreme_rates() {
        let mut b = TokenBucket::new(PolicerSpec { rate_bps: u64::MAX, burst_bytes: u64::MAX });
        assert!(b.admits(u64::MAX / 2, 1500));
        assert!(b.admits(u64::MAX, 1500));
        assert!(!b.admits(u64::MAX, u32::MAX), "more than the deepest bucket never passes");
    }
}
