//! BLEST, BLocking ESTimation (Ferlin, Alay, Mehani, Boreli, IFIP
//! Networking 2016; seed 004 §2.2.2 and Algorithm 2; Linux MPTCP v0.96
//! `mptcp_blest.c`).
//!
//! The fastest subflow takes the segment if its window has room. Otherwise
//! the fastest subflow with room, x_s, is used only if doing so does not
//! risk blocking the connection's send window: with `rtts = RTT_s / RTT_f`,
//! the fast subflow could send `X = MSS_f (CWND_f + (rtts - 1) / 2) rtts`
//! bytes while one segment crosses the slow path. If `X lambda` exceeds the
//! send window minus what the slow subflow would then have in flight,
//! `MSS_s (inflight_s + 1)`, BLEST waits for the fast subflow.
//!
//! lambda starts at 1.2 and stays within [1.0, 1.3]. At most once per slow
//! subflow RTT, it grows by 0.04 if the connection was blocked by its
//! window since the last update (a head-of-line event) and shrinks by 0.01
//! otherwise, as the kernel module does. Windows and in-flight counts are
//! in segments. Should a subflow it compares have no RTT sample (the join
//! normally gives one, as the kernel's SYN exchange does), BLEST sends as
//! minRTT would.

use super::{send_or_wait, Decision, SchedConn, SchedPath, Scheduler};
use crate::time::Instant;

pub const BLEST_LAMBDA_INITIAL: f64 = 1.2;
pub const BLEST_LAMBDA_MIN: f64 = 1.0;
pub const BLEST_LAMBDA_MAX: f64 = 1.3;
pub const BLEST_LAMBDA_UP: f64 = 0.04;
pub const BLEST_LAMBDA_DOWN: f64 = 0.01;

#[derive(Clone, Copy, Debug)]
pub struct Blest {
    pub lambda: f64,
    last_update: Option<Instant>,
    stalls_seen: u64,
}

impl Default for Blest {
    fn default() -> Self {
        Blest { lambda: BLEST_LAMBDA_INITIAL, last_update: None, stalls_seen: 0 }
    }
}

/// Bytes the fast subflow can send while one segment crosses the slow one.
pub fn blest_fast_bytes(f: &SchedPath, s: &SchedPath) -> f64 {
    let rtts = if f.rtt() > 0.0 { s.rtt() / f.rtt() } else { 1.0 };
    f64::from(f.mss) * (f.cwnd_segments() + (rtts - 1.0) / 2.0) * rtts
}

impl Blest {
    fn update_lambda(&mut self, conn: &SchedConn, slow: &SchedPath) {
        let due = self.last_update.is_none_or(|t| conn.now.saturating_since(t) >= slow.srtt.unwrap_or_default());
        if !due {
            return;
        }
        let blocked = conn.window_stalls > self.stalls_seen;
        self.lambda += if blocked { BLEST_LAMBDA_UP } else { -BLEST_LAMBDA_DOWN };
        self.lambda = self.lambda.clamp(BLEST_LAMBDA_MIN, BLEST_LAMBDA_MAX);
        self.stalls_seen = conn.window_stalls;
        self.last_update = Some(conn.now);
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        send_or_wait(paths, |f, s| {
            let (fp, sp) = (&paths[f], &paths[s]);
            self.update_lambda(conn, sp);
            let room = conn.send_window as f64 - f64::from(sp.mss) * (sp.in_flight_segments() + 1.0);
            blest_fast_bytes(fp, sp) * self.lambda > room
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::path;
    use super::*;
    use crate::time::Duration;

    #[test]
    fn skips_the_slow_subflow_when_the_window_would_block() {
        // Fast: 10 ms, 10 segments, full. Slow: 50 ms, empty. rtts = 5:
        // X = 1000 * (10 + 2) * 5 = 60 kB; lambda 1.2: 72 kB.
        let (f, s) = (path(10, 10_000), path(50, 0));
        assert!((blest_fast_bytes(&f, &s) - 60_000.0).abs() < 1e-9);
        // A fast subflow without an RTT sample counts as one RTT: 10 kB, not infinity.
        let unmeasured = SchedPath { srtt: None, ..f };
        assert_eq!(blest_fast_bytes(&unmeasured, &s), 10_000.0);
        let conn = |window: u64| SchedConn { send_window: window, ..SchedConn::default() };
        let mut b = Blest::default();
        // Window 64 kB: 72 kB > 64 kB - 1 kB: wait.
        assert_eq!(b.select(&conn(64_000), &[f, s]), Decision::Wait);
        // Window 100 kB: room 99 kB: send on the slow subflow.
        let mut b = Blest::default();
        assert_eq!(b.select(&conn(100_000), &[f, s]), Decision::Send(1));
        // The slow subflow's own segments in flight count against the room:
        // 5 in flight, room = 77 kB - 1 kB x (5 + 1) = 71 kB < 60 kB x 1.19
        // (lambda after its first update) = 71.4 kB: wait; at 78 kB, send.
        let busy = path(50, 5_000);
        assert_eq!(Blest::default().select(&conn(77_000), &[f, busy]), Decision::Wait);
        assert_eq!(Blest::default().select(&conn(78_000), &[f, busy]), Decision::Send(1));
    }

    #[test]
    fn lambda_adapts_once_per_slow_rtt_within_bounds() {
        let (f, s) = (path(10, 10_000), path(50, 0));
        let mut b = Blest::default();
        let at = |ms: u64, stalls: u64| SchedConn {
            now: Instant::ZERO + Duration::from_millis(ms),
            send_window: 1 << 30,
            window_stalls: stalls,
            ..SchedConn::default()
        };
        b.select(&at(0, 0), &[f, s]);
        assert!((b.lambda - 1.19).abs() < 1e-12, "no stall: -0.01");
        b.select(&at(10, 5), &[f, s]);
        assert!((b.lambda - 1.19).abs() < 1e-12, "within one slow RTT: unchanged");
        b.select(&at(60, 5), &[f, s]);
        assert!((b.lambda - 1.23).abs() < 1e-12, "a stall: +0.04");
        for k in 0..10 {
            b.select(&at(200 + 60 * k, 6 + k), &[f, s]);
        }
        assert_eq!(b.lambda, BLEST_LAMBDA_MAX);
    }
}
