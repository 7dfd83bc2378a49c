//! Helpers shared by the protocol's integration tests.
#![allow(dead_code)]

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
