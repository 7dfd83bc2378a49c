//! The endpoint: turns datagrams into packets for the right connection,
//! accepts new connections, and answers openings without keeping state
//! (quinn-proto's `endpoint.rs` habit: a `Connection` never sees a packet
//! that is not its own).
//!
//! Routing is by the connection id in each packet's header, which is the
//! receiving side's token; a subflow's address may change (a NAT rebinding,
//! a new interface) and its packets still arrive. Joins name their
//! connection only by that token.
//!
//! Opening without state: a client's `Hello` (cid 0) is answered with the
//! server's key, derived from a server secret, the client's key and the
//! client's address (`HMAC(secret, client key || address)`), and nothing is
//! stored. A connection is created only when a packet arrives carrying
//! `Establish` with both keys, the derived key matching. A datagram for no
//! connection creates nothing, and the only reply ever sent to one (the
//! Hello answer) is no larger than the datagram it answers: Hellos are
//! padded (see `wire::encode`), so the endpoint cannot be used to amplify
//! traffic towards a forged source address.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::cc;
use crate::config::Config;
use crate::connection::Connection;
use crate::crypto::{token, truncated, Crypto};
use crate::packet::{AckFrame, Control, Frame, Packet, SubflowId, MAX_SACK_BLOCKS};
use crate::sched;
use crate::time::Instant;
use crate::wire::{self, DecodeError, Header};

/// What every connection of an endpoint is made with.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    pub connection: Config,
    /// Congestion controller and scheduler names (`cc::ALGORITHMS`,
    /// `sched::ALGORITHMS`) and the scheduler's settings.
    pub cc: String,
    pub scheduler: String,
    pub sched_settings: sched::Settings,
    pub crypto: Arc<dyn Crypto>,
    /// Keys the server's answers to openings; random, kept secret.
    pub secret: [u8; 32],
    /// Connections held at most; openings beyond are not answered.
    pub max_connections: usize,
    /// Accept data packets without their bytes (the simulator's synthetic
    /// payloads); never on a real network.
    pub allow_synthetic: bool,
}

/// A connection's controller and scheduler.
type Algorithms = (Box<dyn cc::Controller>, Box<dyn sched::Scheduler>);

/// A connection of this endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionHandle(pub usize);

/// What became of a datagram.
#[derive(Debug, PartialEq, Eq)]
pub enum DatagramEvent {
    /// It went to a connection (`new`: just accepted), on `subflow`
    /// (`opened`: the datagram opened that subflow here, a new connection's
    /// first or a join, also one re-opening the slot of a join this side had
    /// forgotten: a subflow sized for its route must be sized again).
    Connection { handle: ConnectionHandle, new: bool, subflow: SubflowId, opened: bool },
    /// Send these bytes back to the datagram's source: the answer to an
    /// opening, for which no state was kept.
    Reply(Vec<u8>),
    /// Dropped.
    Dropped(Drop),
}

/// Why a datagram was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    Malformed(DecodeError),
    /// For no connection here, and not an opening.
    UnknownConnection,
    /// An opening or `Establish` whose keys do not check out.
    BadHandshake,
    /// The answer would be larger than the datagram (an unpadded opening).
    WouldAmplify,
    /// At the connection limit.
    Full,
    /// Synthetic payload on an endpoint that refuses it.
    Synthetic,
    /// An opening or `Establish` where this side does not accept
    /// connections (a client's own socket: `Endpoint::handle_connected`).
    NotListening,
    /// The connection refused the packet (`Packet::check`).
    Refused,
    /// The connection ignored it (`Connection::handle_datagram`): for a
    /// subflow it cannot open, or a handshake packet that did not check out.
    Ignored,
}

/// Counts of what the endpoint did with datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    pub datagrams: u64,
    pub dropped: u64,
    pub replies: u64,
    pub accepted: u64,
}

#[derive(Debug)]
pub struct Endpoint {
    config: EndpointConfig,
    connections: Vec<Option<Connection>>,
    free: Vec<usize>,
    by_token: BTreeMap<u64, usize>,
    stats: EndpointStats,
}

impl Endpoint {
    pub fn new(config: EndpointConfig) -> Self {
        Endpoint {
            config,
            connections: Vec::new(),
            free: Vec::new(),
            by_token: BTreeMap::new(),
            stats: Default::default(),
        }
    }

    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// Connections held.
    pub fn len(&self) -> usize {
        self.by_token.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_token.is_empty()
    }

    pub fn connection(&mut self, h: ConnectionHandle) -> Option<&mut Connection> {
        self.connections.get_mut(h.0).and_then(Option::as_mut)
    }

    /// Every connection's handle, oldest first.
    pub fn handles(&self) -> Vec<ConnectionHandle> {
        (0..self.connections.len()).filter(|&i| self.connections[i].is_some()).map(ConnectionHandle).collect()
    }

    /// Forgets a connection (finished, failed or abandoned).
    pub fn remove(&mut self, h: ConnectionHandle) -> Option<Connection> {
        let c = self.connections.get_mut(h.0)?.take()?;
        self.by_token.remove(&c.token());
        self.free.push(h.0);
        Some(c)
    }

    fn parts(&self) -> Result<Algorithms, Drop> {
        let c = cc::by_name(&self.config.cc).ok_or(Drop::Refused)?;
        let s = sched::build(&self.config.scheduler, &self.config.sched_settings).map_err(|_| Drop::Refused)?;
        Ok((c, s))
    }

    fn insert(&mut self, conn: Connection) -> ConnectionHandle {
        let token = conn.token();
        let i = match self.free.pop() {
            Some(i) => {
                self.connections[i] = Some(conn);
                i
            }
            None => {
                self.connections.push(Some(conn));
                self.connections.len() - 1
            }
        };
        self.by_token.insert(token, i);
        ConnectionHandle(i)
    }

    /// Opens a client connection with random `key` (the caller adds its
    /// subflows). `None` if the key's token is taken here.
    pub fn connect(&mut self, key: u64) -> Option<ConnectionHandle> {
        if self.by_token.contains_key(&token(self.config.crypto.as_ref(), key)) {
            return None;
        }
        let (c, s) = self.parts().ok()?;
        let conn = Connection::client(self.config.connection.clone(), c, s, key, Arc::clone(&self.config.crypto));
        Some(self.insert(conn))
    }

    /// The server key answering client key `client` from `remote`.
    fn server_key(&self, client: u64, remote: SocketAddr) -> u64 {
        let ip = match remote.ip() {
            std::net::IpAddr::V4(ip) => ip.to_ipv6_mapped().octets(),
            std::net::IpAddr::V6(ip) => ip.octets(),
        };
        let mac = self
            .config
            .crypto
            .hmac_sha256(&self.config.secret, &[&client.to_be_bytes(), &ip, &remote.port().to_be_bytes()]);
        u64::from_be_bytes(truncated(mac))
    }

    /// Handles one datagram from `remote`, which may open a connection.
    pub fn handle(&mut self, now: Instant, remote: SocketAddr, datagram: &[u8]) -> DatagramEvent {
        self.handle_on(now, remote, datagram, true)
    }

    /// Handles one datagram from `remote` that may only belong to a
    /// connection this endpoint holds: an opening is dropped
    /// (`Drop::NotListening`), as a TCP client's connected socket accepts
    /// no SYN. For a client's own sockets, whose addresses anyone who sees
    /// the client's packets can learn.
    pub fn handle_connected(&mut self, now: Instant, remote: SocketAddr, datagram: &[u8]) -> DatagramEvent {
        self.handle_on(now, remote, datagram, false)
    }

    fn handle_on(&mut self, now: Instant, remote: SocketAddr, datagram: &[u8], accept: bool) -> DatagramEvent {
        self.stats.datagrams += 1;
        let event = self.route(now, remote, datagram, accept);
        match &event {
            DatagramEvent::Dropped(_) => self.stats.dropped += 1,
            DatagramEvent::Reply(_) => self.stats.replies += 1,
            DatagramEvent::Connection { new: true, .. } => self.stats.accepted += 1,
            DatagramEvent::Connection { .. } => {}
        }
        event
    }

    fn route(&mut self, now: Instant, remote: SocketAddr, datagram: &[u8], accept: bool) -> DatagramEvent {
        let cid = match Header::new_checked(datagram) {
            Ok(h) => h.cid(),
            Err(e) => return DatagramEvent::Dropped(Drop::Malformed(e)),
        };
        let packet = match wire::decode(datagram) {
            Ok(p) => p,
            Err(e) => return DatagramEvent::Dropped(Drop::Malformed(e)),
        };
        if let Frame::Data(d) = &packet.frame {
            if d.len > 0 && d.payload.is_empty() && !self.config.allow_synthetic {
                return DatagramEvent::Dropped(Drop::Synthetic);
            }
        }
        let subflow = packet.subflow;
        if let Some(&i) = self.by_token.get(&cid) {
            let conn = self.connections[i].as_mut().expect("mapped connections exist");
            let was_open = conn.subflow_open(subflow);
            return match conn.handle_datagram(now, packet) {
                Ok(true) => {
                    let opened = !was_open && conn.subflow_open(subflow);
                    DatagramEvent::Connection { handle: ConnectionHandle(i), new: false, subflow, opened }
                }
                Ok(false) => DatagramEvent::Dropped(Drop::Ignored),
                Err(_) => DatagramEvent::Dropped(Drop::Refused),
            };
        }
        match (packet.control.as_deref(), &packet.frame) {
            (Some(Control::Hello { .. } | Control::Establish { .. }), _) if !accept => {
                DatagramEvent::Dropped(Drop::NotListening)
            }
            (Some(Control::Hello { key }), Frame::Data(d)) if cid == 0 && d.len == 0 => {
                self.answer_hello(now, remote, *key, &packet, d.pn, datagram.len())
            }
            (Some(Control::Establish { client_key, server_key, .. }), _) => {
                self.accept(now, remote, *client_key, *server_key, cid, packet)
            }
            _ => DatagramEvent::Dropped(Drop::UnknownConnection),
        }
    }

    fn answer_hello(
        &self,
        now: Instant,
        remote: SocketAddr,
        client_key: u64,
        hello: &Packet,
        pn: u64,
        size: usize,
    ) -> DatagramEvent {
        if self.len() >= self.config.max_connections {
            return DatagramEvent::Dropped(Drop::Full);
        }
        let c = &self.config.connection;
        let window = if c.recv_autotune { crate::autotune::AUTOTUNE_INITIAL.min(c.recv_buffer) } else { c.recv_buffer };
        let frame = Frame::Ack(AckFrame {
            cumulative: pn + 1,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            sack_len: 0,
            data_ack: 0,
            window_end: window,
        });
        let reply = Packet {
            cid: token(self.config.crypto.as_ref(), client_key),
            subflow: hello.subflow,
            frame,
            control: Some(Box::new(Control::HelloReply {
                key: self.server_key(client_key, remote),
                stamp: crate::connection::micros(now),
            })),
        };
        let mut bytes = Vec::new();
        wire::encode(&reply, &mut bytes);
        if bytes.len() > size {
            return DatagramEvent::Dropped(Drop::WouldAmplify);
        }
        DatagramEvent::Reply(bytes)
    }

    fn accept(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        client_key: u64,
        server_key: u64,
        cid: u64,
        packet: Packet,
    ) -> DatagramEvent {
        let crypto = Arc::clone(&self.config.crypto);
        if server_key != self.server_key(client_key, remote) || cid != token(crypto.as_ref(), server_key) {
            return DatagramEvent::Dropped(Drop::BadHandshake);
        }
        if self.len() >= self.config.max_connections {
            return DatagramEvent::Dropped(Drop::Full);
        }
        let (c, s) = match self.parts() {
            Ok(p) => p,
            Err(d) => return DatagramEvent::Dropped(d),
        };
        let subflow = packet.subflow;
        let conn = Connection::accepted(self.config.connection.clone(), c, s, server_key, client_key, crypto, subflow);
        let handle = self.insert(conn);
        let conn = self.connection(handle).expect("just inserted");
        match conn.handle_datagram(now, packet) {
            Ok(true) => DatagramEvent::Connection { handle, new: true, subflow, opened: true },
            Ok(false) | Err(_) => {
                self.remove(handle);
                DatagramEvent::Dropped(Drop::Refused)
            }
        }
    }
}
