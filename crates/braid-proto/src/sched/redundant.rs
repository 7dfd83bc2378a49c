//! Redundant scheduling, ReMP TCP (Frömmgen et al. 2016; seed 004 §2.2.6
//! and Algorithm 6; Linux MPTCP v0.96 `mptcp_redundant.c`).
//!
//! Every segment goes out on every subflow. As in the kernel module, each
//! subflow keeps its own position in the stream: whenever it has window
//! space it sends the next segment it has not carried yet, a copy of data
//! another subflow already sent (skipping what the peer has acknowledged)
//! or else new data. The receiver keeps the first copy that arrives; the
//! others are duplicates it discards (they never count as goodput).
//! The connection carries this out on `Decision::SendAll`.

use super::{eligible, Decision, SchedConn, SchedPath, Scheduler};

#[derive(Clone, Copy, Debug, Default)]
pub struct Redundant;

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }

    fn opportunistic_by_default(&self) -> bool {
        false
    }

    fn select(&mut self, _conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        if eligible(paths).any(|i| paths[i].has_window_space()) {
            Decision::SendAll
        } else {
            Decision::Wait
        }
    }

    fn copies_in_flight(&self) -> bool {
        true
    }
}
