//! One subflow's sender state: packet numbers, the SACK scoreboard, loss
//! detection, fast recovery and the retransmission timer.
//!
//! Every transmission takes a fresh packet number (as in QUIC), so an
//! acknowledgement always names exactly one transmission: RTT samples need
//! no Karn rule, and a packet is lost once `dupthresh` packets sent after it
//! are acknowledged (the packet-count form of RFC 6675's DupThresh), or,
//! with RACK-TLP on (`Config::rack_tlp`, [`crate::rack`]), by time as
//! Linux does, with a probe when acknowledgements stop. Bytes in
//! flight ("pipe") exclude acknowledged and lost packets, so recovery sends
//! exactly what the halved window allows without window inflation.
//!
//! A loss opens a recovery episode that lasts until everything sent before
//! it is acknowledged; further losses in the episode do not reduce the window
//! again (NewReno, RFC 6582). Lost data is retransmitted on the same subflow,
//! as TCP subflows do, unless the connection has meanwhile acknowledged it.
//!
//! A retransmission timeout instead opens Linux's loss state
//! (`TCP_CA_Loss`), which lasts until the subflow has re-sent what the
//! timeout declared lost and every packet up to the last re-sending is
//! resolved (Linux: until `snd_una` reaches `high_seq`, the `snd_nxt` of the
//! timeout, which with SACK is the same point, since MPTCP v0.96 sends no
//! new data on a subflow in this state). Meanwhile losses found do not open
//! a recovery episode, and the window grows (slow start).

use std::collections::VecDeque;

use crate::ack_tracker::AckTracker;
use crate::cc::WindowUse;
use crate::connection::JoinState;
use crate::packet::{AckFrame, Control};
use crate::prefetch::prefetch;
use crate::rack::{self, Probe, RackTlp};
use crate::rtt::RttEstimator;
use crate::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    dsn: u64,
    len: u32,
    time: Instant,
    state: State,
    /// Delivery-rate state when this packet was sent (draft-cheng-iccrg-
    /// delivery-rate-estimation §3.2).
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    app_limited: bool,
}

/// One delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes per second delivered over the sampled interval.
    pub delivery_rate: f64,
    /// The subflow's delivered count when the sampled packet was sent.
    pub prior_delivered: u64,
    /// The sample was taken while the sender had nothing to send, so it
    /// may underestimate the path.
    pub is_app_limited: bool,
}

/// Counters a subflow keeps for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowCounters {
    pub packets_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Packets that carried data already sent once on this subflow.
    pub retransmissions: u64,
    /// Data sent here that another subflow had carried first.
    pub reinjected_bytes: u64,
    pub packets_lost: u64,
    pub rtos: u64,
    /// Timeouts an acknowledgement later showed were spurious (undone).
    pub spurious_rtos: u64,
    /// Payload bytes received here that were new to the connection.
    pub bytes_received_new: u64,
}

/// What one acknowledgement did.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    pub bytes_acked: u64,
    pub packets_acked: u64,
    pub rtt: Option<Duration>,
    /// A loss opened a new recovery episode (one window reduction).
    pub congestion_event: bool,
    /// Data packets this ACK newly showed lost (Linux's `rs->losses`).
    pub packets_lost: u64,
    pub rate: Option<RateSample>,
    /// The subflow's delivered count when the newest packet this ACK covers
    /// was sent: an ACK with this at or past a mark ends a round trip.
    pub prior_delivered: Option<u64>,
    /// The last timeout was spurious: undo its window cut.
    pub spurious_timeout: bool,
}

/// What a timeout declared lost: the packets then in flight, in ascending
/// order, less those an acknowledgement has shown arrived since; the first
/// packet number sent after it; whether it was shown spurious already; and,
/// once it was, the data of its packets still waiting to be re-sent, taken
/// off the retransmission queue (`parked`) until an acknowledgement shows
/// it arrived or detection ends.
#[derive(Debug)]
struct TimedOut {
    lost: Vec<Declared>,
    after: u64,
    undone: bool,
    parked: Vec<(u64, u32)>,
}

/// A packet a timeout declared lost. Its send time stays so that a late
/// acknowledgement of it still measures the path: the packet left the
/// scoreboard at the timeout, and a path whose queue outgrew the timer
/// would otherwise never give a sample to grow the timer with.
#[derive(Clone, Copy, Debug)]
struct Declared {
    pn: u64,
    dsn: u64,
    len: u32,
    sent: Instant,
}

/// Where a subflow is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Server: a slot below a subflow the client opened; not open yet.
    Vacant,
    /// Opened; its handshake is not complete (its join is due or out).
    Joining,
    /// Its join timed out: the path may be down. Still tried.
    JoinTimedOut,
    /// The peer answered: it may carry data (and has an RTT sample, as a
    /// kernel subflow has from its SYN exchange).
    Established,
    /// A retransmission timeout since the last acknowledgement: suspected
    /// dead. It keeps being probed and is used again once acknowledged.
    PotentiallyFailed,
    /// Closed: its data went elsewhere and it is never used again.
    Closed,
}

#[derive(Debug)]
pub struct Subflow {
    pub backup: bool,
    pub state: Lifecycle,
    /// Where its handshake stands.
    pub(crate) join: JoinState,
    /// A handshake answer (`HelloReply`, `JoinReply`) for the next ACK.
    pub reply: Option<Control>,
    pub mss: u32,
    next_pn: u64,
    /// Packet number of `sent[0]`.
    base_pn: u64,
    sent: VecDeque<Sent>,
    /// RACK-TLP loss detection and probes (`Config::rack_tlp`), boxed as
    /// most subflows count packets instead.
    rack: Option<Box<RackTlp>>,
    /// Lowest packet number loss detection has not yet passed.
    loss_scan_pn: u64,
    largest_acked: Option<u64>,
    bytes_in_flight: u64,
    /// Data packets (not zero-length probes) in flight: the window also
    /// limits these, as Linux's window counts packets.
    packets_in_flight: u64,
    /// Lost data waiting to be re-sent here: (dsn, len).
    pub retransmit: VecDeque<(u64, u32)>,
    /// Data a burst-committing scheduler handed to this subflow (new, or
    /// reinjected from another) that it has not sent yet, in stream order:
    /// (dsn, len). Upstream Linux's subflow write queue
    /// ([`crate::sched::Upstream`]); empty with every other scheduler, which
    /// picks a subflow only when its window has room.
    queued: VecDeque<(u64, u32)>,
    /// Bytes in `queued`.
    queued_bytes: u64,
    /// Fast recovery lasts until a packet numbered at least this is
    /// acknowledged.
    recovery_end: Option<u64>,
    /// The loss state after a timeout (see [`Subflow::in_loss`]) lasts while
    /// data waits to be re-sent here and until every packet numbered below
    /// this is resolved.
    loss_end: Option<u64>,
    pub rtt: RttEstimator,
    rto_deadline: Option<Instant>,
    rto_backoff: u32,
    /// Timeouts with data in flight since data was last acknowledged here:
    /// black-hole detection's count. Unlike `rto_backoff`, an acknowledged
    /// zero-length probe does not end it: a path that drops large packets
    /// answers small ones, and when another subflow delivered the data that
    /// timed out, a probe is all this one sends before its next data.
    data_timeouts: u32,
    /// The packets the last timeout that cut the window declared lost,
    /// while an acknowledgement may still show they arrived.
    timed_out: Option<Box<TimedOut>>,
    /// A zero-length probe should go out (a failed path with nothing to resend).
    pub probe_pending: bool,
    /// Earliest time the pacer lets the next packet out (when the
    /// controller paces).
    pub next_send_time: Instant,
    /// When data last went out (Linux's `lsndtime`).
    last_data_sent: Option<Instant>,
    /// Redundant scheduling: the stream position up to which this subflow
    /// has carried the data.
    pub carried_to: u64,
    /// When this subflow, as the fast one, last penalised a slow one
    /// (opportunistic retransmission); starts at its establishment.
    pub penalty_stamp: Instant,
    pub receiver: AckTracker,
    pub counters: SubflowCounters,
    /// Delivery-rate estimation state: bytes delivered so far, when the
    /// latest were, the send time of the packet that began the sampling
    /// interval, and the `delivered` mark below which samples are app-limited.
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    app_limited_until: u64,
    last_delivery_rate: f64,
    /// Linux's `tcp_cwnd_validate` record (see [`Subflow::validate_cwnd`])
    /// and the packet number that ends its window.
    window_use: WindowUse,
    window_use_until: u64,
    /// A path-MTU probe (`connection/pmtu.rs`) and what became of it.
    pub(crate) mtu_probe: Option<MtuProbe>,
}

/// A path-MTU probe's fate, as this subflow's scoreboard saw it (the
/// cumulative acknowledgement cannot tell: it also passes packets declared
/// lost, once the sender has given them up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MtuProbe {
    /// The probe, by packet number.
    InFlight(u64),
    Delivered,
    /// Found lost by acknowledgements of later packets: too large for the
    /// path, not congestion, so it opens no recovery episode (Linux's
    /// `tcp_mtup_probe_failed` keeps the window).
    Lost,
}

impl Subflow {
    /// Asks the cache for the oldest packet in flight, where an ACK starts.
    pub(crate) fn prefetch_oldest(&self) {
        if let Some(p) = self.sent.front() {
            prefetch(p);
        }
    }

    pub fn new(mss: u32, backup: bool) -> Self {
        Subflow {
            backup,
            state: Lifecycle::Joining,
            join: JoinState::Pending,
            reply: None,
            mss,
            next_pn: 0,
            base_pn: 0,
            sent: VecDeque::new(),
            rack: None,
            loss_scan_pn: 0,
            largest_acked: None,
            bytes_in_flight: 0,
            packets_in_flight: 0,
            retransmit: VecDeque::new(),
            queued: VecDeque::new(),
            queued_bytes: 0,
            recovery_end: None,
            loss_end: None,
            rtt: RttEstimator::new(),
            rto_deadline: None,
            rto_backoff: 0,
            data_timeouts: 0,
            timed_out: None,
            probe_pending: false,
            next_send_time: Instant::ZERO,
            last_data_sent: None,
            carried_to: 0,
            penalty_stamp: Instant::ZERO,
            receiver: AckTracker::default(),
            counters: SubflowCounters::default(),
            delivered: 0,
            delivered_time: Instant::ZERO,
            first_sent_time: Instant::ZERO,
            app_limited_until: 0,
            last_delivery_rate: 0.0,
            window_use: WindowUse::default(),
            window_use_until: 0,
            mtu_probe: None,
        }
    }

    /// Detects losses with RACK and probes tail losses (TLP) instead of
    /// counting packets: see [`crate::rack`].
    pub fn enable_rack_tlp(&mut self) {
        self.rack = Some(Box::default());
    }

    /// Linux's `tcp_schedule_loss_probe`: in the Open state (nothing
    /// selectively acknowledged, lost or waiting to be re-sent, no probe
    /// out) with data in flight, the probe timer runs, never past the
    /// retransmission timer; otherwise it stops.
    #[inline(never)]
    fn arm_loss_probe(&mut self, now: Instant) {
        let open = self.bytes_in_flight > 0
            && self.largest_acked.is_none_or(|l| l < self.base_pn)
            && self.retransmit.is_empty()
            && self.recovery_end.is_none()
            && !self.in_loss();
        let timeout = rack::probe_timeout(self.rtt.srtt(), self.packets_in_flight == 1);
        let rto = self.rto_deadline;
        let Some(r) = self.rack.as_deref_mut() else { return };
        r.probe_deadline = match rto {
            Some(rto) if open && r.outstanding.is_none() => Some((now + timeout).min(rto)),
            _ => None,
        };
    }

    /// When the reordering or probe timer of RACK-TLP is due.
    pub fn loss_timer(&self) -> Option<Instant> {
        self.rack.as_deref().and_then(RackTlp::deadline)
    }

    /// Runs the RACK-TLP timers due at `now`. The reordering timer looks
    /// for losses again (one found may open recovery: the outcome says so).
    /// The probe timer makes a probe of the last packet in flight due, and
    /// the retransmission timer restarts from now (`rto`).
    pub fn on_loss_timer(&mut self, now: Instant, dupthresh: u64, rto: Duration) -> AckOutcome {
        let mut out = AckOutcome::default();
        if self.rack.as_deref().and_then(|r| r.reorder_deadline).is_some_and(|t| t <= now) {
            self.detect_losses_rack(now, dupthresh, &mut out);
        }
        let Some(r) = self.rack.as_deref_mut() else { return out };
        if r.probe_deadline.is_some_and(|t| t <= now) {
            r.probe_deadline = None;
            let last = self.sent.iter().rev().position(|p| p.state == State::InFlight && p.len > 0);
            if let (None, Some(k)) = (r.outstanding, last) {
                r.due = Some(self.next_pn - 1 - k as u64);
                self.rto_deadline = Some(now + rto);
            }
        }
        out
    }

    /// A probe is due (until [`Subflow::on_loss_probe_sent`]).
    pub fn loss_probe_pending(&self) -> bool {
        self.rack.as_deref().is_some_and(|r| r.due.is_some())
    }

    /// The data a due probe copies, (dsn, len), while its packet is in
    /// flight.
    pub fn loss_probe(&self) -> Option<(u64, u32)> {
        let pn = self.rack.as_deref()?.due?;
        let p = self.sent.get(pn.checked_sub(self.base_pn)? as usize)?;
        (p.state == State::InFlight).then_some((p.dsn, p.len))
    }

    /// The packet a due probe was to copy is no longer in flight: no probe.
    pub fn cancel_loss_probe(&mut self) {
        if let Some(r) = self.rack.as_deref_mut() {
            r.due = None;
        }
    }

    /// The due probe went out as the last packet sent (a copy of the packet
    /// it was due for, or a bare probe if the connection had that data
    /// acknowledged already): it is outstanding, and the retransmission
    /// timer restarts (`rto` from now).
    pub fn on_loss_probe_sent(&mut self, now: Instant, rto: Duration) {
        let probe = self.next_pn - 1;
        let data = self.sent.back().map_or((0, 0), |p| (p.dsn, p.len));
        if let Some(r) = self.rack.as_deref_mut() {
            if let Some(original) = r.due.take() {
                r.outstanding = Some(Probe { pn: probe, original, data, cuts: true });
            }
            r.probe_deadline = None;
        }
        self.rto_deadline = Some(now + rto);
    }

    /// Stops RACK-TLP's timers and forgets its probe (a timeout or a close
    /// ends them).
    fn stop_loss_timers(&mut self) {
        if let Some(r) = self.rack.as_deref_mut() {
            (r.reorder_deadline, r.probe_deadline, r.due, r.outstanding) = (None, None, None, None);
        }
    }

    /// After sending data: Linux's `tcp_cwnd_validate`, which MPTCP v0.96's
    /// `mptcp_write_xmit` calls for every subflow it sent on, with "in
    /// flight at least cwnd": records the largest flight of the current
    /// window and whether `window_full(bytes, packets, mss)` was true then. A new
    /// window begins once everything sent before the last record has left
    /// the network.
    pub fn validate_cwnd(&mut self, window_full: impl FnOnce(u64, u64, u32) -> bool) {
        if self.base_pn >= self.window_use_until || self.bytes_in_flight > self.window_use.max_in_flight {
            let was_full = window_full(self.bytes_in_flight, self.packets_in_flight, self.mss);
            self.window_use = WindowUse { max_in_flight: self.bytes_in_flight, was_full };
            self.window_use_until = self.next_pn;
        }
    }

    /// The record [`Subflow::validate_cwnd`] keeps, for the controller.
    pub fn window_use(&self) -> WindowUse {
        self.window_use
    }

    /// New data held back by the window ([`crate::tso_defer`]) counts as a
    /// full window in the current record (Linux's `is_cwnd_limited`).
    pub fn note_cwnd_limited(&mut self) {
        self.window_use.was_full = true;
    }

    /// When data last went out (Linux's `lsndtime`).
    pub fn last_data_sent(&self) -> Option<Instant> {
        self.last_data_sent
    }

    /// When the oldest packet not yet acknowledged or given up on was
    /// (last) sent: the head of Linux's retransmission queue.
    pub fn oldest_unacked_sent(&self) -> Option<Instant> {
        self.sent.front().map(|p| p.time)
    }

    /// Bytes delivered to the peer on this subflow so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Latest valid delivery-rate sample, bytes per second (0 before one).
    pub fn last_delivery_rate(&self) -> f64 {
        self.last_delivery_rate
    }

    /// The sender has nothing to send: samples until what is now in flight
    /// is delivered understate the path (draft §3.4).
    pub fn mark_app_limited(&mut self) {
        self.app_limited_until = (self.delivered + self.bytes_in_flight).max(1);
    }

    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    pub fn packets_in_flight(&self) -> u64 {
        self.packets_in_flight
    }
    /// In fast recovery (Linux's `TCP_CA_Recovery`): its window cut is
    /// made, windows do not grow, and a timeout now must not cut ssthresh
    /// again (Linux's `tcp_enter_loss` while `high_seq` is not acknowledged).
    pub fn in_recovery(&self) -> bool {
        self.recovery_end.is_some()
    }
    /// In the loss state after a retransmission timeout (Linux's
    /// `TCP_CA_Loss`): data the timeout declared lost (or lost again since)
    /// waits here to be re-sent, or a re-sent packet is unresolved. Windows
    /// grow, no loss cuts them again, and the schedulers give the subflow no
    /// new data (MPTCP v0.96's `mptcp_is_temp_unavailable` with SACK). Data
    /// the connection acknowledged meanwhile (carried by another subflow)
    /// leaves the queue unsent, so the state cannot outlast what is owed.
    pub fn in_loss(&self) -> bool {
        self.loss_end.is_some_and(|end| self.base_pn < end || !self.retransmit.is_empty())
    }
    /// Forgets a loss state that is over, so that a later loss found by
    /// acknowledgements opens fast recovery.
    fn settle_loss(&mut self) {
        if !self.in_loss() {
            self.loss_end = None;
        }
    }
    /// Takes the first `n` entries of the retransmission queue, which the
    /// caller sends at once as one packet: in the loss state, that packet
    /// (the next packet number) must be resolved before the state ends.
    pub fn take_retransmission(&mut self, n: usize) {
        if self.in_loss() {
            self.loss_end = Some(self.next_pn + 1);
        }
        self.retransmit.drain(..n);
        self.counters.retransmissions += 1;
    }
    /// Splits the first entry of the retransmission queue, whose part
    /// still unacknowledged is `len` bytes at `dsn`, into `mss`-sized
    /// pieces' first and the rest: it was sent before the subflow's MSS fell.
    pub fn split_retransmission(&mut self, dsn: u64, len: u32, mss: u32) {
        debug_assert!(mss > 0 && len > mss);
        self.retransmit[0] = (dsn, mss);
        self.retransmit.insert(1, (dsn + u64::from(mss), len - mss));
    }
    /// Whether packet `pn` is still in flight (neither acknowledged nor
    /// declared lost).
    pub fn in_flight(&self, pn: u64) -> bool {
        let i = pn.checked_sub(self.base_pn).and_then(|i| usize::try_from(i).ok());
        i.and_then(|i| self.sent.get(i)).is_some_and(|p| p.state == State::InFlight)
    }
    /// Retransmission timeouts with data in flight since data was last
    /// acknowledged on this subflow (zero-length probes acknowledged
    /// meanwhile do not count as data).
    pub fn data_timeouts(&self) -> u32 {
        self.data_timeouts
    }
    /// The highest packet number acknowledged so far.
    pub fn largest_acked(&self) -> Option<u64> {
        self.largest_acked
    }
    pub fn rto_deadline(&self) -> Option<Instant> {
        self.rto_deadline
    }

    /// Current RTO including exponential backoff.
    pub fn rto(&self, min_rto: Duration, initial: Duration, max: Duration) -> Duration {
        self.rtt.rto(min_rto, initial).saturating_mul(1 << self.rto_backoff.min(20)).min(max)
    }

    /// Records a transmission and returns its packet number.
    /// How long the subflow has sent nothing, if it sent data before and
    /// has none outstanding now (Linux's `!packets_out`): what a restart
    /// after idleness measures.
    pub fn idle_at(&self, now: Instant) -> Option<Duration> {
        let outstanding = self.bytes_in_flight > 0 || !self.retransmit.is_empty();
        self.last_data_sent.filter(|_| !outstanding).map(|t| now.saturating_since(t))
    }

    /// The number the next packet sent here takes.
    pub(crate) fn next_pn(&self) -> u64 {
        self.next_pn
    }

    pub fn on_sent(&mut self, now: Instant, dsn: u64, len: u32, rto: Duration) -> u64 {
        if len > 0 {
            self.last_data_sent = Some(now);
        }
        let pn = self.next_pn;
        self.next_pn += 1;
        if self.bytes_in_flight == 0 {
            // A new flight: the sampling interval restarts now (draft §3.2).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        self.sent.push_back(Sent {
            dsn,
            len,
            time: now,
            state: State::InFlight,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until != 0,
        });
        self.bytes_in_flight += u64::from(len);
        self.packets_in_flight += u64::from(len > 0);
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += u64::from(len);
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + rto);
        }
        if len > 0 && self.rack.is_some() {
            self.arm_loss_probe(now);
        }
        pn
    }

    /// Applies an acknowledgement. Newly lost data goes to `retransmit`.
    pub fn on_ack(
        &mut self,
        now: Instant,
        ack: &AckFrame,
        dupthresh: u64,
        rto: impl Fn(&Self) -> Duration,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        self.settle_loss();
        // The newest packet a timeout declared lost that this ACK shows
        // arrived: it gives the RTT sample if nothing newer does.
        let mut late: Option<Declared> = None;
        if self.timed_out.is_some() {
            (out.spurious_timeout, late) = self.timeout_was_spurious(ack);
        }
        // The most recently sent packet this ACK newly covers, copied before
        // the scoreboard drops it: it gives the RTT and rate samples.
        let mut newest: Option<(u64, Sent)> = None;
        let cum = ack.cumulative.min(self.next_pn);
        let reordered = self.rack.is_some() && self.shows_reordering(ack, cum);
        for pn in self.base_pn..cum {
            self.mark_acked(pn, &mut out, &mut newest);
        }
        for &(s, e) in ack.sack_blocks() {
            for pn in s.max(cum).max(self.base_pn)..e.min(self.next_pn) {
                self.mark_acked(pn, &mut out, &mut newest);
            }
        }
        if self.rack.is_some() {
            self.on_acked_rack(now, newest.map(|(pn, p)| (pn, p.time)), reordered, &mut out);
        }
        // Acknowledged while still a probe (not declared lost first).
        if let Some(MtuProbe::InFlight(pn)) = self.mtu_probe {
            if self.state_of(pn) == Some(State::Acked) {
                self.mtu_probe = Some(MtuProbe::Delivered);
            }
        }
        self.pop_resolved();
        // Packet numbers are never re-used, so any newly acknowledged one
        // was sent once, at the time recorded: no Karn rule is needed.
        let sampled =
            newest.map(|(pn, p)| (pn, p.time)).into_iter().chain(late.map(|d| (d.pn, d.sent))).max_by_key(|s| s.0);
        if let Some((pn, sent)) = sampled.filter(|&(pn, _)| self.largest_acked.is_none_or(|l| pn > l)) {
            self.largest_acked = Some(pn);
            out.rtt = Some(now - sent);
        }
        if let Some((_, p)) = newest {
            out.prior_delivered = Some(p.delivered);
            out.rate = self.rate_sample(now, &p);
            if let Some(r) = out.rate {
                self.last_delivery_rate = r.delivery_rate;
            }
        }
        if let Some(r) = out.rtt {
            self.rtt.on_sample(r);
        }
        if self.rack.is_some() {
            self.detect_losses_rack(now, dupthresh, &mut out);
        } else {
            self.detect_losses(dupthresh, &mut out);
        }
        // RFC 6582: recovery ends once everything sent before it is resolved
        // (acknowledged or declared lost), not when a retransmission is acknowledged.
        if self.recovery_end.is_some_and(|end| self.base_pn >= end) {
            self.recovery_end = None;
        }
        if out.spurious_timeout {
            // Linux's undo leaves the loss state (`tcp_try_undo_loss`).
            self.loss_end = None;
        }
        self.settle_loss();
        // New data acknowledged, or a timeout shown spurious (whose late
        // acknowledgement covers only packets the timeout dropped from the
        // scoreboard): the timeout series ends, as Linux's undo ends it
        // (`icsk_retransmits = 0`), so the next timeout cuts again.
        if out.packets_acked > 0 || out.spurious_timeout {
            self.rto_backoff = 0;
            if out.bytes_acked > 0 || out.spurious_timeout {
                self.data_timeouts = 0;
            }
            if self.state == Lifecycle::PotentiallyFailed {
                self.state = Lifecycle::Established;
            }
            self.probe_pending = false;
            // RFC 6298 (5.2, 5.3): stop or restart the timer. Anything still
            // out keeps it running, a zero-length probe too (a join's
            // confirmation, a FIN): its loss must be noticed. The scoreboard
            // starts at its oldest packet in flight (`pop_resolved`), so it
            // is empty exactly when nothing is.
            self.rto_deadline = (!self.sent.is_empty()).then(|| now + rto(self));
            if self.rack.is_some() {
                self.arm_loss_probe(now);
            }
        }
        // Parked data waits for acknowledgements of what is in flight; with
        // nothing in flight, none will come.
        if self.bytes_in_flight == 0 && self.timed_out.as_ref().is_some_and(|t| !t.parked.is_empty()) {
            self.settle_timeout();
        }
        out
    }

    /// Whether `ack` shows the last timeout spurious: it acknowledges a
    /// packet the timeout declared lost, so that packet had arrived, late or
    /// its acknowledgements lost. Packet numbers are never re-used, so an
    /// acknowledgement of one is proof of the original, as TCP's is only
    /// for data never retransmitted: this is Linux's F-RTO rule with SACK
    /// ("never retransmitted data are (s)acked", RFC 5682 section 3.1 step
    /// 3b, which undoes in `tcp_process_loss`), both halves of it: a late
    /// acknowledgement (Eifel's case, RFC 3522), and a cumulative one beyond
    /// the retransmission after every acknowledgement of a window was lost.
    /// It holds because `pn_floor` stays below the declared-lost packets
    /// while detection lasts, so the receiver's cumulative point passes them
    /// only if they arrived. Detection ends with the first acknowledgement of
    /// a packet sent after the timeout: the floor may then rise.
    ///
    /// Data of a packet shown to have arrived leaves the retransmission
    /// queue, whether the timeout is undone on this acknowledgement or was
    /// on an earlier one. At the undo, the data of the other declared-lost
    /// packets not re-sent yet is parked: off the queue, so a restored
    /// window does not send it all again while its acknowledgements may be
    /// on their way, as Linux's undo clears the lost marks
    /// (`tcp_undo_cwnd_reduction` with `unmark_loss`). What no
    /// acknowledgement has shown arrived by the end of detection goes back
    /// on the queue (Linux lets SACK find such packets lost again).
    fn timeout_was_spurious(&mut self, ack: &AckFrame) -> (bool, Option<Declared>) {
        let Some(t) = self.timed_out.as_deref_mut() else { return (false, None) };
        let acked = |pn: u64| ack.cumulative > pn || ack.sack_blocks().iter().any(|&(s, e)| s <= pn && pn < e);
        // A zero-length probe that arrived proves it as well as data does.
        let (mut arrived, mut newest): (Vec<(u64, u32)>, Option<Declared>) = (Vec::new(), None);
        t.lost.retain(|&d| {
            let gone = acked(d.pn);
            if gone {
                newest = Some(d);
                if d.len > 0 {
                    arrived.push((d.dsn, d.len));
                }
            }
            !gone
        });
        let spurious = newest.is_some() && !t.undone;
        t.undone |= spurious;
        if !arrived.is_empty() {
            arrived.sort_unstable();
            self.retransmit.retain(|r| arrived.binary_search(r).is_err());
            t.parked.retain(|r| arrived.binary_search(r).is_err());
        }
        if spurious {
            let mut waiting: Vec<(u64, u32)> = t.lost.iter().filter(|d| d.len > 0).map(|d| (d.dsn, d.len)).collect();
            waiting.sort_unstable();
            let retransmit = &mut self.retransmit;
            retransmit.retain(|r| match waiting.binary_search(r) {
                Ok(_) => {
                    t.parked.push(*r);
                    false
                }
                Err(_) => true,
            });
        }
        let reach = ack.sack_blocks().iter().fold(ack.cumulative, |r, &(_, e)| r.max(e));
        if reach > t.after || t.lost.is_empty() {
            self.settle_timeout();
        }
        self.counters.spurious_rtos += u64::from(spurious);
        (spurious, newest)
    }

    /// Detection of the last timeout ends: what it parked goes back on the
    /// retransmission queue, first.
    fn settle_timeout(&mut self) {
        if let Some(t) = self.timed_out.take() {
            for &r in t.parked.iter().rev() {
                self.retransmit.push_front(r);
            }
        }
    }

    fn mark_acked(&mut self, pn: u64, out: &mut AckOutcome, newest: &mut Option<(u64, Sent)>) {
        let Some(i) = pn.checked_sub(self.base_pn) else { return };
        let Some(p) = self.sent.get_mut(i as usize) else { return };
        match p.state {
            State::InFlight => {
                self.bytes_in_flight -= u64::from(p.len);
                self.packets_in_flight -= u64::from(p.len > 0);
                out.bytes_acked += u64::from(p.len);
            }
            // Declared lost too early: the retransmission is already queued.
            State::Lost => {}
            State::Acked => return,
        }
        p.state = State::Acked;
        self.delivered += u64::from(p.len);
        out.packets_acked += 1;
        if newest.is_none_or(|(n, _)| pn > n) {
            *newest = Some((pn, *p));
        }
    }

    /// Delivery rate over the interval since `p` was sent (draft §3.3):
    /// delivered bytes over the longer of the send and ACK intervals, which
    /// guards against ACK compression. Intervals shorter than the minimum
    /// RTT are discarded as the draft requires.
    fn rate_sample(&mut self, now: Instant, p: &Sent) -> Option<RateSample> {
        self.delivered_time = now;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let send_elapsed = p.time.saturating_since(p.first_sent_time);
        let ack_elapsed = now.saturating_since(p.delivered_time);
        self.first_sent_time = p.time;
        let interval = send_elapsed.max(ack_elapsed);
        if interval == Duration::ZERO || self.rtt.min_rtt().is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivery_rate: (self.delivered - p.delivered) as f64 / interval.as_secs_f64(),
            prior_delivered: p.delivered,
            is_app_limited: p.app_limited,
        })
    }

    /// Marks packets `dupthresh` or more below the largest acknowledged as
    /// lost, counting the data packets in `out`, and says there whether
    /// that opens a new recovery episode.
    fn detect_losses(&mut self, dupthresh: u64, out: &mut AckOutcome) {
        let Some(largest) = self.largest_acked else { return };
        let Some(limit) = (largest + 1).checked_sub(dupthresh) else { return };
        for pn in self.loss_scan_pn.max(self.base_pn)..limit {
            if self.sent[(pn - self.base_pn) as usize].state == State::InFlight {
                self.declare_lost(pn, out);
            }
        }
        self.loss_scan_pn = self.loss_scan_pn.max(limit);
        self.pop_resolved();
    }

    /// RACK (see [`crate::rack`]): a packet sent before the latest one
    /// delivered is lost once that one's RTT plus the reordering window has
    /// passed since it was sent; the reordering timer waits for the last of
    /// the others.
    fn detect_losses_rack(&mut self, now: Instant, dupthresh: u64, out: &mut AckOutcome) {
        let Some(r) = self.rack.as_deref() else { return };
        let Some(latest) = r.latest else { return };
        let recovering = self.recovery_end.is_some() || self.in_loss();
        let (min_rtt, srtt) = (self.rtt.min_rtt(), self.rtt.srtt());
        let sacked = self.sacked_up_to(dupthresh, latest.pn);
        let window = rack::reorder_window(r.reordering_seen, recovering, sacked, dupthresh, min_rtt, srtt);
        let mut wait: Option<Instant> = None;
        for pn in self.base_pn..latest.pn {
            let p = &self.sent[(pn - self.base_pn) as usize];
            if p.state != State::InFlight {
                continue;
            }
            let due = p.time + latest.rtt + window;
            if due <= now {
                self.declare_lost(pn, out);
            } else {
                wait = Some(wait.map_or(due, |w| w.max(due)));
            }
        }
        if let Some(r) = self.rack.as_deref_mut() {
            r.reorder_deadline = wait.map(|w| w + rack::TIMEOUT_MIN);
        }
        self.pop_resolved();
    }

    /// Packet `pn`, in flight, is lost: its data waits to be re-sent here,
    /// and a loss of a packet sent since the current recovery episode began
    /// opens a new one (not in the loss state after a timeout, nor for a
    /// path-MTU probe). The new episode makes the cut an outstanding tail
    /// loss probe's repair would have made (Linux's clears `tlp_high_seq`).
    fn declare_lost(&mut self, pn: u64, out: &mut AckOutcome) {
        let p = &mut self.sent[(pn - self.base_pn) as usize];
        p.state = State::Lost;
        self.bytes_in_flight -= u64::from(p.len);
        self.packets_in_flight -= u64::from(p.len > 0);
        self.counters.packets_lost += 1;
        if p.len > 0 {
            self.retransmit.push_back((p.dsn, p.len));
            out.packets_lost += 1;
        }
        if self.mtu_probe == Some(MtuProbe::InFlight(pn)) {
            self.mtu_probe = Some(MtuProbe::Lost);
        } else if self.loss_end.is_none() && self.recovery_end.is_none_or(|end| pn >= end) {
            self.recovery_end = Some(self.next_pn);
            out.congestion_event = true;
            if let Some(p) = self.rack.as_deref_mut().and_then(|r| r.outstanding.as_mut()) {
                p.cuts = false;
            }
        }
    }

    /// RACK-TLP's part of an acknowledgement, before the scoreboard drops
    /// what it resolved: whether it showed reordering, the latest packet
    /// delivered (number, send time), and the probe's answer.
    #[inline(never)]
    fn on_acked_rack(&mut self, now: Instant, newest: Option<(u64, Instant)>, reordered: bool, out: &mut AckOutcome) {
        if let Some(r) = self.rack.as_deref_mut() {
            r.reordering_seen |= reordered;
            if let Some((pn, sent)) = newest {
                r.advance(pn, sent, now);
            }
        }
        self.settle_loss_probe(out);
    }

    /// TLP's answer (see [`crate::rack`]): once the probe or the packet it
    /// copies is acknowledged, the other leaves the flight uncounted. The
    /// copy alone: the probe repaired a tail loss, which cuts the window
    /// once (Linux's `TCP_CA_CWR`, no recovery episode) unless a cut is
    /// under way.
    fn settle_loss_probe(&mut self, out: &mut AckOutcome) {
        let Some(p) = self.rack.as_deref().and_then(|r| r.outstanding) else { return };
        let (probe, original) = (self.state_of(p.pn), self.state_of(p.original));
        let acked = |state: Option<State>| state == Some(State::Acked);
        if !acked(original) && acked(probe) && self.mtu_probe == Some(MtuProbe::InFlight(p.original)) {
            // The copy, cut to the MSS, arrived and the path-MTU probe it
            // copies did not: too large, not congestion; all of the
            // probe's data goes again.
            self.declare_lost(p.original, out);
        } else if acked(probe) || acked(original) {
            self.resolve_copy(if acked(original) { p.pn } else { p.original }, p.data);
            if !acked(original) && p.cuts && self.recovery_end.is_none() && !self.in_loss() {
                out.congestion_event = true;
            }
        } else if probe == Some(State::InFlight) || original == Some(State::InFlight) {
            return;
        }
        // Answered, or both lost: the next tail may be probed.
        if let Some(r) = self.rack.as_deref_mut() {
            r.outstanding = None;
        }
    }

    /// Whether `ack` (cumulative to `cum`) covers a packet still in flight
    /// below the largest acknowledged so far: the path reorders.
    fn shows_reordering(&self, ack: &AckFrame, cum: u64) -> bool {
        let Some(largest) = self.largest_acked else { return false };
        let in_flight = |pn: u64| self.state_of(pn) == Some(State::InFlight);
        let covers_one = |s: u64, e: u64| (s.max(self.base_pn)..e.min(largest)).any(in_flight);
        covers_one(self.base_pn, cum) || ack.sack_blocks().iter().any(|&(s, e)| covers_one(s, e))
    }

    /// Selectively acknowledged packets (acknowledged above one in flight),
    /// counted up to `limit`: none lies beyond the latest delivered, `last`.
    fn sacked_up_to(&self, limit: u64, last: u64) -> u64 {
        let board = self.sent.iter().take((last + 1).saturating_sub(self.base_pn) as usize);
        board.filter(|p| p.state == State::Acked).take(limit as usize).count() as u64
    }

    fn state_of(&self, pn: u64) -> Option<State> {
        let p = self.sent.get(pn.checked_sub(self.base_pn)? as usize)?;
        Some(p.state)
    }

    /// Packet `pn`, which carried `data`, had its copy delivered: in
    /// flight, it leaves the flight as acknowledged without counting as
    /// delivered; declared lost, its data is not re-sent.
    fn resolve_copy(&mut self, pn: u64, data: (u64, u32)) {
        let p = pn.checked_sub(self.base_pn).and_then(|i| self.sent.get_mut(i as usize));
        match p {
            Some(p) if p.state == State::InFlight => {
                p.state = State::Acked;
                self.bytes_in_flight -= u64::from(p.len);
                self.packets_in_flight -= u64::from(p.len > 0);
            }
            Some(p) if p.state == State::Acked => {}
            _ => {
                if let Some(i) = self.retransmit.iter().position(|&r| r == data) {
                    self.retransmit.remove(i);
                }
            }
        }
    }

    /// Hands `len` bytes at `dsn` to this subflow, to be sent when its
    /// window has room ([`Subflow::queued`]). The queue stays in stream
    /// order: new data joins the tail, and data re-sent from elsewhere goes
    /// ahead of anything later, so what the peer's window takes first is
    /// never held behind what it cannot take yet.
    pub fn queue(&mut self, dsn: u64, len: u32) {
        let at = match self.queued.back() {
            Some(&(last, _)) if last > dsn => self.queued.iter().position(|&(d, _)| d > dsn).unwrap_or(0),
            _ => self.queued.len(),
        };
        self.queued.insert(at, (dsn, len));
        self.queued_bytes += u64::from(len);
    }

    /// The oldest range handed to this subflow and not sent yet.
    pub fn next_queued(&self) -> Option<(u64, u32)> {
        self.queued.front().copied()
    }

    /// Removes the oldest queued range (sent, or no longer needed);
    /// `rest` puts back what remains of it to send later.
    pub fn pop_queued(&mut self, rest: Option<(u64, u32)>) {
        if let Some((_, len)) = self.queued.pop_front() {
            self.queued_bytes -= u64::from(len);
        }
        if let Some((dsn, len)) = rest {
            self.queued.push_front((dsn, len));
            self.queued_bytes += u64::from(len);
        }
    }

    /// Bytes handed to this subflow and not sent yet.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// Empties the queue of data not sent yet (to send it elsewhere).
    pub fn take_queued(&mut self) -> Vec<(u64, u32)> {
        self.queued_bytes = 0;
        self.queued.drain(..).collect()
    }

    /// Drops acknowledged or lost packets from the front of the scoreboard.
    fn pop_resolved(&mut self) {
        while self.sent.front().is_some_and(|p| p.state != State::InFlight) {
            self.sent.pop_front();
            self.base_pn += 1;
        }
    }

    /// True if stream byte `dsn` is in flight here or waits here to be
    /// retransmitted (the subflow holds it, as Linux's `path_mask` says).
    pub fn carries(&self, dsn: u64) -> bool {
        let covers = |d: u64, len: u32| d <= dsn && dsn < d + u64::from(len);
        self.sent.iter().any(|p| p.state == State::InFlight && covers(p.dsn, p.len))
            || self.retransmit.iter().any(|&(d, len)| covers(d, len))
            || self.queued.iter().any(|&(d, len)| covers(d, len))
            || self.timed_out.as_ref().is_some_and(|t| t.parked.iter().any(|&(d, len)| covers(d, len)))
    }

    /// Lowest packet number still in flight: every packet below it is
    /// acknowledged or declared lost, so the receiver need not wait for it.
    /// Except the packets a timeout declared lost, while an acknowledgement
    /// may still show them arrived (`timeout_was_spurious`): until one
    /// reaches a packet sent after the timeout, or all are accounted for.
    pub fn pn_floor(&self) -> u64 {
        match &self.timed_out {
            Some(t) => t.lost.first().map_or(self.base_pn, |d| d.pn.min(self.base_pn)),
            None => self.base_pn,
        }
    }

    /// Whether one packet in flight here carries all of `len` bytes from `dsn`.
    pub fn carries_in_flight(&self, dsn: u64, len: u32) -> bool {
        let end = dsn + u64::from(len);
        self.sent.iter().any(|p| p.state == State::InFlight && p.dsn <= dsn && end <= p.dsn + u64::from(p.len))
    }

    /// Can carry data: joined and not suspected dead.
    pub fn usable(&self) -> bool {
        self.state == Lifecycle::Established
    }

    /// A server's placeholder for a subflow the client has not opened.
    pub fn vacant(mss: u32) -> Self {
        let mut s = Subflow::new(mss, false);
        s.state = Lifecycle::Vacant;
        s
    }

    /// Opened and not closed.
    pub fn is_open(&self) -> bool {
        !matches!(self.state, Lifecycle::Closed | Lifecycle::Vacant)
    }

    /// The peer has answered (it may be suspected dead since).
    pub fn is_established(&self) -> bool {
        matches!(self.state, Lifecycle::Established | Lifecycle::PotentiallyFailed)
    }

    /// Its join or its data timed out since the last acknowledgement.
    pub fn potentially_failed(&self) -> bool {
        matches!(self.state, Lifecycle::JoinTimedOut | Lifecycle::PotentiallyFailed)
    }

    /// The peer answered on this subflow: its join is done.
    pub fn on_established(&mut self) {
        if matches!(self.state, Lifecycle::Joining | Lifecycle::JoinTimedOut) {
            self.state = Lifecycle::Established;
        }
    }

    /// The retransmission timer fired: everything in flight is lost and
    /// queued for retransmission here. Returns whether the path is now
    /// suspect: not when only a zero-length probe was out on a working
    /// subflow (a zero-window probe, or a join's confirmation), whose loss
    /// says nothing about the path; the caller re-sends what it carried.
    pub fn on_rto(&mut self, now: Instant, rto: impl Fn(&Self) -> Duration) -> bool {
        if self.timed_out.as_ref().is_some_and(|t| t.undone) {
            self.settle_timeout();
        }
        let lone_probe = self.usable() && self.bytes_in_flight == 0 && self.retransmit.is_empty();
        self.counters.rtos += 1;
        self.data_timeouts += u32::from(self.bytes_in_flight > 0);
        // The timeout that cuts the window (the connection calls the
        // controller for the first of a series, with data in flight)
        // remembers the packets it declares lost.
        let cuts = self.bytes_in_flight > 0 && self.first_timeout();
        let mut lost: Vec<Declared> = Vec::new();
        // An outstanding tail loss probe copies a packet whose data is
        // declared lost here or queued already: not queued twice, and its
        // late acknowledgement does not show the timeout spurious (Linux's
        // probe re-sends the segment itself, and its undo asks for data
        // never re-sent).
        let probe = self.rack.as_deref().and_then(|r| r.outstanding).map(|p| p.pn);
        for (pn, p) in (self.base_pn..).zip(self.sent.iter_mut()).filter(|(_, p)| p.state == State::InFlight) {
            p.state = State::Lost;
            self.counters.packets_lost += 1;
            if Some(pn) == probe {
                continue;
            }
            if p.len > 0 {
                self.retransmit.push_back((p.dsn, p.len));
            }
            if cuts {
                lost.push(Declared { pn, dsn: p.dsn, len: p.len, sent: p.time });
            }
        }
        if cuts {
            self.timed_out = Some(Box::new(TimedOut { lost, after: self.next_pn, undone: false, parked: Vec::new() }));
        }
        // Linux re-sends from the head of its queue at every timeout. Lost
        // data joins the queue in the order it was found lost, so the one
        // segment a backed-off timeout re-sends, lost again, would go behind
        // the rest and each timeout would send the next segment in turn.
        // (By data sequence number: data reinjected here, sent later than
        // higher numbers, goes first, the connection's oldest.)
        self.retransmit.make_contiguous().sort_by_key(|&(dsn, _)| dsn);
        self.bytes_in_flight = 0;
        self.packets_in_flight = 0;
        self.loss_scan_pn = self.next_pn;
        self.pop_resolved();
        // Fast recovery gives way to the loss state.
        self.recovery_end = None;
        self.stop_loss_timers();
        if !lone_probe {
            self.loss_end = Some(self.next_pn);
            self.state = match self.state {
                Lifecycle::Joining => Lifecycle::JoinTimedOut,
                Lifecycle::Established => Lifecycle::PotentiallyFailed,
                other => other,
            };
        }
        self.rto_backoff += 1;
        // Keep the timer running so a failed path keeps being probed.
        self.rto_deadline = Some(now + rto(self));
        !lone_probe
    }

    /// Stops waiting for the zero-length probes in flight, which a copy sent
    /// now supersedes (a join re-sent at once): an acknowledgement of them
    /// no longer matters, and their timeout would only send another.
    pub fn supersede_probes(&mut self) {
        for p in self.sent.iter_mut().filter(|p| p.state == State::InFlight && p.len == 0) {
            p.state = State::Lost;
        }
        self.pop_resolved();
        if self.sent.is_empty() {
            self.rto_deadline = None;
        }
    }

    /// True until the first retransmission timeout of a series (the backoff
    /// resets when new data is acknowledged).
    pub fn first_timeout(&self) -> bool {
        self.rto_backoff == 0
    }

    /// Closes the subflow: everything unacknowledged is lost to it.
    /// Returns the ranges to send elsewhere.
    pub fn close(&mut self) -> Vec<(u64, u32)> {
        self.settle_timeout();
        self.state = Lifecycle::Closed;
        let mut ranges: Vec<(u64, u32)> = self.retransmit.drain(..).collect();
        ranges.extend(self.take_queued());
        for p in self.sent.iter_mut().filter(|p| p.state == State::InFlight) {
            p.state = State::Lost;
            if p.len > 0 {
                ranges.push((p.dsn, p.len));
            }
        }
        self.bytes_in_flight = 0;
        self.packets_in_flight = 0;
        self.rto_deadline = None;
        self.probe_pending = false;
        self.stop_loss_timers();
        ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::MAX_SACK_BLOCKS;

    fn ack(cumulative: u64, sack: &[(u64, u64)]) -> AckFrame {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        blocks[..sack.len()].copy_from_slice(sack);
        AckFrame { cumulative, sack: blocks, sack_len: sack.len() as u8, data_ack: 0, window_end: 0 }
    }

    fn ms(v: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(v)
    }

    const RTO: Duration = Duration::from_secs(1);

    /// An established subflow with four 1000-byte packets in flight, packet
    /// `k` carrying stream bytes from `k * 1000`, sent at `k * gap_ms`.
    fn four_in_flight(gap_ms: u64) -> Subflow {
        let mut s = Subflow::new(1000, false);
        s.on_established();
        for k in 0..4 {
            s.on_sent(ms(k * gap_ms), k * 1000, 1000, RTO);
        }
        s
    }

    /// A subflow with RACK-TLP and an SRTT of 20 ms (packet 0, sent at 0,
    /// acknowledged at 20 ms), then `n` 1000-byte packets sent 1 ms apart
    /// from 100 ms: packet `k` (1 to `n`) carries stream bytes from `k * 1000`.
    fn rack_subflow(n: u64) -> Subflow {
        let mut s = Subflow::new(1000, false);
        s.enable_rack_tlp();
        s.on_established();
        s.on_sent(ms(0), 0, 1000, RTO);
        s.on_ack(ms(20), &ack(1, &[]), 3, |_| RTO);
        for k in 1..=n {
            s.on_sent(ms(99 + k), k * 1000, 1000, RTO);
        }
        s
    }

    fn us(v: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(v)
    }

    /// By hand: packet 3 (sent at 102 ms) is acknowledged at 125 ms, an RTT
    /// of 23 ms; the minimum RTT is 20 ms, so the reordering window is 5 ms.
    /// Packets 1 and 2 are lost at 128 and 129 ms: the timer waits for the
    /// later, plus 2 ms. Counting packets, one acknowledged above them is
    /// not enough.
    #[test]
    fn rack_waits_the_next_packets_rtt_and_a_quarter_of_the_minimum_rtt() {
        let mut s = rack_subflow(4);
        let out = s.on_ack(ms(125), &ack(1, &[(3, 4)]), 3, |_| RTO);
        assert!(!out.congestion_event);
        assert_eq!(s.loss_timer(), Some(ms(131)), "no probe: a packet is selectively acknowledged");
        assert!(!s.on_loss_timer(ms(130), 3, RTO).congestion_event, "not due");
        let out = s.on_loss_timer(ms(131), 3, RTO);
        assert!(out.congestion_event && s.in_recovery());
        assert_eq!((out.packets_lost, s.retransmit.iter().map(|r| r.0).collect::<Vec<_>>()), (2, vec![1000, 2000]));
        assert_eq!(s.loss_timer(), None);
        let mut counting = rack_subflow(4);
        counting.rack = None;
        assert!(!counting.on_ack(ms(125), &ack(1, &[(3, 4)]), 3, |_| RTO).congestion_event);
        assert_eq!(counting.loss_timer(), None, "counting packets: the retransmission timer is left");
    }

    /// With three packets selectively acknowledged the window closes: the
    /// packet sent before them is lost at once, as soon as the latest
    /// one's RTT has passed since it was sent. Unless reordering was seen:
    /// then the window stays open.
    #[test]
    fn rack_loses_at_once_with_three_acknowledged_unless_the_path_reorders() {
        let mut s = rack_subflow(5);
        let out = s.on_ack(ms(125), &ack(1, &[(2, 5)]), 3, |_| RTO);
        assert!(out.congestion_event);
        assert_eq!(s.retransmit.iter().map(|r| r.0).collect::<Vec<_>>(), [1000]);
        let mut s = rack_subflow(5);
        let reordering_seen = |s: &Subflow| s.rack.as_ref().is_some_and(|r| r.reordering_seen);
        s.on_ack(ms(125), &ack(1, &[(3, 4)]), 3, |_| RTO);
        assert!(!reordering_seen(&s));
        s.on_ack(ms(126), &ack(1, &[(2, 4)]), 3, |_| RTO);
        assert!(reordering_seen(&s), "packet 2 after packet 3");
        // Packets 2 to 5 acknowledged; the latest (5, sent at 104 ms) took
        // 23 ms: packet 1 is due at 100 + 23 + 5 = 128 ms.
        let out = s.on_ack(ms(127), &ack(1, &[(2, 6)]), 3, |_| RTO);
        assert!(!out.congestion_event, "the window stays open");
        assert_eq!(s.loss_timer(), Some(ms(130)));
        assert!(s.on_loss_timer(ms(130), 3, RTO).congestion_event);
    }

    /// By hand: three packets sent from 100 ms with an SRTT of 20 ms arm
    /// the probe for 2 x 20 + 2 ms after the last; packet 1's
    /// acknowledgement at 121 ms (SRTT 20.125 ms) moves it to 163.25 ms.
    /// There the last packet is due to be copied, and the retransmission
    /// timer restarts. A lone packet waits 200 ms more, and the probe never
    /// waits past the retransmission timer.
    /// Data queued from elsewhere goes ahead of later data: the queue stays
    /// in stream order.
    #[test]
    fn the_queue_of_data_to_send_stays_in_stream_order() {
        let mut s = Subflow::new(1000, false);
        for dsn in [5000, 6000, 1000, 7000, 5500] {
            s.queue(dsn, 100);
        }
        let order: Vec<u64> =
            std::iter::from_fn(|| s.next_queued().inspect(|_| s.pop_queued(None))).map(|q| q.0).collect();
        assert_eq!(order, [1000, 5000, 5500, 6000, 7000]);
        assert_eq!(s.queued_bytes(), 0);
    }

    #[test]
    fn the_probe_timer_runs_two_srtts_after_the_last_send_or_acknowledgement() {
        let mut s = rack_subflow(3);
        assert_eq!(s.loss_timer(), Some(ms(144)));
        s.on_ack(ms(121), &ack(2, &[]), 3, |_| RTO);
        assert_eq!(s.loss_timer(), Some(us(163_250)));
        assert!(!s.on_loss_timer(us(163_249), 3, RTO).congestion_event);
        assert_eq!(s.loss_probe(), None);
        s.on_loss_timer(us(163_250), 3, RTO);
        assert_eq!(s.loss_probe(), Some((3000, 1000)), "a copy of packet 3");
        assert_eq!(s.rto_deadline(), Some(us(163_250) + RTO));
        let lone = rack_subflow(1);
        assert_eq!(lone.loss_timer(), Some(ms(340)), "100 + 40 + 200 ms");
        let mut capped = rack_subflow(0);
        capped.on_sent(ms(100), 1000, 1000, Duration::from_millis(150));
        assert_eq!(capped.loss_timer(), Some(ms(250)), "the retransmission timer's deadline");
    }

    /// [`rack_subflow`] of three packets, those through `acked_through - 1`
    /// acknowledged at 121 ms, and the probe of the last sent at 170 ms
    /// (packet 4).
    fn probed(acked_through: u64) -> Subflow {
        let mut s = rack_subflow(3);
        s.on_ack(ms(121), &ack(acked_through, &[]), 3, |_| RTO);
        let due = s.loss_timer().expect("the probe timer");
        s.on_loss_timer(due, 3, RTO);
        send_probe(&mut s, ms(170));
        assert_eq!(s.bytes_in_flight(), 1000 * (5 - acked_through), "the probe counts in flight");
        s
    }

    /// The stream offsets waiting in the retransmission queue.
    fn queued(s: &Subflow) -> Vec<u64> {
        s.retransmit.iter().map(|r| r.0).collect()
    }

    /// Sends the due probe of `s` at `at` (packet number `next_pn`).
    fn send_probe(s: &mut Subflow, at: Instant) {
        let (dsn, len) = s.loss_probe().expect("a probe due");
        s.on_sent(at, dsn, len, RTO);
        s.on_loss_probe_sent(at, RTO);
        assert!(!s.loss_probe_pending() && s.loss_timer().is_none(), "one probe at a time");
    }

    /// The probe and the packet it copies are one segment. The copy
    /// acknowledged alone: it repaired the loss, cut once without a
    /// recovery episode, and nothing is re-sent. The original acknowledged:
    /// no loss. Two packets lost at the tail: the probe's acknowledgement
    /// shows the other lost, which alone is re-sent.
    #[test]
    fn the_probe_answers_for_the_packet_it_copies() {
        let mut s = probed(3);
        let out = s.on_ack(ms(191), &ack(3, &[(4, 5)]), 3, |_| RTO);
        assert!(out.congestion_event && !s.in_recovery(), "one cut, no recovery episode");
        assert_eq!((s.bytes_in_flight(), s.retransmit.len(), out.bytes_acked), (0, 0, 1000));
        let mut s = probed(3);
        assert!(!s.on_ack(ms(191), &ack(5, &[]), 3, |_| RTO).congestion_event, "the original arrived");
        assert_eq!(s.bytes_in_flight(), 0);
        let mut s = probed(2);
        let out = s.on_ack(ms(191), &ack(2, &[(4, 5)]), 3, |_| RTO);
        assert!(out.congestion_event);
        assert_eq!(out.packets_lost, 1, "packet 2, sent before the probe");
        assert_eq!(queued(&s), [2000], "packet 3's data arrived in the probe");
        assert_eq!(s.bytes_in_flight(), 0);
    }

    /// The packet a tail loss probe copies is a path-MTU probe (the copy
    /// is cut to the MSS; here both are one segment): the copy acknowledged
    /// alone shows the MTU probe lost, too large rather than congested, so
    /// no cut, and all of its data is queued again. The original
    /// acknowledged: it was delivered.
    #[test]
    fn a_copied_mtu_probe_answered_by_its_copy_alone_is_lost_without_a_cut() {
        let mut s = probed(3);
        s.mtu_probe = Some(MtuProbe::InFlight(3));
        let out = s.on_ack(ms(191), &ack(3, &[(4, 5)]), 3, |_| RTO);
        assert!(!out.congestion_event && !s.in_recovery(), "no cut");
        assert_eq!((s.mtu_probe, queued(&s), s.bytes_in_flight()), (Some(MtuProbe::Lost), vec![3000], 0));
        let mut s = probed(3);
        s.mtu_probe = Some(MtuProbe::InFlight(3));
        s.on_ack(ms(191), &ack(5, &[]), 3, |_| RTO);
        assert_eq!(s.mtu_probe, Some(MtuProbe::Delivered));
    }

    /// A recovery episode begun after the probe went out: the probe still
    /// answers for its packet (declared lost meanwhile, its data is not
    /// re-sent) and makes no second cut. By hand: packets 2 and 3 (sent at
    /// 101 and 102 ms) are lost when packet 5 (sent at 171 ms) is
    /// acknowledged at 192 ms; the probe (packet 4, sent at 170 ms) is
    /// not yet due (170 + 21 + 5 ms) and is acknowledged at 194 ms.
    #[test]
    fn the_probe_answers_for_its_packet_through_a_recovery_begun_since() {
        let mut s = probed(2);
        s.on_sent(ms(171), 4000, 1000, RTO);
        assert!(s.on_ack(ms(192), &ack(2, &[(5, 6)]), 3, |_| RTO).congestion_event);
        assert_eq!(queued(&s), [2000, 3000]);
        assert!(!s.on_ack(ms(194), &ack(2, &[(4, 6)]), 3, |_| RTO).congestion_event, "no second cut");
        assert_eq!(queued(&s), [2000], "packet 3's data arrived in the probe");
        assert_eq!(s.rack.as_ref().and_then(|r| r.outstanding), None, "answered");
    }

    /// A timeout with the probe out: the probe's data, a copy, is not
    /// queued twice, and its late acknowledgement does not undo the
    /// timeout.
    #[test]
    fn a_timeout_with_the_probe_out_queues_its_data_once() {
        let mut s = probed(2);
        assert!(s.on_rto(ms(1170), |_| RTO));
        assert_eq!(queued(&s), [2000, 3000]);
        assert!(!s.on_ack(ms(1180), &ack(2, &[(4, 5)]), 3, |_| RTO).spurious_timeout, "only the probe arrived");
        assert!(s.on_ack(ms(1190), &ack(2, &[(3, 5)]), 3, |_| RTO).spurious_timeout, "packet 3 did");
    }

    /// No probe while a packet is selectively acknowledged, lost or in
    /// recovery, and none after a timeout (until data is acknowledged).
    #[test]
    fn the_probe_timer_runs_only_in_the_open_state() {
        let mut s = rack_subflow(5);
        s.on_ack(ms(125), &ack(1, &[(5, 6)]), 3, |_| RTO);
        assert_eq!(s.rack.as_ref().and_then(|r| r.probe_deadline), None, "packet 5 selectively acknowledged");
        let mut s = rack_subflow(6);
        s.on_ack(ms(125), &ack(1, &[(2, 6)]), 3, |_| RTO);
        assert!(s.in_recovery(), "packet 6 is still out");
        s.on_sent(ms(126), 1000, 1000, RTO);
        assert_eq!(s.loss_timer(), None, "in recovery");
        let mut s = rack_subflow(2);
        assert!(s.on_rto(ms(1100), |_| RTO));
        s.on_sent(ms(1100), 1000, 1000, RTO);
        assert_eq!(s.loss_timer(), None, "in the loss state");
    }

    /// A path whose queue outgrew the timer: the flight times out before its
    /// acknowledgements return. Their late arrival still measures the path
    /// (from the newest packet they cover), so the timer can grow; a packet
    /// sent after the timeout, when acknowledged too, gives the sample.
    #[test]
    fn a_late_ack_of_timed_out_packets_measures_the_rtt() {
        let timed_out = || {
            let mut s = four_in_flight(10);
            assert!(s.on_rto(ms(1000), |_| RTO));
            s.on_sent(ms(1000), 0, 1000, RTO); // the retransmission, packet 4
            s
        };
        let mut s = timed_out();
        let out = s.on_ack(ms(1500), &ack(2, &[]), 3, |_| RTO);
        assert_eq!(out.rtt, Some(Duration::from_millis(1490)), "from packet 1, sent at 10 ms");
        assert_eq!(s.rtt.srtt(), Some(Duration::from_millis(1490)), "the first sample");
        let out = s.on_ack(ms(1520), &ack(4, &[]), 3, |_| RTO);
        assert_eq!(out.rtt, Some(Duration::from_millis(1490)), "packet 3, sent at 30 ms");
        assert_eq!(s.on_ack(ms(1530), &ack(4, &[]), 3, |_| RTO).rtt, None, "nothing new");
        let mut s = timed_out();
        let out = s.on_ack(ms(1600), &ack(1, &[(4, 5), (2, 3)]), 3, |_| RTO);
        assert_eq!(out.rtt, Some(Duration::from_millis(600)), "the retransmission is newer than packet 2");
        assert_eq!(s.on_ack(ms(1700), &ack(5, &[]), 3, |_| RTO).rtt, None, "older than the largest acknowledged");
    }

    /// Four packets, three of them timed out; an ACK of some of those shows
    /// the timeout was spurious (once), whether it is late or comes after
    /// the retransmission. Detection ends with the first ACK of a packet
    /// sent after the timeout, and the floor then rises. An ACK of a packet
    /// acknowledged before the timeout proves nothing.
    #[test]
    fn a_late_ack_of_timed_out_packets_shows_the_timeout_spurious() {
        let timed_out = || {
            let mut s = four_in_flight(1);
            s.on_ack(ms(50), &ack(1, &[]), 3, |_| RTO);
            assert!(s.on_rto(ms(1100), |_| RTO));
            s.on_sent(ms(1100), 1000, 1000, RTO); // the retransmission, packet 4
            s
        };
        let mut s = timed_out();
        assert_eq!(queued(&s), [1000, 2000, 3000], "packets 1-3 queued for retransmission");
        assert!(s.on_ack(ms(1150), &ack(1, &[(2, 3)]), 3, |_| RTO).spurious_timeout, "SACK of packet 2");
        assert_eq!(queued(&s), [] as [u64; 0], "packet 2 arrived; 1 and 3 are parked at the undo");
        assert!(s.carries(1000) && s.carries(3000) && !s.carries(2000), "the subflow still holds what is parked");
        assert!(!s.on_ack(ms(1160), &ack(4, &[]), 3, |_| RTO).spurious_timeout, "only once");
        assert_eq!(queued(&s), [] as [u64; 0], "packets 1 and 3 arrived too");
        assert!(!s.carries(3000), "(1000 is in the retransmission, in flight)");
        assert_eq!(s.counters.spurious_rtos, 1);
        // Detection ends (the retransmission is acknowledged) before
        // packets 1 and 3 are: their data goes back on the queue.
        let mut s = timed_out();
        assert!(s.on_ack(ms(1150), &ack(1, &[(2, 3)]), 3, |_| RTO).spurious_timeout);
        assert!(!s.on_ack(ms(1160), &ack(1, &[(4, 5), (2, 3)]), 3, |_| RTO).spurious_timeout);
        assert_eq!(queued(&s), [1000, 3000], "not shown to have arrived: queued again");
        let mut s = timed_out();
        assert!(s.on_ack(ms(1150), &ack(3, &[]), 3, |_| RTO).spurious_timeout, "cumulative through packet 2");
        assert_eq!((s.state, s.first_timeout()), (Lifecycle::Established, true), "the timeout series ends");
        let mut s = timed_out();
        assert!(s.on_ack(ms(1150), &ack(4, &[]), 3, |_| RTO).spurious_timeout, "cumulative up to the retransmission");
        // Every acknowledgement of the window lost: the one the
        // retransmission draws covers it, as the floor it carried was held.
        let mut s = timed_out();
        assert_eq!((s.pn_floor(), s.base_pn), (1, 4), "the floor stays below the declared-lost packets");
        assert!(s.on_ack(ms(1150), &ack(5, &[]), 3, |_| RTO).spurious_timeout, "cumulative beyond the retransmission");
        assert_eq!(s.pn_floor(), 5, "detection over, the floor rises");
        let mut s = timed_out();
        assert!(!s.on_ack(ms(1150), &ack(1, &[]), 3, |_| RTO).spurious_timeout, "packet 0 was acknowledged before");
        assert!(!s.on_ack(ms(1200), &ack(1, &[(4, 5)]), 3, |_| RTO).spurious_timeout, "only the retransmission");
        assert_eq!(s.pn_floor(), 5, "detection over, the floor rises");
        assert!(!s.on_ack(ms(1210), &ack(5, &[(0, 4)]), 3, |_| RTO).spurious_timeout, "detection has ended");
        assert_eq!(queued(&s), [1000, 2000, 3000], "nothing was shown to have arrived");
        assert_eq!(s.counters.spurious_rtos, 0);
        // Packet 2 was acknowledged (SACK) before the timeout, which then
        // declared 1 and 3 lost: its acknowledgement repeated says nothing.
        let mut s = four_in_flight(1);
        s.on_ack(ms(50), &ack(1, &[(2, 3)]), 3, |_| RTO);
        assert!(s.on_rto(ms(1100), |_| RTO));
        assert!(!s.on_ack(ms(1150), &ack(1, &[(2, 3)]), 3, |_| RTO).spurious_timeout, "packet 2 again");
        assert!(s.on_ack(ms(1160), &ack(1, &[(2, 4)]), 3, |_| RTO).spurious_timeout, "packet 3");
        // Packet 0 was declared lost by three later acknowledgements before
        // the timeout, which took only 6 and 7: packet 0 arriving late
        // says nothing about the timeout.
        let mut s = Subflow::new(1000, false);
        s.on_established();
        for k in 0..8 {
            s.on_sent(ms(k), k * 1000, 1000, RTO);
        }
        assert!(s.on_ack(ms(50), &ack(0, &[(1, 6)]), 3, |_| RTO).congestion_event);
        assert!(s.on_rto(ms(1100), |_| RTO));
        assert!(!s.on_ack(ms(1150), &ack(6, &[]), 3, |_| RTO).spurious_timeout, "packet 0, lost before");
        assert!(s.on_ack(ms(1160), &ack(7, &[]), 3, |_| RTO).spurious_timeout, "packet 6");
    }

    /// Detection ends, and the floor rises, once an acknowledgement has
    /// accounted for every packet the timeout declared lost, even before
    /// one reaches a packet sent after it. A zero-length probe among them
    /// shows the timeout spurious as well as data does.
    #[test]
    fn a_timeout_is_settled_once_its_packets_are_accounted_for() {
        let mut s = Subflow::new(1000, false);
        s.on_established();
        for k in 0..3 {
            s.on_sent(ms(k), k * 1000, 1000, RTO);
        }
        assert!(s.on_rto(ms(1100), |_| RTO));
        s.on_sent(ms(1100), 0, 1000, RTO); // the retransmission, packet 3
        assert_eq!(s.pn_floor(), 0);
        assert!(s.on_ack(ms(1150), &ack(3, &[]), 3, |_| RTO).spurious_timeout);
        assert_eq!(s.pn_floor(), 3, "all three accounted for: the floor rises");
        // Data, then a zero-length probe (a FIN, say), all timed out; only
        // the probe is acknowledged.
        let mut s = Subflow::new(1000, false);
        s.on_established();
        s.on_sent(ms(0), 0, 1000, RTO);
        s.on_sent(ms(1), 1000, 0, RTO);
        assert!(s.on_rto(ms(1100), |_| RTO));
        assert!(s.on_ack(ms(1150), &ack(0, &[(1, 2)]), 3, |_| RTO).spurious_timeout, "the probe arrived");
        assert_eq!(s.retransmit.len(), 1, "the data was not shown to have arrived");
    }

    /// A real receiver (`AckTracker`) behind channels that lose and reorder
    /// packets and acknowledgements both ways, with the record of what was
    /// sent, for the random scripts below.
    struct Channel {
        policy: crate::ack_tracker::AckPolicy,
        rx: AckTracker,
        arrived: std::collections::BTreeSet<u64>,
        /// Packets on their way: (packet number, floor).
        to_rx: Vec<(u64, u64)>,
        acks: Vec<AckFrame>,
        /// Every packet sent: (packet number, dsn, len).
        carried: Vec<(u64, u64, u32)>,
        next_dsn: u64,
    }

    impl Channel {
        fn new(ack_every: u32) -> Self {
            let policy = crate::ack_tracker::AckPolicy {
                every: ack_every,
                max_delay: Duration::from_millis(40),
                quickacks: 0,
                idle: Duration::MAX,
            };
            let (rx, arrived) = (AckTracker::default(), Default::default());
            Channel { policy, rx, arrived, to_rx: Vec::new(), acks: Vec::new(), carried: Vec::new(), next_dsn: 0 }
        }

        /// The next 1000 bytes of new data.
        fn new_data(&mut self) -> (u64, u32) {
            self.next_dsn += 1000;
            (self.next_dsn - 1000, 1000)
        }

        /// The oldest segment `s` has queued to re-send, taken for sending.
        fn take_resend(s: &mut Subflow) -> Option<(u64, u32)> {
            let r = *s.retransmit.front()?;
            s.take_retransmission(1);
            Some(r)
        }

        /// `s` sends `(dsn, len)` at `now`; the network loses it if `lost`.
        fn send(&mut self, s: &mut Subflow, now: Instant, (dsn, len): (u64, u32), lost: bool) {
            let floor = s.pn_floor();
            let pn = s.on_sent(now, dsn, len, RTO);
            self.carried.push((pn, dsn, len));
            if !lost {
                self.to_rx.push((pn, floor));
            }
        }

        /// Packet `pick` (modulo those on their way) arrives.
        fn deliver(&mut self, now: Instant, pick: usize) {
            if !self.to_rx.is_empty() {
                let (pn, floor) = self.to_rx.swap_remove(pick % self.to_rx.len());
                self.arrived.insert(pn);
                self.rx.on_packet(now, pn, floor, &self.policy);
            }
        }

        fn deliver_all(&mut self, now: Instant) {
            while !self.to_rx.is_empty() {
                self.deliver(now, 0);
            }
        }

        /// The receiver's acknowledgement of what it has.
        fn ack_now(&mut self) -> AckFrame {
            let (cumulative, sack, sack_len) = self.rx.take_ack();
            AckFrame { cumulative, sack, sack_len, data_ack: 0, window_end: 0 }
        }

        /// The network's part of script step `v` (2 to 7 modulo 10): packet
        /// `pick` arrives, the receiver acknowledges what it has (unless the
        /// acknowledgement is lost), or acknowledgement `pick` returns, given
        /// back for the sender to take.
        fn network(&mut self, now: Instant, v: u32, pick: usize) -> Option<AckFrame> {
            match v % 10 {
                2 | 3 => self.deliver(now, pick),
                4 | 5 if !pick.is_multiple_of(3) => {
                    let a = self.ack_now();
                    self.acks.push(a);
                }
                6 | 7 if !self.acks.is_empty() => return Some(self.acks.swap_remove(pick % self.acks.len())),
                _ => {}
            }
            None
        }

        /// The network stops losing: from `now`, each millisecond `step`
        /// runs, `s` re-sends what it has queued, everything sent arrives and
        /// its acknowledgement returns, and a timeout fires if nothing moved;
        /// until `s` owes nothing (at most 200 steps).
        fn settle(
            &mut self,
            s: &mut Subflow,
            mut now: Instant,
            mut step: impl FnMut(&mut Subflow, &mut Channel, Instant) -> Result<(), proptest::test_runner::TestCaseError>,
        ) -> Result<(), proptest::test_runner::TestCaseError> {
            for _ in 0..200 {
                if !s.in_loss() && s.retransmit.is_empty() && s.bytes_in_flight() == 0 {
                    break;
                }
                now += Duration::from_millis(1);
                step(s, self, now)?;
                while let Some(r) = Channel::take_resend(s) {
                    self.send(s, now, r, false);
                }
                self.deliver_all(now);
                let a = self.ack_now();
                if s.on_ack(now, &a, 3, |_| RTO).packets_acked == 0 && s.bytes_in_flight() > 0 {
                    s.on_rto(now, |_| RTO);
                }
            }
            Ok(())
        }

        /// Every byte sent has arrived or is still held by `s`.
        fn every_byte_arrived_or_held(&self, s: &Subflow) -> Result<(), proptest::test_runner::TestCaseError> {
            for dsn in (0..self.next_dsn).step_by(1000) {
                let got = self.carried.iter().any(|&(pn, d, len)| d == dsn && len > 0 && self.arrived.contains(&pn));
                proptest::prop_assert!(got || s.carries(dsn), "byte {} neither arrived nor held", dsn);
            }
            Ok(())
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// A subflow and a real receiver over channels that lose and
        /// reorder packets and acknowledgements both ways, with timeouts
        /// fired at random (second ones in a series, timeouts in recovery,
        /// zero-length probes among the packets): whatever a timeout's
        /// record takes as shown to have arrived did arrive (the held floor
        /// never lets the receiver's cumulative point pass a packet that
        /// did not), and every byte sent has either arrived or is still
        /// held by the subflow.
        #[test]
        fn what_a_timeout_takes_as_arrived_did_arrive(script in proptest::collection::vec(0u32..1_000_000, 300)) {
            let mut s = Subflow::new(1000, false);
            s.on_established();
            let mut ch = Channel::new(2);
            for (t, &v) in script.iter().enumerate() {
                let (now, pick) = (ms(t as u64 + 1), (v / 10) as usize);
                match v % 10 {
                    0 | 1 if s.bytes_in_flight() < 20_000 => {
                        // A retransmission if one is queued, else new data,
                        // or a zero-length probe.
                        let segment = match s.retransmit.pop_front() {
                            Some(r) => r,
                            None if pick % 10 == 0 => (ch.next_dsn, 0),
                            None => ch.new_data(),
                        };
                        ch.send(&mut s, now, segment, pick % 4 == 0);
                    }
                    8 | 9 if pick % 3 == 0 && !s.sent.is_empty() => {
                        s.on_rto(now, |_| RTO);
                    }
                    _ => {
                        let Some(a) = ch.network(now, v, pick) else { continue };
                        let lost: Vec<u64> = s.timed_out.as_ref().map_or(Vec::new(), |t| t.lost.iter().map(|d| d.pn).collect());
                        s.on_ack(now, &a, 3, |_| RTO);
                        let acked = |pn: u64| a.cumulative > pn || a.sack_blocks().iter().any(|&(x, y)| x <= pn && pn < y);
                        for pn in lost.into_iter().filter(|&pn| acked(pn)) {
                            proptest::prop_assert!(ch.arrived.contains(&pn), "packet {} taken as arrived, never did ({:?})", pn, a);
                        }
                    }
                }
            }
            ch.every_byte_arrived_or_held(&s)?;
        }

        /// The loss state under random scripts, with the schedulers' rule
        /// (no new data while it lasts) and re-sending through
        /// `take_retransmission`: losses, reordering, lost acknowledgements
        /// and timeouts at random. While it lasts no acknowledgement opens
        /// a recovery episode (no second cut); and once the network stops
        /// losing, re-sending and acknowledging end it, with every byte
        /// arrived.
        #[test]
        fn the_loss_state_ends_once_its_data_is_resent_and_acknowledged(script in proptest::collection::vec(0u32..1_000_000, 300)) {
            let mut s = Subflow::new(1000, false);
            s.on_established();
            let mut ch = Channel::new(1);
            // What goes out next: a re-sending if one is queued, new data
            // unless in the loss state.
            let next = |s: &mut Subflow, ch: &mut Channel| match Channel::take_resend(s) {
                None if s.in_loss() => None,
                r => Some(r.unwrap_or_else(|| ch.new_data())),
            };
            for (t, &v) in script.iter().enumerate() {
                let (now, pick) = (ms(t as u64 + 1), (v / 10) as usize);
                match v % 10 {
                    0 | 1 if s.bytes_in_flight() < 20_000 => {
                        if let Some(segment) = next(&mut s, &mut ch) {
                            ch.send(&mut s, now, segment, pick % 4 == 0);
                        }
                    }
                    8 | 9 if pick % 3 == 0 && !s.sent.is_empty() => {
                        s.on_rto(now, |_| RTO);
                    }
                    _ => {
                        let Some(a) = ch.network(now, v, pick) else { continue };
                        let was_in_loss = s.in_loss();
                        let out = s.on_ack(now, &a, 3, |_| RTO);
                        proptest::prop_assert!(!(was_in_loss && out.congestion_event), "a second cut in the loss state");
                    }
                }
            }
            ch.settle(&mut s, ms(script.len() as u64 + 1), |_, _, _| Ok(()))?;
            proptest::prop_assert!(!s.in_loss(), "the loss state outlasted its data");
            ch.every_byte_arrived_or_held(&s)?;
        }
    }

    /// The flight counted as the scoreboard has it.
    fn flight_of(s: &Subflow) -> (u64, u64) {
        let in_flight = s.sent.iter().filter(|p| p.state == State::InFlight);
        in_flight.fold((0, 0), |(b, n), p| (b + u64::from(p.len), n + u64::from(p.len > 0)))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// RACK-TLP under random scripts: losses, reordering, lost
        /// acknowledgements, timeouts, and the reordering and probe timers
        /// run when due, each probe sent (and lost at random). The flight
        /// stays what the scoreboard holds (a probe and the packet it copies
        /// resolved together), a timer that ran is never still due, every
        /// byte sent has arrived or is held, and once the network stops
        /// losing everything is resolved.
        #[test]
        fn rack_tlp_keeps_the_flight_and_the_data(script in proptest::collection::vec(0u32..1_000_000, 300)) {
            let mut s = Subflow::new(1000, false);
            s.enable_rack_tlp();
            s.on_established();
            let mut ch = Channel::new(2);
            let timers = |s: &mut Subflow, ch: &mut Channel, now: Instant, lost: bool| {
                if s.loss_timer().is_some_and(|t| t <= now) {
                    s.on_loss_timer(now, 3, RTO);
                }
                if let Some(copy) = s.loss_probe() {
                    ch.send(s, now, copy, lost);
                    s.on_loss_probe_sent(now, RTO);
                }
                s.cancel_loss_probe();
                s.loss_timer().is_none_or(|t| t > now)
            };
            for (t, &v) in script.iter().enumerate() {
                let (now, pick) = (ms(t as u64 + 1), (v / 10) as usize);
                proptest::prop_assert!(timers(&mut s, &mut ch, now, pick % 5 == 0), "a timer still due at {:?}", now);
                match v % 10 {
                    0 | 1 if s.bytes_in_flight() < 20_000 => {
                        let segment = Channel::take_resend(&mut s).unwrap_or_else(|| ch.new_data());
                        ch.send(&mut s, now, segment, pick % 4 == 0);
                    }
                    8 | 9 if pick % 7 == 0 && !s.sent.is_empty() => {
                        s.on_rto(now, |_| RTO);
                    }
                    _ => {
                        let Some(a) = ch.network(now, v, pick) else { continue };
                        s.on_ack(now, &a, 3, |_| RTO);
                    }
                }
                proptest::prop_assert_eq!(flight_of(&s), (s.bytes_in_flight(), s.packets_in_flight()));
            }
            ch.every_byte_arrived_or_held(&s)?;
            ch.settle(&mut s, ms(script.len() as u64 + 1), |s, ch, now| {
                proptest::prop_assert_eq!(flight_of(s), (s.bytes_in_flight(), s.packets_in_flight()));
                proptest::prop_assert!(timers(s, ch, now, false), "a timer still due at {:?}", now);
                Ok(())
            })?;
            proptest::prop_assert_eq!(flight_of(&s), (s.bytes_in_flight(), s.packets_in_flight()));
            proptest::prop_assert!(s.retransmit.is_empty() && s.bytes_in_flight() == 0, "not resolved");
            ch.every_byte_arrived_or_held(&s)?;
        }
    }

    /// `tcp_cwnd_validate` / `tcp_is_cwnd_limited` by hand: the largest
    /// flight of a window and whether the window was full then decide.
    #[test]
    fn the_window_may_grow_only_when_it_was_used() {
        let mut s = Subflow::new(1000, false);
        // Three packets, the window (say 10,000 B) far from full.
        for k in 0..3 {
            s.on_sent(ms(k), k * 1000, 1000, RTO);
            s.validate_cwnd(|_, _, _| false);
        }
        // Slow start (cwnd < ssthresh): grows while under 2 x 3,000 B.
        assert!(s.window_use().limits(5_999, u64::MAX));
        assert!(!s.window_use().limits(6_000, u64::MAX));
        // Congestion avoidance: the window was not full.
        assert!(!s.window_use().limits(3_000, 3_000));
        // A fourth packet fills it: a larger flight, now marked full.
        s.on_sent(ms(3), 3000, 1000, RTO);
        s.validate_cwnd(|_, _, _| true);
        assert!(s.window_use().limits(4_000, 4_000));
        assert!(s.window_use().limits(7_999, u64::MAX) && !s.window_use().limits(8_000, u64::MAX));
        // Within the same window a smaller flight changes nothing...
        s.on_ack(ms(50), &ack(2, &[]), 3, |_| RTO);
        s.on_sent(ms(50), 4000, 1000, RTO);
        s.validate_cwnd(|_, _, _| false);
        assert!(s.window_use().limits(4_000, 4_000), "still the window of the full flight");
        // ...until everything sent up to the full flight has left: packet 4
        // (sent after it) is acknowledged with the rest, a new window
        // begins, and its first flight was not full.
        s.on_ack(ms(100), &ack(5, &[]), 3, |_| RTO);
        s.on_sent(ms(100), 5000, 1000, RTO);
        s.validate_cwnd(|_, _, _| false);
        assert!(!s.window_use().limits(4_000, 4_000));
        assert!(
            s.window_use().limits(1_999, u64::MAX) && !s.window_use().limits(2_000, u64::MAX),
            "largest flight now 1,000 B"
        );
    }

    #[test]
    fn in_order_acks_give_rtt_and_rate_samples() {
        let mut s = Subflow::new(1000, false);
        for k in 0..4 {
            s.on_sent(ms(k), k * 1000, 1000, RTO);
        }
        assert_eq!(s.bytes_in_flight(), 4000);
        // Packets 0 and 1 acknowledged in order at 50 ms: RTT from packet 1.
        let out = s.on_ack(ms(50), &ack(2, &[]), 3, |_| RTO);
        assert_eq!(out.rtt, Some(Duration::from_millis(49)));
        assert_eq!(s.rtt.srtt(), Some(Duration::from_millis(49)));
        assert_eq!((out.bytes_acked, s.bytes_in_flight(), s.delivered()), (2000, 2000, 2000));
        // Packets 2 and 3 at 60 ms. Packet 3 left at 3 ms, before anything
        // was delivered (delivered 0, interval start 0 ms), so the sample is
        // 4000 bytes over max(send 3 ms, ack 60 ms) = 66.7 kB/s.
        let out = s.on_ack(ms(60), &ack(4, &[]), 3, |_| RTO);
        let rate = out.rate.expect("rate sample");
        assert!((rate.delivery_rate - 4000.0 / 0.060).abs() < 1e-6, "{rate:?}");
        assert_eq!(rate.prior_delivered, 0);
        // A packet sent now starts from the new state: delivered 4000 at 60 ms.
        s.on_sent(ms(60), 4000, 1000, RTO);
        let rate = s.on_ack(ms(110), &ack(5, &[]), 3, |_| RTO).rate.expect("rate sample");
        assert_eq!(rate.prior_delivered, 4000);
        assert!((rate.delivery_rate - 1000.0 / 0.050).abs() < 1e-6, "{rate:?}");
        assert_eq!(s.bytes_in_flight(), 0);
        assert_eq!(s.rto_deadline(), None, "timer stops with nothing in flight");
    }

    /// draft-cheng-iccrg-delivery-rate-estimation §3.4: packets sent while
    /// the application had nothing more to send give app-limited samples,
    /// until the bytes then in flight have been delivered.
    /// Every packet counts once, its payload in bytes (a probe has none).
    #[test]
    fn sent_packets_and_bytes_are_counted() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 0, 0, RTO);
        s.on_sent(ms(1), 0, 1000, RTO);
        s.on_sent(ms(2), 1000, 500, RTO);
        assert_eq!((s.counters.packets_sent, s.counters.bytes_sent), (3, 1500));
    }

    /// What a restart after idleness measures: nothing before the first
    /// data or while data is outstanding, then the time since the last data.
    #[test]
    fn idle_time_counts_from_the_last_data_once_nothing_is_outstanding() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 0, 0, RTO);
        assert_eq!(s.idle_at(ms(10)), None, "a zero-length probe is not data");
        s.on_sent(ms(20), 0, 1000, RTO);
        assert_eq!(s.idle_at(ms(500)), None, "data in flight");
        s.on_ack(ms(60), &ack(2, &[]), 3, |_| RTO);
        assert_eq!(s.idle_at(ms(500)), Some(Duration::from_millis(480)));
        s.on_sent(ms(600), 1000, 1000, RTO);
        s.on_rto(ms(1000), |_| RTO);
        assert_eq!(s.idle_at(ms(2000)), None, "lost data waiting to be re-sent is outstanding");
        assert_eq!((s.counters.rtos, s.counters.packets_lost), (1, 1));
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 0, 1000, RTO);
        s.mark_app_limited();
        s.on_sent(ms(1), 1000, 1000, RTO);
        let sample = |s: &mut Subflow, at: u64, upto: u64| s.on_ack(ms(at), &ack(upto, &[]), 3, |_| RTO).rate;
        assert!(!sample(&mut s, 50, 1).expect("rate sample").is_app_limited, "sent before the mark");
        // Still within the bubble (1000 bytes were in flight at the mark).
        s.on_sent(ms(50), 2000, 1000, RTO);
        assert!(sample(&mut s, 51, 2).expect("rate sample").is_app_limited, "sent after the mark");
        // The bubble is delivered: what is sent now is bandwidth-limited.
        s.on_sent(ms(52), 3000, 1000, RTO);
        assert!(sample(&mut s, 100, 3).expect("rate sample").is_app_limited, "sent within the bubble");
        assert!(!sample(&mut s, 120, 4).expect("rate sample").is_app_limited);
    }

    /// Only an ACK of new data restarts the timer, clears the backoff and
    /// ends the suspicion a timeout raised (RFC 6298 section 5.3); a
    /// duplicate ACK changes none of them.
    #[test]
    fn a_duplicate_ack_leaves_the_timer_and_suspicion_alone() {
        let mut s = Subflow::new(1000, false);
        s.state = Lifecycle::Established;
        s.on_sent(ms(0), 0, 1000, RTO);
        s.on_sent(ms(0), 1000, 1000, RTO);
        s.on_rto(ms(1000), |_| RTO);
        assert!(s.potentially_failed());
        let (deadline, backoff) = (s.rto_deadline(), s.rto_backoff);
        let out = s.on_ack(ms(1100), &ack(0, &[]), 3, |_| RTO);
        assert_eq!(out.packets_acked, 0);
        assert!(s.potentially_failed());
        assert_eq!((s.rto_deadline(), s.rto_backoff), (deadline, backoff));
    }

    /// An acknowledgement that leaves only a zero-length probe out (a
    /// join's confirmation, a FIN) restarts the timer rather than stopping
    /// it, so the probe's loss is noticed; once nothing is out it stops.
    /// (It stopped with no bytes in flight: a lost confirmation sent just
    /// before an ACK of the opening was never re-sent, and the connection
    /// never opened. Found by the `connection` fuzz target's driver.)
    #[test]
    fn a_probe_left_in_flight_keeps_the_timer() {
        let mut s = Subflow::new(1000, false);
        s.state = Lifecycle::Established;
        s.on_sent(ms(0), 0, 1000, RTO);
        s.on_sent(ms(10), 1000, 0, RTO);
        s.on_ack(ms(50), &ack(1, &[]), 3, |_| RTO);
        assert_eq!(s.rto_deadline(), Some(ms(50) + RTO));
        s.on_ack(ms(60), &ack(2, &[]), 3, |_| RTO);
        assert_eq!(s.rto_deadline(), None);
    }

    /// A subflow holds exactly the bytes of its segments in flight or
    /// queued for retransmission (Linux's `path_mask`), not one past them.
    #[test]
    fn carries_the_bytes_of_its_segments() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 1000, 500, RTO);
        let held = |s: &Subflow| [999, 1000, 1499, 1500].map(|d| s.carries(d));
        assert_eq!(held(&s), [false, true, true, false], "in flight");
        s.on_rto(ms(1000), |_| RTO);
        assert_eq!(held(&s), [false, true, true, false], "queued for retransmission");
    }

    /// Rate samples over an interval shorter than the minimum RTT are
    /// discarded (draft-cheng-iccrg-delivery-rate-estimation section 3.3).
    #[test]
    fn a_rate_interval_below_the_minimum_rtt_gives_no_sample() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 0, 1000, RTO);
        assert!(s.on_ack(ms(50), &ack(1, &[]), 3, |_| RTO).rate.is_some(), "50 ms, no minimum RTT yet");
        // A new flight at 60 ms, acknowledged 20 ms later: below the 50 ms minimum.
        s.on_sent(ms(60), 1000, 1000, RTO);
        let out = s.on_ack(ms(80), &ack(2, &[]), 3, |_| RTO);
        assert_eq!((out.bytes_acked, out.rate), (1000, None));
    }

    /// A packet sent after an episode began (from the next packet number
    /// at its start on) belongs to a new one: its loss is a new congestion
    /// event even while the old episode's packets are unresolved.
    /// The head of the retransmission queue, re-sent at `t` ms.
    fn resend(s: &mut Subflow, t: u64) -> u64 {
        let (dsn, len) = s.retransmit[0];
        s.take_retransmission(1);
        s.on_sent(ms(t), dsn, len, RTO)
    }

    /// A timeout opens the loss state (Linux's `TCP_CA_Loss`): a re-sent
    /// packet lost again is re-sent without a second cut, and the state lasts
    /// until what the timeout declared lost is all re-sent and every
    /// re-sending is resolved. A loss after it opens fast recovery.
    #[test]
    fn a_timeout_opens_the_loss_state_until_its_data_is_resent_and_acknowledged() {
        let rto = |_: &Subflow| RTO;
        let mut s = Subflow::new(1000, false);
        s.on_established();
        for k in 0..6 {
            s.on_sent(ms(0), k * 1000, 1000, RTO);
        }
        s.on_rto(ms(1000), rto);
        assert!(s.in_loss() && !s.in_recovery());
        assert_eq!(resend(&mut s, 1000), 6);
        // The receiver acknowledges the re-sent packet above the hole the
        // timed-out ones left (their packet-number floor holds it there).
        assert_eq!(s.on_ack(ms(1100), &ack(0, &[(6, 7)]), 3, rto).packets_acked, 1);
        assert!(s.in_loss(), "five segments still to re-send");
        for _ in 0..5 {
            resend(&mut s, 1100);
        }
        assert!(s.retransmit.is_empty() && s.in_loss(), "all re-sent, none acknowledged yet");
        // Packet 7 (stream byte 1000) is lost again, 8..=11 arrive.
        let out = s.on_ack(ms(1200), &ack(7, &[(8, 12)]), 3, rto);
        assert!(!out.congestion_event, "no second cut in the loss state");
        assert_eq!(s.retransmit.iter().copied().collect::<Vec<_>>(), vec![(1000, 1000)]);
        assert!(s.in_loss() && !s.in_recovery());
        assert_eq!(resend(&mut s, 1200), 12);
        s.on_ack(ms(1300), &ack(13, &[]), 3, rto);
        assert!(!s.in_loss(), "everything re-sent is acknowledged");
        for k in 6..10 {
            s.on_sent(ms(1300), k * 1000, 1000, RTO);
        }
        assert!(s.on_ack(ms(1400), &ack(13, &[(14, 17)]), 3, rto).congestion_event, "packet 13: fast recovery");
    }

    /// The loss state cannot outlast what is owed: data the connection had
    /// acknowledged through another subflow leaves the queue unsent, and
    /// with nothing in flight the state is over (no acknowledgement would
    /// come to end it).
    #[test]
    fn the_loss_state_ends_when_nothing_is_owed() {
        let mut s = four_in_flight(0);
        s.on_rto(ms(1000), |_| RTO);
        assert!(s.in_loss());
        s.retransmit.clear();
        assert!(!s.in_loss());
    }

    #[test]
    fn a_loss_sent_after_the_episode_began_starts_a_new_one() {
        let mut s = Subflow::new(1000, false);
        for k in 0..8 {
            s.on_sent(ms(0), k * 1000, 1000, RTO);
        }
        assert!(s.on_ack(ms(10), &ack(0, &[(1, 4)]), 3, |_| RTO).congestion_event, "packet 0");
        for k in 8..12 {
            s.on_sent(ms(11), k * 1000, 1000, RTO);
        }
        // 9..=11 arrive: 4..=7 (old episode) and 8 (sent after it began) are lost.
        let out = s.on_ack(ms(20), &ack(0, &[(9, 12), (1, 4)]), 3, |_| RTO);
        assert!(out.congestion_event, "packet 8 opens a new episode");
        assert_eq!(s.counters.packets_lost, 6);
    }

    #[test]
    fn three_later_packets_declare_a_loss_once_per_episode() {
        let mut s = Subflow::new(1000, false);
        for k in 0..8 {
            s.on_sent(ms(0), k * 1000, 1000, RTO);
        }
        // Packet 0 missing, 1..=3 SACKed: 0 is lost, one congestion event.
        let out = s.on_ack(ms(10), &ack(0, &[(1, 4)]), 3, |_| RTO);
        assert!(out.congestion_event);
        assert_eq!(s.retransmit.iter().copied().collect::<Vec<_>>(), vec![(0, 1000)]);
        assert_eq!(s.bytes_in_flight(), 4000);
        assert!(s.in_recovery(), "until everything sent before the loss is resolved");
        // Packet 4 also lost, in the same episode: no second reduction.
        let out = s.on_ack(ms(11), &ack(0, &[(5, 8)]), 3, |_| RTO);
        assert!(!out.congestion_event);
        assert_eq!(s.retransmit.len(), 2);
        assert_eq!(s.counters.packets_lost, 2);
        // Everything sent before the episode is now resolved: it is over.
        assert_eq!(s.pn_floor(), 8);
        assert!(!s.in_recovery());
    }

    #[test]
    fn rto_marks_everything_lost_and_backs_off() {
        let mut s = Subflow::new(1000, false);
        s.on_sent(ms(0), 0, 1000, RTO);
        s.on_sent(ms(0), 1000, 1000, RTO);
        let rto = |s: &Subflow| s.rto(Duration::from_millis(200), RTO, Duration::from_secs(60));
        assert!(s.first_timeout());
        s.on_rto(ms(1000), rto);
        assert_eq!(s.retransmit.iter().copied().collect::<Vec<_>>(), vec![(0, 1000), (1000, 1000)]);
        assert!(!s.first_timeout());
        assert_eq!(s.bytes_in_flight(), 0);
        assert!(s.potentially_failed());
        // Backed off once: 2 x the initial 1 s.
        assert_eq!(s.rto_deadline(), Some(ms(3000)));
        s.on_sent(ms(1000), 0, 1000, RTO);
        assert_eq!(s.close(), vec![(0, 1000), (1000, 1000), (0, 1000)]);
        assert_eq!(s.bytes_in_flight(), 0);
    }
}
