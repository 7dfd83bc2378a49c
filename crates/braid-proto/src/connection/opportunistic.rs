//! Opportunistic retransmission and penalisation.

use super::Connection;
use crate::packet::Packet;
use crate::time::Instant;

impl Connection {
    /// Raiciu et al., "How hard can it be?" (NSDI 2012) §4.2, with the
    /// conditions of Linux MPTCP's `mptcp_rcv_buf_optimization`: the
    /// segment at the Data ACK holds the connection up. The subflow the
    /// default scheduler would use now (lowest RTT with window space), if
    /// faster than another subflow holding that segment, halves the holder's
    /// window when `may_penalise` (unless the holder is recovering from a
    /// loss; at most once per the fast subflow's RTT, and not in its first),
    /// and sends the segment itself if it has not carried it and the
    /// holder's window is at most 4 segments or its RTT more than 4 times
    /// the fast one's.
    pub(super) fn opportunistic_retransmission(&mut self, now: Instant, may_penalise: bool) -> Option<Packet> {
        let una = self.send.una();
        if una >= self.send.nxt() {
            return None;
        }
        let mss = self.config.mss;
        let len = (self.send.nxt() - una).min(u64::from(mss)) as u32;
        let srtt = |i: usize| self.subflows[i].rtt.srtt();
        let n = self.subflows.len();
        let fast = (0..n)
            .filter(|&i| self.subflows[i].usable() && srtt(i).is_some() && self.window_space(i, len))
            .min_by_key(|&i| (srtt(i), i))?;
        let holder = (0..n).find(|&i| i != fast && self.subflows[i].is_open() && self.subflows[i].carries(una))?;
        let (fast_rtt, holder_rtt) = (srtt(fast)?, srtt(holder)?);
        if fast_rtt >= holder_rtt {
            return None;
        }
        let due = now.saturating_since(self.subflows[fast].penalty_stamp) >= fast_rtt;
        if may_penalise && due && !self.subflows[holder].in_recovery() {
            self.subflows[fast].penalty_stamp = now;
            self.refresh_path_views();
            self.cc.penalize(now, holder, &self.path_views);
        }
        let small_window = self.cc.window(holder) <= 4 * u64::from(mss);
        let worth_it = small_window || fast_rtt.saturating_mul(4) < holder_rtt;
        if !worth_it || self.subflows[fast].carries(una) || self.last_opportunistic == Some(una) {
            return None;
        }
        self.last_opportunistic = Some(una);
        self.subflows[fast].counters.reinjected_bytes += u64::from(len);
        Some(self.send_data(now, fast, una, len))
    }
}
