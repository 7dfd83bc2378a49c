//! The handshake's cryptography, behind a trait so the core depends on no
//! crypto library (quinn-proto's `crypto.rs` habit). Braid needs SHA-256
//! (tokens from keys) and HMAC-SHA256 (join authentication, RFC 8684 §3.2,
//! with SHA-256 as in MPTCP v1).
//!
//! [`RustCrypto`] (feature `rustcrypto`) implements it with RustCrypto's
//! `sha2` and `hmac` crates.

/// SHA-256 and HMAC-SHA256 over the concatenation of `parts`.
pub trait Crypto: std::fmt::Debug + Send + Sync {
    fn sha256(&self, parts: &[&[u8]]) -> [u8; 32];
    fn hmac_sha256(&self, key: &[u8], parts: &[&[u8]]) -> [u8; 32];
}

/// A connection's token: the first 8 bytes of SHA-256 of its key. It names
/// the connection in every packet sent to it and in joins (RFC 8684 takes
/// the first 4 bytes; Braid's 8 make a collision among a server's
/// connections negligible).
pub fn token(crypto: &dyn Crypto, key: u64) -> u64 {
    let h = crypto.sha256(&[&key.to_be_bytes()]);
    u64::from_be_bytes(h[..8].try_into().expect("8 bytes"))
}

/// RFC 8684 §3.2's join MAC: HMAC with key `Key-1 || Key-2` over
/// `R-1 || R-2`. The initiator's (HMAC-A) puts its own key and nonce
/// first, the responder's (HMAC-B) its own.
pub fn join_mac(crypto: &dyn Crypto, first_key: u64, second_key: u64, first_nonce: u64, second_nonce: u64) -> [u8; 32] {
    let key = [first_key.to_be_bytes(), second_key.to_be_bytes()].concat();
    crypto.hmac_sha256(&key, &[&first_nonce.to_be_bytes(), &second_nonce.to_be_bytes()])
}

/// The first 8 bytes of a MAC, as the join reply and address
/// advertisements carry it.
pub fn truncated(mac: [u8; 32]) -> [u8; 8] {
    mac[..8].try_into().expect("8 bytes")
}

#[cfg(feature = "rustcrypto")]
mod rustcrypto {
    use hmac::{Hmac, Mac};
    use sha2::{Digest, Sha256};

    /// [`super::Crypto`] from RustCrypto's `sha2` and `hmac`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct RustCrypto;

    impl super::Crypto for RustCrypto {
        fn sha256(&self, parts: &[&[u8]]) -> [u8; 32] {
            let mut h = Sha256::new();
            for p in parts {
                h.update(p);
            }
            h.finalize().into()
        }

        fn hmac_sha256(&self, key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
            for p in parts {
                m.update(p);
            }
            m.finalize().into_bytes().into()
        }
    }
}

#[cfg(feature = "rustcrypto")]
pub use rustcrypto::RustCrypto;

#[cfg(all(test, feature = "rustcrypto"))]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// FIPS 180-2's "abc" and RFC 4231 test case 2.
    #[test]
    fn known_answers() {
        let c = RustCrypto;
        assert_eq!(hex(&c.sha256(&[b"a", b"bc"])), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(&c.hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn join_macs_differ_by_side() {
        let c = RustCrypto;
        let a = join_mac(&c, 1, 2, 10, 20);
        let b = join_mac(&c, 2, 1, 20, 10);
        assert_ne!(a, b);
        assert_eq!(a, join_mac(&c, 1, 2, 10, 20));
        assert_eq!(truncated(a), a[..8]);
    }
}
