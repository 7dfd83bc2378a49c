//! Transmitting: what goes out on each transmit opportunity, in order:
//! due acknowledgements, joins and probes, a subflow's own retransmissions,
//! then data the scheduler places (reinjections first, then new data).

use super::handshake::{confirmation_due, confirming};
use super::timer::Timer;
use super::Connection;
use crate::packet::{AckFrame, Control, DataFrame, Frame, Packet, SubflowId};
use crate::sched::{Decision, SchedConn, SchedPath};
use crate::send_buffer::Chunk;
use crate::time::{Duration, Instant};
use crate::tso_defer;

impl Connection {
    /// The next packet to send, if any is allowed now.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        let packet = self.next_packet(now);
        if packet.is_none() {
            if let Some(i) = self.expand_due.take() {
                // Linux looks for room to grow the buffer once the
                // acknowledgement's sending is done (`tcp_data_snd_check`).
                self.autotune_send_buffer(Some(i));
            }
        }
        packet
    }

    fn next_packet(&mut self, now: Instant) -> Option<Packet> {
        if self.error.is_some() {
            return self.poll_reset();
        }
        if self.liveness_due {
            // Subflow resets owed go first, one per call.
            if let Some(p) = self.poll_subflow_reset() {
                return Some(p);
            }
            self.liveness_due = false;
            self.check_liveness(now);
        }
        // One pass over the subflows on every transmit opportunity: the
        // first acknowledgement due goes out at once, and probes and a
        // subflow's own retransmissions are looked for only if one is owed.
        let mut owed = false;
        for (i, s) in self.subflows.iter().enumerate() {
            if !s.is_open() {
                continue;
            }
            if s.receiver.ack_due(now) {
                return Some(self.send_ack(i));
            }
            owed |= s.probe_pending || !s.retransmit.is_empty() || confirmation_due(s);
        }
        // A join started now owes its opening probe.
        owed |= self.unjoined != 0 || self.loss_probe_due;
        self.start_joins();
        if owed || self.fin_probe_due() {
            if self.loss_probe_due {
                if let Some(p) = self.poll_loss_probe(now) {
                    return Some(p);
                }
            }
            if let Some(p) = self.poll_probe(now) {
                return Some(p);
            }
            if let Some(p) = self.poll_retransmission(now) {
                return Some(p);
            }
        }
        if self.sched_commits {
            return self.poll_committed(now);
        }
        self.poll_scheduled::<false>(now)
    }

    /// A subflow's opening probe, a confirmation that no packet carried
    /// yet, or the probe that carries our FIN. A packet carries one
    /// control, the handshake's first, so the FIN's probe goes on a
    /// subflow that is not confirming its join.
    fn poll_probe(&mut self, now: Instant) -> Option<Packet> {
        let fin_probe_due = self.fin_probe_due();
        for i in 0..self.subflows.len() {
            let s = &self.subflows[i];
            let fin_probe = fin_probe_due && s.usable() && !confirming(s);
            if s.is_open() && (s.probe_pending || confirmation_due(s) || fin_probe) {
                self.subflows[i].probe_pending = false;
                self.fin.probed |= fin_probe;
                let p = self.send_data(now, i, self.send.nxt(), 0);
                debug_assert!(
                    !fin_probe || matches!(p.control.as_deref(), Some(Control::DataFin { .. })),
                    "the FIN's probe carries {:?}",
                    p.control
                );
                return Some(p);
            }
        }
        None
    }

    /// After a local reset: one packet telling the peer, then nothing.
    fn poll_reset(&mut self) -> Option<Packet> {
        let code = self.reset_pending.take()?;
        let i = self.best_usable_subflow()?;
        Some(self.packet(i, Frame::Ack(self.bare_ack()), Some(Control::Reset { code })))
    }

    /// A reset owed for a subflow closed or unknown here, on a packet of
    /// its own on that subflow.
    fn poll_subflow_reset(&mut self) -> Option<Packet> {
        let id = self.subflow_resets.pop()?;
        Some(self.packet(id.index(), Frame::Ack(self.bare_ack()), Some(Control::SubflowReset)))
    }

    /// An acknowledgement of no packet, for a packet that only signals.
    fn bare_ack(&self) -> AckFrame {
        AckFrame {
            cumulative: 0,
            sack: [(0, 0); crate::packet::MAX_SACK_BLOCKS],
            sack_len: 0,
            data_ack: self.data_ack_to_send(),
            window_end: self.recv.window_end(),
        }
    }

    /// The acknowledgement due on subflow `i`.
    fn send_ack(&mut self, i: usize) -> Packet {
        let (cumulative, sack, sack_len) = self.subflows[i].receiver.take_ack();
        self.advertised_window_end = self.recv.window_end();
        let frame = AckFrame {
            cumulative,
            sack,
            sack_len,
            data_ack: self.data_ack_to_send(),
            window_end: self.advertised_window_end,
        };
        let control = self.subflows[i].reply.take().or_else(|| self.connection_control(false));
        self.packet(i, Frame::Ack(frame), control)
    }

    /// A packet to the peer on subflow `i`.
    #[inline]
    fn packet(&self, i: usize, frame: Frame, control: Option<Control>) -> Packet {
        Packet { cid: self.session.remote_token(), subflow: Self::id(i), frame, control: control.map(Box::new) }
    }

    /// Subflow `i` may take `len` bytes of new data or reinjected data now,
    /// or as much of them as its MSS allows (a segment is cut to the MSS of
    /// the subflow it goes on, as Linux sizes it for the subflow chosen):
    /// established, not in the loss state after a timeout (which re-sends
    /// only its own data), and with room in its window.
    #[inline]
    pub(super) fn takes_new_data(&self, i: usize, len: u32) -> bool {
        let s = &self.subflows[i];
        s.is_established() && !s.in_loss() && self.window_space(i, len.min(s.mss))
    }

    pub(super) fn window_space(&self, i: usize, len: u32) -> bool {
        let sf = &self.subflows[i];
        sf.bytes_in_flight() == 0
            || crate::sched::window_allows(self.cc.window(i), sf.mss, sf.bytes_in_flight(), sf.packets_in_flight(), len)
    }

    /// True when the controller paces subflow `i` and its next slot is
    /// later than `now`; remembers that slot so `poll_timeout` wakes for it.
    pub(super) fn paced(&mut self, now: Instant, i: usize) -> bool {
        let next = self.subflows[i].next_send_time;
        // The slot first: it is never ahead for a controller that does not
        // pace, which then costs no call into the controller.
        if next <= now || self.cc.pacing_rate(i).is_none() {
            return false;
        }
        self.timers.set_earliest(Timer::Pacing, next);
        true
    }

    /// A subflow's own retransmissions, oldest first. Small lost segments
    /// that follow each other go out together, up to one MSS, as Linux's
    /// `tcp_retrans_try_collapse` merges them for plain TCP: a connection
    /// that sent tiny segments does not recover them one tiny packet at a
    /// time. (Deviation: MPTCP v0.96 skips the merge on its subflows,
    /// "currently not supported for MPTCP", so the kernel re-sends each.)
    pub(super) fn poll_retransmission(&mut self, now: Instant) -> Option<Packet> {
        for i in 0..self.subflows.len() {
            if !self.subflows[i].is_open() {
                continue;
            }
            let mss = u64::from(self.subflows[i].mss);
            while let Some(&(dsn, len)) = self.subflows[i].retransmit.front() {
                let Some((dsn, len)) = self.send.unacked_part(dsn, len) else {
                    self.subflows[i].retransmit.pop_front();
                    continue;
                };
                if u64::from(len) > mss {
                    // Sent before the subflow's MSS fell (`pmtu.rs`): re-sent in pieces.
                    self.subflows[i].split_retransmission(dsn, len, mss as u32);
                    continue;
                }
                let (mut end, mut take) = (dsn + u64::from(len), 1);
                for &(d, l) in self.subflows[i].retransmit.iter().skip(1) {
                    let e = d + u64::from(l);
                    if d != end || e - dsn > mss {
                        break;
                    }
                    (end, take) = (e, take + 1);
                }
                let len = (end - dsn) as u32;
                if !self.window_space(i, len) || self.paced(now, i) {
                    break;
                }
                self.subflows[i].take_retransmission(take);
                return Some(self.send_data(now, i, dsn, len));
            }
        }
        None
    }

    /// With a scheduler that commits bursts: data queued on the subflows
    /// first, and the scheduler asked again while data and memory last, as
    /// `__mptcp_push_pending` does (a burst queued behind a full window
    /// must not keep an idle subflow waiting).
    #[cold]
    #[inline(never)]
    fn poll_committed(&mut self, now: Instant) -> Option<Packet> {
        loop {
            if let Some(p) = self.poll_queued(now) {
                return Some(p);
            }
            let p = self.poll_scheduled::<true>(now);
            if p.is_some() || !std::mem::take(&mut self.queued_more) {
                return p;
            }
        }
    }

    /// New data or a reinjection placed by the scheduler, if any may go
    /// now. With a scheduler that commits bursts, sets `queued_more` when
    /// it queued data that no subflow could send yet. `COMMITS` is
    /// [`Connection::sched_commits`]: a copy for each, each with one caller
    /// it is inlined into (with one copy called from both, the call cost
    /// about 80 instructions a packet).
    fn poll_scheduled<const COMMITS: bool>(&mut self, now: Instant) -> Option<Packet> {
        debug_assert_eq!(COMMITS, self.sched_commits);
        let next_reinjection = self.next_reinjection();
        let mss = u64::from(self.config.mss);
        let window_room = self.peer_window_end().saturating_sub(self.send.nxt());
        let (dsn, len, reinjection) = if let Some((dsn, len)) = next_reinjection {
            (dsn, len, true)
        } else {
            let len = mss.min(self.send.backlog()).min(window_room);
            // Less than a full segment while data is in flight waits for
            // the peer's window (Linux's `tcp_snd_wnd_test`); full is the
            // segment of the subflow with the smallest MSS, since a segment
            // is cut to the MSS of the subflow that takes it.
            let window_runt = len < mss.min(self.send.backlog())
                && self.any_in_flight()
                && len < self.smallest_mss().min(self.send.backlog());
            let nagle = self.nagle_holds(len);
            if len == 0 || window_runt || nagle {
                // Nothing new to send, only a runt the window allows, or a
                // small segment Nagle's algorithm holds back.
                if self.copies_in_flight() {
                    // Subflows that lag behind still owe copies of what the
                    // others sent.
                    self.refresh_sched_views(now);
                    if let Some(p) = self.send_copy(now) {
                        return Some(p);
                    }
                }
                // Blocked by the peer's window (may penalise), or by a send
                // buffer the application is waiting on (Linux: free space
                // below half of what is queued; penalise only when full).
                let (blocked, may_penalise) = if self.send.backlog() == 0 || nagle {
                    // Every subflow with nothing of its own to send: not one
                    // with data to retransmit, or copies it still owes of
                    // what the others sent (the redundant scheduler), whose
                    // samples still measure its path.
                    let (una, nxt, copies) = (self.send.una(), self.send.nxt(), self.copies_in_flight());
                    for sf in &mut self.subflows {
                        let owes = !sf.retransmit.is_empty()
                            || sf.queued_bytes() > 0
                            || (copies && sf.carried_to.max(una) < nxt);
                        if !owes {
                            sf.mark_app_limited();
                        }
                    }
                    let room = self.send.room();
                    if room == 0 && !self.buffer_stalled {
                        // The application waits on a full send buffer.
                        self.buffer_stalled = true;
                        self.buffer_stalls += 1;
                    }
                    (!self.send_writable(), room == 0)
                } else {
                    if !self.window_stalled {
                        // Data waits for the peer's window: head-of-line blocking.
                        self.window_stalled = true;
                        self.window_stalls += 1;
                    }
                    (true, true)
                };
                if blocked && self.opportunistic {
                    if let Some(p) = self.opportunistic_retransmission(now, may_penalise) {
                        return Some(p);
                    }
                }
                self.arm_persist(now);
                return None;
            }
            self.window_stalled = false;
            self.buffer_stalled = false;
            (self.send.nxt(), len as u32, false)
        };
        // A scheduler that commits bursts queues data on a subflow whose
        // window is full; it waits only when its choice has no memory.
        let stuck = if COMMITS {
            !self.subflows.iter().any(|s| s.usable())
        } else {
            !(0..self.subflows.len()).any(|i| self.takes_new_data(i, len))
        };
        if stuck {
            // No subflow could take it: every scheduler would wait. If none
            // is usable at all (every path gone, say removed since the last
            // packet or timer), the failure timer must be running.
            self.check_liveness(now);
            return None;
        }
        self.refresh_sched_views(now);
        if reinjection {
            self.hide_carriers(dsn);
        }
        let conn = SchedConn {
            now,
            backlog: self.send.backlog(),
            window_room,
            send_window: self.peer_window_end().saturating_sub(self.send.una()),
            stalls: self.window_stalls + self.buffer_stalls,
            sndbuf_expand: self.sndbuf_expand,
        };
        let mut i = match self.sched.select(&conn, &self.sched_views) {
            Decision::Send(i) => i,
            Decision::SendAll => return self.send_redundant(now, dsn, len, reinjection, window_room),
            Decision::Wait => return None,
        };
        if COMMITS {
            if reinjection {
                // Queued like new data, as upstream re-pushes a stale or
                // closed subflow's pending data through its scheduler.
                let len = self.take_segment(i, dsn, len, true);
                self.subflows[i].counters.reinjected_bytes += u64::from(len);
                self.subflows[i].queue(dsn, len);
            } else {
                // A path-MTU probe goes only where a segment could go now.
                if !self.raising.is_empty() && self.sched_views[i].has_window_space() {
                    if let Some(probe) = self.send_raise_probe(now, i, dsn, window_room) {
                        return Some(probe);
                    }
                }
                self.commit_burst(i, len, window_room);
            }
            self.queued_more = true;
            return None;
        }
        if !reinjection && !self.raising.is_empty() {
            i = self.follow_raise_probe(i, len);
        }
        // The views were refreshed for this decision: the chosen subflow's
        // window as the scheduler saw it.
        if !self.sched_views.get(i).is_some_and(|v| fits(v, len)) {
            return None;
        }
        if !reinjection && !self.raising.is_empty() {
            if let Some(probe) = self.send_raise_probe(now, i, dsn, window_room) {
                return Some(probe);
            }
        }
        let len = self.take_segment(i, dsn, len, reinjection);
        if reinjection {
            self.subflows[i].counters.reinjected_bytes += u64::from(len);
        }
        Some(self.send_data(now, i, dsn, len))
    }

    /// Hands subflow `i` a burst of new data for its own queue, as upstream
    /// Linux's `__mptcp_push_pending` does ([`crate::sched::Upstream`]):
    /// segments of its MSS, `first` bytes first (a segment the checks above
    /// let through), up to `UPSTREAM_BURST` bytes and what the peer's window
    /// allows, ending early at a short segment the window or Nagle's
    /// algorithm holds back.
    fn commit_burst(&mut self, i: usize, first: u32, window_room: u64) {
        let mss = self.subflows[i].mss;
        let mut budget = crate::sched::UPSTREAM_BURST.min(window_room);
        let mut len = u64::from(first.min(mss)).min(budget);
        while len > 0 {
            let dsn = self.send.nxt();
            self.take_new(len as u32, mss);
            self.subflows[i].queue(dsn, len as u32);
            budget -= len;
            let full = u64::from(mss).min(self.send.backlog());
            len = full.min(budget);
            if len < full || self.nagle_holds(len) {
                break;
            }
        }
    }

    /// The oldest data queued on a subflow by a scheduler that commits
    /// bursts, on the first subflow whose window, pacer and offload
    /// deferral let it go now. What the peer acknowledged meanwhile (a copy
    /// went elsewhere) is dropped, and a segment longer than the subflow's
    /// MSS (which fell since, `pmtu.rs`) goes in pieces.
    fn poll_queued(&mut self, now: Instant) -> Option<Packet> {
        for i in 0..self.subflows.len() {
            while let Some((dsn, len)) = self.subflows[i].next_queued() {
                let s = &self.subflows[i];
                if !s.is_established() || s.in_loss() {
                    break;
                }
                let Some((d, l)) = self.send.unacked_part(dsn, len) else {
                    self.subflows[i].pop_queued(None);
                    continue;
                };
                let l = l.min(s.mss);
                // Beyond the peer's window (stated smaller than first
                // assumed, say) it waits, as Linux's `tcp_snd_wnd_test`.
                let beyond = d + u64::from(l) > self.peer_window_end();
                if beyond
                    || !self.window_space(i, l)
                    || self.paced(now, i)
                    || (self.config.tso_defer && self.defers(now, i))
                {
                    break;
                }
                let (sent_end, end) = (d + u64::from(l), dsn + u64::from(len));
                let rest = (sent_end < end).then(|| (sent_end, (end - sent_end) as u32));
                self.subflows[i].pop_queued(rest);
                return Some(self.send_data(now, i, d, l));
            }
        }
        None
    }

    /// Takes the segment of `len` bytes at `dsn` (new data, or a range queued
    /// for reinjection) for subflow `i`, cut to the subflow's MSS when that
    /// fell below the connection's (`pmtu.rs`; the rest stays queued).
    /// Returns the length taken.
    #[inline(always)]
    fn take_segment(&mut self, i: usize, dsn: u64, len: u32, reinjection: bool) -> u32 {
        let taken = len.min(self.subflows[i].mss);
        if reinjection {
            // The range queued here may be longer than the one offered.
            let queued = self.reinject.remove(&dsn).unwrap_or(len).max(len);
            if taken < queued {
                self.queue_range(dsn + u64::from(taken), queued - taken);
            }
        } else {
            self.take_new(taken, self.subflows[i].mss);
        }
        taken
    }

    /// Nagle's algorithm as Linux applies it (Minshall's variant,
    /// `tcp_nagle_check`): a segment shorter than the MSS that is all the
    /// application has written waits while an earlier short segment is
    /// unacknowledged, so an application writing a few bytes at a time does
    /// not send a packet per write. Off with `Config::nodelay` (TCP_NODELAY).
    /// A segment sent is short when shorter than its subflow's MSS
    /// (`take_new`), as Linux compares with the current MSS. Deviation:
    /// whether to hold is decided before the scheduler picks a subflow, so
    /// against the connection's MSS (MPTCP v0.96's `mptcp_write_xmit` tests
    /// with the chosen subflow's): while a short segment is unacknowledged,
    /// a backlog between a smaller subflow MSS and the connection's waits
    /// rather than sending a full piece on that subflow.
    pub(super) fn nagle_holds(&self, len: u64) -> bool {
        !self.config.nodelay
            && len < u64::from(self.config.mss)
            && len == self.send.backlog()
            && self.short_sent_end > self.send.una()
    }

    /// Takes `len` new bytes for sending on a subflow whose MSS is `mss`,
    /// remembering where the last segment shorter than that ends (Linux's
    /// `snd_sml`) for Nagle's algorithm.
    pub(super) fn take_new(&mut self, len: u32, mss: u32) {
        // New data never goes beyond the peer's window. (A re-sent segment
        // may: a window first assumed, then stated smaller by the peer's
        // first ACK; the peer drops it until its window reaches it.)
        debug_assert!(
            self.send.nxt() + u64::from(len) <= self.peer_window_end(),
            "new data [{}, +{len}) beyond the peer's window {}",
            self.send.nxt(),
            self.peer_window_end()
        );
        self.send.take_new(u64::from(len));
        if len < mss {
            self.short_sent_end = self.send.nxt();
        }
    }

    /// The scheduler's [`copies_in_flight`](crate::sched::Scheduler::copies_in_flight),
    /// from the copy taken when the connection was built.
    #[inline]
    fn copies_in_flight(&self) -> bool {
        debug_assert_eq!(self.sched_copies, self.sched.copies_in_flight(), "copies_in_flight changed");
        self.sched_copies
    }

    /// A range being reinjected (from `dsn`) goes to a subflow that does
    /// not hold it while one is usable, backup or not; the scheduler waits
    /// for that one's window rather than give the range to a subflow that
    /// holds it, and only when every usable subflow holds it may one take
    /// it again. This is MPTCP v0.96's `get_subflow_from_selectors` with
    /// the segment's `path_mask`: it prefers the subflows outside the mask,
    /// active ones before backups, returns none while such a subflow has no
    /// room, and clears the mask when there is none; the redundant
    /// scheduler's reinjections go through the same choice. Round robin
    /// does not wait: a subflow that does not hold the range must have
    /// room ([`Scheduler::reinjection_waits_for_unused`]). (Without this,
    /// a range went back to a subflow still holding it for its own
    /// retransmission: 2,358 times in the first 600 chaos cases, in cases
    /// with the redundant scheduler, whose subflows all hold copies.) The
    /// views of the holders read as suspected dead. Only the range's first
    /// byte is asked about (a range merged from several may be held in
    /// part).
    ///
    /// [`Scheduler::reinjection_waits_for_unused`]: crate::sched::Scheduler::reinjection_waits_for_unused
    fn hide_carriers(&mut self, dsn: u64) {
        let waits = self.sched.reinjection_waits_for_unused();
        let mut holds = [0u64; SubflowId::LIMIT / 64];
        let mut unused = false;
        for (i, (s, v)) in self.subflows.iter().zip(&self.sched_views).enumerate() {
            if s.carries(dsn) {
                holds[i / 64] |= 1 << (i % 64);
            } else {
                unused |= v.usable() && (waits || v.has_window_space());
            }
        }
        if unused {
            for (i, v) in self.sched_views.iter_mut().enumerate() {
                if holds[i / 64] & (1 << (i % 64)) != 0 {
                    v.potentially_failed = true;
                }
            }
        }
    }

    pub(super) fn refresh_sched_views(&mut self, now: Instant) {
        // Overwritten in place: the subflow count rarely changes.
        self.sched_views.resize(self.subflows.len(), SchedPath::default());
        for i in 0..self.subflows.len() {
            // A subflow that defers is held back as a paced one is.
            let paced = self.paced(now, i) || (self.config.tso_defer && self.defers(now, i));
            let (s, v) = (&self.subflows[i], &mut self.sched_views[i]);
            // Field by field: what only a burst-committing scheduler reads is
            // written only for one (this runs for every subflow on every
            // decision).
            v.srtt = s.rtt.srtt();
            v.rttvar = s.rtt.rttvar();
            v.cwnd = self.cc.window(i);
            v.ssthresh = if self.sched_reads_ssthresh { self.cc.get().ssthresh(i) } else { 0 };
            v.bytes_in_flight = s.bytes_in_flight();
            v.packets_in_flight = s.packets_in_flight();
            v.mss = s.mss;
            v.backup = s.backup;
            v.potentially_failed = s.potentially_failed();
            v.in_loss = s.in_loss();
            v.active = s.is_established();
            v.paced = paced;
            v.delivery_rate = s.last_delivery_rate();
            if self.sched_commits {
                v.queued = s.queued_bytes() + s.retransmit.iter().map(|&(_, len)| u64::from(len)).sum::<u64>();
                v.pacing_rate = self.cc.pacing_rate(i).map(|r| r as f64);
            }
        }
    }

    /// Linux's TSO deferral for new data on subflow `i` (`crate::tso_defer`):
    /// true to hold it back now. A window that holds it back counts as used.
    fn defers(&mut self, now: Instant, i: usize) -> bool {
        let s = &self.subflows[i];
        let cc = self.cc.get();
        let last = s.last_data_sent();
        let window_end = self.peer_window_end();
        let sender = tso_defer::Sender {
            now,
            last_sent: last.map(|t| t.max(s.next_send_time)),
            recovering: s.in_recovery() || s.in_loss(),
            cwnd: self.cc.window(i),
            ssthresh: cc.ssthresh(i),
            in_flight: s.bytes_in_flight(),
            oldest_in_flight: s.oldest_unacked_sent(),
            srtt: s.rtt.srtt(),
            mss: s.mss,
            pacing_rate: self.cc.pacing_rate(i).map(|r| r as f64),
            peer_window: window_end.saturating_sub(self.send.una()),
            // A subflow's own queue, when the scheduler commits bursts.
            send_window: window_end.saturating_sub(s.next_queued().map_or(self.send.nxt(), |(dsn, _)| dsn)),
            ready: if self.sched_commits { s.queued_bytes() } else { self.send.backlog() },
        };
        match sender.verdict() {
            tso_defer::Verdict::Send => false,
            tso_defer::Verdict::Defer { cwnd_limited } => {
                if cwnd_limited {
                    self.subflows[i].note_cwnd_limited();
                }
                true
            }
        }
    }

    /// Redundant scheduling: the fastest subflow with room that lags behind
    /// the others sends a copy of the next data it has not carried (still
    /// unacknowledged); when none lags, the fastest with room sends the
    /// segment the connection has ready.
    pub(super) fn send_redundant(
        &mut self,
        now: Instant,
        dsn: u64,
        len: u32,
        reinjection: bool,
        window_room: u64,
    ) -> Option<Packet> {
        if !reinjection && !self.raising.is_empty() {
            if let Some(p) = self.send_redundant_raise_probe(now, window_room) {
                return Some(p);
            }
        }
        if let Some(p) = self.send_copy(now) {
            return Some(p);
        }
        let views = &self.sched_views;
        let i = crate::sched::fastest(views, |i| views[i].has_window_space())?;
        if !self.window_space(i, len.min(self.subflows[i].mss)) {
            return None;
        }
        let len = self.take_segment(i, dsn, len, reinjection);
        if !reinjection {
            self.subflows[i].carried_to = self.send.nxt();
        }
        Some(self.send_data(now, i, dsn, len))
    }

    /// A copy for the fastest subflow with room that has not carried
    /// everything sent so far, if there is one.
    pub(super) fn send_copy(&mut self, now: Instant) -> Option<Packet> {
        let nxt = self.send.nxt();
        let views = &self.sched_views;
        let i = crate::sched::fastest(views, |i| views[i].has_window_space() && self.uncarried(i) < nxt)?;
        let start = self.uncarried(i);
        let copy = (nxt - start).min(u64::from(self.subflows[i].mss)) as u32;
        if !self.window_space(i, copy) {
            return None;
        }
        self.subflows[i].carried_to = start + u64::from(copy);
        Some(self.send_data(now, i, start, copy))
    }

    /// The first byte subflow `i` has not carried yet, under a scheduler
    /// that sends everything on every subflow (what is acknowledged needs
    /// no copy).
    pub(super) fn uncarried(&self, i: usize) -> u64 {
        self.subflows[i].carried_to.max(self.send.una())
    }

    /// The smallest MSS of the established subflows (the connection's if
    /// none is smaller).
    fn smallest_mss(&self) -> u64 {
        let smallest = self.subflows.iter().filter(|s| s.is_established()).map(|s| s.mss).min();
        u64::from(smallest.unwrap_or(self.config.mss).min(self.config.mss))
    }

    pub(super) fn any_in_flight(&self) -> bool {
        self.subflows.iter().filter(|s| s.is_open()).any(|s| s.bytes_in_flight() > 0 || !s.retransmit.is_empty())
    }

    /// Data queued on a subflow waits beyond the peer's window.
    fn queued_beyond_window(&self) -> bool {
        let end = self.peer_window_end();
        self.subflows.iter().any(|s| s.next_queued().is_some_and(|(d, l)| d + u64::from(l) > end))
    }

    /// With data waiting, a closed window and nothing in flight, no ACK will
    /// come to reopen the window: probe after an RTO (RFC 9293 persist timer).
    pub(super) fn arm_persist(&mut self, now: Instant) {
        let blocked = (self.send.backlog() > 0 && self.send.nxt() >= self.peer_window_end())
            || (self.sched_commits && self.queued_beyond_window());
        if !blocked || self.any_in_flight() || self.timers.get(Timer::Persist).is_some() {
            return;
        }
        let rto = self.best_usable_subflow().map_or(self.config.initial_rto, |i| self.rto_of(i));
        self.timers
            .set(Timer::Persist, now + rto.saturating_mul(1 << self.persist_backoff.min(10)).min(self.config.max_rto));
    }

    pub(super) fn send_data(&mut self, now: Instant, i: usize, dsn: u64, len: u32) -> Packet {
        let rto = self.rto_of(i);
        debug_assert!(
            len == 0
                || self.subflows[i].next_send_time <= now
                || self.cc.pacing_rate(i).is_none()
                || self.subflows[i].loss_probe_pending(),
            "subflow {i}: {len} bytes before its pacing slot ({:?} early; only a tail loss probe may)",
            self.subflows[i].next_send_time.saturating_since(now)
        );
        if let Some(rate) = self.cc.pacing_rate(i).filter(|&r| r > 0) {
            // Space packets at the pacing rate in payload bytes, the unit the
            // delivery-rate samples measure. Charging headers too would pace
            // below the estimated rate, and with small segments (under about
            // 200 bytes) ProbeBW's 1.25 gain could no longer lift the samples
            // above the estimate: BBR's bandwidth would decay to nothing.
            //
            // A wake-up late because the driver's pacing timer fired late
            // is made up: the schedule may lag `now` by the timer's
            // lateness, up to 1 ms (at least two packets), so the packets
            // the late wake-up owes go out back to back and the next slot
            // is where it would have been. Without it a real sender loses
            // every late wake-up and paces well below its rate. Linux meets
            // the same jitter with bursts: each wake-up sends a TSO segment
            // of about 1 ms at the pacing rate (`tcp_tso_autosize`, at
            // least two segments), and `tcp_update_skb_after_send` credits
            // lateness up to half a segment's time "to take into account OS
            // jitter". Deviation: Braid credits only the timer's lateness:
            // only in the timer's own run, and only for a subflow whose slot
            // was at or after the deadline that fired (one whose slot was
            // earlier waited for its window), so the simulator, whose timers
            // are exact, paces as before.
            let gap = u64::from(len) * 1_000_000_000 / rate;
            let sf = &mut self.subflows[i];
            let late = match self.pacing_wake {
                Some((deadline, woke)) if woke == now && sf.next_send_time >= deadline => {
                    now.saturating_since(sf.next_send_time)
                }
                _ => Duration::ZERO,
            };
            sf.next_send_time = next_slot(sf.next_send_time, now, late, gap);
        }
        let in_flight = self.subflows[i].bytes_in_flight();
        debug_assert!(
            len == 0
                || in_flight == 0
                || in_flight + u64::from(len) <= self.cc.window(i)
                || self.subflows[i].loss_probe_pending(),
            "subflow {i}: {in_flight} in flight + {len} exceeds the window {}",
            self.cc.window(i)
        );
        debug_assert!(len == 0 || dsn >= self.send.una(), "re-sending acknowledged data at {dsn}");
        if len > 0 && self.config.restart_after_idle {
            if let Some(idle) = self.subflows[i].idle_at(now).filter(|&idle| idle > rto) {
                let restart = u64::from(self.config.initial_window) * u64::from(self.subflows[i].mss);
                self.cc.on_idle_restart(now, i, idle, rto, restart);
            }
        }
        let pn_floor = self.subflows[i].pn_floor();
        let pn = self.subflows[i].on_sent(now, dsn, len, rto);
        if len > 0 {
            let cc = &self.cc;
            self.subflows[i].validate_cwnd(|bytes, packets, mss| {
                !crate::sched::window_allows(cc.window(i), mss, bytes, packets, mss)
            });
            self.arm_data_rto(now);
        }
        let payload = match self.send.payload(dsn, len) {
            Chunk::Bytes(b) if len > 0 => b,
            _ => Vec::new(),
        };
        let control = self.handshake_control(now, i, pn, len == 0).or_else(|| self.connection_control(len == 0));
        let frame = Frame::Data(DataFrame { pn, pn_floor, dsn, len, payload });
        self.packet(i, frame, control)
    }
}

/// Whether a subflow, as its scheduling view shows it, can send `len` bytes
/// of data now, or as much of them as its MSS allows.
#[inline]
pub(super) fn fits(v: &SchedPath, len: u32) -> bool {
    v.active
        && !v.in_loss
        && (v.bytes_in_flight == 0
            || crate::sched::window_allows(v.cwnd, v.mss, v.bytes_in_flight, v.packets_in_flight, len.min(v.mss)))
}

/// The pacer's slot after a packet that takes `gap` ns at the pacing rate,
/// sent at `now`, whose slot was `slot`, by a driver whose pacing timer
/// fired `late`: the schedule may lag `now` by that lateness, up to 1 ms
/// (at least two gaps).
fn next_slot(slot: Instant, now: Instant, late: Duration, gap: u64) -> Instant {
    let burst = Duration::from_nanos(gap.saturating_mul(2)).max(Duration::from_millis(1));
    let behind = Instant::from_nanos(now.as_nanos().saturating_sub(late.min(burst).as_nanos()));
    slot.max(behind) + Duration::from_nanos(gap)
}

#[cfg(test)]
mod tests {
    use super::super::tests::client;
    use super::*;

    /// By hand, with a gap of 100 us: the lateness is made up to 1 ms; with
    /// gaps of 800 us, to two of them.
    #[test]
    fn a_late_timer_is_made_up_within_a_millisecond() {
        let us = |v: u64| Instant::from_nanos(v * 1000);
        let late = |v: u64| Duration::from_nanos(v * 1000);
        assert_eq!(next_slot(us(1000), us(1000), late(0), 100_000), us(1100), "on time");
        assert_eq!(next_slot(us(1000), us(1250), late(250), 100_000), us(1100), "the next is due at once");
        assert_eq!(next_slot(us(1000), us(4000), late(3000), 100_000), us(3100), "1 ms made up, not 3");
        assert_eq!(next_slot(us(1000), us(4000), late(0), 100_000), us(4100), "late, but not the timer");
        assert_eq!(next_slot(us(1000), us(4000), late(3000), 800_000), us(3200), "two gaps made up");
        assert_eq!(next_slot(us(5000), us(4000), late(0), 100_000), us(5100), "early: the slot stands");
    }

    /// A reinjected range is hidden from the subflows that carry it (in
    /// flight, or queued for their own retransmission) while a usable one
    /// does not, a backup included; when every usable subflow carries it,
    /// they all may take it.
    #[test]
    fn a_reinjection_prefers_a_subflow_that_does_not_carry_it() {
        let mut c = client("minrtt", &[false, false, true]);
        let usable = SchedPath { active: true, ..SchedPath::default() };
        let hidden = |c: &mut Connection, views: [SchedPath; 3], dsn: u64| {
            c.sched_views = views.to_vec();
            c.hide_carriers(dsn);
            c.sched_views.iter().map(|v| !v.usable()).collect::<Vec<_>>()
        };
        c.subflows[0].retransmit.push_back((1000, 448));
        let backup = SchedPath { backup: true, ..usable };
        assert_eq!(hidden(&mut c, [usable, usable, backup], 1000), [true, false, false]);
        assert_eq!(hidden(&mut c, [usable, usable, backup], 1447), [true, false, false], "inside the range");
        assert_eq!(hidden(&mut c, [usable, usable, backup], 1448), [false, false, false], "past it");
        let dead = SchedPath { potentially_failed: true, ..usable };
        assert_eq!(hidden(&mut c, [usable, dead, backup], 1000), [true, true, false], "the backup takes it");
        c.subflows[2].retransmit.push_back((1000, 1448));
        assert_eq!(hidden(&mut c, [usable, dead, backup], 1000), [false, true, false], "all carry it");
        // Round robin takes a holder with room rather than wait for another.
        let mut rr = client("rr", &[false; 3]);
        rr.subflows[0].retransmit.push_back((1000, 448));
        let room = SchedPath { cwnd: 14_480, mss: 1448, ..usable };
        assert!(room.has_window_space() && !usable.has_window_space());
        assert_eq!(hidden(&mut rr, [room, usable, usable], 1000), [false, false, false]);
        assert_eq!(hidden(&mut rr, [room, usable, room], 1000), [true, false, false]);
        // Where minimum RTT waits for subflow 1 (0 and 2 hold the range).
        assert_eq!(hidden(&mut c, [room, usable, room], 1000), [true, false, true], "minRTT waits");
    }

    /// The first range queued for reinjection, cut at the Data ACK, starts
    /// where a range longer than a segment does (a path-MTU probe's):
    /// `next_reinjection` offers the cut one and leaves the longer queued
    /// (it overwrote it), and once the segment is taken the rest of the
    /// longer stays queued (it left the queue with the segment).
    #[test]
    fn a_segment_taken_leaves_the_rest_of_a_longer_range_queued() {
        let mut c = client("minrtt", &[false]);
        c.send.write_zeros(10_000);
        c.send.take_new(4000);
        c.send.on_data_ack(1000);
        c.queue_range(0, 1448);
        c.queue_range(1000, 2000);
        assert_eq!(c.next_reinjection(), Some((1000, 448)));
        assert_eq!(c.reinject.get(&1000), Some(&2000));
        assert_eq!(c.take_segment(0, 1000, 448, true), 448);
        assert_eq!(c.reinject.iter().map(|(&d, &l)| (d, l)).collect::<Vec<_>>(), [(1448, 1552)]);
    }
}
