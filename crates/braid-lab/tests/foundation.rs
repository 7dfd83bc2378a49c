//! The foundation's acceptance tests: whole scenarios through parser,
//! simulator and protocol core. Each prints the figures it checks.

mod common;

use braid_lab::{parse, run, RunOptions};
use common::{simulate, simulate_seed};

use braid_proto::Duration;

/// Criterion 1: Random payload bytes arrive exactly once and in order over two paths,
/// one with 1% loss and one with ten times the RTT.
#[test]
fn integrity_over_lossy_path_and_tenfold_rtt() {
    let s = simulate(
        r#"
        duration = "120s"
        [topology]
        kind = "hybrid-access"
        [[topology.link]]
        name = "fast-lossy"
        rate = "50Mbit"
        rtt = "10ms"
        loss = "1%"
        [[topology.link]]
        name = "slow"
        rate = "50Mbit"
        rtt = "100ms"
        [[flow]]
        cc = "lia"
        size = "20MB"
        verify_payload = true
        "#,
    );
    let f = &s.flows[0];
    println!(
        "delivered {} of 20000000 bytes in {:?} s, corrupted {}, retransmissions {:?}",
        f.bytes_delivered,
        f.completion_time_s,
        f.corrupted_bytes,
        f.subflows.iter().map(|s| s.retransmissions).collect::<Vec<_>>()
    );
    assert!(f.completion_time_s.is_some(), "transfer did not complete");
    assert_eq!(f.bytes_delivered, 20_000_000, "every byte delivered exactly once");
    assert_eq!(f.corrupted_bytes, 0, "bytes arrive unchanged and in order");
    assert!(f.subflows[0].retransmissions > 0, "the lossy path really lost packets");
    assert!(f.subflows.iter().all(|s| s.bytes_delivered > 0), "both paths carried data");
}

const LOSSY: &str = r#"
    name = "determinism"
    duration = "5s"
    [topology]
    kind = "hybrid-access"
    [[topology.link]]
    rate = "100Mbit"
    rtt = "10ms"
    loss = "0.5%"
    [[topology.link]]
    rate = "50Mbit"
    rtt = "30ms"
    loss = "0.1%"
    [[flow]]
    cc = "lia"
    "#;

/// Criterion 2: Same scenario and seed: byte-identical JSON. Another seed: different.
#[test]
fn same_seed_same_json_other_seed_differs() {
    let a = serde_json::to_string(&simulate_seed(LOSSY, 7)).unwrap();
    let b = serde_json::to_string(&simulate_seed(LOSSY, 7)).unwrap();
    let c = serde_json::to_string(&simulate_seed(LOSSY, 8)).unwrap();
    println!("seed 7: {} bytes of JSON; seed 8 differs: {}", a.len(), a != c);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Criterion 3: Two equal 100 Mbit/s paths, uncoupled Reno, ample buffers: >= 90% of 200 Mbit/s.
#[test]
fn aggregation_of_two_equal_paths() {
    let s = simulate(
        r#"
        duration = "30s"
        [topology]
        kind = "hybrid-access"
        [[topology.link]]
        rate = "100Mbit"
        rtt = "10ms"
        queue = "1bdp"
        [[topology.link]]
        rate = "100Mbit"
        rtt = "10ms"
        queue = "1bdp"
        [[flow]]
        cc = "reno"
        "#,
    );
    let f = &s.flows[0];
    println!(
        "aggregate goodput {:.1} Mbit/s (subflows {:.1} + {:.1})",
        f.goodput_mbps, f.subflows[0].goodput_mbps, f.subflows[1].goodput_mbps
    );
    assert!(f.goodput_mbps >= 180.0, "{:.1} Mbit/s is below 90% of 200", f.goodput_mbps);
}

/// Multipath share of a shared bottleneck against one single-path Reno flow,
/// averaged over three seeds.
fn shared_bottleneck(cc: &str, aqm: &str) -> f64 {
    let toml = format!(
        r#"
        duration = "60s"
        [topology]
        kind = "dumbbell"
        [topology.bottleneck]
        rate = "50Mbit"
        rtt = "20ms"
        queue = "1bdp"
        aqm = "{aqm}"
        [[flow]]
        name = "multipath"
        cc = "{cc}"
        subflows = 2
        [[flow]]
        name = "tcp"
        cc = "reno"
        subflows = 1
        "#
    );
    let shares: Vec<f64> = (1..=3)
        .map(|seed| {
            let s = simulate_seed(&toml, seed);
            let (mp, tcp) = (s.flows[0].goodput_mbps, s.flows[1].goodput_mbps);
            println!("{cc} on {aqm}, seed {seed}: multipath {mp:.1} Mbit/s, single-path TCP {tcp:.1} Mbit/s");
            mp / (mp + tcp)
        })
        .collect();
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    println!("{cc} on {aqm}: mean multipath share {:.1}%", mean * 100.0);
    mean
}

/// Criterion 4: Do no harm (RFC 6356 goal 2): LIA takes about one TCP share of a
/// shared bottleneck; uncoupled Reno with two subflows takes about two.
///
/// The bottleneck runs RED: RFC 6356's argument assumes every packet of
/// every flow sees the same loss probability, and a deterministic drop-tail
/// queue shared by two flows does not give that (phase effects, Floyd and
/// Jacobson 1991: shifting the TCP flow's start by 0.37 s moves LIA's share
/// between about 46% and 66%). The drop-tail figures are printed for the record.
#[test]
fn do_no_harm_at_shared_bottleneck() {
    let lia = shared_bottleneck("lia", "red");
    let reno = shared_bottleneck("reno", "red");
    shared_bottleneck("lia", "droptail");
    assert!((0.40..=0.60).contains(&lia), "LIA share {lia:.3} outside 40-60%");
    assert!((0.58..=0.76).contains(&reno), "uncoupled share {reno:.3} is not about two thirds");
    assert!(reno > lia + 0.08, "uncoupled ({reno:.3}) should clearly beat LIA ({lia:.3})");
}

/// Criterion 5: A path goes down mid-transfer: the sized transfer still completes with
/// every byte intact, and the traffic moves to the surviving path.
#[test]
fn path_failure_mid_transfer() {
    let s = simulate(
        r#"
        duration = "60s"
        [topology]
        kind = "hybrid-access"
        [[topology.link]]
        name = "L1"
        rate = "20Mbit"
        rtt = "20ms"
        [[topology.link]]
        name = "L2"
        rate = "20Mbit"
        rtt = "20ms"
        down = [{ from = "2s", to = "1000s" }]
        [[flow]]
        cc = "lia"
        size = "15MB"
        verify_payload = true
        "#,
    );
    let f = &s.flows[0];
    let (l1, l2) = (f.subflows[0].bytes_delivered, f.subflows[1].bytes_delivered);
    println!(
        "completed in {:?} s; L1 carried {l1} B, L2 carried {l2} B (down from 2 s); reinjected {} B; L2 RTOs {}",
        f.completion_time_s, f.reinjected_bytes, f.subflows[1].rtos
    );
    assert!(f.completion_time_s.is_some(), "transfer did not survive the path failure");
    assert_eq!((f.bytes_delivered, f.corrupted_bytes), (15_000_000, 0));
    // L2 could carry at most ~2 s x 20 Mbit/s = 5 MB before failing.
    assert!(l2 > 0 && l2 < 5_000_000, "L2 carried {l2}");
    assert!(l1 > 10_000_000, "L1 took over, carried {l1}");
    assert!(f.reinjected_bytes > 0, "stranded data was reinjected");
    assert!(f.subflows[1].rtos > 0);
    assert!(s.links.iter().find(|l| l.name == "L2").unwrap().drops_down > 0);
}

/// Criterion 6: A small receive buffer caps goodput near window / RTT, and the
/// transfer neither loses bytes nor stalls.
#[test]
fn receive_window_limits_goodput() {
    let s = simulate(
        r#"
        duration = "60s"
        [topology]
        kind = "hybrid-access"
        [[topology.link]]
        rate = "100Mbit"
        rtt = "40ms"
        [[topology.link]]
        rate = "100Mbit"
        rtt = "40ms"
        [[flow]]
        cc = "reno"
        recv_buffer = "64KiB"
        size = "10MB"
        verify_payload = true
        "#,
    );
    let f = &s.flows[0];
    // At most one window per RTT: 65536 B / 40 ms = 13.1 Mbit/s.
    let cap = 65536.0 * 8.0 / 0.040 / 1e6;
    println!(
        "goodput {:.2} Mbit/s with a 64 KiB window over 40 ms paths (cap {cap:.2}); done in {:?} s",
        f.goodput_mbps, f.completion_time_s
    );
    assert!(f.completion_time_s.is_some(), "stalled");
    assert_eq!((f.bytes_delivered, f.corrupted_bytes), (10_000_000, 0));
    assert!(f.goodput_mbps <= cap * 1.02, "exceeds what the window allows");
    assert!(f.goodput_mbps >= cap * 0.5, "far below the window limit: {:.2}", f.goodput_mbps);
}

/// Options from the command line override the file.
#[test]
fn duration_override_is_honoured() {
    let scenario = parse(LOSSY, "t.toml").unwrap();
    let (_, s) =
        run(&scenario, RunOptions { seed: None, duration: Some(Duration::from_secs(1)) }, &mut |_| {}).unwrap();
    assert_eq!(s.duration_s, 1.0);
}

/// Every scenario shipped in `scenarios/` parses and runs.
#[test]
fn shipped_scenarios_are_valid() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let scenario = braid_lab::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let opts = RunOptions { seed: None, duration: Some(Duration::from_secs(1)) };
            let (_, s) = run(&scenario, opts, &mut |_| {}).unwrap();
            assert!(s.flows.iter().all(|f| f.bytes_delivered > 0), "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 3, "found {n} scenarios");
}

/// The first subflow's path is down when the connection opens: once that
/// join times out the second subflow joins, the transfer runs over it, and
/// the first joins when its path returns (review finding: before, nothing
/// was ever sent).
#[test]
fn first_path_down_at_start_falls_back_to_the_other() {
    let s = simulate(&common::hybrid(
        "30s",
        &[
            r#"name = "L1", rate = "20Mbit", rtt = "20ms", down = [{ from = "0s", to = "5s" }]"#,
            r#"name = "L2", rate = "20Mbit", rtt = "20ms""#,
        ],
        r#"cc = "lia", size = "30MB", verify_payload = true"#,
    ));
    let f = &s.flows[0];
    let (l1, l2) = (f.subflows[0].bytes_delivered, f.subflows[1].bytes_delivered);
    println!("30 MB in {:?} s; L1 carried {l1} B, L2 {l2} B", f.completion_time_s);
    assert_eq!((f.bytes_delivered, f.corrupted_bytes), (30_000_000, 0));
    assert!(f.completion_time_s.is_some_and(|t| t < 13.0));
    assert!(l2 > 15_000_000 && l1 > 0, "L1 {l1} B, L2 {l2} B");
}

/// `early_joins` (docs/scenarios.md): by default the simulated client
/// joins its second subflow beside the `Establish`, one round trip of the
/// first path before Linux's order (`early_joins = false`), which waits for
/// the server's acknowledgement. Over a 200 ms and a 20 ms path, the second
/// subflow therefore starts about 200 ms later, and carries less in the
/// first 600 ms; saying `true` is the default.
#[test]
fn early_joins_start_the_second_subflow_a_round_trip_sooner() {
    let scenario = |joins: &str| {
        common::hybrid(
            "600ms",
            &[
                "name = \"slow\", rate = \"20Mbit\", rtt = \"200ms\"",
                "name = \"fast\", rate = \"20Mbit\", rtt = \"20ms\"",
            ],
            &format!("cc = \"lia\"{joins}"),
        )
    };
    let second = |s: &braid_lab::Summary| s.flows[0].subflows[1].bytes_delivered;
    let (default, early, late) = (
        common::simulate(&scenario("")),
        common::simulate(&scenario(", early_joins = true")),
        common::simulate(&scenario(", early_joins = false")),
    );
    assert_eq!(second(&default), second(&early));
    assert!(second(&late) < second(&default), "{} bytes late, {} early", second(&late), second(&default));
}

/// No transfer beats the clock. Random sized transfers (100 B to 20 MB)
/// over one clean path (1-500 Mbit/s, 1-300 ms RTT) with random
/// controllers: the last byte cannot be read before one round trip for the
/// handshake (data waits for the server's answer, as after MP_CAPABLE's
/// SYN), the wire time of every data packet (payload plus 52 header bytes)
/// at the link's rate, and the last packet's one-way delay. Every flow
/// also completes, and within 20 times that bound (the slowest of 150
/// tried through the CLI took 4.5 times it: slow start over 214 ms for a
/// 916 kB transfer); the fastest are at the bound to four digits, a link
/// busy from the first data packet to the last. A path 20% shorter than
/// its `rtt` fails at the first case; a link that delivered a packet as
/// its first bit left trips the link's own assertion first.
#[test]
fn sized_transfers_take_at_least_the_handshake_and_the_wire_time() {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for case in 0..80 {
        // Rates and RTTs on a grid the scenario writes exactly.
        let rate_kbit = (rng.gen_range(0f64..500f64.ln()).exp() * 1e3).round();
        let rtt_us = (rng.gen_range(0f64..300f64.ln()).exp() * 1e3).round();
        let size: u64 = rng.gen_range(100f64.ln()..20e6f64.ln()).exp() as u64;
        let cc = braid_proto::cc::ALGORITHMS.choose(&mut rng).unwrap().0;
        let toml = format!(
            "duration = \"600s\"\n[topology]\nkind = \"hybrid-access\"\ncore_rate = \"1000Gbit\"\n\
             link = [{{ rate = \"{rate_kbit}kbit\", rtt = \"{rtt_us}us\" }}]\n\
             [[flow]]\ncc = \"{cc}\"\nsize = \"{size}B\"\n"
        );
        let s = simulate(&toml);
        let f = &s.flows[0];
        let packets = size.div_ceil(1448);
        let wire_s = (size + 52 * packets) as f64 * 8.0 / (rate_kbit * 1e3);
        let bound = 1.5 * rtt_us / 1e6 + wire_s;
        let what = format!("case {case}: {size} B with {cc} over {rate_kbit} kbit/s, {rtt_us} us");
        let fct = f.completion_time_s.unwrap_or_else(|| panic!("{what}: not completed in 600 s"));
        assert!(fct >= bound * (1.0 - 1e-9), "{what}: done in {fct} s, before the clock allows ({bound} s)");
        assert!(fct <= 20.0 * bound, "{what}: {fct} s, over 20 times the bound ({bound} s)");
    }
}
