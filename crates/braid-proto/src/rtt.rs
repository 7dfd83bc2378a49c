//! RTT estimation per RFC 6298: SRTT, RTTVAR, RTO with a configurable floor,
//! plus the minimum RTT seen (for delay-based controllers and BBR).

use crate::time::Duration;

/// Clock granularity G of RFC 6298 section 2.
const GRANULARITY: Duration = Duration::from_millis(1);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    samples: u64,
}

impl RttEstimator {
    pub fn new() -> Self {
        RttEstimator { srtt: None, rttvar: Duration::ZERO, min_rtt: None, latest: None, samples: 0 }
    }

    /// RFC 6298 section 2.2 and 2.3, with alpha = 1/8 and beta = 1/4.
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = Some(r);
        self.samples += 1;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r.as_nanos() / 2);
            }
            Some(srtt) => {
                let err = srtt.as_nanos().abs_diff(r.as_nanos());
                self.rttvar = Duration::from_nanos((3 * self.rttvar.as_nanos() + err) / 4);
                self.srtt = Some(Duration::from_nanos((7 * srtt.as_nanos() + r.as_nanos()) / 8));
            }
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// RTO = SRTT + max(4 RTTVAR, `min_rto`, G); `initial` before the first
    /// sample (RFC 6298 section 2.1).
    ///
    /// The floor applies to the variance term, as in Linux (`__tcp_set_rto`
    /// adds `rttvar_us`, which `tcp_rtt_estimator` never lets fall below
    /// `tcp_rto_min`), not to the whole RTO as RFC 6298's 1 s minimum
    /// does. On a path of constant delay the variance decays to nothing,
    /// and an RTO of SRTT plus a few microseconds would fire before the
    /// ACK of a flight too small to be acknowledged at once (one that
    /// waits for the receiver's delayed-ACK timer): every flight would
    /// time out spuriously, and the window would never leave one segment.
    /// Deviation: Linux also keeps the variance at the largest deviation of
    /// the last round trip and lets it decay once per round trip; Braid
    /// smooths it per sample, as RFC 6298 does.
    pub fn rto(&self, min_rto: Duration, initial: Duration) -> Duration {
        match self.srtt {
            None => initial,
            Some(srtt) => srtt + Duration::from_nanos(4 * self.rttvar.as_nanos()).max(min_rto).max(GRANULARITY),
        }
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_then_smoothing_follow_rfc6298() {
        let mut e = RttEstimator::new();
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // RTO = 100 + max(4*50, 200) = 300 ms.
        assert_eq!(e.rto(Duration::from_millis(200), Duration::from_secs(1)), Duration::from_millis(300));
        assert_eq!(e.rto(Duration::from_millis(250), Duration::from_secs(1)), Duration::from_millis(350));
        e.on_sample(Duration::from_millis(200));
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.min_rtt(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn rto_is_floored_and_initial_before_samples() {
        let mut e = RttEstimator::new();
        assert_eq!(e.rto(Duration::from_millis(200), Duration::from_secs(1)), Duration::from_secs(1));
        e.on_sample(Duration::from_millis(2));
        assert_eq!(e.rto(Duration::from_millis(200), Duration::from_secs(1)), Duration::from_millis(202));
        assert_eq!(e.rto(Duration::ZERO, Duration::from_secs(1)), Duration::from_millis(6), "2 + 4 x 1");
    }
}
