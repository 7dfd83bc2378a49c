//! Opening the connection and joining subflows, with MPTCP's semantics
//! (RFC 8684 §3.1–3.2), carried as [`Control`]s on the subflows' first
//! packets and ACKs.
//!
//! The client opens; the server learns of each subflow from its first
//! packet. Each side has a random 64-bit key; a side's token (the first 8
//! bytes of SHA-256 of its key) is the connection id on every packet sent to
//! it, and names the connection in joins.
//!
//! - First subflow: the client's opening packet (a zero-length probe)
//!   carries `Hello{client key}`; the ACK that answers it carries
//!   `HelloReply{server key}`. The client then sends data at once, each
//!   packet carrying `Establish{both keys}` until the server acknowledges
//!   one, so a server that answered `Hello` without keeping state (see
//!   `Endpoint`) can set the connection up from any of them (MP_CAPABLE in
//!   v1 carries both keys on the third ACK and on data for the same reason).
//! - Other subflows, once the server has acknowledged an `Establish` (it
//!   may hold no connection before; see `joinable`), or with
//!   `Config::early_joins` once the first is established: the opening probe
//!   carries `Join{server token, client nonce, backup}`; the answer carries
//!   `JoinReply{HMAC-B truncated to 64 bits, server nonce}`, with HMAC-B =
//!   HMAC(server key || client key, server nonce || client nonce). A client
//!   that finds a wrong MAC closes the subflow. Its data packets then carry
//!   `JoinAck{HMAC-A}` (HMAC(client key || server key, client nonce ||
//!   server nonce)) until acknowledged; the server drops anything on a
//!   joining subflow without a valid HMAC-A, so a forged join (no keys) or a
//!   replayed one (another server nonce) never carries data.
//!
//! Both replies (`HelloReply`, `JoinReply`) also carry the server's clock in
//! microseconds, and both confirmations (`Establish`, `JoinAck`) echo it
//! plus the time the client held the reply: the server's first RTT sample
//! when the subflow completes, stateless answers included (Linux's server
//! takes one from the SYN-ACK's ACK, SYN cookies from the echoed
//! timestamp).
//!
//! A subflow joins in one round trip, as the simulator's subflows always
//! have: data follows the reply at once. The client also confirms on a
//! zero-length packet of its own right after the reply (MPTCP's third
//! ACK), so a subflow that carries no data yet still completes. Nonces come from an HMAC of the
//! local key over a counter: unpredictable without the key, and
//! reproducible in the simulator.
//!
//! Deviations from RFC 8684: 64-bit tokens and SHA-256 MACs (MPTCP v1's
//! SHA-256, but the full 32 bytes for HMAC-A); no MP_CAPABLE version or
//! checksum negotiation; the server cannot open subflows (as in practice,
//! behind NATs, it does not).

use std::sync::Arc;

use super::{Connection, Event};
use crate::crypto::{join_mac, token, truncated, Crypto};
use crate::packet::{Control, Frame, Packet};
use crate::subflow::{Lifecycle, Subflow};
use crate::time::{Duration, Instant};

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Opens the connection and its subflows.
    Client,
    /// Accepts them.
    Server,
}

/// Keys, their tokens (hashed once: every packet carries one) and the
/// nonce source.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) side: Side,
    pub(super) crypto: Arc<dyn Crypto>,
    pub(super) local_key: u64,
    remote_key: Option<u64>,
    local_token: u64,
    remote_token: u64,
    nonces: u64,
}

impl Session {
    pub(super) fn new(side: Side, crypto: Arc<dyn Crypto>, local_key: u64) -> Self {
        let local_token = token(crypto.as_ref(), local_key);
        Session { side, crypto, local_key, remote_key: None, local_token, remote_token: 0, nonces: 0 }
    }

    pub(super) fn remote_key(&self) -> Option<u64> {
        self.remote_key
    }

    pub(super) fn set_remote_key(&mut self, key: u64) {
        self.remote_key = Some(key);
        self.remote_token = token(self.crypto.as_ref(), key);
    }

    pub(super) fn local_token(&self) -> u64 {
        self.local_token
    }

    /// The connection id on packets to the peer (0 until its key is known).
    pub(super) fn remote_token(&self) -> u64 {
        self.remote_token
    }

    fn next_nonce(&mut self) -> u64 {
        self.nonces += 1;
        let mac = self.crypto.hmac_sha256(&self.local_key.to_be_bytes(), &[b"nonce", &self.nonces.to_be_bytes()]);
        u64::from_be_bytes(truncated(mac))
    }
}

/// Where a subflow is in its handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JoinState {
    /// Client: not started yet.
    Pending,
    /// Client, the subflow that opens the connection: its opening packet
    /// carries `Hello`.
    Hello,
    /// Client, another subflow: the opening packet carries `Join`.
    Join {
        nonce: u64,
    },
    /// Client: packets carry `control` (Establish or JoinAck) until one
    /// sent from `first_pn` on is acknowledged. Its `echo` holds the
    /// server's stamp from the reply that arrived at `replied`; each packet
    /// adds the time since.
    Confirm {
        control: Control,
        first_pn: Option<u64>,
        replied: Instant,
    },
    /// Server, first subflow: answered `Hello`, waiting for `Establish`.
    AwaitEstablish,
    /// Server: answered `Join`, waiting for a valid `JoinAck` until
    /// `expires` (a join that never completes must not hold its slot: the
    /// token alone, which an on-path observer learns, is enough to start one).
    AwaitJoinAck {
        client_nonce: u64,
        server_nonce: u64,
        expires: Instant,
    },
    Done,
}

/// What to do with a packet after its handshake control is seen.
pub(super) enum Verdict {
    Process,
    Drop,
}

/// Client: subflow `s` has a confirmation (Establish, JoinAck) that no
/// packet carried yet; it goes out on a probe of its own.
pub(super) fn confirmation_due(s: &Subflow) -> bool {
    matches!(s.join, JoinState::Confirm { first_pn: None, .. })
}

/// Client: every packet on `s` carries its confirmation (until one is
/// acknowledged), so none carries a connection-level control.
pub(super) fn confirming(s: &Subflow) -> bool {
    matches!(s.join, JoinState::Confirm { .. })
}

impl Connection {
    /// Client: the first subflow opened starts at once, opening the
    /// connection (`Hello`); every other joins (`Join`) once the server
    /// holds the connection (see `joinable`), or with `Config::early_joins`
    /// once one subflow is established. Should the first one's opening time
    /// out (its path is down), the next opens the connection instead of
    /// waiting on a dead path (where the kernel would give up). Called on
    /// every transmit opportunity: the common case (nothing left to join)
    /// is decided inline.
    #[inline]
    pub(super) fn start_joins(&mut self) {
        if self.unjoined != 0 && self.session.side == Side::Client {
            self.start_pending_joins();
        }
    }

    fn start_pending_joins(&mut self) {
        let keys = self.session.remote_key().is_some();
        let first = self.subflows.iter().position(|s| s.is_open());
        let first_failed = first.is_some_and(|i| self.subflows[i].potentially_failed());
        // Until the keys are known, the first open subflow opens the
        // connection, and every one once that one's opening timed out.
        // Early joins keep those rules after; otherwise a join waits for
        // the server, whichever subflow it is.
        let first_opens = !keys || self.config.early_joins;
        let all = match (keys, self.config.early_joins) {
            (false, _) => first_failed,
            (true, true) => first_failed || self.subflows.iter().any(|s| s.is_established()),
            (true, false) => self.joinable(),
        };
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if sf.join != JoinState::Pending || !sf.is_open() || !(all || first_opens && Some(i) == first) {
                continue;
            }
            let join = if keys { JoinState::Join { nonce: self.session.next_nonce() } } else { JoinState::Hello };
            let sf = &mut self.subflows[i];
            sf.join = join;
            sf.probe_pending = true;
            self.unjoined = self.unjoined.saturating_sub(1);
        }
    }

    /// Client, keys known: whether the server can take a join. A server
    /// that answered the opening without state holds the connection only
    /// once an `Establish` reached it, so joins wait until one is
    /// acknowledged. They go ahead without that once every open subflow
    /// carrying `Establish` has timed out (its path may be down, or it is
    /// closed): they either find the connection (only the acknowledgement
    /// was lost) or time out, which lets the connection fail; waiting on
    /// would leave a client with nothing to send hanging on a dead path.
    fn joinable(&self) -> bool {
        let establishing =
            |s: &Subflow| matches!(s.join, JoinState::Confirm { control: Control::Establish { .. }, .. });
        self.subflows.iter().any(|s| s.join == JoinState::Done)
            || !self.subflows.iter().any(|s| s.is_open() && establishing(s) && s.first_timeout())
    }

    /// The handshake control a packet on subflow `i` carries, if any:
    /// `probe` is the subflow's opening packet (zero-length data).
    pub(super) fn handshake_control(&mut self, now: Instant, i: usize, pn: u64, probe: bool) -> Option<Control> {
        let remote_token = self.session.remote_token();
        let sf = &mut self.subflows[i];
        match &mut sf.join {
            JoinState::Hello if probe => Some(Control::Hello { key: self.session.local_key }),
            JoinState::Join { nonce } if probe => {
                Some(Control::Join { token: remote_token, nonce: *nonce, backup: sf.backup })
            }
            JoinState::Confirm { control, first_pn, replied } => {
                first_pn.get_or_insert(pn);
                let mut control = control.clone();
                if let Control::Establish { echo, .. } | Control::JoinAck { echo, .. } = &mut control {
                    *echo = echo.wrapping_add(micros(now).wrapping_sub(micros(*replied)));
                }
                Some(control)
            }
            _ => None,
        }
    }

    /// Client: subflow `i`'s retransmission timer fired with only a
    /// zero-length probe out. If that probe carried a confirmation nothing
    /// has acknowledged yet, the confirmation may be lost (and the server
    /// drops everything else on the subflow until it arrives): it goes out
    /// again on a probe of its own, as MPTCP re-sends the third ACK of a
    /// join until the server acknowledges it. Taken for a lost zero-window
    /// probe, which the persist timer repeats, it would never be re-sent.
    /// (Data in flight carries the confirmation, and its retransmissions
    /// carry it again.)
    pub(super) fn on_confirmation_timeout(&mut self, i: usize) {
        if let JoinState::Confirm { first_pn, .. } = &mut self.subflows[i].join {
            *first_pn = None;
        }
    }

    /// Client: an acknowledgement on subflow `i` acknowledged packets up to
    /// `largest`; a confirmation it covers is done. Called for every
    /// acknowledgement: the common case (no confirmation out) is decided
    /// inline.
    #[inline]
    pub(super) fn on_handshake_acked(&mut self, i: usize, largest: Option<u64>) {
        if let JoinState::Confirm { first_pn: Some(first), .. } = self.subflows[i].join {
            if largest.is_some_and(|l| l >= first) {
                self.confirmed(i);
            }
        }
    }

    /// Client: subflow `i`'s confirmation was acknowledged.
    ///
    /// When that confirmation was an `Establish`, the server now holds the
    /// connection: a `Join` still unanswered went out before it did (joins
    /// released by the `Establish`'s timeout, `joinable`), may have reached
    /// the server first and been dropped, and goes out again now rather
    /// than after its own timeout (1 s without an RTT sample). The server
    /// answers a repeated `Join` as it answered the first. (With
    /// `early_joins` every join goes out before the acknowledgement, to a
    /// server that takes them.)
    fn confirmed(&mut self, i: usize) {
        let sf = &mut self.subflows[i];
        let established = matches!(sf.join, JoinState::Confirm { control: Control::Establish { .. }, .. });
        sf.join = JoinState::Done;
        if established && !self.config.early_joins {
            for s in self.subflows.iter_mut().filter(|s| s.is_open() && matches!(s.join, JoinState::Join { .. })) {
                s.supersede_probes();
                s.probe_pending = true;
            }
        }
    }

    /// Applies the handshake part of a packet on subflow `i` (which exists)
    /// before anything else sees it.
    pub(super) fn on_handshake(&mut self, now: Instant, i: usize, packet: &Packet) -> Verdict {
        match self.session.side {
            Side::Client => self.client_handshake(now, i, packet),
            Side::Server => self.server_handshake(now, i, packet),
        }
    }

    fn client_handshake(&mut self, now: Instant, i: usize, packet: &Packet) -> Verdict {
        let crypto = &*self.session.crypto;
        let local_key = self.session.local_key;
        match (&self.subflows[i].join, packet.control.as_deref(), &packet.frame) {
            (JoinState::Hello, Some(Control::HelloReply { key, .. }), Frame::Ack(_))
                if self.session.remote_key().is_some_and(|k| k != *key) =>
            {
                // Another subflow opened the connection while this one's
                // Hello was late (see `start_joins`), and the answer came
                // from an endpoint that keys its stateless answers by
                // address: it names a connection the server never set up.
                // Keep the key we have and join like any later subflow. (The
                // same key means the connection itself answered: establish.)
                self.subflows[i].join = JoinState::Pending;
                self.unjoined += 1;
                self.start_joins();
                Verdict::Drop
            }
            (JoinState::Hello, Some(Control::HelloReply { key, stamp }), Frame::Ack(_)) => {
                self.session.set_remote_key(*key);
                let control = Control::Establish { client_key: local_key, server_key: *key, echo: *stamp };
                self.subflows[i].join = JoinState::Confirm { control, first_pn: None, replied: now };
                self.establish(now, i);
                Verdict::Process
            }
            (
                JoinState::Join { nonce },
                Some(Control::JoinReply { mac, nonce: server_nonce, stamp }),
                Frame::Ack(_),
            ) => {
                let Some(server_key) = self.session.remote_key() else { return Verdict::Drop };
                let expect = truncated(join_mac(crypto, server_key, local_key, *server_nonce, *nonce));
                if *mac != expect {
                    // Not the server we opened the connection with.
                    self.invalid_packets += 1;
                    self.remove_subflow(Self::id(i));
                    return Verdict::Drop;
                }
                let mac = join_mac(crypto, local_key, server_key, *nonce, *server_nonce);
                let control = Control::JoinAck { mac, echo: *stamp };
                self.subflows[i].join = JoinState::Confirm { control, first_pn: None, replied: now };
                self.establish(now, i);
                Verdict::Process
            }
            // Nothing but the reply opens a joining subflow.
            (JoinState::Pending | JoinState::Hello | JoinState::Join { .. }, _, _) => Verdict::Drop,
            _ => Verdict::Process,
        }
    }

    fn server_handshake(&mut self, now: Instant, i: usize, packet: &Packet) -> Verdict {
        let crypto = &*self.session.crypto;
        let local_key = self.session.local_key;
        match (&self.subflows[i].join, packet.control.as_deref()) {
            // A (repeated) Hello: answer with our key.
            (JoinState::AwaitEstablish, Some(Control::Hello { key })) => {
                if self.session.remote_key().is_some_and(|k| k != *key) {
                    return Verdict::Drop;
                }
                self.session.set_remote_key(*key);
                self.subflows[i].reply = Some(Control::HelloReply { key: local_key, stamp: micros(now) });
                Verdict::Process
            }
            (JoinState::AwaitEstablish, Some(Control::Establish { client_key, server_key, echo })) => {
                if Some(*client_key) != self.session.remote_key() || *server_key != local_key {
                    self.invalid_packets += 1;
                    return Verdict::Drop;
                }
                self.subflows[i].join = JoinState::Done;
                self.establish(now, i);
                self.rtt_from_echo(now, i, *echo);
                Verdict::Process
            }
            (JoinState::AwaitJoinAck { client_nonce, server_nonce, .. }, Some(Control::Join { nonce, .. })) => {
                // The client re-sent its Join: answer it again. A Join with
                // another nonce starts over (nothing here was authenticated
                // yet, so a forged half-open join cannot lock the client out).
                if nonce != client_nonce {
                    self.forget_join(i);
                    return match self.accept_subflow(now, i, packet) {
                        true => Verdict::Process,
                        false => Verdict::Drop,
                    };
                }
                let client_key = self.session.remote_key().unwrap_or_default();
                let mac = truncated(join_mac(crypto, local_key, client_key, *server_nonce, *client_nonce));
                self.subflows[i].reply = Some(Control::JoinReply { mac, nonce: *server_nonce, stamp: micros(now) });
                Verdict::Process
            }
            (JoinState::AwaitJoinAck { client_nonce, server_nonce, .. }, Some(Control::JoinAck { mac, echo })) => {
                let client_key = self.session.remote_key().unwrap_or_default();
                if *mac != join_mac(crypto, client_key, local_key, *client_nonce, *server_nonce) {
                    // RFC 8684 §3.2: a join whose HMAC fails is reset. (A
                    // client that took an older reply of a join this side
                    // had forgotten and answered again confirms with the
                    // older nonce, and would otherwise try forever.)
                    self.invalid_packets += 1;
                    self.forget_join(i);
                    self.reset_subflow(Self::id(i));
                    return Verdict::Drop;
                }
                self.subflows[i].join = JoinState::Done;
                self.establish(now, i);
                self.rtt_from_echo(now, i, *echo);
                Verdict::Process
            }
            // Until the handshake completes, only its own packets count.
            (JoinState::AwaitEstablish | JoinState::AwaitJoinAck { .. }, _) => Verdict::Drop,
            _ => Verdict::Process,
        }
    }

    /// Server: a packet on subflow `i`, which is not open here, may open it:
    /// `Hello` (with the client's key, if one is known already), `Establish`
    /// with both keys, or `Join` with our token once the keys are known.
    /// Returns whether it did.
    pub(super) fn accept_subflow(&mut self, now: Instant, i: usize, packet: &Packet) -> bool {
        if self.session.side != Side::Server || !matches!(packet.frame, Frame::Data(_)) {
            return false;
        }
        let state = match (packet.control.as_deref(), self.session.remote_key()) {
            (Some(Control::Hello { key }), k) if k.is_none_or(|k| k == *key) => JoinState::AwaitEstablish,
            // A subflow whose Hello raced the one that set the connection
            // up, answered without state by an endpoint that keys its
            // answers by address, with the same key when both came from one
            // address: its client took the answer for the connection's and
            // confirms with both keys. It opens as if its Hello had come
            // here, and `server_handshake` checks the keys and completes it.
            (Some(Control::Establish { client_key, server_key, .. }), Some(k))
                if *client_key == k && *server_key == self.session.local_key =>
            {
                JoinState::AwaitEstablish
            }
            (Some(Control::Join { token, nonce, .. }), Some(client_key)) if *token == self.session.local_token() => {
                let server_nonce = self.session.next_nonce();
                let mac = truncated(join_mac(
                    self.session.crypto.as_ref(),
                    self.session.local_key,
                    client_key,
                    server_nonce,
                    *nonce,
                ));
                self.open_slot(i, matches!(packet.control.as_deref(), Some(Control::Join { backup: true, .. })));
                // As long as a path may be down before the connection gives
                // up: a client whose JoinAck was lost in an outage re-sends
                // it, and a slot forgotten by then would never open.
                let expires = now + self.config.failure_timeout;
                self.subflows[i].join = JoinState::AwaitJoinAck { client_nonce: *nonce, server_nonce, expires };
                self.subflows[i].reply = Some(Control::JoinReply { mac, nonce: server_nonce, stamp: micros(now) });
                return true;
            }
            _ => return false,
        };
        if self.subflows.get(i).is_some_and(|s| s.state != Lifecycle::Vacant) {
            return false;
        }
        self.open_slot(i, false);
        self.subflows[i].join = state;
        true
    }

    /// Server: when subflow `sf`'s half-open join expires, if it is one.
    pub(super) fn join_expiry(sf: &Subflow) -> Option<Instant> {
        match sf.join {
            JoinState::AwaitJoinAck { expires, .. } => Some(expires),
            _ => None,
        }
    }

    /// Server: frees the slots of joins that did not complete in time.
    pub(super) fn expire_joins(&mut self, now: Instant) {
        for i in 0..self.subflows.len() {
            if matches!(self.subflows[i].join, JoinState::AwaitJoinAck { expires, .. } if expires <= now)
                && self.subflows[i].is_open()
            {
                self.forget_join(i);
            }
        }
    }

    /// Server: frees the slot of subflow `i`, a join that never completed
    /// (nothing was sent or received on it, so nothing is reinjected).
    fn forget_join(&mut self, i: usize) {
        self.subflows[i] = Subflow::vacant(self.config.mss);
        self.cc.on_path_removed(i);
    }

    /// Server: opens subflow `i`, whose opening was answered without state,
    /// to wait for the client's `Establish`.
    pub(super) fn open_awaiting_establish(&mut self, i: usize) {
        self.open_slot(i, false);
        self.subflows[i].join = JoinState::AwaitEstablish;
    }

    /// Server: opens subflow `i` (creating empty slots below it).
    fn open_slot(&mut self, i: usize, backup: bool) {
        // Room for these only (see `Connection::add_subflow`).
        self.subflows.reserve_exact((i + 1).saturating_sub(self.subflows.len()));
        while self.subflows.len() <= i {
            self.subflows.push(Subflow::vacant(self.config.mss));
        }
        self.subflows[i] = self.new_subflow(backup);
        self.forget_raise(i);
        self.send_tuner.forget(i);
        self.cc.on_path_added(i, self.config.mss, self.config.initial_window);
    }

    /// Server: the client's confirmation on subflow `i` echoed the stamp of
    /// our reply plus the time it held it: the time since the reply is the
    /// subflow's first RTT sample, as Linux's server takes one from the
    /// SYN-ACK's ACK (`tcp_synack_rtt_meas`). A reply answered without
    /// state is covered too, as SYN cookies' echoed timestamps cover it.
    /// The echo is not authenticated (nor are TCP's timestamps): a client
    /// can only mislead its own connection, and a sample over a minute (an
    /// echo from the future, or garbage) is ignored; a zero one counts as
    /// 1 us.
    fn rtt_from_echo(&mut self, now: Instant, i: usize, echo: u32) {
        let sample = u64::from(micros(now).wrapping_sub(echo));
        let sf = &mut self.subflows[i];
        if sample <= 60_000_000 && sf.rtt.samples() == 0 {
            // At least 1 us, as Linux takes a zero delta for one tick.
            sf.rtt.on_sample(Duration::from_micros(sample.max(1)));
        }
    }

    /// Subflow `i` completed its handshake on this side. A client sends
    /// its confirmation at once on a packet of its own (MPTCP's third ACK),
    /// so the server completes the subflow whether or not data follows.
    fn establish(&mut self, now: Instant, i: usize) {
        let sf = &mut self.subflows[i];
        if !sf.is_established() {
            sf.on_established();
            sf.penalty_stamp = now;
            self.events.push_back(Event::SubflowEstablished { subflow: Self::id(i) });
        }
    }
}

/// A clock in microseconds, wrapping every 71 minutes: the stamps the
/// handshake's replies carry and its confirmations echo.
pub(crate) fn micros(t: Instant) -> u32 {
    (t.as_nanos() / 1000) as u32
}
