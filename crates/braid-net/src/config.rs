//! What a [`crate::Node`] makes its connections with.

use std::time::Duration;

use braid_proto::{sched, Config};

/// Payload bytes per datagram (see `NetConfig::default`).
pub const MSS: u32 = 1400;

#[derive(Clone, Debug)]
pub struct NetConfig {
    /// Connection settings; `failure_timeout` is how long a connection
    /// with data waiting survives without a working path.
    pub connection: Config,
    /// Congestion controller and scheduler (`braid list` names them).
    pub cc: String,
    pub scheduler: String,
    pub sched_settings: sched::Settings,
    /// A connection that hears nothing for this long is dropped (a peer
    /// that vanished leaves no state behind).
    pub idle_timeout: Duration,
    /// A finished connection is kept this long to answer a lost final
    /// acknowledgement (TCP's TIME-WAIT, shortened).
    pub linger: Duration,
    /// Connections held at most; openings beyond are not answered.
    pub max_connections: usize,
}

impl Default for NetConfig {
    fn default() -> Self {
        let connection = Config {
            // The largest packet fits a 1500-byte MTU: IPv4 + UDP (28),
            // Braid's header with 8-byte sequence numbers (36) and the
            // largest control a data packet carries (JoinAck, 34).
            mss: MSS,
            // Data arrives over real paths with real delays: Linux's
            // autotuned receive buffer goes up to 6 MiB, so does ours.
            recv_autotune: true,
            ..Config::default()
        };
        NetConfig {
            connection,
            cc: "cubic".into(),
            scheduler: "minrtt".into(),
            sched_settings: Default::default(),
            idle_timeout: Duration::from_secs(60),
            linger: Duration::from_secs(1),
            max_connections: 1024,
        }
    }
}
