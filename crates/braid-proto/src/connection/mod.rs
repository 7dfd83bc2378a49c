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

mod addresses;
mod close;
mod failure;
mod handshake;
mod loss_probe;
mod opportunistic;
mod pmtu;
mod recv;
mod reinject;
mod timer;
mod transmit;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::autotune::{RecvAutotune, SendTuner, AUTOTUNE_INITIAL};
use crate::cc::{CachedController, Controller, PathView};
use crate::config::Config;
use crate::crypto::Crypto;
use crate::packet::SubflowId;
use crate::prefetch::prefetch_all;
use crate::recv_buffer::RecvBuffer;
use crate::sched::{SchedPath, Scheduler};
use crate::send_buffer::SendBuffer;
use crate::subflow::{Subflow, SubflowCounters};
use crate::time::{Duration, Instant};
pub use failure::ConnectionError;
use handshake::Session;
pub use handshake::Side;
pub(crate) use handshake::{micros, JoinState};
use timer::{Timer, TimerTable};

/// Receive window assumed for the peer before its first ACK: 64 KiB, the
/// largest window TCP can announce without window scaling.
const INITIAL_PEER_WINDOW: u64 = 65_535;

/// Something the application may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A subflow's retransmission timer fired; its data was reinjected.
    SubflowFailed { subflow: SubflowId },
    /// A subflow completed its handshake: it may carry data.
    SubflowEstablished { subflow: SubflowId },
    /// A subflow that had timed out was acknowledged again.
    SubflowRecovered { subflow: SubflowId },
    /// The congestion controller closed a subflow (C-MPBBR).
    SubflowClosed { subflow: SubflowId },
    /// The peer reset a subflow (it was closed or unknown there): it is
    /// closed here too, its data reinjected.
    SubflowReset { subflow: SubflowId },
    /// The connection gave up or was reset: see [`Connection::error`].
    Failed(ConnectionError),
    /// The peer closed its stream and every byte of it has arrived.
    PeerClosed,
    /// The peer acknowledged our close: everything we wrote arrived.
    Closed,
    /// The server advertised another address of this connection.
    AddressAdvertised { id: u8, addr: std::net::SocketAddr },
    /// The server withdrew an address it had advertised.
    AddressRemoved { id: u8 },
}

/// A connection has as many subflows as a [`SubflowId`] can name, and only
/// the client opens them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManySubflows;

impl std::fmt::Display for TooManySubflows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "only a client opens subflows, at most {}", SubflowId::LIMIT)
    }
}

impl std::error::Error for TooManySubflows {}

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
    /// Its handshake completed on this side: it may carry data.
    pub established: bool,
    /// Payload bytes per packet: the configured MSS unless the path was
    /// found to carry less ([`Connection::set_subflow_mss`], `Config::mss_floor`).
    pub mss: u32,
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
    /// Out-of-order bytes the receive buffer forgot to bound its
    /// bookkeeping (a peer leaving holes between tiny segments).
    pub pruned_bytes: u64,
    /// Bytes queued for reinjection after subflow timeouts (a byte queued
    /// again while still queued counts once).
    pub reinjected_bytes: u64,
    /// Times new data had to wait for the peer's receive window (episodes,
    /// not attempts): connection-level head-of-line blocking.
    pub window_stalls: u64,
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
    session: Session,
    subflows: Vec<Subflow>,
    cc: CachedController,
    sched: Box<dyn Scheduler>,
    send: SendBuffer,
    recv: RecvBuffer,
    autotune: Option<RecvAutotune>,
    send_tuner: SendTuner,
    /// The application's last write filled the send buffer (or did not fit
    /// whole): it waits to be woken ([`Connection::may_write`]).
    write_filled: bool,
    /// A subflow whose acknowledgement found the application waiting: the
    /// kernel-model send buffer may grow for it once sending is done.
    expand_due: Option<usize>,
    /// Data of timed-out or closed subflows, to be sent on another subflow
    /// before new data: DSN -> length, lowest first (it unblocks the
    /// receiver soonest), each range once however often it is queued.
    reinject: BTreeMap<u64, u32>,
    /// No range queued for reinjection was ever longer.
    reinject_longest: u32,
    /// Bytes queued for reinjection, each once while it stays queued.
    reinjected_bytes: u64,
    invalid_packets: u64,
    /// The peer's receive window right edge; `None` until its first ACK
    /// states it (that ACK answers the join, before any data is sent).
    peer_window: Option<u64>,
    /// Window edge last advertised, to decide when a window update is due.
    advertised_window_end: u64,
    timers: TimerTable,
    /// The pacing timer's last run: its deadline, and when the driver ran it
    /// (later by the OS timer's jitter; never in the simulator, whose
    /// timers are exact). Sends in that same run may make the lateness up.
    pacing_wake: Option<(Instant, Instant)>,
    /// New data is waiting for the peer's window, and how often that began.
    window_stalled: bool,
    window_stalls: u64,
    /// The application waits on a full send buffer with everything it
    /// wrote sent, and how often that began (BLEST counts both kinds).
    buffer_stalled: bool,
    buffer_stalls: u64,
    /// Opportunistic retransmission and penalisation are on.
    opportunistic: bool,
    /// The scheduler reads the subflows' ssthresh (fetched only then).
    sched_reads_ssthresh: bool,
    /// [`Scheduler::copies_in_flight`], read once: a property of the
    /// scheduler's kind, and the scheduler is never replaced. Asked on every
    /// transmit opportunity with nothing new to send (the poll after each
    /// ACK a receiver sends), where the two virtual calls cost about 16
    /// instructions a packet. Builds with debug assertions check it.
    sched_copies: bool,
    /// [`Scheduler::commits_bursts`], read once as `sched_copies` is.
    sched_commits: bool,
    /// The last scheduling step queued data no subflow could send yet: the
    /// scheduler is asked again (`poll_scheduled`).
    queued_more: bool,
    /// The controller's [`Controller::sndbuf_expand`], for the scheduler.
    sndbuf_expand: u32,
    /// End of the last new-data segment shorter than the MSS (Nagle).
    short_sent_end: u64,
    /// The Data ACK last re-sent opportunistically (once per blocking segment).
    last_opportunistic: Option<u64>,
    /// Subflows that black-hole detection brought down to `Config::mss_floor`,
    /// probing for their old size (`pmtu.rs`); empty in the simulator.
    raising: Vec<pmtu::Raise>,
    persist_backoff: u32,
    /// Connection-level retransmission timeouts in a row (Data ACK stuck).
    data_rto_backoff: u32,
    /// Why the connection failed, once it has.
    error: Option<ConnectionError>,
    /// A reset to tell the peer about, on the next packet.
    reset_pending: Option<u8>,
    /// Subflows a packet arrived on that are closed or unknown here: each
    /// is reset once (`Control::SubflowReset`).
    subflow_resets: Vec<SubflowId>,
    /// A subflow closed or reset, or the stream ended, since the last
    /// transmit opportunity, which may leave the connection stuck: looked
    /// at there (the calls that did it have no clock to start the failure
    /// timer), after the subflow resets owed. One flag for the rare cases,
    /// so the common transmit opportunity tests one byte.
    liveness_due: bool,
    /// A subflow's tail loss probe is due (RACK-TLP): one flag for
    /// `poll_transmit` to read rather than a look at every subflow.
    loss_probe_due: bool,
    /// How each direction of the stream ends.
    fin: close::Fin,
    /// Server: addresses advertised (id, address, echoed by the client).
    advertised: Vec<(u8, std::net::SocketAddr, bool)>,
    /// Client: addresses the server advertised and has not withdrawn.
    learned: Vec<(u8, std::net::SocketAddr)>,
    /// Address signals to send once each.
    outbox: VecDeque<crate::packet::Control>,
    /// Subflows opened here that have not sent a join (an upper bound:
    /// zero means no join is left to start).
    unjoined: usize,
    events: VecDeque<Event>,
    // Reused buffers so the per-packet path does not allocate.
    path_views: Vec<PathView>,
    sched_views: Vec<SchedPath>,
}

/// A subflow's retransmission timeout with its backoff. A subflow suspected
/// dead is probed at least every eighth of the failure timeout (never more
/// often than the minimum RTO), so a path that comes back is found well
/// before the connection would give up, however long it was down.
pub(super) fn subflow_rto(c: &Config, s: &Subflow) -> Duration {
    let ceiling = match s.potentially_failed() {
        true => c.max_rto.min(Duration::from_nanos(c.failure_timeout.as_nanos() / 8).max(c.min_rto)),
        false => c.max_rto,
    };
    s.rto(c.min_rto, c.initial_rto, ceiling)
}

impl Connection {
    /// The side that opens the connection and its subflows, with its random
    /// 64-bit `key` (see the handshake in `connection/handshake.rs`).
    pub fn client(
        config: Config,
        cc: Box<dyn Controller>,
        sched: Box<dyn Scheduler>,
        key: u64,
        crypto: Arc<dyn Crypto>,
    ) -> Self {
        Self::new(config, cc, sched, Session::new(Side::Client, crypto, key))
    }

    /// The side that accepts a connection: it waits for the client's
    /// opening packet and learns of each subflow from its first packet.
    pub fn server(
        config: Config,
        cc: Box<dyn Controller>,
        sched: Box<dyn Scheduler>,
        key: u64,
        crypto: Arc<dyn Crypto>,
    ) -> Self {
        Self::new(config, cc, sched, Session::new(Side::Server, crypto, key))
    }

    /// A server connection the endpoint creates when a client's
    /// `Establish` checks out: the keys are known, and `subflow` (the one
    /// that carried the opening) waits for that `Establish`.
    pub(crate) fn accepted(
        config: Config,
        cc: Box<dyn Controller>,
        sched: Box<dyn Scheduler>,
        key: u64,
        client_key: u64,
        crypto: Arc<dyn Crypto>,
        subflow: SubflowId,
    ) -> Self {
        let mut session = Session::new(Side::Server, crypto, key);
        session.set_remote_key(client_key);
        let mut c = Self::new(config, cc, sched, session);
        c.open_awaiting_establish(subflow.index());
        c
    }

    fn new(config: Config, cc: Box<dyn Controller>, sched: Box<dyn Scheduler>, session: Session) -> Self {
        let sndbuf_expand = cc.sndbuf_expand();
        let send_tuner = SendTuner::new(config.send_autotune, config.send_buffer, sndbuf_expand);
        let send = SendBuffer::new(send_tuner.initial());
        let autotune =
            config.recv_autotune.then(|| RecvAutotune::new(AUTOTUNE_INITIAL, config.recv_buffer, config.mss));
        let recv = RecvBuffer::new(if autotune.is_some() {
            AUTOTUNE_INITIAL.min(config.recv_buffer)
        } else {
            config.recv_buffer
        });
        let opportunistic = config.opportunistic_retransmission.unwrap_or(sched.opportunistic_by_default());
        let sched_reads_ssthresh = sched.reads_ssthresh();
        let sched_copies = sched.copies_in_flight();
        let sched_commits = sched.commits_bursts();
        Connection {
            advertised_window_end: recv.window_end(),
            config,
            session,
            subflows: Vec::new(),
            cc: CachedController::new(cc),
            sched,
            send,
            recv,
            autotune,
            send_tuner,
            write_filled: false,
            expand_due: None,
            reinject: BTreeMap::new(),
            reinject_longest: 0,
            reinjected_bytes: 0,
            invalid_packets: 0,
            peer_window: None,
            timers: TimerTable::default(),
            pacing_wake: None,
            window_stalled: false,
            window_stalls: 0,
            buffer_stalled: false,
            buffer_stalls: 0,
            opportunistic,
            sched_reads_ssthresh,
            sched_copies,
            sched_commits,
            queued_more: false,
            sndbuf_expand,
            short_sent_end: 0,
            last_opportunistic: None,
            raising: Vec::new(),
            persist_backoff: 0,
            data_rto_backoff: 0,
            error: None,
            reset_pending: None,
            subflow_resets: Vec::new(),
            liveness_due: false,
            loss_probe_due: false,
            fin: close::Fin::default(),
            advertised: Vec::new(),
            learned: Vec::new(),
            outbox: VecDeque::new(),
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
        self.cc.get().name()
    }
    pub fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }

    pub fn side(&self) -> Side {
        self.session.side
    }

    /// This side's token: the connection id on packets sent to it.
    pub fn token(&self) -> u64 {
        self.session.local_token()
    }

    /// Client: opens a subflow and returns its id, which names it on the
    /// wire. The first opens the connection; the others join once the
    /// server holds it (`Config::early_joins`: once the first is open).
    /// (The server learns of subflows from the client's packets.)
    pub fn add_subflow(&mut self, backup: bool) -> Result<SubflowId, TooManySubflows> {
        let i = self.subflows.len();
        let id = SubflowId::from_index(i).filter(|_| self.session.side == Side::Client).ok_or(TooManySubflows)?;
        let sf = self.new_subflow(backup);
        // Room for this one only: a subflow is 640 bytes, and doubling would
        // leave two unused of four for the usual two subflows.
        self.subflows.reserve_exact(1);
        self.subflows.push(sf);
        self.unjoined += 1;
        self.cc.on_path_added(i, self.config.mss, self.config.initial_window);
        Ok(id)
    }

    /// A subflow as this connection's settings make them.
    fn new_subflow(&self, backup: bool) -> Subflow {
        let mut sf = Subflow::new(self.config.mss, backup);
        if self.config.rack_tlp {
            sf.enable_rack_tlp();
        }
        sf
    }

    /// The id of subflow `i`, which exists (so its index fits).
    fn id(i: usize) -> SubflowId {
        SubflowId::from_index(i).expect("subflow indices fit an id")
    }

    /// Closes a subflow; its outstanding data is reinjected on the others.
    pub fn remove_subflow(&mut self, id: SubflowId) {
        let i = id.index();
        let Some(sf) = self.subflows.get_mut(i) else { return };
        if !sf.is_open() {
            return;
        }
        let stranded = sf.close();
        self.forget_raise(i);
        self.queue_reinjection(&stranded);
        self.cc.on_path_removed(i);
        self.fin_probe_lost();
        self.liveness_due = true;
    }

    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    /// Whether subflow `id` is open here (opened and not closed; a
    /// server's slot no client has opened is not).
    pub fn subflow_open(&self, id: SubflowId) -> bool {
        self.subflows.get(id.index()).is_some_and(Subflow::is_open)
    }

    // ---- application side ----

    /// Buffers bytes for sending; returns how many fit in the send buffer
    /// (none after `close`).
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.writes_closed() {
            return 0;
        }
        let n = self.send.write(data);
        self.note_write(n < data.len());
        n
    }
    /// Buffers `n` synthetic zero bytes (bulk traffic without copies).
    pub fn write_zeros(&mut self, n: u64) -> u64 {
        if self.writes_closed() {
            return 0;
        }
        let written = self.send.write_zeros(n);
        self.note_write(written < n);
        written
    }
    /// After a write: it filled the buffer if it was cut short or left no
    /// room, and the application then waits ([`Connection::may_write`]).
    fn note_write(&mut self, cut_short: bool) {
        self.write_filled = cut_short || self.send.room() == 0;
    }
    /// Space left in the send buffer.
    pub fn send_room(&self) -> u64 {
        self.send.room()
    }
    /// Whether an application waiting on a full send buffer is woken to
    /// write again: Linux's `sk_stream_is_writeable`, free space at least
    /// half of what is queued (about a third of the buffer). A writer is
    /// woken only then, not by every acknowledgement, so a bulk sender
    /// refills the buffer in steps of a third.
    pub fn send_writable(&self) -> bool {
        self.send.room() >= (self.send.end() - self.send.una()) / 2
    }
    /// Whether the application may write now: it has not filled the send
    /// buffer, or, having filled it, has been woken ([`send_writable`]).
    /// An application that writes only then sees the buffer as a Linux one
    /// sees its socket's: a blocked writer returns with a third free.
    ///
    /// [`send_writable`]: Connection::send_writable
    pub fn may_write(&self) -> bool {
        !self.write_filled || self.send_writable()
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
    pub(super) fn after_read(&mut self) {
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
            pruned_bytes: self.recv.pruned_bytes(),
            reinjected_bytes: self.reinjected_bytes,
            window_stalls: self.window_stalls,
            invalid_packets: self.invalid_packets,
            peer_window_end: self.peer_window_end(),
            recv_buffer: self.recv.capacity(),
            send_buffer: self.send.capacity(),
        }
    }

    pub fn subflow_stats(&self, i: usize) -> Option<SubflowStats> {
        let sf = self.subflows.get(i)?;
        Some(SubflowStats {
            counters: sf.counters,
            cwnd: self.cc.window(i),
            ssthresh: self.cc.get().ssthresh(i),
            srtt: sf.rtt.srtt(),
            min_rtt: sf.rtt.min_rtt(),
            bytes_in_flight: sf.bytes_in_flight(),
            potentially_failed: sf.potentially_failed(),
            backup: sf.backup,
            established: sf.is_established(),
            mss: sf.mss,
        })
    }

    // ---- network side ----

    pub(super) fn refresh_path_views(&mut self) {
        // Overwritten in place: the subflow count rarely changes.
        self.path_views.resize(self.subflows.len(), PathView::default());
        for (v, s) in self.path_views.iter_mut().zip(&self.subflows) {
            *v = PathView {
                srtt: s.rtt.srtt(),
                rttvar: s.rtt.rttvar(),
                min_rtt: s.rtt.min_rtt(),
                bytes_in_flight: s.bytes_in_flight(),
                packets_lost: s.counters.packets_lost,
                mss: s.mss,
                backup: s.backup,
                potentially_failed: s.potentially_failed(),
                active: s.is_open(),
            };
        }
    }

    /// Right edge of the peer's receive window. Until its first ACK states
    /// it, TCP's largest unscaled window is assumed rather than trusting the
    /// peer to be configured like us.
    pub(super) fn peer_window_end(&self) -> u64 {
        self.peer_window.unwrap_or(INITIAL_PEER_WINDOW)
    }

    pub(super) fn rto_of(&self, i: usize) -> Duration {
        subflow_rto(&self.config, &self.subflows[i])
    }

    /// A hint for drivers with many connections: asks the CPU to bring
    /// into cache what handling a packet of `subflow` will touch (the
    /// subflow, the controller, the oldest packets in flight), so that the
    /// driver can do other work while it comes. Changes nothing else.
    pub fn prefetch(&self, subflow: SubflowId) {
        if let Some(s) = self.subflows.get(subflow.index()) {
            prefetch_all(s);
            s.prefetch_oldest();
        }
        prefetch_all(self.cc.get());
    }

    /// Earliest time [`Connection::handle_timeout`] must be called.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.error.is_some() {
            return None;
        }
        // Called after every packet: a plain loop over nanoseconds, "none"
        // being u64::MAX (584 years), so each step is a branch-free min.
        let ns = |t: Option<Instant>| t.map_or(u64::MAX, Instant::as_nanos);
        let mut next = ns(self.timers.next());
        for s in &self.subflows {
            if s.is_open() {
                next = next.min(ns(s.receiver.deadline())).min(ns(s.rto_deadline())).min(ns(Self::join_expiry(s)));
            }
        }
        if self.config.rack_tlp {
            next = next.min(self.next_loss_timer());
        }
        (next != u64::MAX).then(|| Instant::from_nanos(next))
    }

    /// Runs every timer that is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.error.is_some() {
            return;
        }
        if let Some(deadline) = self.timers.get(Timer::Pacing).filter(|&t| t <= now) {
            self.pacing_wake = Some((deadline, now));
        }
        self.timers.expire(Timer::Pacing, now);
        self.expire_joins(now);
        if self.config.rack_tlp {
            // A probe due with the retransmission timer goes in its stead.
            self.on_loss_timers(now);
        }
        self.on_subflow_timeouts(now);
        if self.timers.expire(Timer::DataRetransmit, now) {
            self.on_data_timeout(now);
        }
        if self.timers.expire(Timer::Persist, now) {
            self.persist_backoff += 1;
            if let Some(i) = self.best_usable_subflow() {
                self.subflows[i].probe_pending = true;
            }
        }
        self.check_liveness(now);
    }

    /// Why the connection failed, if it has: it then sends nothing more.
    pub fn error(&self) -> Option<ConnectionError> {
        self.error
    }

    pub(super) fn best_usable_subflow(&self) -> Option<usize> {
        let pick = |s: &Subflow| s.rtt.srtt().unwrap_or_default();
        (0..self.subflows.len())
            .filter(|&i| self.subflows[i].usable())
            .min_by_key(|&i| (pick(&self.subflows[i]), i))
            .or_else(|| self.subflows.iter().position(|s| s.is_open()))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::crypto::RustCrypto;

    /// A client with Reno, scheduler `sched` and a subflow per entry of
    /// `backup` (true: a backup), none of them open: for tests of its
    /// bookkeeping.
    pub(in crate::connection) fn client(sched: &str, backup: &[bool]) -> Connection {
        let (cc, sched) = (crate::cc::by_name("reno").unwrap(), crate::sched::by_name(sched).unwrap());
        let mut c = Connection::client(Config::default(), cc, sched, 7, Arc::new(RustCrypto));
        for &b in backup {
            c.add_subflow(b).unwrap();
        }
        c
    }

    fn parts() -> (Box<dyn Controller>, Box<dyn Scheduler>, Arc<dyn Crypto>) {
        (crate::cc::by_name("lia").unwrap(), crate::sched::by_name("minrtt").unwrap(), Arc::new(RustCrypto))
    }

    /// A connection holds room for the subflows it has and no more (a
    /// subflow is 640 bytes; doubling growth would hold four for the usual
    /// two), on the client as it opens them and on the server as they
    /// arrive, with empty slots below a subflow that arrives first.
    #[test]
    fn subflows_hold_no_spare_room() {
        for n in 1..=4 {
            let (cc, sched, crypto) = parts();
            let mut client = Connection::client(Config::default(), cc, sched, 1, crypto);
            for _ in 0..n {
                client.add_subflow(false).unwrap();
            }
            assert_eq!(client.subflows.capacity(), n, "client");
            let (cc, sched, crypto) = parts();
            let id = SubflowId::from_index(n - 1).unwrap();
            let server = Connection::accepted(Config::default(), cc, sched, 2, 1, crypto, id);
            assert_eq!(server.subflows.capacity(), n, "server");
        }
    }
}
