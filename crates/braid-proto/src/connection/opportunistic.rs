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
    /// loss or a timeout: Linux asks for `TCP_CA_Open`; at most once per the
    /// fast subflow's RTT, and not in its first), and sends the segment
    /// itself if it has not carried it and the holder's window is at most 4
    /// segments or its RTT more than 4 times the fast one's. A subflow in
    /// the loss state after a timeout is never the fast one: the scheduler
    /// gives it nothing. A paced fast subflow sends the segment in its
    /// pacing slot.
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
            .filter(|&i| self.subflows[i].usable() && srtt(i).is_some() && self.takes_new_data(i, len))
            .min_by_key(|&i| (srtt(i), i))?;
        let fast_rtt = srtt(fast)?;
        let due = now.saturating_since(self.subflows[fast].penalty_stamp) >= fast_rtt;
        let penalised = |c: &Connection, i: usize| {
            let s = &c.subflows[i];
            may_penalise && due && !s.in_recovery() && !s.in_loss() && s.rtt.srtt().is_some_and(|r| fast_rtt < r)
        };
        let overtaken = |c: &Connection, i: usize| {
            c.subflows[i]
                .rtt
                .srtt()
                .is_some_and(|r| fast_rtt < r && (c.small_window(i) || fast_rtt.saturating_mul(4) < r))
        };
        // Finding the holder searches scoreboards, linear in what is in
        // flight, and a blocked sender asks on every transmit opportunity:
        // when no subflow could be penalised or overtaken as the holder,
        // nothing happens whichever holds the segment.
        let candidates = || (0..n).filter(|&i| i != fast && self.subflows[i].is_open());
        if !candidates().any(|i| penalised(self, i) || overtaken(self, i)) {
            return None;
        }
        let holder = candidates().find(|&i| self.subflows[i].carries(una))?;
        if penalised(self, holder) {
            self.subflows[fast].penalty_stamp = now;
            self.refresh_path_views();
            self.cc.penalize(now, holder, &self.path_views);
        }
        // After a penalty, the holder's window is the halved one.
        if !overtaken(self, holder) || self.subflows[fast].carries(una) || self.last_opportunistic == Some(una) {
            return None;
        }
        if self.paced(now, fast) {
            // Linux queues the segment on the subflow, whose pacer sends
            // it (`tcp_write_xmit`'s pacing check); the pacing timer wakes
            // this for the slot, when the segment goes if still wanted.
            return None;
        }
        self.last_opportunistic = Some(una);
        let len = len.min(self.subflows[fast].mss);
        self.subflows[fast].counters.reinjected_bytes += u64::from(len);
        Some(self.send_data(now, fast, una, len))
    }

    /// Subflow `i`'s window is at most 4 segments: as holder, its segment
    /// is sent again whatever the RTTs (Linux's `snd_cwnd <= 4`).
    fn small_window(&self, i: usize) -> bool {
        self.cc.window(i) <= 4 * u64::from(self.config.mss)
    }
}
