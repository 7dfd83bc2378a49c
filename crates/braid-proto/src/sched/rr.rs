//! Round robin (Linux MPTCP v0.96 `mptcp_rr.c`; seed 004 Algorithm 4).
//!
//! Subflows take turns: the current one sends up to `num_segments`
//! consecutive segments, then the turn passes to the next eligible subflow.
//! With `cwnd_limited` (the module's default, and how seed 004 ran it) a
//! subflow without window space loses its turn, so the scheduler becomes
//! ACK-clocked once windows fill. Without it the turn waits for the
//! subflow's window instead. Defaults: `num_segments = 1`, `cwnd_limited =
//! true`; scenarios set them in `scheduler_settings`.
//!
//! With bulk traffic and these defaults RR is ACK-clocked (seed 004 §2.2.4):
//! each acknowledgement opens one subflow's window and RR has no other
//! subflow to turn to, so it makes minRTT's choices. It differs when
//! several subflows have room at once (a connection blocked by its window
//! or send buffer, or an application-limited source), and then spreads
//! segments evenly over fast and slow paths. Like `mptcp_rr.c` it does not
//! retransmit opportunistically or penalise slow subflows
//! (`opportunistic_by_default` is false), which is what sets it apart from
//! the default scheduler on a window-limited connection.
//! Linux's RR also assigns a segment only to a subflow whose queued but
//! unsent data fits in its free window; Braid sends at once, so that test
//! reduces to the window test.
//!
//! Backup subflows take their turns like the others: `mptcp_rr_is_available`
//! has no backup test, unlike the default scheduler's (a backup path under
//! RR carries its share, as in the kernel).
//!
//! A range being reinjected goes to a subflow with room that does not hold
//! it, or else to one that does (`rr_get_available_subflow` never waits
//! for the first kind: `reinjection_waits_for_unused` is false).
//! Deviation: the turn decides among them, where the kernel takes the
//! last in its list and leaves the turns as they were.

use super::{Decision, SchedConn, SchedPath, Scheduler};

#[derive(Clone, Copy, Debug)]
pub struct RoundRobin {
    pub num_segments: u32,
    pub cwnd_limited: bool,
    /// Subflow whose turn it is, and segments it has sent in this turn.
    turn: usize,
    sent_in_turn: u32,
}

impl Default for RoundRobin {
    fn default() -> Self {
        RoundRobin { num_segments: 1, cwnd_limited: true, turn: 0, sent_in_turn: 0 }
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }

    fn opportunistic_by_default(&self) -> bool {
        false
    }

    fn reinjection_waits_for_unused(&self) -> bool {
        false
    }

    fn select(&mut self, _conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        let usable = |i: usize| paths[i].usable();
        let Some(first) = (0..paths.len()).find(|&i| usable(i)) else {
            return Decision::Wait;
        };
        if self.sent_in_turn >= self.num_segments.max(1) || !(self.turn < paths.len() && usable(self.turn)) {
            // Next eligible subflow after the current one, wrapping around.
            self.turn = (self.turn + 1..paths.len()).find(|&i| usable(i)).unwrap_or(first);
            self.sent_in_turn = 0;
        }
        let pick = if self.cwnd_limited {
            // The eligible subflows from the one whose turn it is, wrapping around.
            (self.turn..paths.len()).chain(0..self.turn).find(|&i| usable(i) && paths[i].has_window_space())
        } else {
            Some(self.turn).filter(|&i| paths[i].has_window_space())
        };
        match pick {
            Some(i) => {
                if i != self.turn {
                    self.turn = i;
                    self.sent_in_turn = 0;
                }
                self.sent_in_turn += 1;
                Decision::Send(i)
            }
            None => Decision::Wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::path;
    use super::*;

    #[test]
    fn alternates_and_skips_full_subflows() {
        let c = SchedConn::default();
        let mut rr = RoundRobin::default();
        let paths = [path(10, 0), path(50, 0), path(30, 0)];
        let picks: Vec<_> = (0..6).map(|_| rr.select(&c, &paths)).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2].map(Decision::Send));
        // Subflow 1 full: after 0's turn, 1's turn goes to 2.
        let paths = [path(10, 0), path(50, 10_000), path(30, 0)];
        let picks: Vec<_> = (0..3).map(|_| rr.select(&c, &paths)).collect();
        assert_eq!(picks, [0, 2, 0].map(Decision::Send));
        let mut two = RoundRobin { num_segments: 2, ..RoundRobin::default() };
        let picks: Vec<_> = (0..4).map(|_| two.select(&c, &[path(10, 0), path(50, 0)])).collect();
        assert_eq!(picks, [0, 0, 1, 1].map(Decision::Send));
    }

    #[test]
    fn a_backup_subflow_takes_its_turn_as_in_the_kernel() {
        let c = SchedConn::default();
        let mut rr = RoundRobin::default();
        let backup = SchedPath { backup: true, ..path(50, 0) };
        let picks: Vec<_> = (0..4).map(|_| rr.select(&c, &[path(10, 0), backup])).collect();
        assert_eq!(picks, [0, 1, 0, 1].map(Decision::Send));
        // A subflow suspected dead does not.
        let failed = SchedPath { potentially_failed: true, ..path(50, 0) };
        assert_eq!(rr.select(&c, &[path(10, 0), failed]), Decision::Send(0));
        assert_eq!(rr.select(&c, &[path(10, 0), failed]), Decision::Send(0));
    }
}
