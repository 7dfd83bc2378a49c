//! Packet schedulers: which subflow carries the next segment.
//!
//! The connection asks [`Scheduler::select`] with a read-only view of every
//! subflow ([`SchedPath`]) and of itself ([`SchedConn`]). The answer is a
//! path, several paths (for redundant schedulers), or wait. The connection
//! enforces the hard limits itself (congestion window, receive window), so
//! a scheduler cannot make the connection break them.

mod minrtt;

pub use minrtt::MinRtt;

use crate::time::Duration;

/// What a scheduler may know about one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedPath {
    pub srtt: Option<Duration>,
    pub rttvar: Duration,
    pub cwnd: u64,
    pub bytes_in_flight: u64,
    pub mss: u32,
    pub backup: bool,
    /// After a retransmission timeout, until new data is acknowledged.
    pub potentially_failed: bool,
    /// False for closed subflows.
    pub active: bool,
    /// The pacer holds this subflow back until later.
    pub paced: bool,
}

impl SchedPath {
    /// Room for one more full segment under the congestion window, and the
    /// pacer lets it go now.
    pub fn has_window_space(&self) -> bool {
        !self.paced && self.bytes_in_flight + u64::from(self.mss) <= self.cwnd
    }
    /// Can carry data at all (open and not suspected dead).
    pub fn usable(&self) -> bool {
        self.active && !self.potentially_failed
    }
}

/// What a scheduler may know about the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedConn {
    /// Bytes written by the application and not yet sent on any subflow.
    pub backlog: u64,
    /// Bytes the peer's receive window still allows beyond what was sent.
    pub window_room: u64,
}

/// A scheduler's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Send(usize),
    Wait,
}

pub trait Scheduler: std::fmt::Debug + Send {
    fn name(&self) -> &'static str;
    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision;
}

/// Every scheduler Braid has, by scenario name, with a one-line description.
pub const ALGORITHMS: &[(&str, &str)] =
    &[("minrtt", "lowest smoothed RTT among subflows with window space; backups only when no regular subflow is usable (Linux default)")];

/// Builds the scheduler a scenario names, or `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Box<dyn Scheduler>> {
    match name {
        "minrtt" => Some(Box::new(MinRtt)),
        _ => None,
    }
}
