//! RACK-TLP at the connection (see [`crate::rack`]): the subflows'
//! reordering and probe timers, and the probes they make due.

use super::Connection;
use crate::packet::Packet;
use crate::time::Instant;

impl Connection {
    /// The earliest reordering or probe timer of the open subflows, in
    /// nanoseconds (`u64::MAX` for none). Out of line: `poll_timeout` runs
    /// after every packet, and most connections do not use RACK-TLP.
    #[inline(never)]
    pub(super) fn next_loss_timer(&self) -> u64 {
        let open = self.subflows.iter().filter(|s| s.is_open());
        open.filter_map(|s| s.loss_timer()).map(Instant::as_nanos).min().unwrap_or(u64::MAX)
    }

    /// Runs the subflows' reordering and probe timers due at `now`. A loss
    /// the reordering timer finds may open recovery: the window is cut.
    pub(super) fn on_loss_timers(&mut self, now: Instant) {
        for i in 0..self.subflows.len() {
            let s = &self.subflows[i];
            if !s.is_open() || s.loss_timer().is_none_or(|t| t > now) {
                continue;
            }
            let rto = self.rto_of(i);
            if self.subflows[i].on_loss_timer(now, self.config.dupthresh, rto).congestion_event {
                self.refresh_path_views();
                self.cc.on_congestion_event(now, i, &self.path_views);
            }
            if !self.raising.is_empty() {
                self.raise_probe_outcome(now, i, false);
            }
            self.loss_probe_due |= self.subflows[i].loss_probe_pending();
        }
    }

    /// A tail loss probe due on some subflow: a copy of its last packet in
    /// flight, whatever its window or pacer (Linux forces one packet out),
    /// or a bare probe if the connection has that data acknowledged already.
    pub(super) fn poll_loss_probe(&mut self, now: Instant) -> Option<Packet> {
        for i in 0..self.subflows.len() {
            let s = &self.subflows[i];
            if !s.is_open() || !s.loss_probe_pending() {
                continue;
            }
            let Some((dsn, len)) = s.loss_probe() else {
                self.subflows[i].cancel_loss_probe();
                continue;
            };
            let (dsn, len) = self.send.unacked_part(dsn, len).unwrap_or((self.send.nxt(), 0));
            // Its start only, if the subflow's MSS fell since (`pmtu.rs`).
            let len = len.min(s.mss);
            let p = self.send_data(now, i, dsn, len);
            let rto = self.rto_of(i);
            let sf = &mut self.subflows[i];
            sf.counters.retransmissions += u64::from(len > 0);
            sf.on_loss_probe_sent(now, rto);
            return Some(p);
        }
        self.loss_probe_due = false;
        None
    }
}
