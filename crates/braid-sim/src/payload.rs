//! The pseudo-random byte stream of a verified flow.
//!
//! Byte `i` of the stream is byte `i` of a ChaCha8 keystream, whatever the
//! sizes of the writes and reads that produced or consume it. A plain
//! `fill_bytes` is not position-addressable: it consumes whole 32-bit words,
//! so a fill that ends mid-word throws the rest of that word away and the
//! next fill starts four bytes later than the stream position. The sender
//! writes in chunks the send buffer dictates and the receiver reads in
//! chunks the network dictates, so the two sides would drift apart as soon
//! as either chunk size was not a multiple of four (an autotuned send
//! buffer grows by arbitrary amounts): the verifier, not the transport,
//! then reported corruption.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Debug)]
pub struct PayloadStream {
    rng: ChaCha8Rng,
}

impl PayloadStream {
    /// The stream of flow `flow` in a run seeded with `seed`.
    pub fn new(seed: u64, flow: u32) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
        rng.set_stream(u64::from(flow));
        PayloadStream { rng }
    }

    /// Fills `buf` with the stream's bytes from offset `at`.
    pub fn fill(&mut self, at: u64, buf: &mut [u8]) {
        self.rng.set_word_pos(u128::from(at / 4));
        let skip = (at % 4) as usize;
        let head = buf.len().min((4 - skip) % 4);
        if head > 0 {
            let word = self.rng.next_u32().to_le_bytes();
            buf[..head].copy_from_slice(&word[skip..skip + head]);
        }
        self.rng.fill_bytes(&mut buf[head..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Any split of a range into consecutive fills gives the bytes one fill
    /// of the whole range gives.
    #[test]
    fn fills_agree_whatever_the_chunking() {
        let mut whole = vec![0u8; 4099];
        PayloadStream::new(7, 3).fill(0, &mut whole);
        let mut pick = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            let mut s = PayloadStream::new(7, 3);
            let mut at = pick.gen_range(0..64) as usize;
            while at < whole.len() {
                let n = pick.gen_range(0..=13).min(whole.len() - at);
                let mut part = vec![0u8; n];
                s.fill(at as u64, &mut part);
                assert_eq!(part, whole[at..at + n], "fill of {n} at {at}");
                at += n.max(1);
            }
        }
        let mut other = vec![0u8; 64];
        PayloadStream::new(7, 4).fill(0, &mut other);
        assert_ne!(other, whole[..64], "flows have their own streams");
    }
}
