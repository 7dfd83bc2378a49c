//! Scheduler behaviour in the simulator (issue 4, first increment). Each
//! test prints the figures it checks.

use braid_lab::{parse, run, RunOptions, Summary};
use braid_proto::sched;

fn simulate(toml: &str) -> Summary {
    let scenario = parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run(&scenario, RunOptions::default(), &mut |_| {}).unwrap().1
}

/// Homogeneous paths (100 Mbit/s, 5 ms each) with uncoupled Reno: every
/// scheduler aggregates at least 90% of 200 Mbit/s.
#[test]
fn homogeneous_paths_aggregate_under_every_scheduler() {
    for &(name, _) in sched::ALGORITHMS {
        let s = simulate(&format!(
            r#"
            duration = "20s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            rate = "100Mbit"
            rtt = "5ms"
            [[topology.link]]
            rate = "100Mbit"
            rtt = "5ms"
            [[flow]]
            cc = "reno"
            scheduler = "{name}"
            "#
        ));
        let g = s.flows[0].goodput_mbps;
        println!("{name:<7} {g:.1} Mbit/s");
        assert!(g >= 180.0, "{name}: {g:.1} Mbit/s");
    }
}

/// Seed 004 Fig. 6's strong heterogeneity (100 Mbit/s, 0 ms, 0% against
/// 50 Mbit/s, 20 ms, 0.5%) with BBR: BLEST sees that the slow subflow would
/// block the send window and leaves it (almost) idle, where minRTT uses it.
#[test]
fn blest_leaves_a_blocking_slow_path_idle() {
    let slow_share = |name: &str| {
        let s = simulate(&format!(
            r#"
            duration = "30s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            rate = "100Mbit"
            rtt = "0ms"
            [[topology.link]]
            rate = "50Mbit"
            rtt = "20ms"
            loss = "0.5%"
            [[flow]]
            cc = "bbr"
            scheduler = "{name}"
            "#
        ));
        let f = &s.flows[0];
        let share = f.subflows[1].goodput_mbps / f.goodput_mbps;
        println!(
            "{name:<7} {:.1} Mbit/s, {:.1}% on the slow path, out-of-order mean {:.0} B",
            f.goodput_mbps,
            share * 100.0,
            f.ooo_bytes_mean
        );
        share
    };
    let (blest, minrtt) = (slow_share("blest"), slow_share("minrtt"));
    assert!(blest < 0.05, "BLEST sends {:.1}% on the slow path", blest * 100.0);
    assert!(minrtt > 0.2, "minRTT sends {:.1}% on the slow path", minrtt * 100.0);
}

/// Every byte arrives once and in order under every scheduler, over a lossy
/// fast path and a clean slow one.
#[test]
fn every_scheduler_delivers_every_byte_in_order() {
    for &(name, _) in sched::ALGORITHMS {
        let s = simulate(&format!(
            r#"
            duration = "60s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            rate = "30Mbit"
            rtt = "10ms"
            loss = "1%"
            [[topology.link]]
            rate = "10Mbit"
            rtt = "80ms"
            [[flow]]
            cc = "lia"
            scheduler = "{name}"
            size = "5MB"
            verify_payload = true
            "#
        ));
        let f = &s.flows[0];
        println!("{name:<7} 5 MB in {:?} s, corrupted {}", f.completion_time_s, f.corrupted_bytes);
        assert!(f.completion_time_s.is_some(), "{name} did not finish");
        assert_eq!((f.bytes_delivered, f.corrupted_bytes), (5_000_000, 0), "{name}");
    }
}
