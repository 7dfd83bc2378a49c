//! minRTT, the default scheduler of Linux MPTCP v0.96 (`mptcp_sched.c`,
//! `get_available_subflow`; seed 004 §2.2.1 and Algorithm 1).
//!
//! Among usable subflows with room in their congestion window, pick the one
//! with the lowest smoothed RTT. Backup subflows are considered only when no
//! regular subflow is usable at all: a regular subflow whose window is full
//! makes the scheduler wait rather than spill onto a backup.
//!
//! A subflow with no RTT sample counts as RTT zero, so it gets probed
//! first; the join normally gives every subflow a sample (as the SYN
//! exchange does in Linux) before the scheduler sees it. Ties go to the lower subflow index, which keeps runs deterministic.

use super::{fastest, Decision, SchedConn, SchedPath, Scheduler};

#[derive(Clone, Copy, Debug, Default)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        "minrtt"
    }

    fn select(&mut self, _conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        fastest(paths, |i| paths[i].has_window_space()).map_or(Decision::Wait, Decision::Send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rtt_ms: u64, in_flight: u64, backup: bool) -> SchedPath {
        SchedPath { backup, ..super::super::tests::path(rtt_ms, in_flight) }
    }

    #[test]
    fn picks_lowest_rtt_with_space() {
        let c = SchedConn::default();
        let mut s = MinRtt;
        assert_eq!(s.select(&c, &[path(50, 0, false), path(10, 0, false)]), Decision::Send(1));
        assert_eq!(s.select(&c, &[path(50, 0, false), path(10, 9_500, false)]), Decision::Send(0));
        assert_eq!(s.select(&c, &[path(50, 9_001, false), path(10, 9_500, false)]), Decision::Wait);
    }

    #[test]
    fn backup_only_when_no_regular_is_usable() {
        let c = SchedConn::default();
        let mut s = MinRtt;
        // Regular full, backup free: wait.
        assert_eq!(s.select(&c, &[path(50, 10_000, false), path(10, 0, true)]), Decision::Wait);
        // Regular failed: backup carries.
        let mut dead = path(50, 0, false);
        dead.potentially_failed = true;
        assert_eq!(s.select(&c, &[dead, path(10, 0, true)]), Decision::Send(1));
        assert_eq!(s.select(&c, &[]), Decision::Wait);
    }
}
