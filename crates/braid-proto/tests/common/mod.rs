//! Helpers shared by the protocol's integration tests.
#![allow(dead_code)]

pub mod drive;

/// xorshift64*: a tiny seeded generator so the tests need no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Reads everything `conn` has in order onto the end of `got`.
pub fn read_all(conn: &mut braid_proto::Connection, got: &mut Vec<u8>) {
    let mut buf = [0u8; 16_384];
    loop {
        let n = conn.read(&mut buf);
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
    }
}

/// A connection of `side` with controller `cc` and scheduler `sched`.
pub fn connection(
    side: braid_proto::Side,
    config: braid_proto::Config,
    cc: &str,
    sched: &str,
) -> braid_proto::Connection {
    use braid_proto::{cc::by_name, crypto::RustCrypto, sched::by_name as sched_by_name, Connection, Side};
    let (c, s) = (by_name(cc).expect("controller"), sched_by_name(sched).expect("scheduler"));
    let crypto = std::sync::Arc::new(RustCrypto);
    match side {
        Side::Client => Connection::client(config, c, s, 0x1111, crypto),
        Side::Server => Connection::server(config, c, s, 0x2222, crypto),
    }
}

/// A client with `paths` subflows, and the server it will talk to.
pub fn pair(
    config: braid_proto::Config,
    cc: &str,
    sched: &str,
    paths: usize,
) -> (braid_proto::Connection, braid_proto::Connection) {
    use braid_proto::Side;
    let mut a = connection(Side::Client, config.clone(), cc, sched);
    for _ in 0..paths {
        a.add_subflow(false).expect("a subflow");
    }
    (a, connection(Side::Server, config, cc, sched))
}

/// Runs the opening exchanges between client `a` and server `b` at `now`,
/// packets delivered at once, until every subflow of `a` is established
/// and its confirmation acknowledged.
pub fn open(a: &mut braid_proto::Connection, b: &mut braid_proto::Connection, now: braid_proto::Instant) {
    let mut settled = 0;
    for _ in 0..16 {
        if (0..a.subflow_count()).all(|i| a.subflow_stats(i).is_some_and(|s| s.established)) {
            settled += 1;
        }
        if settled == 2 {
            return;
        }
        while let Some(p) = a.poll_transmit(now) {
            b.handle_datagram(now, p).expect("well-formed");
        }
        while let Some(p) = b.poll_transmit(now) {
            a.handle_datagram(now, p).expect("well-formed");
        }
    }
    panic!("subflows did not open");
}

/// A client and server whose first subflow is open on both sides: the
/// client's first byte (DSN 0, carrying `Establish`) has reached the server.
pub fn established(config: braid_proto::Config) -> (braid_proto::Connection, braid_proto::Connection) {
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = pair(config, "reno", "minrtt", 1);
    open(&mut a, &mut b, now);
    a.write(&[7]);
    while let Some(p) = a.poll_transmit(now) {
        b.handle_datagram(now, p).expect("well-formed");
    }
    assert!(b.subflow_stats(0).is_some_and(|s| s.established));
    (a, b)
}

/// Drives client `a` and server `b` over paths with `delay_ms` one-way
/// delay, from virtual time 0 until `done(a, b)` or `limit_ms`; `drop(now,
/// to_b, packet)` loses packets. Returns the time reached, or an error if
/// nothing is left to happen first.
pub fn drive(
    a: &mut braid_proto::Connection,
    b: &mut braid_proto::Connection,
    delay_ms: u64,
    limit_ms: u64,
    done: impl FnMut(&mut braid_proto::Connection, &mut braid_proto::Connection) -> bool,
    drop: impl FnMut(braid_proto::Instant, bool, &braid_proto::Packet) -> bool,
) -> Result<braid_proto::Instant, String> {
    drive_paths(a, b, |_| delay_ms, limit_ms, done, drop)
}

/// [`drive`] with a one-way delay per subflow: `delay_ms(subflow id)`.
pub fn drive_paths(
    a: &mut braid_proto::Connection,
    b: &mut braid_proto::Connection,
    delay_ms: impl Fn(u8) -> u64,
    limit_ms: u64,
    mut done: impl FnMut(&mut braid_proto::Connection, &mut braid_proto::Connection) -> bool,
    mut drop: impl FnMut(braid_proto::Instant, bool, &braid_proto::Packet) -> bool,
) -> Result<braid_proto::Instant, String> {
    use braid_proto::{Duration, Instant, Packet};
    let mut wire: std::collections::BTreeMap<(Instant, u64), (bool, Packet)> = Default::default();
    let (mut now, mut seq) = (Instant::ZERO, 0u64);
    let limit = Instant::ZERO + Duration::from_millis(limit_ms);
    loop {
        if done(a, b) {
            return Ok(now);
        }
        if now > limit {
            return Err(format!("time limit at {now:?}"));
        }
        for (to_b, c) in [(true, &mut *a), (false, &mut *b)] {
            while let Some(p) = c.poll_transmit(now) {
                if !drop(now, to_b, &p) {
                    seq += 1;
                    wire.insert((now + Duration::from_millis(delay_ms(p.subflow.0)), seq), (to_b, p));
                }
            }
        }
        let timer = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        match (wire.keys().next().map(|k| k.0), timer) {
            (None, None) => return Err(format!("nothing left to happen at {now:?}")),
            (Some(t), tm) if tm.is_none_or(|tm| t <= tm) => {
                let ((at, _), (to_b, p)) = wire.pop_first().expect("a packet");
                now = at;
                let c = if to_b { &mut *b } else { &mut *a };
                c.handle_datagram(now, p).map_err(|e| e.to_string())?;
            }
            (_, tm) => {
                now = now.max(tm.expect("a timer"));
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
        }
    }
}
