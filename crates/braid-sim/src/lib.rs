//! Braid's deterministic discrete-event network simulator.
//!
//! Virtual time in nanoseconds; events ordered by (time, insertion order);
//! one seeded random stream per link. Same topology, flows and seed give the
//! same run, bit for bit.

mod cross;
mod delay;
mod event;
mod link;
pub mod loss;
mod metrics;
mod payload;
pub mod policer;
mod sim;
mod source;
pub mod topology;
pub mod trace;
pub mod traffic;
mod write_log;

pub use cross::{CrossOutcome, CrossTraffic};
pub use delay::DelayHistogram;
pub use link::{Aqm, Link, LinkSpec, LinkStats, QueueLimit, RandomDrop, Red, Serialisation, RED_PACKET_BYTES};
pub use metrics::{LinkSample, Recorder, SampleSink, SubflowSample};
pub use policer::PolicerSpec;
pub use sim::{BuildError, FlowOutcome, FlowSpec, Sim};
pub use source::Source;
pub use topology::{LinkParams, Path, Topology};
