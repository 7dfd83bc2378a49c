//! What a [`crate::Node`] makes its connections with.

use std::time::Duration;

use braid_proto::{sched, Config};

/// Payload bytes per datagram (see `NetConfig::default`), where the path
/// carries them.
pub const MSS: u32 = 1400;

/// What a datagram holds beyond its payload, at most
/// ([`braid_proto::wire::MAX_DATA_OVERHEAD`]).
pub const DATAGRAM_OVERHEAD: u32 = braid_proto::wire::MAX_DATA_OVERHEAD;

/// Payload bytes per datagram on a subflow whose path lost its full-sized
/// packets (black-hole detection, `Config::mss_floor`): what fits IPv6's
/// minimum MTU of 1280 bytes, which every IPv6 path and practically every
/// IPv4 path carries, after the IPv6 and UDP headers (48 bytes).
pub const MSS_FLOOR: u32 = 1280 - 48 - DATAGRAM_OVERHEAD;

/// The payload that fits a route's `mtu`, at most [`MSS`] and at least
/// [`MSS_FLOOR`] (a route that claims less is left to black-hole detection).
pub fn mss_for_mtu(mtu: u32, ipv4: bool) -> u32 {
    let ip_udp = if ipv4 { 28 } else { 48 };
    mtu.saturating_sub(ip_udp + DATAGRAM_OVERHEAD).clamp(MSS_FLOOR, MSS)
}

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
            // The largest packet fits a 1500-byte MTU: IPv4 + UDP (28) and
            // DATAGRAM_OVERHEAD. Each subflow takes less where the route to
            // the peer carries less (`mss_for_mtu`), and falls to
            // MSS_FLOOR when its full-sized packets vanish.
            mss: MSS,
            mss_floor: Some(MSS_FLOOR),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: a 1500-byte MTU holds 1400 payload bytes over IPv4 and
    /// 1382 over IPv6; WireGuard's 1420 holds 1322; IPv6's minimum, the
    /// floor; below the floor or above 1500, the bounds.
    #[test]
    fn payload_fits_the_routes_mtu() {
        assert_eq!(MSS_FLOOR, 1162);
        assert_eq!(mss_for_mtu(1500, true), 1400);
        assert_eq!(mss_for_mtu(1500, false), 1382);
        assert_eq!(mss_for_mtu(1420, true), 1322);
        assert_eq!(mss_for_mtu(1280, false), MSS_FLOOR);
        assert_eq!(mss_for_mtu(576, true), MSS_FLOOR);
        assert_eq!(mss_for_mtu(9000, true), MSS);
        assert_eq!(NetConfig::default().connection.mss_floor, Some(MSS_FLOOR));
    }
}
