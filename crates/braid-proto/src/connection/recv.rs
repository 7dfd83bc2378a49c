//! Receiving: data into the shared receive buffer, acknowledgements into
//! the subflows' scoreboards, the congestion controller and the send buffer.

use super::handshake::Verdict;
use super::timer::Timer;
use super::{subflow_rto, Connection, Event};
use crate::ack_tracker::AckPolicy;
use crate::autotune::TunedPath;
use crate::cc::AckSample;
use crate::packet::{AckFrame, Control, DataFrame, Frame, Packet, PacketError, SubflowId};
use crate::time::{Duration, Instant};

impl Connection {
    /// Processes one packet received on the subflow it names. Malformed
    /// packets are refused with the reason (and counted). `Ok(true)`: the
    /// packet was taken; `Ok(false)`: ignored (for a subflow not open here
    /// that it cannot open, a handshake packet that does not check out, or
    /// after the connection failed). A driver that lets a subflow's address
    /// follow its packets must follow only taken ones, or anyone who knows
    /// the token could redirect a subflow.
    pub fn handle_datagram(&mut self, now: Instant, packet: Packet) -> Result<bool, PacketError> {
        if self.error.is_some() {
            return Ok(false);
        }
        if let Err(e) = packet.check() {
            self.invalid_packets += 1;
            return Err(e);
        }
        let i = packet.subflow.index();
        if matches!(packet.control.as_deref(), Some(Control::SubflowReset)) {
            return Ok(self.on_subflow_reset(i));
        }
        if !self.subflows.get(i).is_some_and(|s| s.is_open()) && !self.accept_subflow(now, i, &packet) {
            self.reset_subflow(packet.subflow);
            return Ok(false);
        }
        if let Verdict::Drop = self.on_handshake(now, i, &packet) {
            return Ok(false);
        }
        self.on_connection_control(&packet);
        if self.error.is_some() {
            return Ok(false);
        }
        match packet.frame {
            Frame::Data(d) => self.on_data(now, i, d),
            Frame::Ack(a) => self.on_ack(now, i, &a),
        }
        self.check_liveness(now);
        Ok(true)
    }

    pub(super) fn on_data(&mut self, now: Instant, i: usize, d: DataFrame) {
        let policy = AckPolicy {
            every: self.config.ack_every,
            max_delay: self.config.max_ack_delay,
            quickacks: self.config.quickacks,
            idle: if self.config.quickacks > 0 { self.rto_of(i) } else { Duration::MAX },
        };
        let sf = &mut self.subflows[i];
        if d.dsn + u64::from(d.len) > self.recv.window_end() {
            // Beyond the window: drop it unacknowledged, as TCP does, so the
            // sender re-sends it once the window opens; answer with our window.
            sf.receiver.request_immediate();
            return;
        }
        sf.receiver.on_packet(now, d.pn, d.pn_floor, &policy);
        if d.len == 0 {
            // A probe: answer at once.
            sf.receiver.request_immediate();
            return;
        }
        let payload = (!d.payload.is_empty()).then_some(&d.payload[..]);
        let before = self.recv.data_ack();
        let new = self.recv.insert(d.dsn, u64::from(d.len), payload);
        self.subflows[i].counters.bytes_received_new += new;
        self.check_peer_done();
        if let Some(a) = self.autotune.as_mut() {
            if self.recv.data_ack() > before {
                a.on_data(now, self.recv.data_ack(), self.recv.window_end());
            }
            if let Some(c) = a.on_read(now, self.recv.bytes_read(), self.recv.capacity()) {
                self.recv.grow(c);
            }
        }
    }

    pub(super) fn on_ack(&mut self, now: Instant, i: usize, a: &AckFrame) {
        let data_ack = self.on_fin_ack(a.data_ack);
        if self.send.on_data_ack(data_ack) > 0 {
            self.data_rto_backoff = 0;
            self.timers.stop(Timer::DataRetransmit);
            self.arm_data_rto(now);
        }
        // The first ACK states the window, even one smaller than assumed;
        // later ones only widen it (the receiver never shrinks its window, so
        // a smaller edge is an older ACK overtaken on a faster subflow).
        if self.peer_window.is_none_or(|w| a.window_end > w) {
            self.peer_window = Some(a.window_end);
            self.timers.stop(Timer::Persist);
            self.persist_backoff = 0;
        }
        let cfg = &self.config;
        let dupthresh = cfg.dupthresh;
        let sf = &mut self.subflows[i];
        let was_failed = sf.potentially_failed();
        let prior_in_flight = sf.bytes_in_flight();
        let out = sf.on_ack(now, a, dupthresh, |s| subflow_rto(cfg, s));
        if !self.raising.is_empty() {
            self.raise_probe_outcome(now, i, false);
        }
        let sf = &mut self.subflows[i];
        let (in_recovery, in_loss) = (sf.in_recovery(), sf.in_loss());
        let (largest, recovered) = (sf.largest_acked(), was_failed && !sf.potentially_failed());
        self.on_handshake_acked(i, largest);
        if recovered {
            self.events.push_back(Event::SubflowRecovered { subflow: Self::id(i) });
        }
        if out.spurious_timeout {
            self.cc.on_spurious_rto(i);
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
                packets_lost: out.packets_lost,
                in_recovery,
                in_loss,
                window_use: self.subflows[i].window_use(),
                delivered: self.subflows[i].delivered(),
                rate: out.rate,
                prior_delivered: out.prior_delivered,
                next_departure: self.subflows[i].next_send_time,
            };
            self.cc.on_ack(i, &sample, &self.path_views);
            if self.cc.samples_app_limited(i) {
                self.subflows[i].mark_app_limited();
            }
            if self.send_tuner.is_on() {
                self.autotune_send_buffer(None);
                // The application waits (Linux's `SOCK_NOSPACE`, which the
                // Data ACK's wake-up clears once a third of the buffer is
                // free): this subflow may grow once the sending is done.
                if self.write_filled && !self.send_writable() {
                    self.expand_due = Some(i);
                }
            }
            while let Some(closed) = self.cc.take_closed_path().and_then(SubflowId::from_index) {
                self.remove_subflow(closed);
                self.events.push_back(Event::SubflowClosed { subflow: closed });
            }
        }
    }

    /// Sizes the send buffer; `grow` as [`SendTuner::target`] takes it.
    ///
    /// [`SendTuner::target`]: crate::autotune::SendTuner::target
    pub(super) fn autotune_send_buffer(&mut self, grow: Option<usize>) {
        let cc = &self.cc;
        let paths = self.subflows.iter().enumerate().map(|(i, s)| TunedPath {
            active: s.is_established(),
            backup: s.backup,
            window: cc.window(i),
            in_flight: s.bytes_in_flight(),
            srtt: s.rtt.srtt(),
            mss: s.mss,
        });
        let target = self.send_tuner.target(grow, paths);
        self.send.grow(target);
    }
}
