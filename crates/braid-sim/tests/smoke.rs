mod common;
use common::*;
use braid_sim::topology::hybrid_access;

#[test]
fn smoke() {
    let t = hybrid_access(&[link("L1", 100, 10, 0.0), link("L2", 100, 20, 0.0)], 2_000 * MBIT);
    let sim = run(t, vec![flow("mp", "reno", &[0, 1])], 1, 10);
    let f = 0;
    println!("goodput {:.1} Mbit/s events {}", goodput_mbit(&sim, f), sim.events_run());
    for s in 0..2 {
        println!("{:?}", sim.sender(f).subflow_stats(s));
        println!("{:?}", sim.receiver(f).subflow_stats(s).unwrap().counters);
    }
    println!("{:?}", sim.receiver(f).stats());
}
