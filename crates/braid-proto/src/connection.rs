//! A multipath connection, driven only by calls that take `now`.
//!
//! Shape borrowed from quinn-proto: feed it datagrams with
//! [`Connection::handle_datagram`], take packets from
//! [`Connection::poll_transmit`] until it returns `None`, sleep until
//! [`Connection::poll_timeout`] and then call [`Connection::handle_timeout`].
//!
//! Subflows join before they carry data. A subflow's first packet is a
//! zero-length probe that stands in for MPTCP's SYN exchange (MP_CAPABLE on
//! the first subflow, MP_JOIN on the others): data goes out on a subflow
//! only once the peer has answered on it, so it starts with an RTT sample
//! and a connection starts one round trip late, as TCP does. As in the
//! kernel's path managers, only the first subflow joins at once; the others
//! join once the connection is established, or once the first join timed
//! out (where the kernel would give up on the connection). The side with data to send
//! opens the subflows; the other learns of each from its first packet.
//!
//! Sending order on each transmit opportunity: due acknowledgements, joins
//! and probes of failed subflows, a subflow's own retransmissions, then data picked by
//! the scheduler: first the reinjection queue (data stranded on a subflow
//! that timed out), then new data. A subflow never has more than its
//! congestion window in flight, and no data beyond the peer's receive window
//! (`window_end`) is ever sent.

use std::collections::{BTreeMap, VecDeque};

use crate::autotune::{RecvAutotune, SendTuner, TunedPath, AUTOTUNE_INITIAL};
use crate::cc::{AckSample, Controller, PathView};
use crate::config::Config;
use crate::packet::{AckFrame, DataFrame, Frame, Packet, PacketError, DATA_HEADER_BYTES};
use crate::recv_buffer::{Chunk, RecvBuffer};
use crate::sched::{Decision, SchedConn, SchedPath, Scheduler};
use crate::send_buffer::SendBuffer;
use crate::subflow::{Subflow, SubflowCounters};
use crate::time::{Duration, Instant};

/// Receive window assumed for the peer before its first ACK: 64 KiB, the
/// largest window TCP can announce without window scaling.
const INITIAL_PEER_WINDOW: u64 = 65_535;

/// Something the application may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A subflow's retransmission timer fired; its data was reinjected.
    SubflowFailed { subflow: usize },
    /// A subflow that had timed out was acknowledged again.
    SubflowRecovered { subflow: usize },
    /// The congestion controller closed a subflow (C-MPBBR).
    SubflowClosed { subflow: usize },
}

/// A snapshot of one subflow for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowStats {
    pub counters: SubflowCounters,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub bytes_in_flight: u64,
    pub potentially_failed: bool,
    pub backup: bool,
}

/// A snapshot of the connection for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Bytes the application wrote.
    pub bytes_written: u64,
    /// Bytes the peer acknowledged at connection level (Data ACK).
    pub bytes_acked: u64,
    /// Bytes received in order (the Data ACK this side sends).
    pub bytes_received: u64,
    pub bytes_read: u64,
    /// Out-of-order bytes held in the receive buffer.
    pub ooo_bytes: u64,
    /// Bytes queued for reinjection after subflow timeouts.
    pub reinjected_bytes: u64,
    /// Received packets refused as malformed.
    pub invalid_packets: u64,
    /// Right edge of the peer's receive window: no data at or beyond it is sent.
    pub peer_window_end: u64,
    /// This side's receive buffer now (it grows when autotuned).
    pub recv_buffer: u64,
    /// This side's send buffer now (it grows when autotuned).
    pub send_buffer: u64,
}

#[derive(Debug)]
pub struct Connection {
    config: Config,
    subflows: Vec<Subflow>,
    cc: Box<dyn Controller>,
    sched: Box<dyn Scheduler>,
    send: SendBuffer,
    recv: RecvBuffer,
    autotune: Option<RecvAutotune>,
    send_tuner: SendTuner,
    /// Data of timed-out or closed subflows, to be sent on another subflow
    /// before new data: DSN -> length, lowest first (it unblocks the
    /// receiver soonest), each range once however often it is queued.
    reinject: BTreeMap<u64, u32>,
    reinjected_bytes: u64,
    invalid_packets: u64,
    /// The peer's receive window right edge.
    peer_window_end: u64,
    /// Window edge last advertised, to decide when a window update is due.
    advertised_window_end: u64,
    /// Probe timer for a zero receive window with nothing in flight.
    persist_deadline: Option<Instant>,
    /// When a subflow the pacer holds back may send again.
    pacing_wakeup: Option<Instant>,
    /// New data is waiting for the peer's window, and how often that began.
    window_stalled: bool,
    window_stalls: u64,
    /// Opportunistic retransmission and penalisation are on.
    opportunistic: bool,
    /// The Data ACK last re-sent opportunistically (once per blocking segment).
    last_opportunistic: Option<u64>,
    persist_backoff: u32,
    /// Subflows opened here that have not sent a join (an upper bound:
    /// zero means no join is left to start).
    unjoined: usize,
    events: VecDeque<Event>,
    // Reused buffers so the per-packet path does not allocate.
    path_views: Vec<PathView>,
    sched_views: Vec<SchedPath>,
}

impl Connection {
    pub fn new(config: Config, cc: Box<dyn Controller>, sched: Box<dyn Scheduler>) -> Self {
        let send_tuner = SendTuner::new(config.send_autotune, config.send_buffer, cc.sndbuf_expand());
        let send = SendBuffer::new(send_tuner.initial());
        let autotune =
            config.recv_autotune.then(|| RecvAutotune::new(AUTOTUNE_INITIAL, config.recv_buffer, config.mss));
        let recv = RecvBuffer::new(if autotune.is_some() {
            AUTOTUNE_INITIAL.min(config.recv_buffer)
        } else {
            config.recv_buffer
        });
        // Until the peer's first ACK states its window, assume TCP's largest
        // unscaled one rather than trusting the peer to be configured like us.
        let peer_window_end = INITIAL_PEER_WINDOW;
        let opportunistic = config.opportunistic_retransmission.unwrap_or(sched.opportunistic_by_default());
        Connection {
            advertised_window_end: recv.window_end(),
            config,
            subflows: Vec::new(),
            cc,
            sched,
            send,
            recv,
            autotune,
            send_tuner,
            reinject: BTreeMap::new(),
            reinjected_bytes: 0,
            invalid_packets: 0,
            peer_window_end,
            persist_deadline: None,
            pacing_wakeup: None,
            window_stalled: false,
            window_stalls: 0,
            opportunistic,
            last_opportunistic: None,
            persist_backoff: 0,
            unjoined: 0,
            events: VecDeque::new(),
            path_views: Vec::new(),
            sched_views: Vec::new(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
    pub fn controller_name(&self) -> &'static str {
        self.cc.name()
    }
    pub fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }

    /// Opens a subflow and returns its index. Both endpoints must open their
    /// subflows in the same order; the index names the subflow on the wire.
    pub fn add_subflow(&mut self, backup: bool) -> usize {
        let i = self.subflows.len();
        self.subflows.push(Subflow::new(self.config.mss, backup));
        self.unjoined += 1;
        self.cc.on_path_added(i, self.config.mss, self.config.initial_window);
        i
    }

    /// Closes a subflow; its outstanding data is reinjected on the others.
    pub fn remove_subflow(&mut self, i: usize) {
        let Some(sf) = self.subflows.get_mut(i) else { return };
        if !sf.active {
            return;
        }
        sf.active = false;
        let stranded = sf.abandon();
        self.queue_reinjection(&stranded);
        self.cc.on_path_removed(i);
    }

    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    // ---- application side ----

    /// Buffers bytes for sending; returns how many fit in the send buffer.
    pub fn write(&mut self, data: &[u8]) -> usize {
        self.send.write(data)
    }
    /// Buffers `n` synthetic zero bytes (bulk traffic without copies).
    pub fn write_zeros(&mut self, n: u64) -> u64 {
        self.send.write_zeros(n)
    }
    /// Space left in the send buffer.
    pub fn send_room(&self) -> u64 {
        self.send.room()
    }
    /// True when every written byte has been acknowledged by the peer.
    pub fn all_acked(&self) -> bool {
        self.send.una() == self.send.end()
    }
    /// Reads in-order bytes into `buf`.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = self.recv.read(buf);
        self.after_read();
        n
    }
    /// Discards up to `max` in-order bytes; returns how many.
    pub fn consume(&mut self, max: u64) -> u64 {
        let n = self.recv.consume(max);
        self.after_read();
        n
    }
    pub fn readable(&self) -> u64 {
        self.recv.readable()
    }

    /// Reading opens the window; tell the peer once it has grown enough to
    /// matter (half the buffer), so a blocked sender can resume.
    fn after_read(&mut self) {
        if self.recv.window_end() >= self.advertised_window_end + self.recv.capacity() / 2 {
            if let Some(i) = self.best_usable_subflow() {
                self.subflows[i].receiver.request_immediate();
            }
        }
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats {
            bytes_written: self.send.end(),
            bytes_acked: self.send.una(),
            bytes_received: self.recv.data_ack(),
            bytes_read: self.recv.bytes_read(),
            ooo_bytes: self.recv.ooo_bytes(),
            reinjected_bytes: self.reinjected_bytes,
            invalid_packets: self.invalid_packets,
            peer_window_end: self.peer_window_end,
            recv_buffer: self.recv.capacity(),
            send_buffer: self.send.capacity(),
        }
    }

    pub fn subflow_stats(&self, i: usize) -> Option<SubflowStats> {
        let sf = self.subflows.get(i)?;
        Some(SubflowStats {
            counters: sf.counters,
            cwnd: self.cc.window(i),
            ssthresh: self.cc.ssthresh(i),
            srtt: sf.rtt.srtt(),
            min_rtt: sf.rtt.min_rtt(),
            bytes_in_flight: sf.bytes_in_flight(),
            potentially_failed: sf.potentially_failed,
            backup: sf.backup,
        })
    }

    // ---- network side ----

    /// Processes one packet received on the subflow it names. Malformed
    /// packets are refused with the reason (and counted); packets for
    /// unknown or closed subflows are ignored.
    pub fn handle_datagram(&mut self, now: Instant, packet: Packet) -> Result<(), PacketError> {
        if let Err(e) = packet.check() {
            self.invalid_packets += 1;
            return Err(e);
        }
        let i = usize::from(packet.subflow);
        if !self.subflows.get(i).is_some_and(|s| s.active) {
            return Ok(());
        }
        if !self.subflows[i].established {
            self.subflows[i].established = true;
            self.subflows[i].penalty_stamp = now;
        }
        match packet.frame {
            Frame::Data(d) => self.on_data(now, i, d),
            Frame::Ack(a) => self.on_ack(now, i, &a),
        }
        Ok(())
    }

    fn on_data(&mut self, now: Instant, i: usize, d: DataFrame) {
        let (ack_every, delay) = (self.config.ack_every, self.config.max_ack_delay);
        let sf = &mut self.subflows[i];
        if d.dsn + u64::from(d.len) > self.recv.window_end() {
            // Beyond the window: drop it unacknowledged, as TCP does, so the
            // sender re-sends it once the window opens; answer with our window.
            sf.receiver.request_immediate();
            return;
        }
        sf.receiver.on_packet(now, d.pn, d.pn_floor, ack_every, delay);
        if d.len == 0 {
            // A probe: answer at once.
            sf.receiver.request_immediate();
            return;
        }
        let chunk = if d.payload.is_empty() {
            Chunk::Zeros(u64::from(d.len))
        } else {
            let mut p = d.payload;
            p.truncate(d.len as usize);
            Chunk::Bytes(p)
        };
        let before = self.recv.data_ack();
        let new = self.recv.insert(d.dsn, chunk);
        self.subflows[i].counters.bytes_received_new += new;
        if let Some(a) = self.autotune.as_mut() {
            if self.recv.data_ack() > before {
                a.on_data(now, self.recv.data_ack(), self.recv.window_end());
            }
            if let Some(c) = a.on_read(now, self.recv.bytes_read(), self.recv.capacity()) {
                self.recv.grow(c);
            }
        }
    }

    fn on_ack(&mut self, now: Instant, i: usize, a: &AckFrame) {
        self.send.on_data_ack(a.data_ack);
        if a.window_end > self.peer_window_end {
            self.peer_window_end = a.window_end;
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
        let cfg = &self.config;
        let (min_rto, init_rto, max_rto, dupthresh) = (cfg.min_rto, cfg.initial_rto, cfg.max_rto, cfg.dupthresh);
        let sf = &mut self.subflows[i];
        let was_failed = sf.potentially_failed;
        let prior_in_flight = sf.bytes_in_flight();
        let out = sf.on_ack(now, a, dupthresh, |s| s.rto(min_rto, init_rto, max_rto));
        let in_recovery = sf.in_recovery();
        if was_failed && !sf.potentially_failed {
            self.events.push_back(Event::SubflowRecovered { subflow: i });
        }
        self.refresh_path_views();
        if out.congestion_event {
            self.cc.on_congestion_event(now, i, &self.path_views);
        }
        if out.bytes_acked > 0 {
            let sample = AckSample {
                now,
                bytes_acked: out.bytes_acked,
                rtt: out.rtt,
                prior_in_flight,
                in_recovery,
                delivered: self.subflows[i].delivered(),
                rate: out.rate,
                prior_delivered: out.prior_delivered,
            };
            self.cc.on_ack(i, &sample, &self.path_views);
            if self.send_tuner.is_on() {
                self.autotune_send_buffer();
            }
            while let Some(closed) = self.cc.take_closed_path() {
                self.remove_subflow(closed);
                self.events.push_back(Event::SubflowClosed { subflow: closed });
            }
        }
    }

    fn autotune_send_buffer(&mut self) {
        let cc = &self.cc;
        let paths = self.subflows.iter().enumerate().map(|(i, s)| TunedPath {
            active: s.active,
            window: cc.window(i),
            srtt: s.rtt.srtt(),
            mss: s.mss,
        });
        let target = self.send_tuner.target(paths);
        self.send.grow(target);
    }

    fn refresh_path_views(&mut self) {
        self.path_views.clear();
        self.path_views.extend(self.subflows.iter().map(|s| PathView {
            srtt: s.rtt.srtt(),
            rttvar: s.rtt.rttvar(),
            min_rtt: s.rtt.min_rtt(),
            bytes_in_flight: s.bytes_in_flight(),
            mss: s.mss,
            backup: s.backup,
            potentially_failed: s.potentially_failed,
            active: s.active,
        }));
    }

    fn rto_of(&self, i: usize) -> Duration {
        let c = &self.config;
        self.subflows[i].rto(c.min_rto, c.initial_rto, c.max_rto)
    }

    /// Earliest time [`Connection::handle_timeout`] must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.subflows
            .iter()
            .filter(|s| s.active)
            .flat_map(|s| [s.receiver.deadline(), s.rto_deadline()])
            .chain([self.persist_deadline, self.pacing_wakeup])
            .flatten()
            .min()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if self.pacing_wakeup.is_some_and(|t| t <= now) {
            self.pacing_wakeup = None;
        }
        let mut timed_out = false;
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if !sf.active || sf.rto_deadline().is_none_or(|d| d > now) {
                continue;
            }
            timed_out = true;
            let (had_in_flight, first) = (sf.bytes_in_flight() > 0, sf.first_timeout());
            let was_failed = sf.potentially_failed;
            let c = &self.config;
            let (min_rto, init_rto, max_rto) = (c.min_rto, c.initial_rto, c.max_rto);
            if !self.subflows[i].on_rto(now, |s| s.rto(min_rto, init_rto, max_rto)) {
                // A lost zero-window probe: the persist timer probes again.
                continue;
            }
            // RFC 5681 §3.1 (and Linux): repeated timeouts of the same data
            // do not lower ssthresh again.
            if had_in_flight && first {
                self.refresh_path_views();
                self.cc.on_rto(now, i, &self.path_views);
            }
            if !was_failed {
                self.events.push_back(Event::SubflowFailed { subflow: i });
            }
            // What another subflow already delivered needs no retransmission;
            // with nothing left to re-send, probe the path instead.
            let send = &self.send;
            let sf = &mut self.subflows[i];
            sf.retransmit.retain(|&(dsn, len)| send.unacked_part(dsn, len).is_some());
            if sf.retransmit.is_empty() {
                sf.probe_pending = true;
            }
        }
        if timed_out && self.subflows.iter().filter(|s| s.active).count() > 1 {
            // Linux MPTCP reinjects a timed-out subflow's data on the others.
            // Every failed subflow's whole queue is offered again, so data
            // stranded by an earlier timeout (when no other subflow was usable)
            // is not left to one segment per backed-off RTO.
            let stranded: Vec<(u64, u32)> = self
                .subflows
                .iter()
                .filter(|s| s.active && s.potentially_failed)
                .flat_map(|s| s.retransmit.iter().copied())
                .collect();
            self.queue_reinjection(&stranded);
        }
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.persist_deadline = None;
            self.persist_backoff += 1;
            if let Some(i) = self.best_usable_subflow() {
                self.subflows[i].probe_pending = true;
            }
        }
    }

    fn queue_reinjection(&mut self, ranges: &[(u64, u32)]) {
        for &(dsn, len) in ranges {
            if let Some((dsn, len)) = self.send.unacked_part(dsn, len) {
                if self.reinject.insert(dsn, len).is_none() {
                    self.reinjected_bytes += u64::from(len);
                }
            }
        }
    }

    fn best_usable_subflow(&self) -> Option<usize> {
        let pick = |s: &Subflow| s.rtt.srtt().unwrap_or_default();
        (0..self.subflows.len())
            .filter(|&i| self.subflows[i].usable())
            .min_by_key(|&i| (pick(&self.subflows[i]), i))
            .or_else(|| self.subflows.iter().position(|s| s.active))
    }

    /// The next packet to send, if any is allowed now.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if let Some(p) = self.poll_ack(now) {
            return Some(p);
        }
        self.start_joins();
        for i in 0..self.subflows.len() {
            if self.subflows[i].active && self.subflows[i].probe_pending {
                self.subflows[i].probe_pending = false;
                return Some(self.send_data(now, i, self.send.nxt(), 0));
            }
        }
        if let Some(p) = self.poll_retransmission(now) {
            return Some(p);
        }
        self.poll_scheduled(now)
    }

    /// With data to send, the first subflow opened joins; once one subflow
    /// is established, every other unused one does.
    fn start_joins(&mut self) {
        if self.unjoined == 0 || self.send.backlog() == 0 {
            return;
        }
        let connected = self.subflows.iter().any(|s| s.established);
        let first = self.subflows.iter().position(|s| s.active);
        // Should the first subflow's join time out (its path is down), the
        // others try too rather than wait on a dead path.
        let first_failed = first.is_some_and(|i| self.subflows[i].potentially_failed);
        for (i, sf) in self.subflows.iter_mut().enumerate() {
            let allowed = connected || first_failed || Some(i) == first;
            if sf.active && !sf.established && sf.unused() && !sf.probe_pending && allowed {
                sf.probe_pending = true;
                self.unjoined = self.unjoined.saturating_sub(1);
            }
        }
    }

    fn poll_ack(&mut self, now: Instant) -> Option<Packet> {
        let i = self.subflows.iter().position(|s| s.active && s.receiver.ack_due(now))?;
        let (cumulative, sack, sack_len) = self.subflows[i].receiver.take_ack();
        self.advertised_window_end = self.recv.window_end();
        let frame = AckFrame {
            cumulative,
            sack,
            sack_len,
            data_ack: self.recv.data_ack(),
            window_end: self.advertised_window_end,
        };
        Some(Packet { subflow: i as u8, frame: Frame::Ack(frame) })
    }

    fn window_space(&self, i: usize, len: u32) -> bool {
        let sf = &self.subflows[i];
        sf.bytes_in_flight() == 0 || sf.bytes_in_flight() + u64::from(len) <= self.cc.window(i)
    }

    /// True when the controller paces subflow `i` and its next slot is
    /// later than `now`; remembers that slot so `poll_timeout` wakes for it.
    fn paced(&mut self, now: Instant, i: usize) -> bool {
        let next = self.subflows[i].next_send_time;
        if self.cc.pacing_rate(i).is_none() || next <= now {
            return false;
        }
        self.pacing_wakeup = Some(self.pacing_wakeup.map_or(next, |w| w.min(next)));
        true
    }

    fn poll_retransmission(&mut self, now: Instant) -> Option<Packet> {
        for i in 0..self.subflows.len() {
            if !self.subflows[i].active {
                continue;
            }
            while let Some(&(dsn, len)) = self.subflows[i].retransmit.front() {
                let Some((dsn, len)) = self.send.unacked_part(dsn, len) else {
                    self.subflows[i].retransmit.pop_front();
                    continue;
                };
                if !self.window_space(i, len) || self.paced(now, i) {
                    break;
                }
                self.subflows[i].retransmit.pop_front();
                self.subflows[i].counters.retransmissions += 1;
                return Some(self.send_data(now, i, dsn, len));
            }
        }
        None
    }

    fn poll_scheduled(&mut self, now: Instant) -> Option<Packet> {
        let mut next_reinjection = None;
        while let Some((dsn, len)) = self.reinject.pop_first() {
            if let Some(part) = self.send.unacked_part(dsn, len) {
                self.reinject.insert(part.0, part.1);
                next_reinjection = Some(part);
                break;
            }
        }
        let mss = u64::from(self.config.mss);
        let window_room = self.peer_window_end.saturating_sub(self.send.nxt());
        let (dsn, len, reinjection) = if let Some((dsn, len)) = next_reinjection {
            (dsn, len, true)
        } else {
            let len = mss.min(self.send.backlog()).min(window_room);
            if len == 0 || (len < mss.min(self.send.backlog()) && self.any_in_flight()) {
                // Nothing new to send, or only a runt the window allows.
                if self.sched.copies_in_flight() {
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
                let (blocked, may_penalise) = if self.send.backlog() == 0 {
                    for sf in &mut self.subflows {
                        sf.mark_app_limited();
                    }
                    let room = self.send.room();
                    (2 * room < self.send.capacity() - room, room == 0)
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
            (self.send.nxt(), len as u32, false)
        };
        self.refresh_sched_views(now);
        let conn = SchedConn {
            now,
            backlog: self.send.backlog(),
            window_room,
            send_window: self.peer_window_end.saturating_sub(self.send.una()),
            window_stalls: self.window_stalls,
        };
        let i = match self.sched.select(&conn, &self.sched_views) {
            Decision::Send(i) => i,
            Decision::SendAll => return self.send_redundant(now, dsn, len, reinjection),
            Decision::Wait => return None,
        };
        if !self.subflows.get(i).is_some_and(|s| s.active && s.established) || !self.window_space(i, len) {
            return None;
        }
        if reinjection {
            self.reinject.remove(&dsn);
            self.subflows[i].counters.reinjected_bytes += u64::from(len);
        } else {
            self.send.take_new(u64::from(len));
        }
        Some(self.send_data(now, i, dsn, len))
    }

    fn refresh_sched_views(&mut self, now: Instant) {
        self.sched_views.clear();
        for i in 0..self.subflows.len() {
            let paced = self.paced(now, i);
            let s = &self.subflows[i];
            self.sched_views.push(SchedPath {
                srtt: s.rtt.srtt(),
                rttvar: s.rtt.rttvar(),
                cwnd: self.cc.window(i),
                bytes_in_flight: s.bytes_in_flight(),
                mss: s.mss,
                backup: s.backup,
                potentially_failed: s.potentially_failed,
                active: s.active && s.established,
                paced,
                delivery_rate: s.last_delivery_rate(),
            });
        }
    }

    /// Redundant scheduling: the fastest subflow with room that lags behind
    /// the others sends a copy of the next data it has not carried (still
    /// unacknowledged); when none lags, the fastest with room sends the
    /// segment the connection has ready.
    fn send_redundant(&mut self, now: Instant, dsn: u64, len: u32, reinjection: bool) -> Option<Packet> {
        if let Some(p) = self.send_copy(now) {
            return Some(p);
        }
        let views = &self.sched_views;
        let i = crate::sched::fastest(views, |i| views[i].has_window_space())?;
        if !self.window_space(i, len) {
            return None;
        }
        if reinjection {
            self.reinject.remove(&dsn);
        } else {
            self.send.take_new(u64::from(len));
            self.subflows[i].carried_to = self.send.nxt();
        }
        Some(self.send_data(now, i, dsn, len))
    }

    /// A copy for the fastest subflow with room that has not carried
    /// everything sent so far, if there is one.
    fn send_copy(&mut self, now: Instant) -> Option<Packet> {
        let (una, nxt, mss) = (self.send.una(), self.send.nxt(), u64::from(self.config.mss));
        let views = &self.sched_views;
        let subflows = &self.subflows;
        let behind = |i: usize| subflows[i].carried_to.max(una) < nxt;
        let i = crate::sched::fastest(views, |i| views[i].has_window_space() && behind(i))?;
        let start = self.subflows[i].carried_to.max(una);
        let copy = (nxt - start).min(mss) as u32;
        if !self.window_space(i, copy) {
            return None;
        }
        self.subflows[i].carried_to = start + u64::from(copy);
        Some(self.send_data(now, i, start, copy))
    }

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
    fn opportunistic_retransmission(&mut self, now: Instant, may_penalise: bool) -> Option<Packet> {
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
        let holder = (0..n).find(|&i| i != fast && self.subflows[i].active && self.subflows[i].carries(una))?;
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

    fn any_in_flight(&self) -> bool {
        self.subflows.iter().filter(|s| s.active).any(|s| s.bytes_in_flight() > 0 || !s.retransmit.is_empty())
    }

    /// With data waiting, a closed window and nothing in flight, no ACK will
    /// come to reopen the window: probe after an RTO (RFC 9293 persist timer).
    fn arm_persist(&mut self, now: Instant) {
        let blocked = self.send.backlog() > 0 && self.send.nxt() >= self.peer_window_end;
        if !blocked || self.any_in_flight() || self.persist_deadline.is_some() {
            return;
        }
        let rto = self.best_usable_subflow().map_or(self.config.initial_rto, |i| self.rto_of(i));
        self.persist_deadline =
            Some(now + rto.saturating_mul(1 << self.persist_backoff.min(10)).min(self.config.max_rto));
    }

    fn send_data(&mut self, now: Instant, i: usize, dsn: u64, len: u32) -> Packet {
        let rto = self.rto_of(i);
        if let Some(rate) = self.cc.pacing_rate(i).filter(|&r| r > 0) {
            // Space packets at the pacing rate, counting their wire size.
            let gap = Duration::from_nanos(u64::from(len + DATA_HEADER_BYTES) * 1_000_000_000 / rate);
            let sf = &mut self.subflows[i];
            sf.next_send_time = sf.next_send_time.max(now) + gap;
        }
        let pn_floor = self.subflows[i].pn_floor();
        let pn = self.subflows[i].on_sent(now, dsn, len, rto);
        let payload = match self.send.payload(dsn, len) {
            Chunk::Bytes(b) if len > 0 => b,
            _ => Vec::new(),
        };
        Packet { subflow: i as u8, frame: Frame::Data(DataFrame { pn, pn_floor, dsn, len, payload }) }
    }
}
