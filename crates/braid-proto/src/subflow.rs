//! One subflow's sender state: packet numbers, the SACK scoreboard, loss
//! detection, fast recovery and the retransmission timer.
//!
//! Every transmission takes a fresh packet number (as in QUIC), so an
//! acknowledgement always names exactly one transmission: RTT samples need
//! no Karn rule, and a packet is lost once `dupthresh` packets sent after it
//! are acknowledged (the packet-count form of RFC 6675's DupThresh). Bytes in
//! flight ("pipe") exclude acknowledged and lost packets, so recovery sends
//! exactly what the halved window allows without window inflation.
//!
//! A loss opens a recovery episode that lasts until everything sent before
//! it is acknowledged; further losses in the episode do not reduce the window
//! again (NewReno, RFC 6582). Lost data is retransmitted on the same subflow,
//! as TCP subflows do, unless the connection has meanwhile acknowledged it.

use std::collections::VecDeque;

use crate::ack_tracker::AckTracker;
use crate::packet::AckFrame;
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
}

#[derive(Debug)]
pub struct Subflow {
    pub backup: bool,
    pub active: bool,
    pub mss: u32,
    next_pn: u64,
    /// Packet number of `sent[0]`.
    base_pn: u64,
    sent: VecDeque<Sent>,
    /// Lowest packet number loss detection has not yet passed.
    loss_scan_pn: u64,
    largest_acked: Option<u64>,
    bytes_in_flight: u64,
    /// Lost data waiting to be re-sent here: (dsn, len).
    pub retransmit: VecDeque<(u64, u32)>,
    /// Recovery lasts until a packet numbered at least this is acknowledged.
    recovery_end: Option<u64>,
    pub rtt: RttEstimator,
    rto_deadline: Option<Instant>,
    rto_backoff: u32,
    /// Set by a retransmission timeout, cleared by any acknowledgement.
    pub potentially_failed: bool,
    /// A zero-length probe should go out (a failed path with nothing to resend).
    pub probe_pending: bool,
    pub receiver: AckTracker,
    pub counters: SubflowCounters,
}

impl Subflow {
    pub fn new(mss: u32, backup: bool) -> Self {
        Subflow {
            backup,
            active: true,
            mss,
            next_pn: 0,
            base_pn: 0,
            sent: VecDeque::new(),
            loss_scan_pn: 0,
            largest_acked: None,
            bytes_in_flight: 0,
            retransmit: VecDeque::new(),
            recovery_end: None,
            rtt: RttEstimator::new(),
            rto_deadline: None,
            rto_backoff: 0,
            potentially_failed: false,
            probe_pending: false,
            receiver: AckTracker::default(),
            counters: SubflowCounters::default(),
        }
    }

    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery_end.is_some()
    }
    pub fn rto_deadline(&self) -> Option<Instant> {
        self.rto_deadline
    }

    /// Current RTO including exponential backoff.
    pub fn rto(&self, min_rto: Duration, initial: Duration, max: Duration) -> Duration {
        self.rtt.rto(min_rto, initial).saturating_mul(1 << self.rto_backoff.min(20)).min(max)
    }

    /// Records a transmission and returns its packet number.
    pub fn on_sent(&mut self, now: Instant, dsn: u64, len: u32, rto: Duration) -> u64 {
        let pn = self.next_pn;
        self.next_pn += 1;
        self.sent.push_back(Sent { dsn, len, time: now, state: State::InFlight });
        self.bytes_in_flight += u64::from(len);
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += u64::from(len);
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + rto);
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
        let mut newest: Option<u64> = None;
        let cum = ack.cumulative.min(self.next_pn);
        for pn in self.base_pn..cum {
            self.mark_acked(pn, &mut out, &mut newest);
        }
        for &(s, e) in ack.sack_blocks() {
            for pn in s.max(cum).max(self.base_pn)..e.min(self.next_pn) {
                self.mark_acked(pn, &mut out, &mut newest);
            }
        }
        self.pop_resolved();
        if let Some(pn) = newest {
            if self.largest_acked.is_none_or(|l| pn > l) {
                self.largest_acked = Some(pn);
                let sent = self.entry(pn).map(|p| p.time);
                if let Some(t) = sent {
                    out.rtt = Some(now - t);
                }
            }
        }
        if let Some(r) = out.rtt {
            self.rtt.on_sample(r);
        }
        out.congestion_event = self.detect_losses(dupthresh);
        // RFC 6582: recovery ends once everything sent before it is resolved
        // (acknowledged or declared lost), not when a retransmission is acknowledged.
        if self.recovery_end.is_some_and(|end| self.base_pn >= end) {
            self.recovery_end = None;
        }
        if out.packets_acked > 0 {
            self.rto_backoff = 0;
            self.potentially_failed = false;
            self.probe_pending = false;
            // RFC 6298 (5.2, 5.3): stop or restart the timer.
            self.rto_deadline = (self.bytes_in_flight > 0).then(|| now + rto(self));
        }
        out
    }

    fn entry(&self, pn: u64) -> Option<&Sent> {
        pn.checked_sub(self.base_pn).and_then(|i| self.sent.get(i as usize))
    }

    fn mark_acked(&mut self, pn: u64, out: &mut AckOutcome, newest: &mut Option<u64>) {
        let Some(i) = pn.checked_sub(self.base_pn) else { return };
        let Some(p) = self.sent.get_mut(i as usize) else { return };
        match p.state {
            State::InFlight => {
                self.bytes_in_flight -= u64::from(p.len);
                out.bytes_acked += u64::from(p.len);
            }
            // Declared lost too early: the retransmission is already queued.
            State::Lost => {}
            State::Acked => return,
        }
        p.state = State::Acked;
        out.packets_acked += 1;
        *newest = Some(newest.map_or(pn, |n: u64| n.max(pn)));
    }

    /// Marks packets `dupthresh` or more below the largest acknowledged as
    /// lost; returns true if that opens a new recovery episode.
    fn detect_losses(&mut self, dupthresh: u64) -> bool {
        let Some(largest) = self.largest_acked else { return false };
        let Some(limit) = (largest + 1).checked_sub(dupthresh) else { return false };
        let mut event = false;
        for pn in self.loss_scan_pn.max(self.base_pn)..limit {
            let i = (pn - self.base_pn) as usize;
            let p = &mut self.sent[i];
            if p.state == State::InFlight {
                p.state = State::Lost;
                self.bytes_in_flight -= u64::from(p.len);
                self.counters.packets_lost += 1;
                if p.len > 0 {
                    self.retransmit.push_back((p.dsn, p.len));
                }
                if self.recovery_end.is_none_or(|end| pn >= end) {
                    self.recovery_end = Some(self.next_pn);
                    event = true;
                }
            }
        }
        self.loss_scan_pn = self.loss_scan_pn.max(limit);
        self.pop_resolved();
        event
    }

    /// Drops acknowledged or lost packets from the front of the scoreboard.
    fn pop_resolved(&mut self) {
        while self.sent.front().is_some_and(|p| p.state != State::InFlight) {
            self.sent.pop_front();
            self.base_pn += 1;
        }
    }

    /// Lowest packet number still in flight: every packet below it is
    /// acknowledged or declared lost, so the receiver need not wait for it.
    pub fn pn_floor(&self) -> u64 {
        self.base_pn
    }

    /// The retransmission timer fired: everything in flight is lost. Returns
    /// the lost (dsn, len) ranges so the connection can reinject them.
    pub fn on_rto(&mut self, now: Instant, rto: impl Fn(&Self) -> Duration, lost: &mut Vec<(u64, u32)>) {
        self.counters.rtos += 1;
        for p in self.sent.iter_mut().filter(|p| p.state == State::InFlight) {
            p.state = State::Lost;
            self.counters.packets_lost += 1;
            if p.len > 0 {
                self.retransmit.push_back((p.dsn, p.len));
                lost.push((p.dsn, p.len));
            }
        }
        self.bytes_in_flight = 0;
        self.loss_scan_pn = self.next_pn;
        self.pop_resolved();
        self.recovery_end = Some(self.next_pn);
        self.potentially_failed = true;
        self.rto_backoff += 1;
        if self.retransmit.is_empty() {
            self.probe_pending = true;
        }
        // Keep the timer running so a failed path keeps being probed.
        self.rto_deadline = Some(now + rto(self));
    }
}
