//! The simulator world: links, packets in the network, the two endpoints of
//! every flow, and the loop that runs events in virtual time.
//!
//! Each flow is a pair of `braid_proto::Connection`s: the sender at host A
//! runs the flow's application (bulk or sized transfer), the receiver at B
//! reads everything as soon as it is in order. A flow with one subflow and
//! an uncoupled controller is a regular single-path TCP flow.
//!
//! A packet stays in one slot from send to delivery; its handle lives in the
//! FIFO of the link it is on (see [`Link`]) and moves from link to link.
//! Each link has at most one pending event, for its head packet's arrival,
//! so a hop costs one event and the event queue holds about one entry per
//! busy link, not one per packet. Slots and FIFOs are reused, so a run in
//! steady state does not allocate per packet. Synthetic payloads carry no
//! bytes. Cross-traffic packets ([`CrossTraffic`]) have no slot at all:
//! their handle names their source instead.

use std::sync::Arc;

use braid_proto::crypto::{Crypto, RustCrypto};
use braid_proto::prefetch::{prefetch, prefetch_all};
use braid_proto::{
    cc, sched, wire, Config, Connection, ConnectionError, Event as ConnEvent, Frame, Instant, Packet, Side,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cross::{CrossOutcome, CrossTraffic};
use crate::delay::DelayHistogram;
use crate::event::{Event, EventQueue};
use crate::link::{Link, Offer};
use crate::metrics::{LinkSample, SampleSink, SubflowSample};
use crate::payload::PayloadStream;
use crate::source::{Source, MIN_WAKE_GAP};
use crate::topology::Topology;
use crate::write_log::WriteLog;

/// One flow as the simulator needs it.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    pub cc: String,
    pub scheduler: String,
    pub sched_settings: sched::Settings,
    pub config: Config,
    /// Per subflow: index of its path in the topology, and the backup flag.
    pub subflows: Vec<(usize, bool)>,
    pub start: Instant,
    /// Bytes to transfer; `None` for a transfer that lasts the whole run.
    pub size: Option<u64>,
    /// How the application writes: bulk or at a constant rate.
    pub source: Source,
    /// Send pseudo-random bytes and check every byte at the receiver
    /// (slower; bulk runs use synthetic payloads otherwise).
    pub verify_payload: bool,
    /// Carry every packet as the bytes of the wire format (`braid_proto::
    /// wire`), decoded at the receiver, and charge links its real size in a
    /// UDP/IPv4 datagram: a check that the encoding carries everything the
    /// connections exchange (slower).
    pub wire_format: bool,
}

impl FlowSpec {
    /// The most bytes a link is charged for a data packet of `payload`
    /// bytes of this flow (in the wire format its header's size varies).
    pub fn largest_data_packet(&self, payload: u32) -> u32 {
        match self.wire_format {
            true => payload + braid_proto::wire::MAX_DATA_OVERHEAD + UDP_IPV4_OVERHEAD,
            false => payload + braid_proto::packet::DATA_HEADER_BYTES,
        }
    }

    /// The bytes a link is charged for a subflow's opening packet (the wire
    /// format pads it, as QUIC pads its Initial).
    pub fn opening_packet(&self) -> u32 {
        match self.wire_format {
            true => braid_proto::wire::HELLO_LEN as u32 + UDP_IPV4_OVERHEAD,
            false => braid_proto::packet::DATA_HEADER_BYTES,
        }
    }
}

/// Why a simulation could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    UnknownController(String),
    /// An unknown scheduler or settings it refuses, with the reason.
    Scheduler(String),
    UnknownPath {
        flow: String,
        path: usize,
    },
    /// A cross-traffic source that can never send (zero rate or packet size).
    IdleCrossTraffic(String),
    NoSubflows(String),
    TooManySubflows(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::UnknownController(n) => write!(f, "unknown congestion controller `{n}`"),
            BuildError::Scheduler(why) => f.write_str(why),
            BuildError::UnknownPath { flow, path } => {
                write!(f, "flow `{flow}` uses path {path}, which the topology lacks")
            }
            BuildError::NoSubflows(n) => write!(f, "flow `{n}` has no subflows"),
            BuildError::IdleCrossTraffic(n) => write!(f, "cross traffic `{n}` has a zero rate or packet size"),
            BuildError::TooManySubflows(n) => write!(f, "flow `{n}` has more than 256 subflows"),
        }
    }
}

impl std::error::Error for BuildError {}

/// A packet in the network as links carry it: a handle to the packet,
/// which stays in one place from send to delivery, where it is and where
/// it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// Its slot in `Sim::packets`, or, with [`CROSS`] set, the index of the
    /// cross-traffic source that sent it.
    slot: u32,
    /// The link it is on, as an index into `Sim::hops`; the links after it
    /// follow, up to [`END_OF_ROUTE`].
    at: u32,
    /// The endpoint it goes to (none for cross traffic): in the handle, so
    /// that its state can be fetched before the slot is read.
    to: u32,
}

/// A packet as the network carries it: the value, or its encoded bytes.
#[derive(Debug)]
enum InFlight {
    Packet(Packet),
    Bytes(Vec<u8>),
}

/// IPv4 and UDP headers around a wire-format datagram.
const UDP_IPV4_OVERHEAD: u32 = 28;

/// From this many endpoints on, the loop asks the cache for the next
/// packets' state ahead of time (see [`Sim::prefetch_next`]). Below it the
/// state stays in the cache anyway and the hints cost more than they save:
/// measured with `braid bench` on the project machine (best of 3), the
/// hints make 10 flows (20 endpoints) 12% slower, 100 flows 2% slower and
/// 300 flows no faster, and 600 flows 10% and 1,000 flows 26% faster.
const PREFETCH_FROM_ENDPOINTS: usize = 1_000;

/// Ends each route in `Sim::hops`.
const END_OF_ROUTE: u32 = u32::MAX;

/// Marks the handle of a cross-traffic packet.
const CROSS: u32 = 1 << 31;

/// A cross-traffic source in the run.
#[derive(Debug)]
struct CrossState {
    spec: CrossTraffic,
    /// Where its route starts in `Sim::hops`.
    route: u32,
    /// The next packet to send.
    next: u64,
    outcome: CrossOutcome,
}

/// What the event loop needs of a flow, kept together so a packet touches
/// few cache lines.
#[derive(Debug)]
struct FlowState {
    size: Option<u64>,
    source: Source,
    start: Instant,
    outcome: FlowOutcome,
    /// When the bytes not yet read were written, to time each byte from
    /// write to read.
    write_log: WriteLog,
}

impl FlowState {
    /// Bytes the application has produced so far (for bulk: all).
    fn produced(&self) -> u64 {
        let all = self.size.unwrap_or(u64::MAX);
        match self.source {
            Source::Bulk => all,
            Source::ConstantRate { message, .. } => self.outcome.messages.saturating_mul(message).min(all),
        }
    }
}

#[derive(Debug)]
struct Endpoint {
    conn: Connection,
    flow: u32,
    sender: bool,
    /// Per subflow, where its route (in this endpoint's sending direction)
    /// starts in `Sim::hops`.
    routes: Vec<u32>,
    timer_at: Option<Instant>,
    /// The flow's [`FlowSpec::wire_format`], here where sending reads it.
    wire_format: bool,
    /// Pseudo-random payload stream (sender generates, receiver checks);
    /// boxed, as most flows have none.
    payload: Option<Box<PayloadStream>>,
}

/// What happened to one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOutcome {
    pub started: bool,
    /// Bytes the sender's application has written so far.
    pub written: u64,
    /// Messages a constant-rate application has produced so far.
    pub messages: u64,
    pub delivered: u64,
    pub completed_at: Option<Instant>,
    /// Bytes that arrived different from what was sent (verified flows).
    pub corrupted_bytes: u64,
    /// The first of the flow's two connections to give up, and when (the
    /// sender, or the receiver told of the sender's reset).
    pub failed: Option<(Instant, ConnectionError)>,
    /// Subflows a controller of the flow closed for good (C-MPBBR closes
    /// the one not worth keeping), by index, and when. Either endpoint's
    /// are recorded; in a one-way flow only the sender's controller, which
    /// sees the acknowledgements, ever closes one.
    pub closed_subflows: Vec<(usize, Instant)>,
    /// Delay from the sender's write to the receiver's in-order read.
    pub delay: DelayHistogram,
}

#[derive(Debug)]
pub struct Sim {
    now: Instant,
    events: EventQueue,
    links: Vec<Link<SimPacket>>,
    /// Packets in the network, by slot; links move only their handles, so a
    /// hop touches 32 bytes of FIFO rather than the 112-byte packet. Free
    /// slots are reused last-freed first (warm in the cache).
    packets: Vec<Option<InFlight>>,
    free_slots: Vec<u32>,
    /// Every route's links, one after the other, each route ended by
    /// [`END_OF_ROUTE`]: a packet's next hop is the next entry.
    hops: Vec<u32>,
    endpoints: Vec<Endpoint>,
    cross: Vec<CrossState>,
    flows: Vec<FlowSpec>,
    state: Vec<FlowState>,
    /// Flows that are not completed sized transfers (bulk flows never are).
    unfinished: usize,
    topology: Topology,
    events_run: u64,
    packets_sent: u64,
    scratch: Vec<u8>,
    check: Vec<u8>,
    /// Whether the loop gives the cache hints of [`Sim::prefetch_next`].
    prefetch: bool,
}

impl Sim {
    /// A simulation of `flows` over `topology`. With the environment
    /// variable `BRAID_WIRE` set, every flow uses the wire format (see
    /// [`FlowSpec::wire_format`]), so any test can exercise the encoding.
    pub fn new(topology: Topology, mut flows: Vec<FlowSpec>, seed: u64) -> Result<Sim, BuildError> {
        if std::env::var_os("BRAID_WIRE").is_some() {
            flows.iter_mut().for_each(|f| f.wire_format = true);
        }
        let links = topology
            .links
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(i as u64);
                Link::new(spec.clone(), rng)
            })
            .collect();
        let mut sim = Sim {
            now: Instant::ZERO,
            events: EventQueue::default(),
            links,
            packets: Vec::new(),
            free_slots: Vec::new(),
            hops: Vec::new(),
            endpoints: Vec::new(),
            cross: Vec::new(),
            state: flows
                .iter()
                .map(|f| FlowState {
                    size: f.size,
                    source: f.source,
                    start: f.start,
                    outcome: FlowOutcome {
                        started: false,
                        written: 0,
                        messages: 0,
                        delivered: 0,
                        completed_at: None,
                        corrupted_bytes: 0,
                        failed: None,
                        closed_subflows: Vec::new(),
                        delay: DelayHistogram::default(),
                    },
                    write_log: WriteLog::default(),
                })
                .collect(),
            unfinished: flows.len(),
            flows: Vec::new(),
            topology,
            events_run: 0,
            packets_sent: 0,
            scratch: Vec::new(),
            check: Vec::new(),
            prefetch: 2 * flows.len() >= PREFETCH_FROM_ENDPOINTS,
        };
        for (f, spec) in flows.iter().enumerate() {
            sim.add_flow(f as u32, spec, seed)?;
        }
        sim.flows = flows;
        for (i, l) in sim.links.iter().enumerate() {
            // In time order (`LinkSpec::outages`): where one outage ends as
            // the next begins, the "up" of the first runs before the "down"
            // of the second (events at one time run in the order pushed).
            for &(down, up) in &l.spec().outages {
                sim.events.push(down, Event::LinkState { link: i as u32, up: false });
                sim.events.push(up, Event::LinkState { link: i as u32, up: true });
            }
        }
        Ok(sim)
    }

    fn add_flow(&mut self, f: u32, spec: &FlowSpec, seed: u64) -> Result<(), BuildError> {
        if spec.subflows.is_empty() {
            return Err(BuildError::NoSubflows(spec.name.clone()));
        }
        // Each side's key, from the run's seed: the handshake runs as on a
        // real network (the MACs cost microseconds per subflow).
        let mut keys = ChaCha8Rng::seed_from_u64(seed ^ 0x6b65_7973);
        keys.set_stream(u64::from(f));
        let crypto: Arc<dyn Crypto> = Arc::new(RustCrypto);
        let mut make = |side: Side| -> Result<Connection, BuildError> {
            let c = cc::by_name(&spec.cc).ok_or_else(|| BuildError::UnknownController(spec.cc.clone()))?;
            let s = sched::build(&spec.scheduler, &spec.sched_settings)
                .map_err(|e| BuildError::Scheduler(format!("flow `{}`: {e}", spec.name)))?;
            let (mut config, key, crypto) = (spec.config.clone(), keys.next_u64(), Arc::clone(&crypto));
            // Without the wire format a link is charged the payload and
            // `DATA_HEADER_BYTES`, whatever the packet's numbers.
            config.fixed_data_header = !spec.wire_format;
            Ok(match side {
                Side::Client => Connection::client(config, c, s, key, crypto),
                Side::Server => Connection::server(config, c, s, key, crypto),
            })
        };
        let (mut tx, rx) = (make(Side::Client)?, make(Side::Server)?);
        let (mut fwd, mut rev) = (Vec::new(), Vec::new());
        for &(path, backup) in &spec.subflows {
            let p = self.topology.paths.get(path).ok_or(BuildError::UnknownPath { flow: spec.name.clone(), path })?;
            let (forward, reverse) = (p.forward.clone(), p.reverse.clone());
            let too_many = |_| BuildError::TooManySubflows(spec.name.clone());
            tx.add_subflow(backup).map_err(too_many)?;
            fwd.push(self.add_route(&forward));
            rev.push(self.add_route(&reverse));
        }
        let payload = spec.verify_payload.then(|| Box::new(PayloadStream::new(seed, f)));
        let sender = self.endpoints.len() as u32;
        self.endpoints.push(Endpoint {
            conn: tx,
            flow: f,
            sender: true,
            routes: fwd,
            timer_at: None,
            wire_format: spec.wire_format,
            payload: payload.clone(),
        });
        self.endpoints.push(Endpoint {
            conn: rx,
            flow: f,
            sender: false,
            routes: rev,
            timer_at: None,
            wire_format: spec.wire_format,
            payload,
        });
        self.events.push(spec.start, Event::FlowStart { flow: sender / 2 });
        Ok(())
    }

    /// Adds a source of cross traffic along the forward route of one of
    /// the topology's paths; call before running.
    pub fn add_cross_traffic(&mut self, spec: CrossTraffic) -> Result<(), BuildError> {
        let path = self
            .topology
            .paths
            .get(spec.path)
            .ok_or(BuildError::UnknownPath { flow: spec.name.clone(), path: spec.path })?;
        if spec.bits_per_sec == 0 || spec.packet_bytes == 0 {
            return Err(BuildError::IdleCrossTraffic(spec.name));
        }
        let forward = path.forward.clone();
        let route = self.add_route(&forward);
        let source = self.cross.len() as u32;
        if let Some(first) = spec.packet_time(0) {
            self.events.push(first, Event::CrossSend { source });
        }
        self.cross.push(CrossState { spec, route, next: 0, outcome: CrossOutcome::default() });
        Ok(())
    }

    /// The cross-traffic sources and what became of their packets.
    pub fn cross_traffic(&self) -> impl Iterator<Item = (&CrossTraffic, CrossOutcome)> {
        self.cross.iter().map(|c| (&c.spec, c.outcome))
    }

    fn add_route(&mut self, links: &[usize]) -> u32 {
        let start = self.hops.len() as u32;
        self.hops.extend(links.iter().map(|&l| l as u32));
        self.hops.push(END_OF_ROUTE);
        start
    }

    pub fn now(&self) -> Instant {
        self.now
    }
    pub fn events_run(&self) -> u64 {
        self.events_run
    }
    /// Packets endpoints have sent into the network (data and ACKs).
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }
    pub fn outcome(&self, flow: usize) -> &FlowOutcome {
        &self.state[flow].outcome
    }
    pub fn flows(&self) -> &[FlowSpec] {
        &self.flows
    }
    pub fn links(&self) -> &[Link<SimPacket>] {
        &self.links
    }
    pub fn topology(&self) -> &Topology {
        &self.topology
    }
    /// The sending connection of `flow`.
    pub fn sender(&self, flow: usize) -> &Connection {
        &self.endpoints[2 * flow].conn
    }
    /// The receiving connection of `flow`.
    pub fn receiver(&self, flow: usize) -> &Connection {
        &self.endpoints[2 * flow + 1].conn
    }

    /// True once every flow has a size and has delivered all of it (or
    /// failed).
    pub fn all_sized_flows_done(&self) -> bool {
        self.unfinished == 0
    }

    /// Runs events up to and including `until`, or until every flow is a
    /// completed sized transfer. Returns the time reached: `until`, or the
    /// instant the last sized transfer completed.
    pub fn run(&mut self, until: Instant) -> Instant {
        while let Some((t, ev)) = self.events.peek_until(until) {
            self.now = t;
            self.events_run += 1;
            match ev {
                Event::Arrive { link } => self.on_arrive(link as usize),
                other => {
                    self.events.remove_next();
                    self.dispatch(other);
                }
            }
            if self.all_sized_flows_done() {
                return self.now;
            }
        }
        self.now = self.now.max(until);
        self.now
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive { .. } => unreachable!("run handles arrivals"),
            Event::Timer { endpoint } => {
                let ep = &mut self.endpoints[endpoint as usize];
                if ep.timer_at.is_some_and(|t| t <= self.now) {
                    ep.timer_at = None;
                }
                ep.conn.handle_timeout(self.now);
                self.pump(endpoint as usize);
            }
            Event::FlowStart { flow } => {
                self.state[flow as usize].outcome.started = true;
                if self.state[flow as usize].source != Source::Bulk {
                    self.events.push(self.now, Event::AppWrite { flow });
                }
                self.pump(2 * flow as usize);
            }
            Event::AppWrite { flow } => {
                let f = flow as usize;
                let st = &mut self.state[f];
                let due = st.source.messages_due(st.start, self.now);
                st.outcome.messages = st.outcome.messages.max(due);
                if st.size.is_none_or(|s| st.produced() < s) {
                    if let Some(next) = st.source.message_time(st.start, st.outcome.messages) {
                        self.events.push(next.max(self.now + MIN_WAKE_GAP), Event::AppWrite { flow });
                    }
                }
                self.pump(2 * f);
            }
            Event::LinkState { link, up } => self.on_link_state(link as usize, up),
            Event::CrossSend { source } => self.send_cross(source),
        }
    }

    /// Sends the next packet of a cross-traffic source and schedules the one after.
    fn send_cross(&mut self, source: u32) {
        let c = &mut self.cross[source as usize];
        c.outcome.packets_sent += 1;
        c.next += 1;
        let (route, bytes) = (c.route, c.spec.packet_bytes);
        if let Some(t) = c.spec.packet_time(c.next) {
            self.events.push(t.max(self.now), Event::CrossSend { source });
        }
        self.offer(self.hops[route as usize], SimPacket { slot: CROSS | source, at: route, to: 0 }, bytes);
    }

    fn on_link_state(&mut self, link: usize, up: bool) {
        if up {
            self.links[link].up = true;
            return;
        }
        // Packets still queued are dropped.
        let dropped: Vec<SimPacket> = self.links[link].go_down(self.now).collect();
        for p in dropped {
            self.discard(p);
        }
    }

    /// The head packet of `link` reached its far end (the link's event is
    /// next in the queue): on to the next link of its route, or to its
    /// endpoint. The link's event moves on to its next packet, if any.
    fn on_arrive(&mut self, link: usize) {
        let l = &mut self.links[link];
        let (mut p, bytes) = l.arrive(self.now);
        match l.next_arrival() {
            Some(next) => self.events.reschedule_next(next),
            None => self.events.remove_next(),
        }
        if self.prefetch {
            self.prefetch_next(link);
        }
        p.at += 1;
        let next = self.hops[p.at as usize];
        if next != END_OF_ROUTE {
            self.offer(next, p, bytes);
            return;
        }
        if p.slot & CROSS != 0 {
            self.cross[(p.slot & !CROSS) as usize].outcome.packets_delivered += 1;
            return;
        }
        let to = p.to as usize;
        // Handed over from its slot without a copy on the way (112 bytes).
        let conn = &mut self.endpoints[to].conn;
        let accepted = match self.packets[p.slot as usize].take() {
            Some(InFlight::Packet(packet)) => conn.handle_datagram(self.now, packet),
            Some(InFlight::Bytes(b)) => match wire::decode(&b) {
                Ok(packet) => conn.handle_datagram(self.now, packet),
                Err(e) => unreachable!("the wire format refused its own encoding: {e}"),
            },
            None => unreachable!("a packet in the network has a slot"),
        };
        self.free_slots.push(p.slot);
        // The simulator only carries packets a connection built.
        debug_assert!(accepted.is_ok(), "{accepted:?}");
        self.pump(to);
    }

    /// Asks the cache for what the next packets of `link` will touch when
    /// they reach their next link or their endpoints, while other events
    /// run: a busy link's next arrivals are service times away. For the
    /// third packet from the head, the first two lines of its next link
    /// (with thousands of flows, an access link not touched since the
    /// flow's last packet: 2% faster at 1,000 and 10,000 flows), and if it
    /// is near its end, its slot, endpoint and flow; for the second, what those point
    /// to (asked for one arrival ago, so reading them now does not wait):
    /// its route, the flow's write log and, through
    /// [`Connection::prefetch`], the connection's subflow and controller.
    /// (One packet closer is too late: measured at 10,000 flows, 8% slower
    /// than this; all of the endpoint rather than its first line, 4%
    /// faster.) The route asked for is the one replies to the packet take.
    /// Packets one hop from the end count too, which covers ACKs,
    /// whose last link is rarely busy. Hints only: nothing here changes a
    /// result.
    fn prefetch_next(&self, link: usize) {
        let l = &self.links[link];
        let near_endpoint = |p: &&SimPacket| {
            let rest = &self.hops[p.at as usize + 1..];
            p.slot & CROSS == 0 && (rest.first() == Some(&END_OF_ROUTE) || rest.get(1) == Some(&END_OF_ROUTE))
        };
        if let Some(p) = l.queued(2) {
            if let Some(&next) = self.hops.get(p.at as usize + 1).filter(|&&n| n != END_OF_ROUTE) {
                self.links[next as usize].prefetch();
            }
            if near_endpoint(&p) {
                prefetch_all(&self.packets[p.slot as usize]);
                prefetch_all(&self.endpoints[p.to as usize]);
                // Flow f's endpoints are 2f (sender) and 2f + 1.
                prefetch_all(&self.state[p.to as usize / 2]);
            }
        }
        if let Some(p) = l.queued(1).filter(near_endpoint) {
            self.state[p.to as usize / 2].write_log.prefetch();
            if let Some(InFlight::Packet(packet)) = &self.packets[p.slot as usize] {
                let ep = &self.endpoints[p.to as usize];
                if let Some(route) = ep.routes.get(packet.subflow.index()) {
                    prefetch(route);
                }
                ep.conn.prefetch(packet.subflow);
            }
        }
    }

    /// Turns the cache hints of [`Sim::prefetch_next`] on or off, whatever
    /// the number of endpoints (they are on from [`PREFETCH_FROM_ENDPOINTS`]).
    /// Results are the same either way; tests use this to check that.
    pub fn set_prefetch(&mut self, on: bool) {
        self.prefetch = on;
    }

    fn offer(&mut self, link: u32, p: SimPacket, bytes: u32) {
        match self.links[link as usize].offer(self.now, p, bytes) {
            Offer::Accepted { first: true, arrives } => self.events.push(arrives, Event::Arrive { link }),
            Offer::Accepted { .. } => {}
            Offer::Dropped(p) => self.discard(p),
        }
    }

    /// Drops a packet: frees its slot (cross traffic has none).
    fn discard(&mut self, p: SimPacket) {
        if p.slot & CROSS == 0 {
            let dropped = self.packets[p.slot as usize].take();
            debug_assert!(dropped.is_some(), "a packet in the network has a slot");
            self.free_slots.push(p.slot);
        }
    }

    /// Puts a packet into the network on its route from `at`. The packet
    /// goes straight into its slot: it is 112 bytes, and each move through
    /// a temporary would copy it again.
    fn send(&mut self, packet: Packet, at: u32, to: u32, wire_format: bool) {
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.packets.push(None);
                (self.packets.len() - 1) as u32
            }
        };
        let bytes = if wire_format {
            // A synthetic payload travels as its length only; the link is
            // charged for the bytes it stands for.
            let synthetic = match &packet.frame {
                Frame::Data(d) if d.payload.is_empty() => d.len,
                _ => 0,
            };
            let mut b = Vec::new();
            wire::encode(&packet, &mut b);
            let len = b.len() as u32 + synthetic + UDP_IPV4_OVERHEAD;
            self.packets[slot as usize] = Some(InFlight::Bytes(b));
            len
        } else {
            let len = packet.wire_len();
            self.packets[slot as usize] = Some(InFlight::Packet(packet));
            len
        };
        self.offer(self.hops[at as usize], SimPacket { slot, at, to }, bytes);
    }

    /// Runs an endpoint's application, sends what its connection allows and
    /// re-arms its timer.
    fn pump(&mut self, e: usize) {
        self.run_application(e);
        while let Some(packet) = self.endpoints[e].conn.poll_transmit(self.now) {
            self.packets_sent += 1;
            let ep = &self.endpoints[e];
            let at = ep.routes[packet.subflow.index()];
            let to = (e ^ 1) as u32;
            self.send(packet, at, to, ep.wire_format);
        }
        let ep = &mut self.endpoints[e];
        while let Some(event) = ep.conn.poll_event() {
            let st = &mut self.state[ep.flow as usize];
            match event {
                ConnEvent::Failed(why) if st.outcome.failed.is_none() => {
                    st.outcome.failed = Some((self.now, why));
                    if st.size.is_some() && st.outcome.completed_at.is_none() {
                        self.unfinished -= 1;
                    }
                }
                ConnEvent::SubflowClosed { subflow } => st.outcome.closed_subflows.push((subflow.index(), self.now)),
                _ => {}
            }
        }
        if let Some(t) = ep.conn.poll_timeout() {
            let t = t.max(self.now);
            if ep.timer_at.is_none_or(|cur| t < cur) {
                ep.timer_at = Some(t);
                self.events.push(t, Event::Timer { endpoint: e as u32 });
            }
        }
    }

    fn run_application(&mut self, e: usize) {
        let ep = &mut self.endpoints[e];
        let st = &mut self.state[ep.flow as usize];
        let produced = st.produced();
        let out = &mut st.outcome;
        if ep.sender {
            if !out.started {
                return;
            }
            // A writer the full buffer held up is woken as Linux wakes one,
            // once a third of the buffer is free, not by every Data ACK.
            if !ep.conn.may_write() {
                return;
            }
            let want = ep.conn.send_room().min(produced - out.written);
            if want == 0 {
                return;
            }
            let n = match ep.payload.as_mut() {
                Some(stream) => {
                    self.scratch.resize(want as usize, 0);
                    stream.fill(out.written, &mut self.scratch);
                    ep.conn.write(&self.scratch) as u64
                }
                None => ep.conn.write_zeros(want),
            };
            out.written += n;
            st.write_log.wrote(n, self.now);
            return;
        }
        let n = match ep.payload.as_mut() {
            Some(stream) => {
                self.scratch.resize(ep.conn.readable() as usize, 0);
                let n = ep.conn.read(&mut self.scratch);
                self.check.resize(n, 0);
                stream.fill(out.delivered, &mut self.check);
                out.corrupted_bytes += self.scratch[..n].iter().zip(&self.check).filter(|(a, b)| a != b).count() as u64;
                n as u64
            }
            None => ep.conn.consume(u64::MAX),
        };
        // Time the bytes just read against when they were written.
        let now = self.now;
        st.write_log.read(n, |written_at, bytes| out.delay.record(now - written_at, bytes));
        out.delivered += n;
        if st.size.is_some_and(|s| out.delivered >= s) && out.completed_at.is_none() {
            out.completed_at = Some(self.now);
            if out.failed.is_none() {
                self.unfinished -= 1;
            }
        }
    }

    /// Hands `sink` one row per subflow and per link, describing the state
    /// at the current time. The driver chooses when (`braid-lab` samples
    /// on the scenario's `sample_interval`, after every event at that time).
    pub fn sample(&self, sink: &mut impl SampleSink) {
        let t = self.now;
        for f in 0..self.flows.len() {
            let (tx, rx) = (&self.endpoints[2 * f].conn, &self.endpoints[2 * f + 1].conn);
            let ooo = rx.stats().ooo_bytes;
            for s in 0..tx.subflow_count() {
                let (a, b) = (tx.subflow_stats(s).unwrap_or_default(), rx.subflow_stats(s).unwrap_or_default());
                sink.subflow(&SubflowSample {
                    time: t,
                    flow: f as u32,
                    subflow: s as u32,
                    delivered: self.state[f].outcome.delivered,
                    received_new: b.counters.bytes_received_new,
                    cwnd: a.cwnd,
                    srtt: a.srtt,
                    bytes_in_flight: a.bytes_in_flight,
                    retransmissions: a.counters.retransmissions,
                    ooo_bytes: ooo,
                });
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let stats = l.stats(t);
            sink.link(&LinkSample {
                time: t,
                link: i as u32,
                bytes_sent: stats.bytes_sent,
                busy: l.busy_time(t),
                arrivals: stats.arrivals,
                packets_sent: stats.packets_sent,
                drops: stats.drops(),
                queue_packets: l.queue_len(t) as u32,
            });
        }
    }
}
