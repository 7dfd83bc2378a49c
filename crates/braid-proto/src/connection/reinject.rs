//! Reinjection: data stranded on a subflow that timed out or closed is
//! queued once, by data sequence number, and re-sent on another subflow
//! before new data.

use super::timer::Timer;
use super::{subflow_rto, Connection, Event};
use crate::time::{Duration, Instant};

impl Connection {
    /// Subflows whose retransmission timer fired: their data in flight is
    /// lost to them; with other subflows open it is reinjected there.
    pub(super) fn on_subflow_timeouts(&mut self, now: Instant) {
        let mut timed_out = false;
        let others_open = self.subflows.iter().filter(|s| s.is_open()).count() > 1;
        // New data a burst-committing scheduler queued on a subflow that
        // timed out, not sent yet: it goes elsewhere with the rest.
        let mut unsent = Vec::new();
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if !sf.is_open() || sf.rto_deadline().is_none_or(|d| d > now) {
                continue;
            }
            timed_out = true;
            let (had_in_flight, first, in_recovery) = (sf.bytes_in_flight() > 0, sf.first_timeout(), sf.in_recovery());
            let was_failed = sf.potentially_failed();
            let c = &self.config;
            if !self.subflows[i].on_rto(now, |s| subflow_rto(c, s)) {
                // A lost lone probe: a zero-window probe, which the persist
                // timer repeats, or a join's confirmation or our FIN, both
                // re-sent here.
                self.on_confirmation_timeout(i);
                self.fin_probe_lost();
                continue;
            }
            // RFC 5681 §3.1 (and Linux): repeated timeouts of the same data
            // do not lower ssthresh again, nor does a timeout in fast
            // recovery, which cut it already (Linux's `tcp_enter_loss`).
            if had_in_flight && first {
                self.refresh_path_views();
                self.cc.on_rto(now, i, &self.path_views, in_recovery);
            }
            if !was_failed {
                self.events.push_back(Event::SubflowFailed { subflow: Self::id(i) });
            }
            self.check_black_hole(now, i);
            // What another subflow already delivered needs no retransmission;
            // with nothing left to re-send, probe the path instead.
            let send = &self.send;
            let sf = &mut self.subflows[i];
            sf.retransmit.retain(|&(dsn, len)| send.unacked_part(dsn, len).is_some());
            if sf.retransmit.is_empty() {
                sf.probe_pending = true;
            }
            if others_open {
                unsent.extend(sf.take_queued());
            }
        }
        if timed_out && others_open {
            // Linux MPTCP reinjects a timed-out subflow's data on the others.
            // Every failed subflow's whole queue is offered again, so data
            // stranded by an earlier timeout (when no other subflow was usable)
            // is not left to one segment per backed-off RTO; but not what a
            // usable subflow has in flight, whose copy is on its way (Linux's
            // scheduler skips the subflows in a segment's `path_mask`).
            let subflows = &self.subflows;
            let carried =
                |&(dsn, len): &(u64, u32)| subflows.iter().any(|s| s.usable() && s.carries_in_flight(dsn, len));
            let stranded: Vec<(u64, u32)> = subflows
                .iter()
                .filter(|s| s.potentially_failed())
                .flat_map(|s| s.retransmit.iter().copied())
                .filter(|r| !carried(r))
                .chain(unsent)
                .collect();
            self.queue_reinjection(&stranded);
        }
    }

    pub(super) fn queue_reinjection(&mut self, ranges: &[(u64, u32)]) {
        for &(dsn, len) in ranges {
            if let Some((dsn, len)) = self.send.unacked_part(dsn, len) {
                self.reinjected_bytes += self.not_queued(dsn, len);
                self.queue_range(dsn, len);
            }
        }
    }

    /// The bytes of `len` at `dsn` that no range in the reinjection queue
    /// covers (queued ranges may overlap; none is longer than
    /// `reinject_longest`).
    fn not_queued(&self, dsn: u64, len: u32) -> u64 {
        let end = dsn + u64::from(len);
        let (mut at, mut new) = (dsn, 0);
        for (&d, &l) in self.reinject.range(dsn.saturating_sub(u64::from(self.reinject_longest))..end) {
            new += d.saturating_sub(at);
            at = at.max((d + u64::from(l)).min(end));
        }
        new + (end - at)
    }

    /// Queues `len` bytes at `dsn` for reinjection. Ranges may overlap
    /// (`next_reinjection` merges them), but one starting where another
    /// does keeps the longer of the two: a shorter one must not drop the
    /// rest of a longer one from the queue (what is sent from there is cut
    /// from the longer, `take_segment`).
    pub(super) fn queue_range(&mut self, dsn: u64, len: u32) {
        self.reinject_longest = self.reinject_longest.max(len);
        let queued = self.reinject.entry(dsn).or_insert(0);
        *queued = (*queued).max(len);
    }

    /// The lowest range queued for reinjection that still needs sending,
    /// merged with the ranges that follow or overlap it up to one MSS.
    #[inline(always)]
    pub(super) fn next_reinjection(&mut self) -> Option<(u64, u32)> {
        if self.reinject.is_empty() {
            // The common case, asked before every new segment: inlined.
            return None;
        }
        self.merge_reinjection()
    }

    /// [`Connection::next_reinjection`] with ranges queued.
    fn merge_reinjection(&mut self) -> Option<(u64, u32)> {
        let mss = u64::from(self.config.mss);
        let (start, mut end) = loop {
            let (dsn, len) = self.reinject.pop_first()?;
            if let Some((d, l)) = self.send.unacked_part(dsn, len) {
                break (d, d + u64::from(l));
            }
        };
        while let Some(entry) = self.reinject.first_entry() {
            let (d, e) = (*entry.key(), *entry.key() + u64::from(*entry.get()));
            let merged = end.max(e);
            if d > end || (merged > end && merged - start > mss) {
                break;
            }
            entry.remove();
            end = merged;
        }
        let len = (end - start) as u32;
        // Left queued until sent (`take_segment`), beside a longer range
        // that starts here too, if one was left out of the merge.
        self.queue_range(start, len);
        Some((start, len))
    }

    /// The connection-level retransmission timeout: twice the longest RTO
    /// of the open subflows, their backoff included (MPTCP v0.96's
    /// `mptcp_set_rto`: `icsk_rto = max_rto << 1` over the subflows'
    /// `icsk_rto`), doubled per expiry since the Data ACK last moved. The
    /// margin keeps it from re-sending what a subflow's own timer has
    /// just re-sent.
    pub(super) fn data_rto(&self) -> Duration {
        let c = &self.config;
        let longest = self.subflows.iter().filter(|s| s.is_open()).map(|s| subflow_rto(c, s)).max();
        let base = longest.map_or(c.initial_rto, |r| r.saturating_mul(2));
        base.saturating_mul(1 << self.data_rto_backoff.min(20)).min(c.max_rto)
    }

    /// Arms the connection-level retransmission timer if data is
    /// outstanding and it is not running; stops it when nothing is.
    pub(super) fn arm_data_rto(&mut self, now: Instant) {
        if self.send.una() == self.send.nxt() {
            self.timers.stop(Timer::DataRetransmit);
        } else if self.timers.get(Timer::DataRetransmit).is_none() {
            self.timers.set(Timer::DataRetransmit, now + self.data_rto());
        }
    }

    /// The Data ACK has not moved for a connection-level RTO: the segment
    /// it waits for is stuck somewhere a subflow's own recovery does not
    /// reach (a receiver that forgot it, a subflow that never times out),
    /// so it is reinjected, as Linux's `mptcp_meta_retransmit_timer` does.
    pub(super) fn on_data_timeout(&mut self, now: Instant) {
        let (una, nxt) = (self.send.una(), self.send.nxt());
        if una < nxt {
            let len = (nxt - una).min(u64::from(self.config.mss)) as u32;
            self.queue_reinjection(&[(una, len)]);
            self.data_rto_backoff += 1;
        }
        self.arm_data_rto(now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::client;

    /// A range queued where a longer one starts leaves the longer one
    /// whole (it overwrote it, dropping the rest from the queue); a longer
    /// one extends it.
    #[test]
    fn a_shorter_range_keeps_the_longer_one_queued() {
        let mut c = client("minrtt", &[]);
        c.send.write_zeros(10_000);
        c.send.take_new(4000);
        c.queue_reinjection(&[(1000, 1448), (1000, 500)]);
        assert_eq!(c.reinject.get(&1000), Some(&1448));
        assert_eq!(c.reinjected_bytes, 1448);
        c.queue_reinjection(&[(1000, 2000), (3000, 10)]);
        assert_eq!(c.reinject.iter().map(|(&d, &l)| (d, l)).collect::<Vec<_>>(), [(1000, 2000), (3000, 10)]);
        // What a range grew by is counted: the longer range's rest too.
        assert_eq!(c.reinjected_bytes, 2010);
        // Overlaps from other starts count once: 2500..3010 is queued.
        c.queue_reinjection(&[(2500, 1000)]);
        assert_eq!(c.reinjected_bytes, 2500);
        // 500..4000 around 1000..3500: the 500 bytes either side.
        c.queue_reinjection(&[(500, 3500)]);
        assert_eq!(c.reinjected_bytes, 3500);
    }
}
