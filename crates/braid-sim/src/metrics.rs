//! Time series sampled on a fixed period. Counters are cumulative; readers
//! difference consecutive rows for rates.

use braid_proto::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubflowSample {
    pub time: Instant,
    pub flow: u32,
    pub subflow: u32,
    /// Bytes the flow's receiving application has read (whole connection).
    pub delivered: u64,
    /// Bytes new to the connection that arrived on this subflow.
    pub received_new: u64,
    pub cwnd: u64,
    pub srtt: Option<Duration>,
    pub bytes_in_flight: u64,
    pub retransmissions: u64,
    /// Out-of-order bytes in the receiver's connection-level buffer.
    pub ooo_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSample {
    pub time: Instant,
    pub link: u32,
    pub bytes_sent: u64,
    pub drops: u64,
    pub queue_packets: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub subflows: Vec<SubflowSample>,
    pub links: Vec<LinkSample>,
}
