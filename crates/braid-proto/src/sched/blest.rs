//! BLEST, BLocking ESTimation (Ferlin, Alay, Mehani, Boreli, IFIP
//! Networking 2016; seed 004 §2.2.2), as Linux MPTCP v0.96's
//! `mptcp_blest.c` computes it (seed 004's campaign ran that module; its
//! appendix's "Algorithm 2 BLEST" repeats ECF's steps, so the paper and the
//! module are the sources).
//!
//! The fastest subflow takes the segment if its window has room. Otherwise
//! the fastest subflow with room, x_s, is used only if doing so does not
//! risk blocking the connection's send window: if the bytes the fast
//! subflow x_f could send while the segment lingers on x_s, times lambda,
//! exceed the send window minus what x_s would then hold
//! (`MSS_s + inflight_s`), BLEST waits for x_f.
//!
//! The estimate is the module's, not the paper's `MSS_f (CWND_f + (rtts -
//! 1) / 2) rtts` with current RTTs (`blestsched_estimate_bytes` and
//! `_linger_time`):
//! - BLEST keeps each subflow's lowest and highest SRTT seen at its
//!   decisions. The segment lingers on x_s for `min + (max - min) *
//!   (inflight_s + 1) / CWND_s` (its highest SRTT when that fills its
//!   window), never less than its SRTT now.
//! - x_f's round trips in that time are `linger / avg + 1`, rounded down
//!   (`avg` the mean of its lowest and highest SRTT): a whole number,
//!   counted from 1.
//! - Over n round trips x_f sends `(max(CWND_f, ssthresh_f + 1) + (n - 1) /
//!   2) n` segments (Reno's linear growth, integer division), or `CWND_f
//!   (2^n - 1)` while in its initial slow start (no ssthresh yet; n at most
//!   16).
//!
//! Windows are in whole segments, as the kernel's `snd_cwnd`.
//!
//! lambda starts at 1.2 and stays within [1.0, 1.3]. At most once per x_s's
//! lowest SRTT it grows by 0.04 if the connection was blocked since the last
//! update and shrinks by 0.01 otherwise. Blocked means new data waited for
//! the peer's window, or the application waited on a full send buffer with
//! everything written already sent (the module's `retrans_flag`, set in
//! `mptcp_blest_rcv_buf_optimization`).
//!
//! Deviations from the module: the first lambda update comes one interval
//! after the first choice, where the kernel counts from the connection's
//! start; x_s's share of the send window is what it has in flight, without
//! data marked lost and not yet re-sent (the kernel counts `write_seq -
//! snd_una`); the fastest subflow is chosen among usable subflows under the
//! backup rule, where the kernel's `minsk` may be a backup or a subflow
//! suspected dead (which can make it wait for a subflow it will not use).
//! Should a subflow it compares have no RTT sample (the join normally gives
//! one, as the kernel's SYN exchange does), BLEST sends as minRTT would.

use super::{send_or_wait, Decision, SchedConn, SchedPath, Scheduler};
use crate::time::{Duration, Instant};

pub const BLEST_LAMBDA_INITIAL: f64 = 1.2;
pub const BLEST_LAMBDA_MIN: f64 = 1.0;
pub const BLEST_LAMBDA_MAX: f64 = 1.3;
pub const BLEST_LAMBDA_UP: f64 = 0.04;
pub const BLEST_LAMBDA_DOWN: f64 = 0.01;
/// The module caps slow-start round trips "for sanity".
const MAX_SLOW_START_RTTS: u32 = 16;

#[derive(Clone, Debug)]
pub struct Blest {
    pub lambda: f64,
    last_update: Option<Instant>,
    stalls_seen: u64,
    /// Lowest and highest SRTT of each subflow, as `blestsched_priv`.
    srtt_range: Vec<Option<(Duration, Duration)>>,
}

impl Default for Blest {
    fn default() -> Self {
        Blest { lambda: BLEST_LAMBDA_INITIAL, last_update: None, stalls_seen: 0, srtt_range: Vec::new() }
    }
}

/// Whole segments in `bytes` (the kernel's windows are packet counts).
fn segments(bytes: u64, mss: u32) -> u64 {
    bytes / u64::from(mss.max(1))
}

/// How long a segment sent now on `s` stays in flight: between its lowest
/// and highest SRTT as its window fills, at least its SRTT now.
pub fn blest_linger(s: &SchedPath, (min, max): (Duration, Duration)) -> Duration {
    let inflight = s.packets_in_flight + 1;
    let cwnd = segments(s.cwnd, s.mss).max(1);
    let estimate = if inflight >= cwnd {
        max
    } else {
        let slope = (max - min).as_nanos();
        min + Duration::from_nanos(slope * inflight / cwnd)
    };
    estimate.max(s.srtt.unwrap_or_default())
}

/// Bytes `f` sends in `time`, before lambda.
pub fn blest_fast_bytes(f: &SchedPath, (min, max): (Duration, Duration), time: Duration) -> u64 {
    let avg = (min.as_nanos() + max.as_nanos()) / 2;
    let rtts = time.as_nanos().checked_div(avg).map_or(1, |n| n + 1);
    let cwnd = segments(f.cwnd, f.mss);
    let packets = if f.ssthresh == u64::MAX {
        let n = rtts.min(u64::from(MAX_SLOW_START_RTTS));
        cwnd * ((1 << n) - 1)
    } else {
        let ca_cwnd = cwnd.max(segments(f.ssthresh, f.mss) + 1);
        (ca_cwnd + (rtts - 1) / 2) * rtts
    };
    packets.saturating_mul(u64::from(f.mss))
}

impl Blest {
    /// Widens each measured subflow's SRTT range to its SRTT now.
    fn observe(&mut self, paths: &[SchedPath]) {
        self.srtt_range.resize(paths.len(), None);
        for (range, p) in self.srtt_range.iter_mut().zip(paths) {
            if let (true, Some(rtt)) = (p.active, p.srtt) {
                *range = Some(range.map_or((rtt, rtt), |(lo, hi)| (lo.min(rtt), hi.max(rtt))));
            }
        }
    }

    fn update_lambda(&mut self, conn: &SchedConn, slow_min_srtt: Duration) {
        let Some(last) = self.last_update else {
            self.last_update = Some(conn.now);
            self.stalls_seen = conn.stalls;
            return;
        };
        if conn.now.saturating_since(last) < slow_min_srtt {
            return;
        }
        let blocked = conn.stalls > self.stalls_seen;
        self.lambda += if blocked { BLEST_LAMBDA_UP } else { -BLEST_LAMBDA_DOWN };
        self.lambda = self.lambda.clamp(BLEST_LAMBDA_MIN, BLEST_LAMBDA_MAX);
        self.stalls_seen = conn.stalls;
        self.last_update = Some(conn.now);
    }

    /// Whether sending on `s` now would leave too little of the send window
    /// for what `f` sends meanwhile.
    fn would_block(&mut self, conn: &SchedConn, paths: &[SchedPath], f: usize, s: usize) -> bool {
        let (Some(fast_range), Some(slow_range)) = (self.srtt_range[f], self.srtt_range[s]) else { return false };
        self.update_lambda(conn, slow_range.0);
        let (fp, sp) = (&paths[f], &paths[s]);
        let fast = blest_fast_bytes(fp, fast_range, blest_linger(sp, slow_range)) as f64 * self.lambda;
        let room = conn.send_window.saturating_sub(u64::from(sp.mss) + sp.bytes_in_flight);
        fast > room as f64
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn reads_ssthresh(&self) -> bool {
        true
    }

    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        self.observe(paths);
        send_or_wait(paths, |f, s| self.would_block(conn, paths, f, s))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::path;
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// `path`: 10 segments of 1000 bytes, ssthresh 8 segments (past slow start).
    fn sf(rtt_ms: u64, packets_in_flight: u64) -> SchedPath {
        SchedPath { ssthresh: 8_000, packets_in_flight, ..path(rtt_ms, packets_in_flight * 1000) }
    }

    #[test]
    fn the_fast_estimate_is_the_modules() {
        let f = sf(10, 10);
        // 50 ms on the slow subflow: 50 / 10 + 1 = 6 round trips of the fast
        // one; max(10, 8 + 1) = 10 segments: (10 + 5 / 2) x 6 = 72 segments.
        assert_eq!(blest_fast_bytes(&f, (ms(10), ms(10)), ms(50)), 72_000);
        // The round trip is the mean of the lowest and highest SRTT seen:
        // (5 + 15) / 2 = 10 ms, the same 6 round trips.
        assert_eq!(blest_fast_bytes(&f, (ms(5), ms(15)), ms(50)), 72_000);
        // Rounded down, plus one: 49 ms is 5 round trips, (10 + 2) x 5.
        assert_eq!(blest_fast_bytes(&f, (ms(10), ms(10)), ms(49)), 60_000);
        // ssthresh above the window: max(10, 12 + 1) = 13, (13 + 2) x 6 = 90.
        let high = SchedPath { ssthresh: 12_000, ..f };
        assert_eq!(blest_fast_bytes(&high, (ms(10), ms(10)), ms(50)), 90_000);
        // Initial slow start: 10 x (2^6 - 1) = 630 segments.
        let starting = SchedPath { ssthresh: u64::MAX, ..f };
        assert_eq!(blest_fast_bytes(&starting, (ms(10), ms(10)), ms(50)), 630_000);
        // ... with at most 16 doublings: 10 x (2^16 - 1).
        assert_eq!(blest_fast_bytes(&starting, (ms(1), ms(1)), ms(100)), 655_350_000);
    }

    #[test]
    fn the_segment_lingers_between_the_lowest_and_highest_srtt() {
        // Range 40-80 ms, window 10 segments, 4 in flight: the fifth lingers
        // 40 + 40 x 5 / 10 = 60 ms.
        assert_eq!(blest_linger(&sf(50, 4), (ms(40), ms(80))), ms(60));
        // A full window: the highest SRTT.
        assert_eq!(blest_linger(&sf(50, 9), (ms(40), ms(80))), ms(80));
        // Never less than the SRTT now.
        assert_eq!(blest_linger(&sf(90, 4), (ms(40), ms(90))), ms(90));
        assert_eq!(blest_linger(&sf(70, 0), (ms(40), ms(80))), ms(70));
    }

    #[test]
    fn skips_the_slow_subflow_when_the_window_would_block() {
        // Fast: 10 ms, full. Slow: 50 ms, empty. 72 kB x lambda 1.2 = 86.4 kB.
        let (f, s) = (sf(10, 10), sf(50, 0));
        let conn = |window: u64| SchedConn { send_window: window, ..SchedConn::default() };
        // Window 87 kB: room 86 kB (the segment's 1 kB counts): wait.
        assert_eq!(Blest::default().select(&conn(87_000), &[f, s]), Decision::Wait);
        // Window 88 kB: room 87 kB: send on the slow subflow.
        assert_eq!(Blest::default().select(&conn(88_000), &[f, s]), Decision::Send(1));
        // What the slow subflow has in flight counts against the room (5 kB;
        // its SRTT range is a single value, so the linger stays 50 ms).
        let busy = sf(50, 5);
        assert_eq!(Blest::default().select(&conn(92_000), &[f, busy]), Decision::Wait);
        assert_eq!(Blest::default().select(&conn(93_000), &[f, busy]), Decision::Send(1));
        // A fast subflow in its initial slow start would send 630 kB meanwhile.
        let starting = SchedPath { ssthresh: u64::MAX, ..f };
        assert_eq!(Blest::default().select(&conn(500_000), &[starting, s]), Decision::Wait);
    }

    #[test]
    fn remembers_each_subflows_srtt_range() {
        let mut b = Blest::default();
        let conn = SchedConn { send_window: 1 << 40, ..SchedConn::default() };
        for rtt in [20, 10, 30] {
            b.select(&conn, &[sf(rtt, 10), sf(50, 0)]);
        }
        assert_eq!(b.srtt_range, [Some((ms(10), ms(30))), Some((ms(50), ms(50)))]);
        // A subflow still joining is not measured.
        b.select(&conn, &[sf(5, 10), SchedPath { active: false, ..sf(1, 0) }]);
        assert_eq!(b.srtt_range[1], Some((ms(50), ms(50))));
    }

    #[test]
    fn lambda_adapts_once_per_lowest_slow_srtt_within_bounds() {
        let (f, s) = (sf(10, 10), sf(50, 0));
        let mut b = Blest::default();
        let at = |ms: u64, stalls: u64| SchedConn {
            now: Instant::ZERO + Duration::from_millis(ms),
            send_window: 1 << 40,
            stalls,
            ..SchedConn::default()
        };
        b.select(&at(0, 0), &[f, s]);
        assert_eq!(b.lambda, BLEST_LAMBDA_INITIAL, "the first choice starts the interval");
        b.select(&at(49, 3), &[f, s]);
        assert_eq!(b.lambda, BLEST_LAMBDA_INITIAL, "within the slow subflow's lowest SRTT: unchanged");
        b.select(&at(50, 3), &[f, s]);
        assert!((b.lambda - 1.24).abs() < 1e-12, "a stall since: +0.04");
        b.select(&at(100, 3), &[f, s]);
        assert!((b.lambda - 1.23).abs() < 1e-12, "none since: -0.01");
        // The interval is the lowest SRTT seen: a slow subflow now at 200 ms
        // whose SRTT was 50 still updates every 50 ms.
        let bloated = sf(200, 0);
        b.select(&at(150, 3), &[f, bloated]);
        assert!((b.lambda - 1.22).abs() < 1e-12);
        for k in 0..10 {
            b.select(&at(200 + 60 * k, 4 + k), &[f, s]);
        }
        assert_eq!(b.lambda, BLEST_LAMBDA_MAX);
    }
}
