//! The loop's cache hints (`Sim::set_prefetch`, on by default only with
//! many flows) change speed, never results: the same runs with and without
//! them end in the same state, event for event.

mod common;

use braid_proto::{Duration, Instant};
use braid_sim::topology::{dumbbell, hybrid_access, DUMBBELL_ACCESS_RATE_BPS};
use braid_sim::{CrossTraffic, LinkParams, QueueLimit, Sim, Topology};
use common::*;

/// Everything a run's outputs are made of.
fn fingerprint(sim: &Sim) -> String {
    let mut out = format!("now {:?} events {} sent {}\n", sim.now(), sim.events_run(), sim.packets_sent());
    for f in 0..sim.flows().len() {
        out += &format!("{:?}\n{:?}\n", sim.outcome(f), sim.sender(f).stats());
        for i in 0.. {
            let Some(s) = sim.sender(f).subflow_stats(i) else { break };
            out += &format!("{s:?}\n");
        }
    }
    for l in sim.links() {
        out += &format!("{:?}\n", l.stats(sim.now()));
    }
    for (c, o) in sim.cross_traffic() {
        out += &format!("{} {o:?}\n", c.name);
    }
    out
}

fn run(topology: &Topology, flows: &[braid_sim::FlowSpec], cross: bool, seed: u64, prefetch: bool) -> String {
    let mut sim = Sim::new(topology.clone(), flows.to_vec(), seed).expect("valid simulation");
    if cross {
        let on_off = Some((Duration::from_millis(50), Duration::from_millis(70)));
        let c = CrossTraffic {
            name: "burst".into(),
            path: 0,
            bits_per_sec: 30 * MBIT,
            packet_bytes: 1500,
            start: Instant::ZERO + Duration::from_millis(300),
            stop: None,
            on_off,
        };
        sim.add_cross_traffic(c).expect("valid cross traffic");
    }
    sim.set_prefetch(prefetch);
    sim.run(Instant::ZERO + Duration::from_secs(3));
    fingerprint(&sim)
}

#[test]
fn cache_hints_leave_every_result_unchanged() {
    // A shared bottleneck with several flows, one carried in the wire
    // format, one with verified payloads, one sized, one single-path.
    let neck = LinkParams::new("neck", 40 * MBIT, Duration::from_millis(20), QueueLimit::Packets(60));
    let paths: Vec<(String, Duration)> = (0..6).map(|i| (format!("p{i}"), Duration::from_millis(3 * i))).collect();
    let mut flows = vec![
        flow("a", "lia", &[0, 1]),
        flow("b", "olia", &[2, 3]),
        flow("c", "cubic", &[4]),
        flow("d", "balia", &[5, 0]),
    ];
    flows[1].wire_format = true;
    flows[2].size = Some(400_000);
    flows[3].verify_payload = true;
    let shared = dumbbell(&neck, DUMBBELL_ACCESS_RATE_BPS, &paths);
    // Two lossy access paths into one core link (two hops each way).
    let access = [link("wifi", 20, 30, 0.01), link("lte", 10, 60, 0.0)];
    let hybrid = hybrid_access(&access, 2_000 * MBIT);
    let hybrid_flows = [flow("h", "lia", &[0, 1])];

    for seed in [1, 7] {
        for cross in [false, true] {
            let (on, off) = (run(&shared, &flows, cross, seed, true), run(&shared, &flows, cross, seed, false));
            assert_eq!(on, off, "dumbbell, seed {seed}, cross traffic {cross}");
            let (on, off) =
                (run(&hybrid, &hybrid_flows, cross, seed, true), run(&hybrid, &hybrid_flows, cross, seed, false));
            assert_eq!(on, off, "hybrid access, seed {seed}, cross traffic {cross}");
        }
    }
}
