//! Samples of the simulator's state, taken on the driver's schedule
//! ([`crate::Sim::sample`]) and handed to a [`SampleSink`] row by row: the
//! sink decides what to keep (running means for a summary, a CSV file on
//! disk, everything in memory), so the simulator itself holds no history
//! and its memory does not grow with the length of a run. Counters are
//! cumulative; readers difference consecutive rows for rates.

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
    /// Bytes that finished serialising.
    pub bytes_sent: u64,
    /// Time spent serialising, clipped at `time` ([`crate::Link::busy_time`]).
    pub busy: Duration,
    /// Packets offered to the link, dropped or not.
    pub arrivals: u64,
    /// Packets that finished serialising.
    pub packets_sent: u64,
    pub drops: u64,
    pub queue_packets: u32,
}

/// Receives the rows of each sample: every subflow of every flow in order,
/// then every link.
pub trait SampleSink {
    fn subflow(&mut self, row: &SubflowSample);
    fn link(&mut self, row: &LinkSample);
}

/// A sink that keeps every row in memory: for tests and short runs.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub subflows: Vec<SubflowSample>,
    pub links: Vec<LinkSample>,
}

impl SampleSink for Recorder {
    fn subflow(&mut self, row: &SubflowSample) {
        self.subflows.push(*row);
    }
    fn link(&mut self, row: &LinkSample) {
        self.links.push(*row);
    }
}

/// Hands each row to two sinks in turn.
impl<A: SampleSink, B: SampleSink> SampleSink for (A, B) {
    fn subflow(&mut self, row: &SubflowSample) {
        self.0.subflow(row);
        self.1.subflow(row);
    }
    fn link(&mut self, row: &LinkSample) {
        self.0.link(row);
        self.1.link(row);
    }
}

impl<S: SampleSink + ?Sized> SampleSink for &mut S {
    fn subflow(&mut self, row: &SubflowSample) {
        (**self).subflow(row);
    }
    fn link(&mut self, row: &LinkSample) {
        (**self).link(row);
    }
}

impl<S: SampleSink> SampleSink for Option<S> {
    fn subflow(&mut self, row: &SubflowSample) {
        if let Some(s) = self {
            s.subflow(row);
        }
    }
    fn link(&mut self, row: &LinkSample) {
        if let Some(s) = self {
            s.link(row);
        }
    }
}
