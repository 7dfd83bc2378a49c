//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, CoNEXT
//! 2017; seed 004 §2.2.3 and Algorithm 3; Linux MPTCP v0.96 `mptcp_ecf.c`).
//!
//! The fastest subflow x_f (lowest SRTT) takes the segment if its window
//! has room. Otherwise, with x_s the fastest subflow that has room, `k` the
//! connection's backlog and windows in segments:
//! `n = 1 + max(k, CWND_f) / CWND_f`, `delta = max(sigma_f, sigma_s)`; if
//! `n RTT_f < (1 + waiting beta) (RTT_s + delta)`, waiting for x_f finishes
//! sooner, and if also `max(k, CWND_s) / CWND_s * RTT_s >= 2 RTT_f + delta`
//! ECF waits (and sets `waiting`); in every other case it sends on x_s
//! (clearing `waiting` when the first test fails). beta = 0.25 as in the
//! kernel. sigma is the RFC 6298 RTTVAR.
//!
//! The paper's pseudo-code (and seed 004's Algorithm 3) uses `k` where the
//! kernel module uses `max(k, CWND)` ("at least one time tx over fastest
//! subflow is required"). Braid follows the kernel: with the paper's form a
//! short backlog never passes the second test, so the last segments of a
//! transfer go to the slow subflow and finish one slow RTT late, which is
//! the very delay ECF exists to avoid.
//!
//! Deviations: should a subflow it compares have no RTT sample (Braid's
//! join normally gives one, as the kernel's SYN exchange does), ECF sends as
//! minRTT would instead of waiting for an unmeasured path. The kernel's delta is `rttvar_us >> 1`, twice Linux's mean deviation and
//! never below half of `tcp_rto_min` (Linux floors `rttvar_us` at the
//! minimum RTO, 200 ms), so there delta is at least 100 ms; Braid uses the
//! RTTVAR itself, as the paper defines delta. The kernel picks the fastest
//! subflow among all that can send, backup and potentially failed ones
//! included; Braid among those the scheduler may use.

use super::{send_or_wait, Decision, SchedConn, SchedPath, Scheduler};

/// Hysteresis that keeps ECF from flapping between waiting and sending.
pub const ECF_BETA: f64 = 0.25;

#[derive(Clone, Copy, Debug)]
pub struct Ecf {
    /// Hysteresis (the kernel's `1 / mptcp_ecf_r_beta`).
    pub beta: f64,
    waiting: bool,
}

impl Default for Ecf {
    fn default() -> Self {
        Ecf { beta: ECF_BETA, waiting: false }
    }
}

impl Ecf {
    /// ECF's decision between waiting for `f` and sending on `s`, with
    /// `k` backlog segments; true means wait.
    pub fn should_wait(&mut self, f: &SchedPath, s: &SchedPath, k: f64) -> bool {
        let (rtt_f, rtt_s) = (f.rtt(), s.rtt());
        let (cwnd_f, cwnd_s) = (f.cwnd_segments().max(1.0), s.cwnd_segments().max(1.0));
        let n = 1.0 + k.max(cwnd_f) / cwnd_f;
        let delta = f.rttvar.max(s.rttvar).as_secs_f64();
        let beta = if self.waiting { self.beta } else { 0.0 };
        if n * rtt_f < (1.0 + beta) * (rtt_s + delta) {
            if k.max(cwnd_s) / cwnd_s * rtt_s >= 2.0 * rtt_f + delta {
                self.waiting = true;
                return true;
            }
            false
        } else {
            self.waiting = false;
            false
        }
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }

    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        send_or_wait(paths, |f, s| {
            let k = conn.backlog as f64 / f64::from(paths[f].mss.max(1));
            self.should_wait(&paths[f], &paths[s], k)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::path;
    use super::*;
    use crate::time::Duration;

    #[test]
    fn waits_for_the_fast_subflow_when_that_finishes_sooner() {
        // Fast: 10 ms, window 10 segments, full. Slow: 100 ms, window 10.
        let f = path(10, 10_000);
        let s = path(100, 0);
        // 5 segments left: n = 1.5, 15 ms < 100 ms; 5/10 * 100 ms = 50 ms
        // >= 2 * 10 ms: wait for the fast subflow.
        let mut ecf = Ecf::default();
        assert!(ecf.should_wait(&f, &s, 5.0));
        // The last segment of a transfer: n = 1 + max(1, 10)/10 = 2, 20 ms <
        // 125 ms, and max(1, 10)/10 * 100 ms >= 22.5 ms: wait (the paper's
        // k/CWND_s * RTT_s = 10 ms would send it on the slow subflow).
        assert!(ecf.should_wait(&f, &s, 1.0));
        // The slow subflow barely slower (RTT 12 ms): waiting, n RTT_f = 20 ms,
        // is no sooner than RTT_s + delta = 15 ms: send.
        assert!(!ecf.should_wait(&f, &path(12, 0), 1.0));
        // RTT 20 ms (delta 5 ms): waiting would be sooner (20 < 25 ms), but
        // the slow subflow delivers its last segment in 1 x 20 ms, under
        // 2 RTT_f + delta = 25 ms: send.
        assert!(!ecf.should_wait(&f, &path(20, 0), 1.0));
        // 200 segments left: n = 21, 210 ms > 1.25 * 100 ms: use the slow one too.
        assert!(!ecf.should_wait(&f, &s, 200.0));
        assert!(!ecf.waiting);
        // Through select: the backlog decides.
        let conn = |segments: u64| SchedConn { backlog: segments * 1000, ..SchedConn::default() };
        assert_eq!(ecf.select(&conn(5), &[f, s]), Decision::Wait);
        assert_eq!(ecf.select(&conn(200), &[f, s]), Decision::Send(1));
        assert_eq!(ecf.select(&conn(5), &[path(10, 0), s]), Decision::Send(0));
        // An unmeasured subflow looks fastest (RTT 0) but is not waited for.
        let mut unmeasured = path(100, 10_000);
        unmeasured.srtt = None;
        assert_eq!(ecf.select(&conn(5), &[unmeasured, path(10, 0)]), Decision::Send(1));
    }

    #[test]
    fn hysteresis_keeps_waiting_slightly_longer() {
        let f = path(10, 10_000);
        let mut s = path(100, 0);
        s.rttvar = Duration::ZERO;
        // n RTT_f = 10 ms * (1 + k/10). With k = 95: 105 ms: above 100 ms when
        // not waiting, below 125 ms when waiting.
        let mut ecf = Ecf::default();
        assert!(!ecf.should_wait(&f, &s, 95.0));
        ecf.waiting = true;
        assert!(ecf.should_wait(&f, &s, 95.0));
    }

    /// Waiting must finish strictly sooner: `n RTT_f < RTT_s + delta`.
    #[test]
    fn a_tie_sends_on_the_slower_subflow() {
        let (mut f, mut s) = (path(10, 10_000), path(20, 0));
        (f.rttvar, s.rttvar) = (Duration::ZERO, Duration::ZERO);
        // k = 10: n = 2, n RTT_f = 20 ms = RTT_s; the second test would hold
        // (10/10 x 20 ms >= 2 x 10 ms), so only the first keeps ECF sending.
        assert!(!Ecf::default().should_wait(&f, &s, 10.0));
    }
}
