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
//! Two timeouts in a row are also what an outage looks like, so a subflow
//! brought down to the floor probes for its old size: now and then one
//! segment of new data goes out at that size (Linux's `tcp_mtu_probe`
//! likewise sends real data). Acknowledged, the subflow takes the size
//! back; lost, it waits twice as long before the next probe: 10 s after
//! the fall back, then 20, 40, ... up to 10 minutes (Linux's
//! `tcp_probe_interval`, RFC 8899's `PMTU_RAISE_TIMER`). A probe goes when
//! the scheduler gives the subflow new data (which it does not while the
//! subflow is failed or in the loss state after a timeout), a full probe's
//! worth is ready and its window has room.
//!
//! Deviations from Linux: it detects a black hole after the timeouts of
//! `tcp_retries1` (3) have taken as long as three backoffs would, and
//! halves the MSS (not below `tcp_base_mss`, 1024) rather than falling to a
//! floor at once; Braid reacts on the second timeout. Linux then searches
//! between the two sizes (`tcp_mtu_probe`'s binary search), probes only in
//! the open state (not in fast recovery either) and does not treat a lost
//! probe as congestion (`tcp_mtup_probe_failed`, the window kept); Braid
//! tries only the old size, and a lost probe is a loss like any other,
//! which halves the window once per probe. Splitting a range
//! queued for retransmission makes it no longer match the timeout's record
//! of what it declared lost, so if that timeout is later undone the pieces
//! are still re-sent (harmless duplicates).
//!
//! [`Config::mss_floor`]: crate::Config::mss_floor

use super::Connection;
use crate::packet::{AckFrame, Frame, Packet, SubflowId};
use crate::time::{Duration, Instant};

/// The first probe for a subflow's old size, after the fall back.
const FIRST_PROBE: Duration = Duration::from_secs(10);
/// The longest wait between probes (Linux's `tcp_probe_interval`).
const LONGEST_WAIT: Duration = Duration::from_secs(600);

/// A subflow brought down to the floor, probing for its old size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raise {
    subflow: usize,
    /// The size it had.
    size: u32,
    /// The wait after the next lost probe is twice this one.
    wait: Duration,
    next: Instant,
    /// The packet number of the probe in flight.
    probe: Option<u64>,
}

impl Connection {
    /// Caps the payload of subflow `id`'s packets at `mss` bytes (at most
    /// the configured MSS, at least one byte): for a driver that knows its
    /// path carries less than the configured MSS. It replaces what
    /// black-hole detection had found: no probe goes beyond it. Ignored for
    /// a subflow that does not exist.
    pub fn set_subflow_mss(&mut self, id: SubflowId, mss: u32) {
        let limit = self.config.mss;
        if let Some(s) = self.subflows.get_mut(id.index()) {
            s.mss = mss.clamp(1, limit);
            self.raising.retain(|r| r.subflow != id.index());
        }
    }

    /// Black-hole detection after a retransmission timeout of subflow `i`:
    /// a probe in flight there is lost, and the second timeout in a row
    /// brings the subflow down to the floor.
    pub(super) fn check_black_hole(&mut self, now: Instant, i: usize) {
        let Some(floor) = self.config.mss_floor else { return };
        if !self.raising.is_empty() {
            self.raise_probe_outcome(now, i, None);
        }
        let s = &mut self.subflows[i];
        if s.timeouts_in_a_row() >= 2 && s.mss > floor {
            let size = std::mem::replace(&mut s.mss, floor.max(1));
            self.raising.retain(|r| r.subflow != i);
            let next = now + FIRST_PROBE;
            self.raising.push(Raise { subflow: i, size, wait: FIRST_PROBE, next, probe: None });
        }
    }

    /// A probe of its old size on subflow `i`, if one is due, when the
    /// scheduler gives it the new data at `dsn`, of which `ready` bytes
    /// could go in one packet.
    #[cold]
    pub(super) fn send_raise_probe(&mut self, now: Instant, i: usize, dsn: u64, ready: u32) -> Option<Packet> {
        let r = self.raising.iter().find(|r| r.subflow == i && r.probe.is_none() && r.next <= now)?;
        let size = r.size;
        if ready < size || !self.window_space(i, size) {
            return None;
        }
        self.take_new(size, size);
        let packet = self.send_data(now, i, dsn, size);
        if let (Some(r), Frame::Data(d)) = (self.raising.iter_mut().find(|r| r.subflow == i), &packet.frame) {
            r.probe = Some(d.pn);
        }
        Some(packet)
    }

    /// After an acknowledgement (`ack`) or a timeout (`None`) on subflow
    /// `i`: whether its probe arrived (the subflow takes its old size back),
    /// was lost (the next waits twice as long), or is still out.
    #[cold]
    pub(super) fn raise_probe_outcome(&mut self, now: Instant, i: usize, ack: Option<&AckFrame>) {
        let Some(k) = self.raising.iter().position(|r| r.subflow == i) else { return };
        let r = &mut self.raising[k];
        let Some(pn) = r.probe else { return };
        let acked = ack.is_some_and(|a| a.cumulative > pn || a.sack_blocks().iter().any(|&(s, e)| s <= pn && pn < e));
        if acked {
            self.subflows[i].mss = r.size;
            self.raising.swap_remove(k);
        } else if ack.is_none() || !self.subflows[i].in_flight(pn) {
            r.probe = None;
            r.wait = r.wait.saturating_mul(2).min(LONGEST_WAIT);
            r.next = now + r.wait;
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
