//! Segment sizes below the configured MSS, for paths whose MTU is smaller
//! than the packets the connection would send.
//!
//! A real path may carry less than the 1500 bytes most links do: a VPN
//! tunnel (WireGuard's default MTU is 1420), PPPoE (1492), some mobile
//! networks. A datagram too large for it is dropped without a word when the
//! sender forbids fragmentation (Braid's UDP driver does, as QUIC stacks do),
//! and every full-sized packet of the subflow is lost: its handshake passes,
//! its data never arrives. Two remedies, each usable alone:
//!
//! - The driver tells the connection what the path carries, when it knows
//!   (the MTU of the route to the peer, which includes what the kernel
//!   learned from ICMP): [`Connection::set_subflow_mss`].
//! - Black-hole detection, as Linux's `tcp_mtu_probing` (with
//!   `tcp_mtu_probing = 1`, RFC 4821 section 7.7): with
//!   [`Config::mss_floor`] set, a subflow whose retransmission timer fires
//!   a second time in a row (no new data acknowledged between) while its
//!   MSS is above the floor falls back to the floor, which every IP path
//!   carries (the floor is the driver's to choose: 1280 bytes of IPv6's
//!   minimum MTU less its headers).
//!
//! Data already in flight, queued for retransmission or for reinjection at
//! the larger size goes out in pieces of the new size. The congestion
//! controller keeps its byte window; its MSS (the unit of its increases)
//! stays the configured one.
//!
//! Deviations from Linux: it detects a black hole after the timeouts of
//! `tcp_retries1` (3) have taken as long as three backoffs would, and
//! halves the MSS (not below `tcp_base_mss`, 1024) rather than falling to a
//! floor at once; Braid reacts on the second timeout, so a subflow that is
//! only down for two timeouts also sends smaller packets afterwards. Linux
//! then probes for a larger MSS (`tcp_mtu_probe`, every
//! `tcp_probe_interval`, 10 minutes); Braid does not raise it again.
//! Splitting a range queued for retransmission makes it no longer match
//! the timeout's record of what it declared lost, so if that timeout is
//! later undone the pieces are still re-sent (harmless duplicates).
//!
//! [`Config::mss_floor`]: crate::Config::mss_floor

use super::Connection;
use crate::packet::SubflowId;

impl Connection {
    /// Caps the payload of subflow `id`'s packets at `mss` bytes (at most
    /// the configured MSS, at least one byte): for a driver that knows its
    /// path carries less than the configured MSS. Ignored for a subflow
    /// that does not exist.
    pub fn set_subflow_mss(&mut self, id: SubflowId, mss: u32) {
        let limit = self.config.mss;
        if let Some(s) = self.subflows.get_mut(id.index()) {
            s.mss = mss.clamp(1, limit);
        }
    }

    /// Black-hole detection after a retransmission timeout of subflow `i`.
    pub(super) fn check_black_hole(&mut self, i: usize) {
        let Some(floor) = self.config.mss_floor else { return };
        let s = &mut self.subflows[i];
        if s.timeouts_in_a_row() >= 2 && s.mss > floor {
            s.mss = floor.max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cc::by_name;
    use crate::crypto::RustCrypto;
    use crate::sched::by_name as sched_by_name;
    use crate::{Config, Connection, Instant, SubflowId};

    fn client(config: Config) -> Connection {
        let crypto = std::sync::Arc::new(RustCrypto);
        let mut c = Connection::client(config, by_name("reno").unwrap(), sched_by_name("minrtt").unwrap(), 7, crypto);
        c.add_subflow(false).unwrap();
        c
    }

    /// The driver's cap stays within one byte and the configured MSS.
    #[test]
    fn a_drivers_cap_stays_within_the_configured_mss() {
        let mut c = client(Config { mss: 1400, ..Config::default() });
        c.set_subflow_mss(SubflowId(0), 1300);
        assert_eq!(c.subflow_stats(0).unwrap().mss, 1300);
        c.set_subflow_mss(SubflowId(0), 9000);
        assert_eq!(c.subflow_stats(0).unwrap().mss, 1400);
        c.set_subflow_mss(SubflowId(0), 0);
        assert_eq!(c.subflow_stats(0).unwrap().mss, 1);
        c.set_subflow_mss(SubflowId(5), 1000);
        assert!(c.subflow_stats(5).is_none());
    }

    /// The first packet never answered: the first timeout keeps the MSS,
    /// the second falls to the floor; without a floor it stays.
    #[test]
    fn the_second_timeout_in_a_row_falls_to_the_floor() {
        for (floor, after_second) in [(Some(1100), 1100), (None, 1400)] {
            let mut c = client(Config { mss: 1400, mss_floor: floor, ..Config::default() });
            let mut now = Instant::ZERO;
            while c.poll_transmit(now).is_some() {}
            let mut seen = Vec::new();
            for _ in 0..2 {
                now = c.poll_timeout().expect("a timer runs");
                c.handle_timeout(now);
                while c.poll_transmit(now).is_some() {}
                seen.push(c.subflow_stats(0).unwrap().mss);
            }
            assert_eq!(seen, [1400, after_second], "floor {floor:?}");
        }
    }
}
