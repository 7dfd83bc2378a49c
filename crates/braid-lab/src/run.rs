//! Runs a scenario and condenses it into a [`Summary`], the stable JSON
//! record documented in `docs/summary-schema.md`.

use braid_proto::{Duration, Instant};
use braid_sim::{BuildError, Sim, Source};
use serde::Serialize;

use crate::scenario::Scenario;

/// Version tag of the summary schema; bump on incompatible changes.
pub const SUMMARY_SCHEMA: &str = "braid.run.v1";

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub schema: &'static str,
    pub scenario: String,
    pub seed: u64,
    /// Simulated seconds actually run (shorter than asked when every flow
    /// was a sized transfer and all completed).
    pub duration_s: f64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Simulator events processed (a measure of work, deterministic).
    pub events: u64,
    /// Packets the endpoints sent into the network, data and ACKs.
    pub packets: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    pub cc: String,
    pub scheduler: String,
    pub start_s: f64,
    /// Bytes to transfer, or null for a bulk flow.
    pub size_bytes: Option<u64>,
    /// The application's constant rate, `None` for bulk.
    pub app_rate_mbps: Option<f64>,
    /// Seconds from start to the last byte read, for sized flows that finished.
    pub completion_time_s: Option<f64>,
    /// Application bytes read in order by the receiver, in Mbit/s (10^6)
    /// over the flow's active time (start to completion or end of run).
    pub goodput_mbps: f64,
    pub bytes_delivered: u64,
    /// Received bytes that differed from those sent (flows with verify_payload).
    pub corrupted_bytes: u64,
    /// Why the connection failed (every path down past `failure_timeout`),
    /// or null.
    pub error: Option<String>,
    /// Bytes queued for reinjection onto another subflow after timeouts.
    pub reinjected_bytes: u64,
    /// The sender's and the receiver's buffers at the end of the run
    /// (grown when autotuned).
    pub send_buffer_bytes: u64,
    pub recv_buffer_bytes: u64,
    pub ooo_bytes_mean: f64,
    pub ooo_bytes_max: u64,
    /// Seed 004 eq. 18-19: 1000 / (bytes / (1514 x active seconds)), in ms;
    /// null when nothing was delivered.
    pub per_packet_delay_ms: Option<f64>,
    /// Delay from the sender's write to the receiver's in-order read,
    /// byte-weighted: mean and percentiles, in ms (null when nothing arrived).
    pub delay_mean_ms: Option<f64>,
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    pub delay_p99_ms: Option<f64>,
    pub subflows: Vec<SubflowSummary>,
}

/// Seed 004's frame size for its per-packet delay (eq. 18).
const SEED004_FRAME_BYTES: f64 = 1514.0;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SubflowSummary {
    pub path: String,
    pub backup: bool,
    /// Bytes new to the connection that arrived on this subflow, as Mbit/s.
    pub goodput_mbps: f64,
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    pub retransmissions: u64,
    /// Bytes sent here that another subflow had carried first (reinjection
    /// after a timeout, opportunistic retransmission).
    pub reinjected_bytes: u64,
    pub rtos: u64,
    /// Mean of the sampled smoothed RTT, null if never measured.
    pub srtt_mean_ms: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    pub cwnd_mean_bytes: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    pub rate_mbps: f64,
    /// Fraction of capacity used over the run.
    pub utilization: f64,
    pub bytes_sent: u64,
    pub drops_queue: u64,
    /// Early drops by RED (0 on drop-tail links).
    pub drops_early: u64,
    pub drops_random: u64,
    pub drops_down: u64,
}

/// Overrides the command line may apply to a scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub seed: Option<u64>,
    pub duration: Option<Duration>,
}

/// Runs `scenario`, calling `progress` with the fraction of simulated time
/// done (about a hundred times). Returns the finished simulator and summary.
pub fn run(scenario: &Scenario, opts: RunOptions, progress: &mut dyn FnMut(f64)) -> Result<(Sim, Summary), BuildError> {
    let seed = opts.seed.unwrap_or(scenario.seed);
    let duration = opts.duration.unwrap_or(scenario.duration);
    let mut sim = Sim::new(scenario.topology.clone(), scenario.flows.clone(), seed, scenario.sample_interval)?;
    let end = Instant::ZERO + duration;
    let step = Duration::from_nanos((duration.as_nanos() / 100).max(1));
    let mut t = Instant::ZERO;
    while t < end && !sim.all_sized_flows_done() {
        t = (t + step).min(end);
        sim.run(t);
        progress(t.as_secs_f64() / end.as_secs_f64());
    }
    sim.sample();
    let summary = summarise(scenario, &sim, seed);
    Ok((sim, summary))
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

pub fn summarise(scenario: &Scenario, sim: &Sim, seed: u64) -> Summary {
    let end = sim.now();
    let rec = sim.recorder();
    let flows = sim
        .flows()
        .iter()
        .enumerate()
        .map(|(f, spec)| {
            let out = sim.outcome(f);
            let active = out.completed_at.unwrap_or(end).saturating_since(spec.start).as_secs_f64();
            let rows = || rec.subflows.iter().filter(move |r| r.flow as usize == f);
            let subflows = (0..spec.subflows.len())
                .map(|s| {
                    let tx = sim.sender(f).subflow_stats(s).unwrap_or_default();
                    let rx = sim.receiver(f).subflow_stats(s).unwrap_or_default();
                    let mine = || rows().filter(move |r| r.subflow as usize == s);
                    SubflowSummary {
                        path: scenario.flow_paths[f][s].clone(),
                        backup: spec.subflows[s].1,
                        goodput_mbps: mbps(rx.counters.bytes_received_new, active),
                        bytes_delivered: rx.counters.bytes_received_new,
                        packets_sent: tx.counters.packets_sent,
                        retransmissions: tx.counters.retransmissions,
                        reinjected_bytes: tx.counters.reinjected_bytes,
                        rtos: tx.counters.rtos,
                        srtt_mean_ms: mean(mine().filter_map(|r| r.srtt.map(|d| d.as_millis_f64()))),
                        min_rtt_ms: tx.min_rtt.map(|d| d.as_millis_f64()),
                        cwnd_mean_bytes: mean(mine().map(|r| r.cwnd as f64)).unwrap_or(0.0),
                    }
                })
                .collect();
            let ooo = || rows().filter(|r| r.subflow == 0).map(|r| r.ooo_bytes);
            FlowSummary {
                name: spec.name.clone(),
                cc: spec.cc.clone(),
                scheduler: spec.scheduler.clone(),
                start_s: spec.start.as_secs_f64(),
                size_bytes: spec.size,
                app_rate_mbps: match spec.source {
                    Source::Bulk => None,
                    Source::ConstantRate { bits_per_sec, .. } => Some(bits_per_sec as f64 / 1e6),
                },
                completion_time_s: out.completed_at.map(|t| t.saturating_since(spec.start).as_secs_f64()),
                goodput_mbps: mbps(out.delivered, active),
                bytes_delivered: out.delivered,
                corrupted_bytes: out.corrupted_bytes,
                error: out.failed.map(|(at, why)| format!("failed at {:.3} s: {why}", at.as_secs_f64())),
                reinjected_bytes: sim.sender(f).stats().reinjected_bytes,
                send_buffer_bytes: sim.sender(f).stats().send_buffer,
                recv_buffer_bytes: sim.receiver(f).stats().recv_buffer,
                ooo_bytes_mean: mean(ooo().map(|b| b as f64)).unwrap_or(0.0),
                ooo_bytes_max: ooo().max().unwrap_or(0),
                per_packet_delay_ms: (out.delivered > 0)
                    .then(|| 1000.0 * SEED004_FRAME_BYTES * active / out.delivered as f64),
                delay_mean_ms: out.delay.mean_ms(),
                delay_p50_ms: out.delay.quantile_ms(0.5),
                delay_p95_ms: out.delay.quantile_ms(0.95),
                delay_p99_ms: out.delay.quantile_ms(0.99),
                subflows,
            }
        })
        .collect();
    let secs = end.as_secs_f64();
    let links = sim
        .links()
        .iter()
        .map(|l| LinkSummary {
            name: l.spec.name.clone(),
            rate_mbps: l.spec.rate_bps as f64 / 1e6,
            utilization: if secs > 0.0 {
                l.stats.bytes_sent as f64 * 8.0 / (l.spec.rate_bps as f64 * secs)
            } else {
                0.0
            },
            bytes_sent: l.stats.bytes_sent,
            drops_queue: l.stats.drops_queue,
            drops_early: l.stats.drops_early,
            drops_random: l.stats.drops_random,
            drops_down: l.stats.drops_down,
        })
        .collect();
    Summary {
        schema: SUMMARY_SCHEMA,
        scenario: scenario.name.clone(),
        seed,
        duration_s: secs,
        flows,
        links,
        events: sim.events_run(),
        packets: sim.packets_sent(),
    }
}
