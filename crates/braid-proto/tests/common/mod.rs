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
