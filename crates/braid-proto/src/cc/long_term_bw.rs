//! BBR's long-term bandwidth model for token-bucket policers: Linux's
//! `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done` and their resets
//! (`tcp_bbr.c`, 4.10 to the present; 5.4 is MPTCP v0.96's base). BBR v1's
//! draft leaves it out; Linux has always shipped it.
//!
//! A policer lets a burst through, then drops whatever exceeds its rate, so
//! BtlBw (the best delivery rate of the last ten rounds) keeps the burst's
//! rate and BBR goes on losing a large share of what it sends. Linux
//! watches for that: from the first loss it measures the average delivery
//! rate over intervals of 4 to 16 round trips, each ended by a loss; an
//! interval that lost at least 50/256 (about 20%) of what it delivered is
//! a policed one. Two policed intervals in a row whose rates differ by at
//! most 1/8, or by at most 4 kbit/s, set the long-term rate to their mean,
//! which BBR then paces and sizes its window by, with ProbeBW's gain held
//! at 1, for 48 rounds of ProbeBW; then it forgets the rate and starts
//! sampling afresh. An application-limited sample, an interval longer than
//! 16 rounds or an undone timeout restart the sampling.
//!
//! Bytes here where Linux counts packets: delivered bytes against lost
//! packets times the MSS for the loss rate, bytes per second for the rate.
//! Time is kept in whole milliseconds, as Linux keeps `lt_last_stamp`.

use crate::time::Instant;

/// Shortest interval, round trips (`bbr_lt_intvl_min_rtts`).
const MIN_ROUNDS: u32 = 4;
/// A policed interval loses at least this share, in 256ths
/// (`bbr_lt_loss_thresh`).
const LOSS_THRESHOLD: f64 = 50.0 / 256.0;
/// Two intervals agree within this ratio (`bbr_lt_bw_ratio`, 1/8) ...
const BW_RATIO: f64 = 1.0 / 8.0;
/// ... or within this many bytes per second (`bbr_lt_bw_diff`, 4 kbit/s).
const BW_DIFF: f64 = 4000.0 / 8.0;
/// Rounds of ProbeBW the long-term rate is used for (`bbr_lt_bw_max_rtts`).
const MAX_ROUNDS: u32 = 48;
/// Linux compares the difference in bytes per second as it paces, 1%
/// below the rate (`bbr_rate_bytes_per_sec`).
const PACING_MARGIN: f64 = 0.99;

/// The subflow's counters at an event.
#[derive(Clone, Copy, Debug)]
pub(super) struct Counters {
    /// When the subflow last delivered data (Linux's `delivered_mstamp`).
    pub(super) delivered_at: Instant,
    /// Bytes delivered so far.
    pub(super) delivered: u64,
    /// Packets declared lost so far (Linux's `tp->lost`).
    pub(super) lost: u64,
    pub(super) mss: f64,
}

/// One valid rate sample (or a timeout, which counts as a loss ending a
/// round).
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub(super) counters: Counters,
    /// This event showed packets lost (Linux's `rs->losses`).
    pub(super) losses: bool,
    pub(super) app_limited: bool,
    pub(super) round_start: bool,
    /// BBR is in ProbeBW (only its rounds age the long-term rate).
    pub(super) probe_bw: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct LongTermBw {
    /// An interval is open (a loss has been seen since the last reset).
    sampling: bool,
    /// The long-term rate is in use.
    in_use: bool,
    /// The last interval's rate, or the rate in use; bytes/s, 0 for none.
    bw: f64,
    /// Rounds in the interval, or rounds of ProbeBW the rate has been used.
    rounds: u32,
    /// Where the interval started: whole milliseconds, bytes, packets.
    start_ms: u64,
    start_delivered: u64,
    start_lost: u64,
}

/// What the caller must do after a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Continue,
    /// The long-term rate has been used for its 48 rounds and is forgotten:
    /// restart ProbeBW's gain cycle (`bbr_reset_probe_bw_mode`).
    Expired,
}

fn whole_ms(t: Instant) -> u64 {
    t.as_nanos() / 1_000_000
}

impl LongTermBw {
    /// The long-term rate, bytes/s, while BBR uses it.
    pub(super) fn bw(&self) -> Option<f64> {
        self.in_use.then_some(self.bw)
    }

    /// A model already using `bw` bytes/s (for tests of its users).
    #[cfg(test)]
    pub(super) fn policed_at(bw: f64) -> LongTermBw {
        LongTermBw { sampling: true, in_use: true, bw, ..Default::default() }
    }

    /// True while an interval is open.
    #[cfg(test)]
    pub(super) fn sampling(&self) -> bool {
        self.sampling
    }

    /// `bbr_reset_lt_bw_sampling`: forget everything.
    pub(super) fn reset(&mut self, c: &Counters) {
        (self.bw, self.in_use, self.sampling) = (0.0, false, false);
        self.reset_interval(c);
    }

    /// `bbr_reset_lt_bw_sampling_interval`: a new interval starts here.
    fn reset_interval(&mut self, c: &Counters) {
        self.start_ms = whole_ms(c.delivered_at);
        self.start_delivered = c.delivered;
        self.start_lost = c.lost;
        self.rounds = 0;
    }

    /// `bbr_lt_bw_sampling`, on each valid rate sample (before BtlBw's
    /// filter takes it) and on a timeout.
    pub(super) fn on_sample(&mut self, s: &Sample) -> Outcome {
        let c = &s.counters;
        if self.in_use {
            if s.probe_bw && s.round_start {
                self.rounds += 1;
                if self.rounds >= MAX_ROUNDS {
                    self.reset(c);
                    return Outcome::Expired;
                }
            }
            return Outcome::Continue;
        }
        // Wait for the first loss: the policer's tokens are spent by then,
        // so the interval measures its rate, not the burst.
        if !self.sampling {
            if !s.losses {
                return Outcome::Continue;
            }
            self.reset_interval(c);
            self.sampling = true;
        }
        if s.app_limited {
            self.reset(c);
            return Outcome::Continue;
        }
        if s.round_start {
            self.rounds += 1;
        }
        if self.rounds < MIN_ROUNDS {
            return Outcome::Continue;
        }
        if self.rounds > 4 * MIN_ROUNDS {
            self.reset(c);
            return Outcome::Continue;
        }
        // An interval ends on a loss, when the tokens have run out.
        if !s.losses {
            return Outcome::Continue;
        }
        let lost = c.lost.saturating_sub(self.start_lost) as f64 * c.mss;
        let delivered = c.delivered.saturating_sub(self.start_delivered) as f64;
        if delivered == 0.0 || lost < LOSS_THRESHOLD * delivered {
            return Outcome::Continue;
        }
        let ms = whole_ms(c.delivered_at).saturating_sub(self.start_ms);
        if ms < 1 {
            return Outcome::Continue;
        }
        self.interval_done(delivered / (ms as f64 / 1000.0), c);
        Outcome::Continue
    }

    /// `bbr_lt_bw_interval_done`: a policed interval at `bw` bytes/s.
    fn interval_done(&mut self, bw: f64, c: &Counters) {
        if self.bw > 0.0 {
            let diff = (bw - self.bw).abs();
            if diff <= BW_RATIO * self.bw || diff * PACING_MARGIN <= BW_DIFF {
                // Two alike in a row: policed at their mean.
                self.bw = (bw + self.bw) / 2.0;
                self.in_use = true;
                self.rounds = 0;
                return;
            }
        }
        self.bw = bw;
        self.reset_interval(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const MSS: f64 = 1000.0;

    fn at(ms: u64, delivered: u64, lost: u64) -> Counters {
        Counters { delivered_at: Instant::ZERO + Duration::from_millis(ms), delivered, lost, mss: MSS }
    }

    fn sample(c: Counters, losses: bool, round_start: bool) -> Sample {
        Sample { counters: c, losses, app_limited: false, round_start, probe_bw: true }
    }

    /// Drives one interval by hand: a loss at `start` opens it (or falls
    /// in the one a verdict just opened), `rounds` round starts follow,
    /// then a loss with the counters `end` ends it.
    fn interval(lt: &mut LongTermBw, start: Counters, rounds: u32, end: Counters) {
        lt.on_sample(&sample(start, true, false));
        for _ in 0..rounds {
            lt.on_sample(&sample(start, false, true));
        }
        lt.on_sample(&sample(end, true, false));
    }

    /// By hand: an interval from 0 ms (0 bytes, 0 lost) to 100 ms that
    /// delivered 100 packets and lost 20 (20 >= 50/256 x 100 = 19.5) ran at
    /// 1 MB/s; the next, at 1.1 MB/s (within 1/8), makes the mean, 1.05
    /// MB/s, the long-term rate.
    #[test]
    fn two_alike_policed_intervals_set_the_rate_to_their_mean() {
        let mut lt = LongTermBw::default();
        lt.on_sample(&sample(at(0, 0, 0), true, false));
        assert!(lt.sampling && lt.bw().is_none());
        for _ in 0..4 {
            lt.on_sample(&sample(at(50, 50_000, 10), false, true));
        }
        lt.on_sample(&sample(at(100, 100_000, 20), true, false));
        assert_eq!((lt.bw, lt.bw()), (1e6, None), "one interval is not enough");
        assert_eq!((lt.start_ms, lt.start_delivered, lt.start_lost, lt.rounds), (100, 100_000, 20, 0));
        for _ in 0..4 {
            lt.on_sample(&sample(at(150, 150_000, 30), false, true));
        }
        lt.on_sample(&sample(at(200, 210_000, 42), true, false));
        assert_eq!(lt.bw(), Some(1.05e6));
    }

    /// 19 lost of 100 is under 50/256: the interval stays open.
    #[test]
    fn an_interval_below_the_loss_threshold_stays_open() {
        let mut lt = LongTermBw::default();
        interval(&mut lt, at(0, 0, 0), 4, at(100, 100_000, 19));
        assert_eq!(lt.bw, 0.0);
        assert!(lt.sampling);
        assert_eq!(lt.rounds, 4, "the interval goes on");
    }

    /// Rates 1 MB/s then 1.2 MB/s differ by more than 1/8 (and 4 kbit/s):
    /// the second replaces the first, and nothing is used yet.
    #[test]
    fn unlike_intervals_do_not_agree() {
        let mut lt = LongTermBw::default();
        interval(&mut lt, at(0, 0, 0), 4, at(100, 100_000, 20));
        interval(&mut lt, at(100, 100_000, 20), 4, at(200, 220_000, 44));
        assert_eq!((lt.bw, lt.bw()), (1.2e6, None));
    }

    /// At low rates 4 kbit/s is the looser test, compared as Linux paces,
    /// 1% low: 2,000 and 2,505 B/s differ by 25%, but 505 x 0.99 <= 500
    /// B/s; 2,510 does not (504.9). A first interval, however slow, is
    /// only remembered.
    #[test]
    fn slow_rates_agree_within_four_kbit() {
        let mut lt = LongTermBw { bw: 2000.0, sampling: true, ..Default::default() };
        lt.interval_done(2505.0, &at(0, 0, 0));
        assert_eq!(lt.bw(), Some(2252.5));
        let mut lt = LongTermBw { bw: 2000.0, sampling: true, ..Default::default() };
        lt.interval_done(2510.0, &at(0, 0, 0));
        assert_eq!(lt.bw(), None, "510 x 0.99 > 500");
        let mut lt = LongTermBw { sampling: true, ..Default::default() };
        lt.interval_done(400.0, &at(0, 0, 0));
        assert_eq!((lt.bw, lt.bw()), (400.0, None));
    }

    /// The edges, exactly: a loss of 50/256 of what was delivered (50 of
    /// 256 packets) is policed, and an interval of one whole millisecond
    /// is long enough (256 kB in 1 ms: 256 MB/s).
    #[test]
    fn exactly_the_loss_threshold_over_exactly_a_millisecond() {
        let mut lt = LongTermBw::default();
        interval(&mut lt, at(0, 0, 0), 4, at(1, 256_000, 50));
        assert_eq!(lt.bw, 256e6);
        let mut lt = LongTermBw::default();
        interval(&mut lt, at(0, 0, 0), 4, at(1, 256_000, 49));
        assert_eq!(lt.bw, 0.0, "49 of 256: under the threshold");
    }

    /// Too few rounds: no verdict; more than 16: start over.
    #[test]
    fn intervals_last_four_to_sixteen_rounds() {
        let mut lt = LongTermBw::default();
        interval(&mut lt, at(0, 0, 0), 3, at(100, 100_000, 50));
        assert_eq!(lt.bw, 0.0, "3 rounds are too few");
        for _ in 0..13 {
            lt.on_sample(&sample(at(150, 150_000, 50), false, true));
        }
        assert!(lt.sampling && lt.rounds == 16, "16 rounds: still open");
        lt.on_sample(&sample(at(150, 150_000, 50), false, true));
        assert_eq!(lt.rounds, 0, "17 rounds: reset");
        assert!(!lt.sampling);
    }

    /// Sampling starts only at a loss, and an application-limited sample
    /// resets it.
    #[test]
    fn sampling_waits_for_a_loss_and_stops_when_app_limited() {
        let mut lt = LongTermBw::default();
        lt.on_sample(&sample(at(10, 10_000, 0), false, true));
        assert!(!lt.sampling && lt.rounds == 0);
        lt.on_sample(&sample(at(20, 20_000, 3), true, true));
        assert!(lt.sampling);
        assert_eq!((lt.start_delivered, lt.start_lost, lt.rounds), (20_000, 3, 1));
        lt.on_sample(&Sample { app_limited: true, ..sample(at(30, 30_000, 3), false, false) });
        assert!(!lt.sampling);
    }

    /// In use, the rate ages only by ProbeBW's rounds, and expires after 48.
    #[test]
    fn the_rate_is_used_for_48_rounds_of_probe_bw() {
        let mut lt = LongTermBw { bw: 1e6, in_use: true, sampling: true, ..Default::default() };
        for _ in 0..10 {
            let startup = Sample { probe_bw: false, ..sample(at(0, 0, 0), false, true) };
            assert_eq!(lt.on_sample(&startup), Outcome::Continue);
        }
        for _ in 0..47 {
            assert_eq!(lt.on_sample(&sample(at(0, 0, 0), true, true)), Outcome::Continue);
        }
        assert_eq!(lt.bw(), Some(1e6));
        assert_eq!(lt.on_sample(&sample(at(0, 0, 0), false, true)), Outcome::Expired);
        assert_eq!((lt.bw(), lt.sampling, lt.bw), (None, false, 0.0));
    }
}
