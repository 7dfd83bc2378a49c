//! Address signalling (RFC 8684 §3.4): the server tells the client of its
//! other addresses (ADD_ADDR, authenticated by a truncated HMAC over the
//! address with both keys, so an on-path third party cannot invent one) and
//! withdraws them (REMOVE_ADDR). Which subflows to open or close in answer
//! is the path manager's decision (`path_manager.rs`); the connection only
//! carries the messages and reports them as events.
//!
//! An advertisement rides on every packet until the client echoes it (the
//! ADD_ADDR echo of RFC 8684 v1); echoes and withdrawals go out once each,
//! a withdrawal three times in a row, since nothing acknowledges it. Each
//! signal also asks for an acknowledgement to go out at once, so it leaves
//! even when no data moves (an idle connection whose only carrier is lost
//! sends the advertisement again with its next packet).

use std::net::SocketAddr;

use super::{Connection, Event};
use crate::crypto::truncated;
use crate::packet::Control;

/// Copies of a withdrawal sent, for want of an acknowledgement.
const REMOVE_COPIES: usize = 3;

impl Connection {
    /// Server: tells the client it may also reach this connection at
    /// `addr`, named `id` in later signalling.
    pub fn advertise_address(&mut self, id: u8, addr: SocketAddr) {
        self.advertised.retain(|&(i, _, _)| i != id);
        self.advertised.push((id, addr, false));
        self.signal();
    }

    /// Server: the address `id` is gone; the client closes its subflows
    /// to it.
    pub fn withdraw_address(&mut self, id: u8) {
        self.advertised.retain(|&(i, _, _)| i != id);
        self.outbox.extend(std::iter::repeat_n(Control::RemoveAddr { id }, REMOVE_COPIES));
        self.signal();
    }

    /// Sends an acknowledgement now to carry the signal, whether or not
    /// anything else goes out.
    fn signal(&mut self) {
        if let Some(i) = self.best_usable_subflow() {
            self.subflows[i].receiver.request_immediate();
        }
    }

    /// HMAC of an advertisement, with the sender's key first.
    fn address_mac(&self, sender_key: u64, receiver_key: u64, id: u8, addr: SocketAddr) -> [u8; 8] {
        let key = [sender_key.to_be_bytes(), receiver_key.to_be_bytes()].concat();
        let ip = match addr.ip() {
            std::net::IpAddr::V4(ip) => ip.octets().to_vec(),
            std::net::IpAddr::V6(ip) => ip.octets().to_vec(),
        };
        truncated(self.session.crypto.hmac_sha256(&key, &[&[id], &ip, &addr.port().to_be_bytes()]))
    }

    /// Whether [`Connection::address_control`] may have a signal to send
    /// (an address the peer has echoed is not sent again).
    pub(super) fn signals_queued(&self) -> bool {
        !self.outbox.is_empty() || self.advertised.iter().any(|a| !a.2)
    }

    /// The next address signal to send, if any.
    pub(super) fn address_control(&mut self) -> Option<Control> {
        if let Some(c) = self.outbox.pop_front() {
            return Some(c);
        }
        let remote = self.session.remote_key()?;
        let &(id, addr, _) = self.advertised.iter().find(|a| !a.2)?;
        let mac = self.address_mac(self.session.local_key, remote, id, addr);
        Some(Control::AddAddr { id, addr, mac })
    }

    pub(super) fn on_address_control(&mut self, c: &Control) {
        match *c {
            Control::AddAddr { id, addr, mac } => {
                let Some(remote) = self.session.remote_key() else { return };
                if mac != self.address_mac(remote, self.session.local_key, id, addr) {
                    self.invalid_packets += 1;
                    return;
                }
                self.outbox.push_back(Control::AddAddrEcho { id });
                self.signal();
                if !self.learned.contains(&(id, addr)) {
                    self.learned.push((id, addr));
                    self.events.push_back(Event::AddressAdvertised { id, addr });
                }
            }
            Control::AddAddrEcho { id } => {
                for a in self.advertised.iter_mut().filter(|a| a.0 == id) {
                    a.2 = true;
                }
            }
            Control::RemoveAddr { id } => {
                let before = self.learned.len();
                self.learned.retain(|&(i, _)| i != id);
                if self.learned.len() < before {
                    self.events.push_back(Event::AddressRemoved { id });
                }
            }
            _ => {}
        }
    }
}
