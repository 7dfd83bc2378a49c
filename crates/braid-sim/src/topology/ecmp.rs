//! Equal-cost multipath: which of several equal-cost routes a subflow
//! takes.
//!
//! A switch running ECMP hashes a packet's 5-tuple and forwards it on the
//! next hop the hash selects, so every packet of one TCP subflow follows
//! one route and subflows that differ only in their source port (MPTCP's
//! "ndiffports" path manager: n subflows over one address pair) land on
//! routes chosen independently, possibly the same one. Braid models the
//! outcome, not the per-switch hashing: a subflow's route is a
//! deterministic hash of the run's seed (the switches' hash salt), the
//! address pair and the subflow's source port, uniform over the routes
//! ([`Ecmp::Hash`]). htsim's data-centre experiments instead give the
//! subflows of one connection distinct routes while there are enough
//! ([`Ecmp::Distinct`]), as a path manager that knew the routes would.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How subflows are spread over equal-cost routes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecmp {
    /// Each subflow hashed independently (real switches; collisions happen).
    #[default]
    Hash,
    /// The subflows of a connection take distinct routes, chosen at
    /// random, while there are enough; then they wrap around (htsim).
    Distinct,
}

/// A 64-bit mix (SplitMix64's finaliser): every input bit affects every
/// output bit, so nearby ports give unrelated hashes.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The flow's key: run seed, address pair and connection number (which
/// stands for the connection's base source port).
fn key(seed: u64, src: usize, dst: usize, connection: u64) -> u64 {
    mix(mix(mix(mix(seed) ^ src as u64) ^ dst as u64) ^ connection)
}

impl Ecmp {
    /// The route (of `routes` equal-cost ones) subflow `subflow` of
    /// connection `connection` from `src` to `dst` takes. Deterministic.
    pub fn choose(self, seed: u64, src: usize, dst: usize, connection: u64, subflow: usize, routes: usize) -> usize {
        if routes <= 1 {
            return 0;
        }
        let k = key(seed, src, dst, connection);
        match self {
            Ecmp::Hash => (mix(k ^ subflow as u64) % routes as u64) as usize,
            Ecmp::Distinct => {
                let mut order: Vec<usize> = (0..routes).collect();
                order.shuffle(&mut ChaCha8Rng::seed_from_u64(k));
                order[subflow % routes]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashing spreads subflows evenly over the routes; distinct choice
    /// never repeats a route while there are unused ones; both are
    /// deterministic.
    #[test]
    fn spreads_evenly_and_deterministically() {
        let mut counts = [0u32; 16];
        for conn in 0..2000 {
            for s in 0..8 {
                counts[Ecmp::Hash.choose(7, 3, 90, conn, s, 16)] += 1;
            }
        }
        // 16,000 draws over 16 routes: 1000 each, sd about 31.
        assert!(counts.iter().all(|&c| (880..1120).contains(&c)), "{counts:?}");
        for conn in 0..100 {
            let mut seen: Vec<usize> = (0..8).map(|s| Ecmp::Distinct.choose(1, 5, 6, conn, s, 16)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 8, "distinct routes for connection {conn}");
            let wrap: Vec<usize> = (0..6).map(|s| Ecmp::Distinct.choose(1, 5, 6, conn, s, 4)).collect();
            assert_eq!(wrap[..2], wrap[4..], "past 4 routes the choice wraps around");
        }
        assert_eq!(Ecmp::Hash.choose(1, 2, 3, 4, 5, 16), Ecmp::Hash.choose(1, 2, 3, 4, 5, 16));
        let by_seed: Vec<usize> = (0..20).map(|seed| Ecmp::Hash.choose(seed, 2, 3, 4, 5, 16)).collect();
        assert!(by_seed.iter().any(|&c| c != by_seed[0]), "the seed salts the hash");
        assert_eq!(Ecmp::Hash.choose(1, 2, 3, 4, 5, 1), 0);
    }
}
