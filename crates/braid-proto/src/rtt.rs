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

    /// RTO = SRTT + max(G, 4 RTTVAR), floored at `min_rto`; `initial` before
    /// the first sample (RFC 6298 section 2.1).
    pub fn rto(&self, min_rto: Duration, initial: Duration) -> Duration {
        match self.srtt {
            None => initial,
            Some(srtt) => {
                let var = Duration::from_nanos(4 * self.rttvar.as_nanos()).max(GRANULARITY);
                (srtt + var).max(min_rto)
            }
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
        // RTO = 100 + 4*50 = 300 ms.
        assert_eq!(e.rto(Duration::from_millis(200), Duration::from_secs(1)), Duration::from_millis(300));
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
        assert_eq!(e.rto(Duration::from_millis(200), Duration::from_secs(1)), Duration::from_millis(200));
    }
}
