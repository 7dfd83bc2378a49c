//! A client and a server driven by a string of bytes: which packets the
//! network delivers, drops, duplicates, holds back or replays later; when
//! time moves; what the applications write, read, close and reset; which
//! subflows open, close and which addresses come and go; and, now and
//! then, a forged or bit-flipped packet. Shared, by path, by the fuzz
//! target `connection` (`fuzz/`, coverage-guided) and the seeded test
//! `driven.rs` (random strings, every CI run), so both check one oracle:
//!
//! - nothing panics, debug assertions included (running the timers
//!   early, as a driver woken spuriously does, included);
//! - no data packet is larger than the MSS, or than what the driver last
//!   allowed its subflow (the script lowers and raises it, as a driver
//!   that learns a path's MTU does; black-hole detection and its probes
//!   stay within);
//! - `handle_datagram` refuses exactly the packets `Packet::check` refuses;
//! - after `handle_timeout(now)` the next timer is later than `now` (a
//!   driver calling it again at once would spin);
//! - while no forged packet arrived, every byte read is the byte written
//!   there (a replayed or duplicated genuine packet is no excuse);
//! - and, with no forged packet, once the network delivers everything
//!   for long enough, each side reads all the other wrote and learns of
//!   the other's close (both finish when both closed), unless a side
//!   failed or reset or the client closed every subflow.
//!
//! Self-contained (only `braid_proto`), so the fuzz crate can include it.

use std::collections::VecDeque;
use std::sync::Arc;

use braid_proto::endpoint::{ConnectionHandle, DatagramEvent, Drop, Endpoint, EndpointConfig};
use braid_proto::{cc, crypto::RustCrypto, sched, wire, Config, Connection, Duration, Instant, SendAutotune};

/// Reads the driving bytes; zeros once they run out.
struct Script<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let start = self.at.min(self.bytes.len());
        let end = (start + n).min(self.bytes.len());
        self.at = start + n;
        &self.bytes[start..end]
    }
    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

/// The byte at stream offset `i` of a side's stream: a pattern that
/// betrays data delivered at the wrong offset.
fn pattern(i: u64, side: usize) -> u8 {
    (i % 251) as u8 ^ (side as u8 * 0x5a)
}

/// One side: its endpoint (every datagram goes through it, as on a real
/// network), its connection once there is one, what it wrote and read.
struct End {
    ep: Endpoint,
    handle: Option<ConnectionHandle>,
    written: u64,
    read: u64,
}

/// The address every datagram comes from (the server keys its answers to
/// openings by it).
const PEER: std::net::SocketAddr = std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 4000);

impl End {
    fn conn(&mut self) -> Option<&mut Connection> {
        self.ep.connection(self.handle?)
    }

    fn write(&mut self, n: usize, side: usize) {
        let data: Vec<u8> = (0..n as u64).map(|k| pattern(self.written + k, side)).collect();
        let written = self.written;
        if let Some(c) = self.conn() {
            self.written = written + c.write(&data) as u64;
        }
    }

    /// Reads what is there, checking it against the peer's pattern unless
    /// a forged packet may have put bytes in the stream.
    fn read(&mut self, peer: usize, forged: bool) {
        let mut buf = [0u8; 8192];
        loop {
            let Some(n) = self.conn().map(|c| c.read(&mut buf)) else { return };
            if n == 0 {
                return;
            }
            for (k, &b) in buf[..n].iter().enumerate() {
                let at = self.read + k as u64;
                assert!(forged || b == pattern(at, peer), "byte {at} read wrong");
            }
            self.read += n as u64;
        }
    }
}

/// What the script did, for the caller's statistics.
#[derive(Debug, Default)]
pub struct Outcome {
    pub delivered: u64,
    pub forged: bool,
    /// Bytes each side read of what the other wrote, and whether the
    /// liveness check applied (no forgery, failure, reset or closed path).
    pub read: [u64; 2],
    pub live_checked: bool,
}

/// Runs the script in `bytes`. Panics if the oracle (module doc) fails.
pub fn drive(bytes: &[u8]) -> Outcome {
    let mut s = Script { bytes, at: 0 };
    let ccs = cc::ALGORITHMS;
    let scheds = sched::ALGORITHMS;
    let cc_name = ccs[usize::from(s.byte()) % ccs.len()].0;
    let sched_name = scheds[usize::from(s.byte()) % scheds.len()].0;
    let flags = s.byte();
    let sizes = s.byte();
    let config = Config {
        mss: [1448, 1200, 536, 64][usize::from(sizes % 4)],
        ack_every: u32::from(flags & 3) + 1,
        nodelay: flags & 4 != 0,
        opportunistic_retransmission: Some(flags & 8 != 0),
        restart_after_idle: flags & 16 != 0,
        quickacks: if flags & 32 != 0 { 16 } else { 0 },
        rack_tlp: flags & 128 != 0,
        send_buffer: 64 * 1024,
        recv_buffer: if flags & 64 != 0 { 16 * 1024 } else { 96 * 1024 },
        early_joins: sizes & 4 != 0,
        tso_defer: sizes & 8 != 0,
        mss_floor: (sizes & 16 != 0).then_some(200),
        // Bits 5 and 6: the send buffer's autotuning, and with the kernel's
        // now and then a long ACK delay; bit 7: the receive buffer's.
        send_autotune: [SendAutotune::Off, SendAutotune::Seed003, SendAutotune::Kernel, SendAutotune::Kernel]
            [usize::from(sizes >> 5 & 3)],
        max_ack_delay: if sizes >> 5 & 3 == 3 { Duration::from_millis(200) } else { Config::default().max_ack_delay },
        recv_autotune: sizes & 128 != 0,
        failure_timeout: Duration::from_secs(20),
        ..Config::default()
    };
    let endpoint = |secret: u8| {
        Endpoint::new(EndpointConfig {
            connection: config.clone(),
            cc: cc_name.into(),
            scheduler: sched_name.into(),
            sched_settings: sched::Settings::default(),
            crypto: Arc::new(RustCrypto),
            secret: [secret; 32],
            max_connections: 4,
            allow_synthetic: false,
        })
    };
    let mut client = End { ep: endpoint(1), handle: None, written: 0, read: 0 };
    client.handle = client.ep.connect(0x1111);
    let c = client.conn().expect("a client connection");
    for _ in 0..=(flags >> 7) {
        c.add_subflow(false).expect("a client opens subflows");
    }
    let mut ends = [client, End { ep: endpoint(2), handle: None, written: 0, read: 0 }];
    let mut net = Net::default();
    let mut out = Outcome::default();
    let mut now = Instant::ZERO;
    let mut ended = false; // a reset
    let mut removed = 0u8; // the client's subflows the script closed
    let mut closed = [false; 2]; // the applications that closed their streams
    let mut steps = 0;
    while !s.done() && steps < 400 {
        steps += 1;
        match s.byte() % 12 {
            // The network moves up to 16 packets of one direction.
            d @ 0..=1 => {
                let n = s.byte() % 16 + 1;
                for _ in 0..n {
                    let fate = s.byte();
                    out.delivered += net.step(&mut ends, usize::from(d), fate, now) as u64;
                }
            }
            2 => {
                let b = s.byte();
                now +=
                    if b < 200 { Duration::from_millis(u64::from(b)) } else { Duration::from_secs(u64::from(b - 199)) };
                fire_timers(&mut ends, &mut net, now);
            }
            3 => {
                let (n, side) = (usize::from(s.u16() % 20_000), usize::from(s.byte() & 1));
                ends[side].write(n, side);
            }
            4 => read_both(&mut ends, out.forged),
            5 => {
                // A datagram from the script itself.
                let n = usize::from(s.byte());
                let bytes = s.take(n).to_vec();
                out.forged |= wire::decode(&bytes).is_ok();
                deliver(&mut ends, usize::from(s.byte() & 1), &bytes, now);
            }
            6 => {
                // A genuine packet seen earlier, replayed as is or with bits flipped.
                let (k, flips) = (usize::from(s.byte()), s.byte() % 4);
                if let Some((to, mut bytes)) = net.seen(k) {
                    for _ in 0..flips {
                        let at = usize::from(s.u16()) % bytes.len().max(1);
                        if let Some(b) = bytes.get_mut(at) {
                            *b ^= s.byte() | 1;
                        }
                    }
                    out.forged |= flips > 0 && wire::decode(&bytes).is_ok();
                    deliver(&mut ends, to, &bytes, now);
                }
            }
            7 => {
                let side = usize::from(s.byte() & 1);
                if let Some(c) = ends[side].conn() {
                    c.close();
                    closed[side] = true;
                }
            }
            8 => {
                let client = ends[0].conn().expect("the client's connection stays");
                if s.byte() & 1 == 0 && client.subflow_count() < 6 {
                    let _ = client.add_subflow(s.byte() & 1 == 1);
                } else {
                    let (id, side) = (s.byte() % 6, usize::from(s.byte() & 1));
                    if let Some(c) = ends[side].conn() {
                        c.remove_subflow(braid_proto::SubflowId(id));
                    }
                    if side == 0 {
                        removed |= 1 << id;
                    }
                }
            }
            9 => {
                let id = s.byte() % 4;
                let addr = std::net::SocketAddr::from(([10, 0, 0, id + 1], 4000));
                let advertise = s.byte() & 1 == 0;
                if let Some(server) = ends[1].conn() {
                    match advertise {
                        true => server.advertise_address(id, addr),
                        false => server.withdraw_address(id),
                    }
                }
            }
            10 => {
                let b = s.byte();
                if b < 16 {
                    let (side, code) = (usize::from(s.byte() & 1), s.byte());
                    if let Some(c) = ends[side].conn() {
                        ended = true;
                        c.reset(code);
                    }
                } else if b < 48 {
                    // A driver learns that a path carries less: one subflow's MSS falls.
                    let (side, id, mss) = (usize::from(s.byte() & 1), s.byte() % 6, u32::from(s.u16()));
                    if let Some(c) = ends[side].conn() {
                        let cap = mss % c.config().mss + 1;
                        c.set_subflow_mss(braid_proto::SubflowId(id), cap);
                        if usize::from(id) < c.subflow_count() {
                            net.caps[side][usize::from(id)] = Some(cap);
                        }
                    }
                }
            }
            _ => {
                // A driver that runs the timers early (a spurious wake-up).
                for end in ends.iter_mut() {
                    if let Some(c) = end.conn() {
                        c.handle_timeout(now);
                    }
                }
            }
        }
        net.transmit(&mut ends, now);
        drain_events(&mut ends);
    }
    // The network heals: everything is delivered, in order, until both
    // sides have read what the other wrote or nothing moves for long.
    let client_paths = ends[0].conn().map_or(0, |c| c.subflow_count());
    let closed_paths = (0..client_paths).all(|i| removed & 1 << i != 0);
    let deadline = now + Duration::from_secs(600);
    for _ in 0..200_000 {
        read_both(&mut ends, out.forged);
        net.transmit(&mut ends, now);
        if net.pending() {
            // A millisecond each way.
            now += Duration::from_millis(1);
            fire_timers(&mut ends, &mut net, now);
            for d in 0..2 {
                while net.step(&mut ends, d, 0, now) {}
            }
            continue;
        }
        let next = ends.iter_mut().filter_map(|e| e.conn()?.poll_timeout()).min();
        match next {
            Some(t) if t <= deadline => {
                now = now.max(t);
                fire_timers(&mut ends, &mut net, now);
            }
            _ => break,
        }
    }
    read_both(&mut ends, out.forged);
    out.read = [ends[1].read, ends[0].read];
    let failed = ends.iter_mut().any(|e| e.conn().is_some_and(|c| c.error().is_some()));
    out.live_checked = !out.forged && !failed && !ended && !closed_paths;
    if out.live_checked {
        for (side, end) in ends.iter().enumerate() {
            let peer = &ends[1 - side];
            assert_eq!(peer.read, end.written, "side {side}: {} of {} bytes arrived", peer.read, end.written);
        }
        for side in (0..2).filter(|&side| closed[side]) {
            let told = ends[1 - side].conn().is_some_and(|c| c.peer_closed());
            assert!(told, "side {side} closed its stream; the peer never learned");
        }
        if closed == [true; 2] {
            assert!(ends.iter_mut().all(|e| e.conn().is_some_and(|c| c.is_finished())), "both closed, not finished");
        }
    }
    out
}

fn read_both(ends: &mut [End; 2], forged: bool) {
    ends[0].read(1, forged);
    ends[1].read(0, forged);
}

/// Hands `bytes` to side `to`'s endpoint, as a datagram from its peer.
/// A packet that decodes is refused by the connection exactly when
/// `Packet::check` refuses it; an answer to an opening goes back on the
/// network.
fn deliver(ends: &mut [End; 2], to: usize, bytes: &[u8], now: Instant) {
    let verdict = wire::decode(bytes).map(|p| p.check());
    match ends[to].ep.handle(now, PEER, bytes) {
        DatagramEvent::Connection { handle, new, .. } => {
            assert_eq!(verdict, Ok(Ok(())), "a connection took a packet Packet::check refuses");
            if new && ends[to].handle.is_none() {
                ends[to].handle = Some(handle);
            }
        }
        DatagramEvent::Reply(answer) => deliver(ends, 1 - to, &answer, now),
        DatagramEvent::Dropped(Drop::Refused) => {
            assert!(matches!(verdict, Ok(Err(_))), "refused a packet Packet::check accepts");
        }
        DatagramEvent::Dropped(_) => {}
    }
}

/// Runs the timers due at `now` on both sides, as a driver would.
fn fire_timers(ends: &mut [End; 2], net: &mut Net, now: Instant) {
    for (side, end) in ends.iter_mut().enumerate() {
        let Some(conn) = end.conn() else { continue };
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.handle_timeout(now);
            net.take_from(side, conn, now);
            if let Some(t) = conn.poll_timeout() {
                assert!(t > now, "side {side}: a timer at {t:?} is still due after handle_timeout({now:?})");
            }
        }
    }
}

/// Takes the connections' events, as a driver does (the oracle needs none).
fn drain_events(ends: &mut [End; 2]) {
    for end in ends.iter_mut() {
        if let Some(c) = end.conn() {
            while c.poll_event().is_some() {}
        }
    }
}

/// Datagrams in flight each way, and the genuine ones seen.
#[derive(Default)]
struct Net {
    queues: [VecDeque<Vec<u8>>; 2],
    seen: Vec<(usize, Vec<u8>)>,
    /// Per side and subflow, the MSS the script last allowed (a driver's cap).
    caps: [[Option<u32>; 8]; 2],
}

impl Net {
    /// Takes what both sides have to send.
    fn transmit(&mut self, ends: &mut [End; 2], now: Instant) {
        for (side, end) in ends.iter_mut().enumerate() {
            if let Some(conn) = end.conn() {
                self.take_from(side, conn, now);
            }
        }
    }

    fn take_from(&mut self, side: usize, conn: &mut Connection, now: Instant) {
        while let Some(p) = conn.poll_transmit(now) {
            if let braid_proto::Frame::Data(d) = &p.frame {
                let (i, mss) = (p.subflow.index(), conn.config().mss);
                let now_mss = conn.subflow_stats(i).map_or(mss, |s| s.mss);
                // The script caps the first 6 subflows only.
                let mut none = None;
                let cap = self.caps[side].get_mut(i).unwrap_or(&mut none);
                // Above the cap only as a new subflow in the slot (the
                // server's, after a join that never completed): uncapped.
                if cap.is_some_and(|c| now_mss > c) {
                    *cap = None;
                }
                let cap = cap.map_or(mss, |c| c.min(mss));
                // Only a path-MTU probe is larger than its subflow's MSS:
                // as large as the largest packet of a size within the cap,
                // with no control.
                let datagram = wire::encoded_len(&p) as u32;
                let within = datagram <= cap + wire::MAX_DATA_OVERHEAD;
                let probe = p.control.is_none() && within;
                assert!(
                    d.len <= now_mss || probe,
                    "side {side}: {} bytes on subflow {i} at {now_mss}, capped at {cap}",
                    d.len
                );
                // (A connection's opening `Hello` is padded to 1200 bytes.)
                let hello = matches!(p.control.as_deref(), Some(braid_proto::Control::Hello { .. }));
                assert!(within || hello, "side {side}: a {datagram}-byte datagram on subflow {i} capped at {cap}");
            }
            let mut b = Vec::new();
            wire::encode(&p, &mut b);
            if self.seen.len() < 256 {
                self.seen.push((1 - side, b.clone()));
            }
            self.queues[side].push_back(b);
        }
    }

    fn seen(&self, k: usize) -> Option<(usize, Vec<u8>)> {
        (!self.seen.is_empty()).then(|| self.seen[k % self.seen.len()].clone())
    }

    fn pending(&self) -> bool {
        self.queues.iter().any(|q| !q.is_empty())
    }

    /// Moves the head packet sent by side `from`: `fate` 0-4 delivers it,
    /// 5 drops it, 6 delivers it twice, 7 sends it to the back (reorders).
    /// Returns whether a packet was there.
    fn step(&mut self, ends: &mut [End; 2], from: usize, fate: u8, now: Instant) -> bool {
        let Some(p) = self.queues[from].pop_front() else { return false };
        match fate % 8 {
            5 => {}
            6 => {
                deliver(ends, 1 - from, &p, now);
                deliver(ends, 1 - from, &p, now);
            }
            7 => self.queues[from].push_back(p),
            _ => deliver(ends, 1 - from, &p, now),
        }
        true
    }
}
