//! Ending a connection: an orderly close in each direction (MPTCP's
//! DATA_FIN) so both ends know every byte arrived, or a reset on error
//! (MP_FASTCLOSE).
//!
//! `close()` says the application will write no more. The stream then ends
//! at `fin` (the DSN after the last byte written); every packet this side
//! sends carries `DataFin{fin}` until the peer's Data ACK passes it, and a
//! zero-length packet carries it if nothing else goes out. As in TCP, the
//! FIN takes one sequence number: the peer acknowledges it with a Data ACK
//! of `fin + 1` once it holds every byte before it. The peer's own close
//! works the same way in the other direction; when both FINs are
//! acknowledged the connection is finished.
//!
//! `reset(code)` aborts at once: one packet carries `Reset{code}` and the
//! connection stops; a peer that receives it fails with the code.

use super::{Connection, ConnectionError, Event};
use crate::packet::{Control, Packet, SubflowId};

/// Where a direction of the stream stands at its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Fin {
    /// This side's stream ends here (set by `close`).
    pub(super) local: Option<u64>,
    /// The peer acknowledged our FIN.
    pub(super) local_acked: bool,
    /// A zero-length packet carried our FIN (later copies go out when its
    /// subflow's timer fires, as any probe's do).
    pub(super) probed: bool,
    /// The peer's stream ends here.
    pub(super) peer: Option<u64>,
    /// Every byte of the peer's stream has arrived (reported once).
    pub(super) peer_done: bool,
}

impl Connection {
    /// The application writes no more: once everything written is
    /// delivered, the peer learns the stream ended.
    pub fn close(&mut self) {
        if self.fin.local.is_none() {
            self.fin.local = Some(self.send.end());
            self.liveness_due = true;
        }
    }

    /// Aborts the connection: the peer is told with `code`, and this side
    /// sends nothing more.
    pub fn reset(&mut self, code: u8) {
        if self.error.is_none() {
            self.error = Some(ConnectionError::Reset { code });
            self.reset_pending = Some(code);
        }
    }

    /// The peer's stream has ended and every byte of it has arrived: reads
    /// return what is buffered, then nothing more will come.
    pub fn peer_closed(&self) -> bool {
        self.fin.peer_done
    }

    /// A packet arrived on subflow `id`, closed or unknown here (one this
    /// side closed, a join it forgot or refused): the peer is told once,
    /// so it closes its end rather than keep a subflow nobody answers on
    /// (TCP answers a segment for no connection with a RST). A reset is
    /// never answered.
    pub(super) fn reset_subflow(&mut self, id: SubflowId) {
        if !self.subflow_resets.contains(&id) {
            self.subflow_resets.push(id);
            self.liveness_due = true;
        }
    }

    /// The peer reset subflow `i`: closed here too, its data reinjected on
    /// the others (`remove_subflow` has the liveness check made at the
    /// next transmit opportunity). Returns whether it was open.
    pub(super) fn on_subflow_reset(&mut self, i: usize) -> bool {
        if !self.subflows.get(i).is_some_and(|s| s.is_open()) {
            return false;
        }
        let id = Self::id(i);
        self.remove_subflow(id);
        self.events.push_back(Event::SubflowReset { subflow: id });
        true
    }

    /// Both directions are closed and acknowledged: nothing more will move.
    pub fn is_finished(&self) -> bool {
        self.fin.local_acked && self.fin.peer_done
    }

    /// Refuses writes after `close`.
    pub(super) fn writes_closed(&self) -> bool {
        self.fin.local.is_some()
    }

    /// Our FIN waits to be acknowledged, everything before it is, and no
    /// packet of its own carried it yet.
    pub(super) fn fin_probe_due(&self) -> bool {
        self.fin.local.is_some_and(|f| !self.fin.local_acked && !self.fin.probed && self.send.una() == f)
    }

    /// A probe that may have carried our FIN is lost (its subflow's timer
    /// fired with only a zero-length probe out, or the subflow closed):
    /// unless the FIN is acknowledged, it goes out again on the next probe.
    pub(super) fn fin_probe_lost(&mut self) {
        self.fin.probed &= self.fin.local_acked;
    }

    /// The Data ACK a packet of ours carries: one past the peer's FIN once
    /// every byte before it arrived.
    pub(super) fn data_ack_to_send(&self) -> u64 {
        let next = self.recv.data_ack();
        if self.fin.peer == Some(next) {
            next + 1
        } else {
            next
        }
    }

    /// The peer's Data ACK `data_ack` may acknowledge our FIN; returns the
    /// part that acknowledges data.
    pub(super) fn on_fin_ack(&mut self, data_ack: u64) -> u64 {
        match self.fin.local {
            Some(f) if data_ack == f + 1 && self.send.una() <= f => {
                if !self.fin.local_acked {
                    self.fin.local_acked = true;
                    self.events.push_back(Event::Closed);
                }
                f
            }
            _ => data_ack,
        }
    }

    /// Connection-level controls in a received packet: the end of the
    /// peer's stream, a reset, address advertisements.
    pub(super) fn on_connection_control(&mut self, packet: &Packet) {
        match packet.control.as_deref() {
            // The first FIN stands; one below what already arrived is bogus.
            Some(Control::DataFin { dsn }) if self.fin.peer.is_none() && *dsn >= self.recv.data_ack() => {
                self.fin.peer = Some(*dsn);
            }
            Some(Control::Reset { code }) => {
                let e = ConnectionError::PeerReset { code: *code };
                self.error = Some(e);
                self.events.push_back(Event::Failed(e));
            }
            Some(c @ (Control::AddAddr { .. } | Control::AddAddrEcho { .. } | Control::RemoveAddr { .. })) => {
                self.on_address_control(c);
            }
            _ => {}
        }
        self.check_peer_done();
    }

    /// Reports the end of the peer's stream once every byte before it arrived.
    pub(super) fn check_peer_done(&mut self) {
        if !self.fin.peer_done && self.fin.peer == Some(self.recv.data_ack()) {
            self.fin.peer_done = true;
            self.events.push_back(Event::PeerClosed);
            // Acknowledge the FIN at once.
            if let Some(i) = self.best_usable_subflow() {
                self.subflows[i].receiver.request_immediate();
            }
        }
    }

    /// The connection-level control for an outgoing packet when the
    /// handshake has none to send: queued address signalling, or our FIN
    /// while it is unacknowledged. (A reset goes out on a packet of its
    /// own, `poll_reset`: once the connection has failed nothing else is
    /// sent.) A zero-length probe carries the FIN before address
    /// signalling: it may be the FIN's own probe, the only packet an idle
    /// side sends, and the signals ride on the next.
    pub(super) fn connection_control(&mut self, probe: bool) -> Option<Control> {
        // Most packets carry none: decided without building one.
        if self.fin.local.is_none() && !self.signals_queued() {
            return None;
        }
        let fin = match self.fin.local {
            Some(dsn) if !self.fin.local_acked => Some(Control::DataFin { dsn }),
            _ => None,
        };
        match fin {
            Some(fin) if probe => Some(fin),
            _ => self.address_control().or(fin),
        }
    }
}
