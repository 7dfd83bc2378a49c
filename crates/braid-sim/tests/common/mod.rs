//! Helpers shared by the simulator's behaviour tests.
#![allow(dead_code)]

use braid_proto::{Config, Duration, Instant};
use braid_sim::loss::LossSpec;
use braid_sim::{FlowSpec, LinkParams, QueueLimit, Sim, Topology};

pub const MBIT: u64 = 1_000_000;

pub fn link(name: &str, mbit: u64, rtt_ms: u64, loss: f64) -> LinkParams {
    // One bandwidth-delay product of queue, at least 20 packets.
    let bdp_packets = (mbit * MBIT * rtt_ms / 1000 / 8 / 1500).max(20) as u32;
    let mut l = LinkParams::new(name, mbit * MBIT, Duration::from_millis(rtt_ms), QueueLimit::Packets(bdp_packets));
    l.loss = LossSpec::Bernoulli { p: loss };
    l
}

pub fn flow(name: &str, cc: &str, paths: &[usize]) -> FlowSpec {
    FlowSpec {
        name: name.into(),
        cc: cc.into(),
        scheduler: "minrtt".into(),
        sched_settings: Default::default(),
        config: Config::default(),
        subflows: paths.iter().map(|&p| (p, false)).collect(),
        start: Instant::ZERO,
        size: None,
        source: Default::default(),
        verify_payload: false,
        wire_format: false,
    }
}

pub fn run(topology: Topology, flows: Vec<FlowSpec>, seed: u64, secs: u64) -> Sim {
    let mut sim = Sim::new(topology, flows, seed).expect("valid simulation");
    sim.run(Instant::ZERO + Duration::from_secs(secs));
    sim
}

/// Goodput in Mbit/s of `flow` over the whole run.
pub fn goodput_mbit(sim: &Sim, flow: usize) -> f64 {
    sim.outcome(flow).delivered as f64 * 8.0 / sim.now().as_secs_f64() / 1e6
}
