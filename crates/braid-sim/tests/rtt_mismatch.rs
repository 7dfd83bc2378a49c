//! EWTCP ignores RTTs (NSDI 2011 §2.4; seed 001 §3): at a shared bottleneck
//! it is fair to TCP when its subflows' RTTs equal the TCP flow's, and not
//! when they differ; LIA compensates for the mismatch (RFC 6356 alpha).

mod common;

use braid_proto::{Duration, Instant};
use braid_sim::topology::{dumbbell, DUMBBELL_ACCESS_RATE_BPS};
use braid_sim::{Aqm, LinkParams, QueueLimit, Red, Sim};
use common::*;

/// Multipath share against one TCP flow with 20 ms RTT, when the second
/// subflow's RTT is 20 ms + `extra_ms`; mean of three seeds.
fn share(cc: &str, extra_ms: u64) -> f64 {
    let mut bottleneck = LinkParams::new("b", 40 * MBIT, Duration::from_millis(20), QueueLimit::Packets(134));
    bottleneck.aqm = Aqm::Red(Red::for_limit(134.0));
    let paths = [
        ("mp/0".to_string(), Duration::ZERO),
        ("mp/1".to_string(), Duration::from_millis(extra_ms)),
        ("tcp".to_string(), Duration::ZERO),
    ];
    let mut total = 0.0;
    for seed in 1..=3 {
        let flows = vec![flow("mp", cc, &[0, 1]), flow("tcp", "reno", &[2])];
        let mut sim = Sim::new(dumbbell(&bottleneck, DUMBBELL_ACCESS_RATE_BPS, &paths), flows, seed).unwrap();
        sim.run(Instant::ZERO + Duration::from_secs(60));
        let (mp, tcp) = (goodput_mbit(&sim, 0), goodput_mbit(&sim, 1));
        total += mp / (mp + tcp);
    }
    let s = total / 3.0;
    println!("{cc:<6} second subflow +{extra_ms:>3} ms: multipath share {s:.3}");
    s
}

#[test]
fn ewtcp_is_fair_only_when_rtts_match() {
    let (ewtcp_equal, ewtcp_mismatch) = (share("ewtcp", 0), share("ewtcp", 180));
    let (lia_equal, lia_mismatch) = (share("lia", 0), share("lia", 180));
    assert!((ewtcp_equal - 0.5).abs() < 0.07, "EWTCP with equal RTTs: {ewtcp_equal:.3}");
    assert!((lia_equal - 0.5).abs() < 0.07, "LIA with equal RTTs: {lia_equal:.3}");
    // With a 200 ms second subflow, EWTCP's half-weight on the slow path
    // buys little, so it falls well short of its share; LIA's alpha moves
    // the aggressiveness to the fast subflow and stays near fair.
    assert!(ewtcp_mismatch < 0.42, "EWTCP with mismatched RTTs: {ewtcp_mismatch:.3}");
    assert!((lia_mismatch - 0.5).abs() < 0.08, "LIA with mismatched RTTs: {lia_mismatch:.3}");
}
