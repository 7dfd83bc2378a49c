//! The event loop: one [`Endpoint`] of the core, driven over UDP sockets
//! with the wall clock.
//!
//! A `Node` owns
//! - the sockets: those it listens on (a server's, shared by all its
//!   connections), and one per client subflow, bound to the subflow's
//!   local address or interface (ndiffports: one per subflow on the same
//!   address, so each has its own source port);
//! - the address-to-subflow map: where each subflow's packets go (socket,
//!   remote address, source address). A server learns it from the packets
//!   it receives and follows the last one, so a subflow survives a NAT
//!   rebinding or an address change (routing is by connection id);
//! - each client connection's path manager, whose commands it carries out.
//!
//! [`Node::drive`] is one turn of the loop: send what the connections
//! allow, sleep until a socket is readable or the earliest timer
//! (`poll_timeout`: retransmission, delayed ACK, pacing) is due, receive
//! in batches, run due timers, hand events to the path managers and the
//! application. Everything runs on the caller's thread: no runtime, no
//! locks, and a connection makes progress only while someone drives it
//! ([`crate::Stream`] does that inside its blocking calls).

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use braid_proto::crypto::RustCrypto;
use braid_proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, EndpointStats};
use braid_proto::path_manager::{PathCommand, PathManager, PathPolicy};
use braid_proto::{wire, Connection, Event, Instant, SubflowId};
use quinn_udp::RecvMeta;

use crate::batch::{Batch, Route, SendStats};
use crate::clock::Clock;
use crate::config::NetConfig;
use crate::socket::{self, LocalAddr, Socket, RECV_BATCH, RECV_BUF};

/// Receive batches handled per socket per turn, so a flood on one socket
/// does not starve timers and sending.
const RECV_ROUNDS: usize = 64;

/// What happened to a connection, for the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetEvent {
    /// A client opened this connection (server side).
    Accepted,
    /// The connection reported this.
    Protocol(Event),
    /// A subflow could not get a socket (its local address or interface is
    /// missing); it stays without a path and fails like a dead one.
    PathError { subflow: Option<SubflowId>, error: String },
    /// Heard nothing for the idle timeout: forgotten.
    TimedOut,
    /// Finished (both directions closed) and forgotten after the linger.
    Removed,
}

/// Counts of the node's I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    pub endpoint: EndpointStats,
    pub sent: SendStats,
    /// `recvmmsg` calls and the datagrams they returned (GRO batches split).
    pub recv_calls: u64,
    pub received: u64,
    /// Packets for a subflow with no known address (never sent).
    pub unroutable: u64,
}

/// Where one subflow's packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Path {
    socket: usize,
    remote: SocketAddr,
    /// The source address to send from: where the peer sent to, for a
    /// listening socket bound to a wildcard address. A client's socket
    /// leaves it to the routing table, which follows the host's addresses
    /// as they change (a pinned address that went away fails every send).
    source: Option<IpAddr>,
    /// The local address the peer's packets last arrived at (a wildcard
    /// socket's, for reports).
    seen: Option<IpAddr>,
}

#[derive(Debug)]
struct Conn {
    paths: BTreeMap<SubflowId, Path>,
    /// Client: the path manager and the interfaces of its local addresses.
    manager: Option<PathManager>,
    devices: Vec<(SocketAddr, Option<String>)>,
    /// Client: sockets opened for this connection's subflows.
    sockets: Vec<usize>,
    last_heard: Instant,
    finished_at: Option<Instant>,
    /// The connection id on packets to the peer (its token), once known.
    peer_token: u64,
}

impl Conn {
    fn new(now: Instant) -> Self {
        Conn {
            paths: BTreeMap::new(),
            manager: None,
            devices: Vec::new(),
            sockets: Vec::new(),
            last_heard: now,
            finished_at: None,
            peer_token: 0,
        }
    }
}

pub struct Node {
    config: NetConfig,
    clock: Clock,
    endpoint: Endpoint,
    sockets: Vec<Option<Socket>>,
    listening: Vec<usize>,
    conns: BTreeMap<ConnectionHandle, Conn>,
    events: VecDeque<(ConnectionHandle, NetEvent)>,
    batch: Batch,
    recv_storage: Vec<u8>,
    recv_calls: u64,
    received: u64,
    unroutable: u64,
    ready: Vec<bool>,
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("the OS random source works");
    u64::from_ne_bytes(b)
}

impl Node {
    /// A node with no sockets yet: [`Node::listen`] to accept
    /// connections, [`Node::connect`] to open them.
    pub fn new(config: NetConfig) -> Node {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the OS random source works");
        let endpoint = Endpoint::new(EndpointConfig {
            connection: config.connection.clone(),
            cc: config.cc.clone(),
            scheduler: config.scheduler.clone(),
            sched_settings: config.sched_settings,
            crypto: Arc::new(RustCrypto),
            secret,
            max_connections: config.max_connections,
            allow_synthetic: false,
        });
        Node {
            config,
            clock: Clock::default(),
            endpoint,
            sockets: Vec::new(),
            listening: Vec::new(),
            conns: BTreeMap::new(),
            events: VecDeque::new(),
            batch: Batch::default(),
            recv_storage: vec![0; RECV_BATCH * RECV_BUF],
            recv_calls: 0,
            received: 0,
            unroutable: 0,
            ready: Vec::new(),
        }
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Now on the node's clock (the connections' time).
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    fn add_socket(&mut self, local: &LocalAddr) -> io::Result<usize> {
        let s = Socket::bind(local)?;
        match self.sockets.iter().position(Option::is_none) {
            Some(i) => {
                self.sockets[i] = Some(s);
                Ok(i)
            }
            None => {
                self.sockets.push(Some(s));
                Ok(self.sockets.len() - 1)
            }
        }
    }

    /// Accepts connections on `local`; returns the address bound (its port
    /// chosen by the OS if 0). A connection opened on one listening
    /// address is told of the others (ADD_ADDR), so a full-mesh client
    /// opens subflows to them too.
    pub fn listen(&mut self, local: &LocalAddr) -> io::Result<SocketAddr> {
        let i = self.add_socket(local)?;
        self.listening.push(i);
        Ok(self.sockets[i].as_ref().expect("just bound").local_addr())
    }

    /// Opens a connection to `remote` from `locals` (address or interface,
    /// backup), subflows chosen by `policy`; the first local opens the
    /// connection. No locals: one subflow from the wildcard address.
    pub fn connect(
        &mut self,
        remote: SocketAddr,
        locals: &[(LocalAddr, bool)],
        policy: PathPolicy,
    ) -> io::Result<ConnectionHandle> {
        let wildcard: IpAddr =
            if remote.is_ipv4() { Ipv4Addr::UNSPECIFIED.into() } else { Ipv6Addr::UNSPECIFIED.into() };
        let locals = match locals {
            [] => vec![(LocalAddr { addr: SocketAddr::new(wildcard, 0), device: None }, false)],
            l => l.to_vec(),
        };
        let h = loop {
            if let Some(h) = self.endpoint.connect(random_u64() | 1) {
                break h;
            }
        };
        let addrs: Vec<(SocketAddr, bool)> = locals.iter().map(|(l, b)| (l.addr, *b)).collect();
        let mut conn = Conn::new(self.now());
        conn.manager = Some(PathManager::new(policy, &addrs, remote));
        conn.devices = locals.iter().map(|(l, _)| (l.addr, l.device.clone())).collect();
        self.conns.insert(h, conn);
        self.run_commands(h);
        // The first subflow must have a socket, or nothing can open.
        let first = self.conns[&h].paths.keys().next().copied();
        if first != Some(SubflowId(0)) {
            let why = self.events.iter().rev().find_map(|(c, e)| match e {
                NetEvent::PathError { error, .. } if *c == h => Some(error.clone()),
                _ => None,
            });
            self.remove(h);
            return Err(io::Error::other(why.unwrap_or_else(|| "no subflow could be opened".into())));
        }
        Ok(h)
    }

    pub fn connection(&mut self, h: ConnectionHandle) -> Option<&mut Connection> {
        self.endpoint.connection(h)
    }

    /// Connections held, oldest first.
    pub fn handles(&self) -> Vec<ConnectionHandle> {
        self.conns.keys().copied().collect()
    }

    /// Where subflow `subflow` of `h` sends: (local address, remote address).
    pub fn subflow_addrs(&self, h: ConnectionHandle, subflow: SubflowId) -> Option<(SocketAddr, SocketAddr)> {
        let p = self.conns.get(&h)?.paths.get(&subflow)?;
        let local = self.sockets.get(p.socket)?.as_ref()?.local_addr();
        let local = match p.seen {
            Some(ip) if local.ip().is_unspecified() => SocketAddr::new(ip, local.port()),
            _ => local,
        };
        Some((local, p.remote))
    }

    /// The connection id on this connection's packets to its peer (the
    /// peer's token), once known.
    pub fn peer_token(&self, h: ConnectionHandle) -> Option<u64> {
        self.conns.get(&h).map(|c| c.peer_token).filter(|&t| t != 0)
    }

    pub fn poll_event(&mut self) -> Option<(ConnectionHandle, NetEvent)> {
        self.events.pop_front()
    }

    pub fn stats(&self) -> NodeStats {
        NodeStats {
            endpoint: self.endpoint.stats(),
            sent: self.batch.stats,
            recv_calls: self.recv_calls,
            received: self.received,
            unroutable: self.unroutable,
        }
    }

    /// Forgets a connection and closes its sockets.
    pub fn remove(&mut self, h: ConnectionHandle) {
        self.endpoint.remove(h);
        if let Some(c) = self.conns.remove(&h) {
            for s in c.sockets {
                self.sockets[s] = None;
            }
        }
    }

    /// One turn of the loop; returns once something was received or a
    /// timer ran, or after `timeout` (`None`: no limit besides timers).
    pub fn drive(&mut self, timeout: Option<std::time::Duration>) -> io::Result<()> {
        let now = self.now();
        self.run_timers(now);
        self.process_events();
        self.transmit(now);
        let now = self.now();
        let mut wait = self.next_deadline().map(|d| d.saturating_since(now).as_nanos());
        if let Some(t) = timeout {
            let t = t.as_nanos().min(u128::from(u64::MAX)) as u64;
            wait = Some(wait.map_or(t, |w| w.min(t)));
        }
        let fds: Vec<_> = self.sockets.iter().map(|s| s.as_ref().map_or(-1, Socket::fd)).collect();
        let mut ready = std::mem::take(&mut self.ready);
        socket::wait_readable(&fds, wait, &mut ready)?;
        let now = self.now();
        for (i, &r) in ready.iter().enumerate() {
            if r {
                self.receive(i, now)?;
            }
        }
        self.ready = ready;
        self.run_timers(now);
        self.process_events();
        self.transmit(now);
        Ok(())
    }

    /// The earliest time something is due: a connection's timer, an idle
    /// timeout, the end of a linger.
    fn next_deadline(&mut self) -> Option<Instant> {
        let (idle, linger) = (self.config.idle_timeout, self.config.linger);
        let mut next: Option<Instant> = None;
        for (&h, c) in &self.conns {
            let conn = self.endpoint.connection(h);
            let mut at = conn.and_then(|c| c.poll_timeout());
            if c.manager.is_none() {
                at = min_opt(at, Some(c.last_heard + to_proto(idle)));
            }
            if let Some(f) = c.finished_at {
                at = min_opt(at, Some(f + to_proto(linger)));
            }
            next = min_opt(next, at);
        }
        next
    }

    fn run_timers(&mut self, now: Instant) {
        let (idle, linger) = (to_proto(self.config.idle_timeout), to_proto(self.config.linger));
        let mut gone = Vec::new();
        for (&h, c) in self.conns.iter_mut() {
            let Some(conn) = self.endpoint.connection(h) else { continue };
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
            if conn.is_finished() {
                let since = *c.finished_at.get_or_insert(now);
                if now >= since + linger {
                    gone.push((h, NetEvent::Removed));
                }
            } else if c.manager.is_none() && now >= c.last_heard + idle {
                // Server side only: a client's connection ends by its own
                // failure timeout, with the reason.
                gone.push((h, NetEvent::TimedOut));
            }
        }
        for (h, e) in gone {
            self.drain_events(h);
            self.remove(h);
            self.events.push_back((h, e));
        }
    }

    /// Moves the connections' events to the path managers and the
    /// application, and carries out the path managers' commands.
    fn process_events(&mut self) {
        for h in self.handles() {
            self.drain_events(h);
            self.run_commands(h);
        }
    }

    fn drain_events(&mut self, h: ConnectionHandle) {
        let (Some(conn), Some(c)) = (self.endpoint.connection(h), self.conns.get_mut(&h)) else { return };
        while let Some(e) = conn.poll_event() {
            if let Some(m) = c.manager.as_mut() {
                m.on_event(&e);
            }
            self.events.push_back((h, NetEvent::Protocol(e)));
        }
    }

    fn run_commands(&mut self, h: ConnectionHandle) {
        loop {
            let Some(cmd) = self.conns.get_mut(&h).and_then(|c| c.manager.as_mut()).and_then(PathManager::poll_command)
            else {
                return;
            };
            match cmd {
                PathCommand::Open { local, remote, backup, .. } => self.open_subflow(h, local, remote, backup),
                PathCommand::Close { subflow } => {
                    if let Some(conn) = self.endpoint.connection(h) {
                        conn.remove_subflow(subflow);
                    }
                    let c = self.conns.get_mut(&h).expect("checked above");
                    if let Some(p) = c.paths.remove(&subflow) {
                        c.sockets.retain(|&s| s != p.socket);
                        self.sockets[p.socket] = None;
                    }
                }
            }
        }
    }

    /// Carries out a path manager's `Open`: a socket on `local` (with its
    /// interface), a subflow, and the subflow's path.
    fn open_subflow(&mut self, h: ConnectionHandle, local: SocketAddr, remote: SocketAddr, backup: bool) {
        let device = self.conns[&h].devices.iter().find(|d| d.0 == local).and_then(|d| d.1.clone());
        let local = LocalAddr { addr: local, device };
        let bound = self.add_socket(&local);
        let Some(conn) = self.endpoint.connection(h) else { return };
        let subflow = match conn.add_subflow(backup) {
            Ok(id) => {
                fit_to_route(conn, id, &local, remote);
                id
            }
            Err(e) => {
                if let Ok(s) = bound {
                    self.sockets[s] = None;
                }
                self.events.push_back((h, NetEvent::PathError { subflow: None, error: e.to_string() }));
                return;
            }
        };
        let c = self.conns.get_mut(&h).expect("connection exists");
        if let Some(m) = c.manager.as_mut() {
            m.opened(subflow);
        }
        match bound {
            Ok(socket) => {
                c.sockets.push(socket);
                c.paths.insert(subflow, Path { socket, remote, source: None, seen: None });
            }
            Err(e) => self.events.push_back((h, NetEvent::PathError { subflow: Some(subflow), error: e.to_string() })),
        }
    }

    /// Receives everything waiting on socket `s` (up to a bound).
    fn receive(&mut self, s: usize, now: Instant) -> io::Result<()> {
        let mut storage = std::mem::take(&mut self.recv_storage);
        let mut meta = [RecvMeta::default(); RECV_BATCH];
        let mut result = Ok(());
        for _ in 0..RECV_ROUNDS {
            let Some(sock) = self.sockets.get(s).and_then(Option::as_ref) else { break };
            let n = {
                let mut bufs: [IoSliceMut<'_>; RECV_BATCH] = {
                    let mut chunks = storage.chunks_mut(RECV_BUF);
                    std::array::from_fn(|_| IoSliceMut::new(chunks.next().expect("RECV_BATCH chunks")))
                };
                match sock.recv(&mut bufs, &mut meta) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // An ICMP error queued on the socket (a path's far end
                    // unreachable) is not fatal: the protocol times out.
                    Err(e)
                        if e.raw_os_error().is_some_and(|c| {
                            c == libc::ECONNREFUSED || c == libc::EHOSTUNREACH || c == libc::ENETUNREACH
                        }) =>
                    {
                        continue
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            };
            self.recv_calls += 1;
            for (m, buf) in meta[..n].iter().zip(storage.chunks(RECV_BUF)) {
                if m.len == 0 {
                    // An empty datagram: malformed, and counted as such.
                    self.on_datagram(s, m.addr, m.dst_ip, &[], now);
                }
                let stride = if m.stride == 0 { m.len } else { m.stride };
                for datagram in buf[..m.len].chunks(stride.max(1)) {
                    self.on_datagram(s, m.addr, m.dst_ip, datagram, now);
                }
            }
        }
        self.recv_storage = storage;
        result
    }

    fn on_datagram(&mut self, s: usize, from: SocketAddr, to: Option<IpAddr>, datagram: &[u8], now: Instant) {
        self.received += 1;
        // Only a listening socket accepts connections: a client's sockets
        // carry its own connection's packets and nothing else.
        let listening = self.listening.contains(&s);
        let event = match listening {
            true => self.endpoint.handle(now, from, datagram),
            false => self.endpoint.handle_connected(now, from, datagram),
        };
        match event {
            DatagramEvent::Reply(bytes) => {
                // The answer to an opening: no state kept, sent at once.
                let route = Route { socket: s, remote: from, source: self.source_for(s, to) };
                self.batch.flush(&self.sockets);
                let start = self.batch.buffer().len();
                self.batch.buffer().extend_from_slice(&bytes);
                self.batch.push(&self.sockets, start, route);
                self.batch.flush(&self.sockets);
            }
            DatagramEvent::Connection { handle, new, subflow, opened } => {
                if new {
                    self.conns.insert(handle, Conn::new(now));
                    self.events.push_back((handle, NetEvent::Accepted));
                    self.advertise(handle, s);
                }
                let seen = self.source_for(s, to);
                let source = seen.filter(|_| listening);
                let Some(c) = self.conns.get_mut(&handle) else { return };
                c.last_heard = now;
                // The subflow's address follows its last packet.
                let socket = c.paths.get(&subflow).filter(|_| c.manager.is_some()).map_or(s, |p| p.socket);
                let new_path = c.paths.insert(subflow, Path { socket, remote: from, source, seen }).is_none();
                if let (true, Some(conn), Some(sock)) =
                    (new_path || opened, self.endpoint.connection(handle), self.sockets.get(s).and_then(Option::as_ref))
                {
                    // A subflow new to this side, or opened again in the slot
                    // of a join this side forgot (a fresh subflow, with the
                    // configured MSS): sized for the route back.
                    let addr = SocketAddr::new(seen.unwrap_or(sock.local_addr().ip()), 0);
                    fit_to_route(conn, subflow, &LocalAddr { addr, device: None }, from);
                }
            }
            DatagramEvent::Dropped(_) => {}
        }
    }

    /// The source address for replies on socket `s` to a datagram sent
    /// to `to`: only needed when `s` is bound to a wildcard address.
    fn source_for(&self, s: usize, to: Option<IpAddr>) -> Option<IpAddr> {
        let wildcard =
            self.sockets.get(s).and_then(Option::as_ref).is_some_and(|x| x.local_addr().ip().is_unspecified());
        to.filter(|_| wildcard)
    }

    /// Server: a new connection learns the other addresses it may use.
    fn advertise(&mut self, h: ConnectionHandle, arrived_on: usize) {
        let others: Vec<SocketAddr> = self
            .listening
            .iter()
            .filter(|&&i| i != arrived_on)
            .filter_map(|&i| self.sockets.get(i)?.as_ref().map(Socket::local_addr))
            .filter(|a| !a.ip().is_unspecified())
            .collect();
        if let Some(conn) = self.endpoint.connection(h) {
            for (id, addr) in others.into_iter().enumerate() {
                conn.advertise_address(id as u8 + 1, addr);
            }
        }
    }

    /// Sends everything the connections allow now, batched.
    fn transmit(&mut self, now: Instant) {
        let Node { endpoint, conns, batch, sockets, unroutable, .. } = self;
        for (&h, c) in conns.iter_mut() {
            let Some(conn) = endpoint.connection(h) else { continue };
            while let Some(p) = conn.poll_transmit(now) {
                if c.peer_token == 0 {
                    c.peer_token = p.cid;
                }
                let Some(path) = c.paths.get(&p.subflow) else {
                    *unroutable += 1;
                    continue;
                };
                let start = batch.buffer().len();
                wire::encode(&p, batch.buffer());
                let route = Route { socket: path.socket, remote: path.remote, source: path.source };
                batch.push(sockets, start, route);
            }
        }
        batch.flush(sockets);
    }
}

/// Caps subflow `id`'s packets at what the route from `local` to `remote`
/// carries, where the kernel knows its MTU (`crate::config::mss_for_mtu`).
fn fit_to_route(conn: &mut Connection, id: SubflowId, local: &LocalAddr, remote: SocketAddr) {
    if let Some(mtu) = crate::socket::route_mtu(local, remote) {
        conn.set_subflow_mss(id, crate::config::mss_for_mtu(mtu, remote.is_ipv4()));
    }
}

fn to_proto(d: std::time::Duration) -> braid_proto::Duration {
    braid_proto::Duration::from_nanos(d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listening socket bound to a wildcard address answers from the
    /// address its peer sent to; a client's wildcard socket leaves the
    /// source to the routing table (it pinned the first one it saw, and
    /// every send failed once the host lost that address), while its
    /// reports still show the address.
    #[test]
    fn only_a_listening_wildcard_socket_pins_its_source_address() {
        let loopback = IpAddr::from([127, 0, 0, 1]);
        let mut server = Node::new(NetConfig::default());
        let wildcard = LocalAddr { addr: SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0), device: None };
        let port = server.listen(&wildcard).unwrap().port();
        let mut client = Node::new(NetConfig::default());
        let h = client.connect(SocketAddr::new(loopback, port), &[], PathPolicy::FullMesh).unwrap();
        client.connection(h).unwrap().write(b"hello");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let opened = |n: &Node| n.conns.values().any(|c| c.paths.contains_key(&SubflowId(0)));
        while !(opened(&server) && client.conns[&h].paths[&SubflowId(0)].seen.is_some()) {
            assert!(std::time::Instant::now() < until, "the connection did not open");
            client.drive(Some(std::time::Duration::from_millis(5))).unwrap();
            server.drive(Some(std::time::Duration::from_millis(5))).unwrap();
        }
        let at_client = &client.conns[&h].paths[&SubflowId(0)];
        assert_eq!((at_client.source, at_client.seen), (None, Some(loopback)));
        assert_eq!(client.subflow_addrs(h, SubflowId(0)).unwrap().0.ip(), loopback, "reported");
        let at_server = &server.conns.values().next().unwrap().paths[&SubflowId(0)];
        assert_eq!(at_server.source, Some(loopback));
    }
}
