//! Braid's sans-IO protocol core: a multipath connection with Multipath TCP
//! semantics (subflows, data sequence numbers, one shared receive buffer),
//! pluggable congestion control ([`cc`]) and packet scheduling ([`sched`]).
//!
//! Nothing here reads a clock, opens a socket or spawns a thread: the
//! simulator and the real-network driver both feed the same
//! [`Connection`] with packets and `now`.

mod ack_tracker;
mod autotune;
pub mod cc;
mod config;
mod connection;
pub mod crypto;
pub mod endpoint;
mod intervals;
pub mod packet;
pub mod path_manager;
pub mod prefetch;
mod rack;
mod recv_buffer;
mod rtt;
pub mod sched;
mod send_buffer;
mod subflow;
pub mod time;
mod tso_defer;
pub mod wire;

pub use autotune::SendAutotune;
pub use config::Config;
pub use connection::{Connection, ConnectionError, ConnectionStats, Event, Side, SubflowStats, TooManySubflows};
pub use packet::{AckFrame, Control, DataFrame, Frame, Packet, PacketError, SubflowId};
pub use rtt::RttEstimator;
pub use subflow::{RateSample, SubflowCounters};
pub use time::{Duration, Instant};
