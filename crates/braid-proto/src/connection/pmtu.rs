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
//!   a second time in a row with data in flight (no data acknowledged
//!   between) while its MSS is above the floor falls back to the floor,
//!   which every IP path carries (the floor is the driver's to choose:
//!   1280 bytes of IPv6's minimum MTU less its headers). Zero-length
//!   packets neither count nor break the row: an unanswered handshake
//!   says nothing about size (Linux's detection skips SYN timeouts), and a
//!   path that drops large packets answers the zero-length probe a
//!   subflow sends after a timeout when another subflow has delivered its
//!   data (the redundant scheduler's case, or a reinjection that arrived
//!   first), which would otherwise start the count again every time.
//!
//! Data already in flight, queued for retransmission or for reinjection at
//! the larger size goes out in pieces of the new size. The congestion
//! controller keeps its byte window; its MSS (the unit of its increases)
//! stays the configured one.
//!
//! Two timeouts in a row are also what an outage looks like, so a subflow
//! brought down to the floor probes for its old size: 10 s after the fall
//! back one segment of new data goes out at that size (Linux's
//! `tcp_mtu_probe` likewise sends real data). Acknowledged, the subflow
//! takes the size back. Lost while later, smaller packets arrive (found
//! lost by acknowledgements, not by a timeout), the size is too large for
//! the path, and the next probes search between the largest size that got
//! through and the smallest that did not, at once, each at the middle of
//! the two (Linux's binary search), until they are less than 8 bytes apart
//! (Linux's `tcp_probe_threshold`); 10 minutes later (Linux's
//! `tcp_probe_interval`) a new search starts from the old size. A probe
//! for an MSS is as large as that MSS's largest packet can be (the payload
//! makes up for a header shorter than `wire::MAX_DATA_OVERHEAD`): sequence
//! numbers grow and controls come and go, and the MSS found must fit every
//! packet, not only the probe (Linux sizes each segment by the current
//! options instead; Braid's payload sizes do not depend on the header;
//! where every header is the same size, `Config::fixed_data_header`, as in
//! the simulator without the wire format, the probe is that MSS). A probe
//! lost to a timeout says nothing about its size (the path may be out):
//! the next probe of that size waits twice as long, 20 s, then 40, ... up
//! to 10 minutes (RFC 8899's `PMTU_RAISE_TIMER`). A probe goes when the
//! scheduler gives the subflow new data (which it does not while the
//! subflow is failed or in the loss state after a timeout), outside fast
//! recovery (Linux probes only in the open state), when the probe and
//! `dupthresh` + 1 segments behind it are ready (Linux's `size_needed`: a
//! lost probe is then found by duplicate ACKs, not by a timeout that
//! would collapse the window; so a sender whose writes, send buffer or
//! peer's window leave less unsent never probes), no control would ride
//! along and its window has room. Those segments follow the probe on its
//! subflow whatever the scheduler would choose (Linux's probe has its
//! subflow's own send queue behind it). A lost probe is not congestion: it opens no recovery episode
//! and the window stays (`tcp_mtup_probe_failed`); its data goes again in
//! pieces of the current size. A subflow that falls back again (an outage
//! after a search) probes for the size it had before the first fall back.
//! Under the redundant scheduler, which sends every segment on every
//! subflow, a probe carries the next data its subflow has not carried: a
//! copy of what the others sent (a subflow on a slower path lags behind
//! them for good), new data beyond it as far as the probe needs.
//!
//! Deviations from Linux: it detects a black hole after the timeouts of
//! `tcp_retries1` (3) have taken as long as three backoffs would, and
//! halves the MSS (not below `tcp_base_mss`, 1024) rather than falling to a
//! floor at once; Braid reacts on the second timeout, then tries the old
//! size before searching (an outage, which also ends in two timeouts, is
//! undone by one probe). Linux's probe also needs the window to hold 11
//! packets and room for two; Braid's needs room for the probe. A tail loss
//! probe (RACK-TLP) that copies a path-MTU probe copies its first MSS: the
//! copy arriving and the probe not is taken as the probe lost (too large),
//! without the window cut a repaired tail loss makes. After a lost probe Linux enters the
//! loss state without cutting the window (`tcp_simple_retransmit`) and
//! sends no probe until it leaves it, when the re-sent data is
//! acknowledged; Braid stays where it is, re-sends the probe's data, and
//! sends the next probe a smoothed RTT later (without that wait, a probe
//! lost to a full queue had the next sent behind it into the same queue,
//! each taken as too large: the search settled up to 230 bytes short).
//! Splitting a range queued for retransmission makes it no longer match
//! the timeout's record of what it declared lost, so if that timeout is
//! later undone the pieces are still re-sent (harmless duplicates).
//!
//! [`Config::mss_floor`]: crate::Config::mss_floor

use super::handshake::JoinState;
use super::transmit::fits;
use super::Connection;
use crate::packet::{Frame, Packet, SubflowId};
use crate::subflow::MtuProbe;
use crate::time::{Duration, Instant};
use crate::wire;

/// The first probe for a subflow's old size, after the fall back.
const FIRST_PROBE: Duration = Duration::from_secs(10);
/// The longest wait between probes, and between searches (Linux's
/// `tcp_probe_interval`).
const LONGEST_WAIT: Duration = Duration::from_secs(600);
/// A search ends when the sizes that got through and did not are closer
/// than this (Linux's `tcp_probe_threshold`, in bytes).
const CLOSE_ENOUGH: u32 = 8;

/// A subflow brought below its old size, searching for the largest size
/// its path carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raise {
    subflow: usize,
    /// The size it had, where every search starts.
    size: u32,
    /// The smallest size not known to be too large: the search's top
    /// (its bottom is the subflow's MSS, a size that got through).
    high: u32,
    /// The wait after the next probe lost to a timeout is twice this one.
    wait: Duration,
    next: Instant,
    /// The size of the probe in flight (its packet number is the
    /// subflow's `mtu_probe`).
    probe: Option<u32>,
    /// New segments still to follow the probe on its subflow, whatever the
    /// scheduler would choose, so that its loss shows by duplicate ACKs
    /// there (Linux's probe has its subflow's own send queue behind it).
    follow: u64,
}

impl Raise {
    /// The next probe's size: the old size first, then the middle of the
    /// range left.
    fn probe_size(&self, mss: u32) -> u32 {
        if self.high == self.size {
            self.size
        } else {
            mss + self.high.saturating_sub(mss).div_ceil(2)
        }
    }

    /// A probe got through (`mss` is now its size) or showed `high` too
    /// large: the search goes on at once, or ends and starts again from
    /// the old size after the longest wait. Whether it is over for good
    /// (the subflow has its old size back).
    fn narrowed(&mut self, now: Instant, mss: u32) -> bool {
        if mss >= self.size {
            return true;
        }
        self.next = now;
        if self.high < mss + CLOSE_ENOUGH {
            self.high = self.size;
            self.wait = LONGEST_WAIT;
            self.next = now + LONGEST_WAIT;
        }
        false
    }
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
            self.forget_raise(id.index());
        }
    }

    /// Subflow `i` stops searching (a driver's cap, a new fall back, the
    /// subflow closed or its slot taken by another).
    pub(super) fn forget_raise(&mut self, i: usize) {
        self.subflows[i].mtu_probe = None;
        self.raising.retain(|r| r.subflow != i);
    }

    /// Black-hole detection after a retransmission timeout of subflow `i`:
    /// a probe in flight there is lost, and the second timeout of data in
    /// a row (zero-length probes acknowledged between them do not break
    /// the row) brings the subflow down to the floor.
    pub(super) fn check_black_hole(&mut self, now: Instant, i: usize) {
        let Some(floor) = self.config.mss_floor else { return };
        if !self.raising.is_empty() {
            self.raise_probe_outcome(now, i, true);
        }
        let s = &mut self.subflows[i];
        if s.data_timeouts() >= 2 && s.mss > floor {
            // A search's size, if one was under way: the size before the
            // first fall back (Linux's search always tops out at the
            // largest MSS, `tcp_mtu_check_reprobe`).
            let was = std::mem::replace(&mut s.mss, floor.max(1));
            let size = self.raising.iter().find(|r| r.subflow == i).map_or(was, |r| r.size.max(was));
            self.forget_raise(i);
            let next = now + FIRST_PROBE;
            self.raising.push(Raise { subflow: i, size, high: size, wait: FIRST_PROBE, next, probe: None, follow: 0 });
        }
    }

    /// A probe on subflow `i`, if one is due, when the scheduler gives it
    /// the data at `dsn`: new data, or (the redundant scheduler's) a copy
    /// of data the other subflows sent, and new data beyond it if the
    /// copy is shorter than the probe (the peer's window has `window_room`
    /// beyond what was sent). A probe for an MSS of `size` is as large as a
    /// packet of that MSS can be (its payload makes up for a header smaller
    /// than the largest, `wire::MAX_DATA_OVERHEAD`, unless every header is
    /// the same size), so that its arrival shows every packet of that MSS
    /// fits; its payload can be larger than the configured MSS.
    #[cold]
    pub(super) fn send_raise_probe(&mut self, now: Instant, i: usize, dsn: u64, window_room: u64) -> Option<Packet> {
        let r = self.raising.iter().find(|r| r.subflow == i && r.probe.is_none() && r.next <= now)?;
        let s = &self.subflows[i];
        let size = r.probe_size(s.mss);
        let len = match self.config.fixed_data_header {
            true => size,
            false => {
                size + wire::MAX_DATA_OVERHEAD.saturating_sub(wire::data_header_len(s.next_pn(), s.pn_floor(), dsn))
            }
        };
        let nxt = self.send.nxt();
        let ready = nxt.saturating_sub(dsn) + self.send.backlog().min(window_room);
        // Enough data behind it for a loss to be found by duplicate ACKs
        // rather than a timeout (Linux's `size_needed`: the probe and
        // reordering + 1 segments), and no control riding along (a
        // confirmation, the DATA_FIN, address signals), which would make
        // it larger than it tests.
        let behind = self.config.dupthresh.saturating_add(1).saturating_mul(u64::from(s.mss));
        let control = matches!(s.join, JoinState::Confirm { .. }) || self.fin.local.is_some() || self.signals_queued();
        if ready < u64::from(len) + behind || control || s.in_recovery() || !self.window_space(i, len) {
            return None;
        }
        let fresh = (dsn + u64::from(len)).saturating_sub(nxt) as u32;
        if fresh > 0 {
            self.take_new(fresh, fresh);
        }
        let packet = self.send_data(now, i, dsn, len);
        if let (Some(r), Frame::Data(d)) = (self.raising.iter_mut().find(|r| r.subflow == i), &packet.frame) {
            (r.probe, r.follow) = (Some(size), self.config.dupthresh.saturating_add(1));
            self.subflows[i].mtu_probe = Some(MtuProbe::InFlight(d.pn));
        }
        Some(packet)
    }

    /// Under a scheduler that sends every segment on every subflow: a
    /// probe on the first searching subflow that has one due, carrying
    /// the next data that subflow has not carried (as Linux's probe takes
    /// the head of its subflow's own queue): a copy of what the others
    /// sent, new data beyond it as far as the probe needs. The copies that
    /// follow it on its subflow show its loss by duplicate ACKs; new data
    /// it carried the others then owe as copies.
    #[cold]
    pub(super) fn send_redundant_raise_probe(&mut self, now: Instant, window_room: u64) -> Option<Packet> {
        // By index: sending a probe changes entries, never how many.
        for k in 0..self.raising.len() {
            let i = self.raising[k].subflow;
            // The views were refreshed for this decision.
            if !self.takes_new_data(i, 1) || self.sched_views.get(i).is_some_and(|v| v.paced) {
                continue;
            }
            let start = self.uncarried(i);
            if let Some(p) = self.send_raise_probe(now, i, start, window_room) {
                if let Frame::Data(d) = &p.frame {
                    self.subflows[i].carried_to = start + u64::from(d.len);
                }
                return Some(p);
            }
        }
        None
    }

    /// The subflow new data of `len` bytes goes on, the scheduler having
    /// chosen `chosen`: a probe's subflow while segments are to follow it
    /// and its window and its pacer take them (a paced subflow's follower
    /// waits for its slot; meanwhile the data goes where the scheduler put
    /// it).
    #[cold]
    pub(super) fn follow_raise_probe(&mut self, chosen: usize, len: u32) -> usize {
        let views = &self.sched_views;
        let Some(r) = self
            .raising
            .iter_mut()
            .find(|r| r.follow > 0 && views.get(r.subflow).is_some_and(|v| !v.paced && fits(v, len)))
        else {
            return chosen;
        };
        r.follow -= 1;
        r.subflow
    }

    /// After an acknowledgement or a timeout (`timeout`) on subflow `i`:
    /// whether its probe arrived (the subflow takes its size), was found
    /// lost (too large: the search goes below it), was lost to a timeout or
    /// left the flight without a word (the next probe of its size waits
    /// twice as long), or is still out.
    #[cold]
    pub(super) fn raise_probe_outcome(&mut self, now: Instant, i: usize, timeout: bool) {
        let Some(k) = self.raising.iter().position(|r| r.subflow == i) else { return };
        let (r, s) = (&mut self.raising[k], &mut self.subflows[i]);
        let (Some(size), Some(fate)) = (r.probe, s.mtu_probe) else { return };
        if matches!(fate, MtuProbe::InFlight(pn) if !timeout && s.in_flight(pn)) {
            return;
        }
        (r.probe, r.follow, s.mtu_probe) = (None, 0, None);
        let done = match fate {
            MtuProbe::Delivered => {
                s.mss = size;
                r.narrowed(now, size)
            }
            MtuProbe::Lost => {
                r.high = size - 1;
                let done = r.narrowed(now, s.mss);
                // Not in the burst that lost it: a full queue that dropped
                // one probe drops the next one sent behind it too.
                r.next = r.next.max(now + s.rtt.srtt().unwrap_or(FIRST_PROBE));
                done
            }
            MtuProbe::InFlight(_) => {
                r.wait = r.wait.saturating_mul(2).min(LONGEST_WAIT);
                r.next = now + r.wait;
                false
            }
        };
        if done {
            self.raising.swap_remove(k);
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

    /// Black-hole detection counts timeouts of data only: a handshake
    /// never answered keeps the MSS however often it times out (its
    /// packets carry no data, and their loss says nothing about size;
    /// Linux's detection skips SYN timeouts too). Falling to the floor on
    /// the second timeout of data is `tests/pmtu.rs`'s.
    #[test]
    fn an_unanswered_handshake_keeps_the_mss() {
        let mut c = client(Config { mss: 1400, mss_floor: Some(1100), ..Config::default() });
        let mut now = Instant::ZERO;
        while c.poll_transmit(now).is_some() {}
        for _ in 0..4 {
            now = c.poll_timeout().expect("a timer runs");
            c.handle_timeout(now);
            while c.poll_transmit(now).is_some() {}
            assert_eq!(c.subflow_stats(0).unwrap().mss, 1400);
        }
        assert!(c.subflow_stats(0).unwrap().counters.rtos >= 4);
    }
}
