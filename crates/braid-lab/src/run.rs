//! Runs a scenario and condenses it into a [`Summary`], the stable JSON
//! record documented in `docs/summary-schema.md`.

use std::borrow::Cow;

use braid_proto::{Duration, Instant};
use braid_sim::{BuildError, FlowSpec, LinkSample, Recorder, SampleSink, Sim, Source, SubflowSample};
use serde::Serialize;

use crate::scenario::{secs, FlowGroup, Scenario, ScenarioError};

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
    /// One per `[[flow]]` table: its flows' goodput and completion times.
    pub groups: Vec<GroupSummary>,
    pub links: Vec<LinkSummary>,
    /// Non-responsive cross traffic (`[[cross]]`).
    pub cross_traffic: Vec<CrossSummary>,
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
    /// The sender's segment size at the end: the flow's `mss`, or less after
    /// black-hole detection on a link with a smaller `mtu`.
    pub mss: u32,
    /// When the connection closed this subflow for good, in seconds of the
    /// run (its controller gave the path up: C-MPBBR's incentive rule);
    /// null while it was open to the end.
    pub closed_at_s: Option<f64>,
}

/// The flows of one `[[flow]]` table together.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupSummary {
    pub name: String,
    pub flows: usize,
    /// Sized flows that delivered every byte.
    pub completed: usize,
    pub bytes_delivered: u64,
    /// Mean, minimum and maximum of the flows' goodput (flows that started).
    pub goodput_mbps_mean: f64,
    pub goodput_mbps_min: f64,
    pub goodput_mbps_max: f64,
    /// Flow completion times of the completed flows, in ms: mean, standard
    /// deviation and percentiles (nearest rank); null without any.
    pub fct_mean_ms: Option<f64>,
    pub fct_sd_ms: Option<f64>,
    pub fct_p50_ms: Option<f64>,
    pub fct_p95_ms: Option<f64>,
    pub fct_p99_ms: Option<f64>,
}

/// One source of cross traffic.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CrossSummary {
    pub name: String,
    pub path: String,
    /// Rate while on, and over the run (on and off).
    pub rate_mbps: f64,
    pub mean_rate_mbps: f64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    pub rate_mbps: f64,
    /// Fraction of the run the link spent transmitting (at most 1).
    pub utilization: f64,
    /// Bytes that finished transmitting.
    pub bytes_sent: u64,
    /// Packets offered to the link, and the fraction of them it dropped
    /// (for any reason): the loss rate a flow crossing it sees.
    pub packets_offered: u64,
    pub loss_rate: f64,
    pub drops_queue: u64,
    /// Early drops by RED (0 on drop-tail links).
    pub drops_early: u64,
    pub drops_random: u64,
    pub drops_down: u64,
    /// Dropped by the link's policer (0 without one).
    pub drops_policed: u64,
    /// Larger than the link's `mtu` (0 without one).
    pub drops_mtu: u64,
}

/// Overrides the command line may apply to a scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub seed: Option<u64>,
    pub duration: Option<Duration>,
}

impl RunOptions {
    /// The scenario a run with these options simulates: its random traffic
    /// drawn again for another seed, its Poisson arrivals for a longer run
    /// ([`Scenario::redrawn`]). A sample sink for [`run_with`] that names
    /// flows and paths is built from this one, whose flows are the run's.
    /// Refused when the run is so long that it would draw too many flows.
    pub fn scenario<'a>(&self, scenario: &'a Scenario) -> Result<Cow<'a, Scenario>, ScenarioError> {
        let seed = self.seed.unwrap_or(scenario.seed);
        Ok(match scenario.redrawn(seed, self.duration.unwrap_or(scenario.duration))? {
            Some(s) => Cow::Owned(s),
            None => Cow::Borrowed(scenario),
        })
    }
}

/// Why a run could not start: the options ask for a scenario that cannot
/// be drawn, or the simulator refuses what it was given.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Runs `scenario`, calling `progress` with the fraction of simulated time
/// done (about a hundred times). Returns the finished simulator and summary.
pub fn run(scenario: &Scenario, opts: RunOptions, progress: &mut dyn FnMut(f64)) -> Result<(Sim, Summary), RunError> {
    run_with(scenario, opts, &mut None::<Recorder>, progress)
}

/// [`run`], also handing every sample's rows to `timeseries` (a CSV
/// writer, a [`Recorder`], ...; built from [`RunOptions::scenario`]). The
/// summary's sampled figures are aggregated while sampling, so no time
/// series is kept for it.
pub fn run_with(
    scenario: &Scenario,
    opts: RunOptions,
    timeseries: &mut dyn SampleSink,
    progress: &mut dyn FnMut(f64),
) -> Result<(Sim, Summary), RunError> {
    let mut runner = Runner::new(scenario, opts)?;
    let end = runner.end;
    let step = Duration::from_nanos((end.as_nanos() / 100).max(1));
    let mut t = Instant::ZERO;
    while !runner.finished() {
        t = (t + step).min(end);
        runner.advance(t, timeseries);
        progress(runner.sim.now().as_nanos() as f64 / end.as_nanos() as f64);
    }
    Ok(runner.finish())
}

/// A run in progress: the simulator, sampled on the scenario's interval
/// (after every event at the sample instant, and once more at the end).
#[derive(Debug)]
pub struct Runner<'a> {
    scenario: Cow<'a, Scenario>,
    seed: u64,
    sim: Sim,
    stats: SampleStats,
    end: Instant,
    next_sample: Instant,
    last_sample: Option<Instant>,
}

impl<'a> Runner<'a> {
    /// A run of `scenario` as `opts` change it ([`RunOptions::scenario`]).
    pub fn new(scenario: &'a Scenario, opts: RunOptions) -> Result<Self, RunError> {
        let seed = opts.seed.unwrap_or(scenario.seed);
        let scenario = opts.scenario(scenario)?;
        let mut sim = Sim::new(scenario.topology.clone(), scenario.flows.clone(), seed)?;
        for c in &scenario.cross {
            sim.add_cross_traffic(c.clone())?;
        }
        Ok(Runner {
            seed,
            sim,
            stats: SampleStats::new(&scenario.flows),
            end: Instant::ZERO + opts.duration.unwrap_or(scenario.duration),
            next_sample: Instant::ZERO,
            last_sample: None,
            scenario,
        })
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// The scenario being run (drawn again if the seed asked for it).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// True at the end of the run, or once every flow is a completed sized transfer.
    pub fn finished(&self) -> bool {
        self.sim.now() >= self.end || self.sim.all_sized_flows_done()
    }

    /// Runs up to `until` (at most the end), sampling on the way.
    pub fn advance(&mut self, until: Instant, timeseries: &mut dyn SampleSink) {
        let until = until.min(self.end);
        loop {
            let now = self.sim.run(self.next_sample.min(until));
            let finished = self.finished();
            if (now == self.next_sample || finished) && self.last_sample != Some(now) {
                self.sim.sample(&mut (&mut self.stats, &mut *timeseries));
                self.last_sample = Some(now);
            }
            if now == self.next_sample {
                // A zero interval (not from a scenario file, which refuses
                // it) means one sample at the start and one at the end.
                self.next_sample = match self.scenario.sample_interval {
                    Duration::ZERO => self.end,
                    interval => now + interval,
                };
            }
            if finished || now >= until {
                return;
            }
        }
    }

    /// The simulator and the summary of the run so far.
    pub fn finish(self) -> (Sim, Summary) {
        let summary = summarise(&self.scenario, &self.sim, &self.stats, self.seed);
        (self.sim, summary)
    }
}

/// Running sums of the sampled figures a summary reports (mean SRTT and
/// cwnd per subflow, out-of-order queue per flow), kept while sampling.
#[derive(Clone, Debug)]
struct SampleStats {
    /// Index in `subflows` of each flow's first subflow.
    first: Vec<usize>,
    subflows: Vec<SubflowTotals>,
    flows: Vec<FlowTotals>,
    /// Each flow's start and size: samples count from the start until a
    /// sized flow has delivered everything, the time its goodput is over
    /// (before, a late flow's initial window diluted its mean window).
    active: Vec<(Instant, Option<u64>)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct SubflowTotals {
    samples: u64,
    cwnd_sum: u128,
    srtt_samples: u64,
    srtt_sum_ns: u128,
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowTotals {
    samples: u64,
    ooo_sum: u128,
    ooo_max: u64,
}

impl SampleStats {
    fn new(flows: &[FlowSpec]) -> Self {
        let first = flows.iter().scan(0, |n, f| Some(std::mem::replace(n, *n + f.subflows.len()))).collect();
        let total = flows.iter().map(|f| f.subflows.len()).sum();
        SampleStats {
            first,
            subflows: vec![SubflowTotals::default(); total],
            flows: vec![FlowTotals::default(); flows.len()],
            active: flows.iter().map(|f| (f.start, f.size)).collect(),
        }
    }

    fn subflow(&self, flow: usize, subflow: usize) -> &SubflowTotals {
        &self.subflows[self.first[flow] + subflow]
    }
}

impl SampleSink for SampleStats {
    fn subflow(&mut self, r: &SubflowSample) {
        let (f, s) = (r.flow as usize, r.subflow as usize);
        let (start, size) = self.active[f];
        if r.time < start || size.is_some_and(|n| r.delivered >= n) {
            return;
        }
        let t = &mut self.subflows[self.first[f] + s];
        t.samples += 1;
        t.cwnd_sum += u128::from(r.cwnd);
        if let Some(srtt) = r.srtt {
            t.srtt_samples += 1;
            t.srtt_sum_ns += u128::from(srtt.as_nanos());
        }
        if s == 0 {
            let t = &mut self.flows[f];
            t.samples += 1;
            t.ooo_sum += u128::from(r.ooo_bytes);
            t.ooo_max = t.ooo_max.max(r.ooo_bytes);
        }
    }
    fn link(&mut self, _: &LinkSample) {}
}

fn mbps(bytes: u64, ns: u64) -> f64 {
    if ns > 0 {
        bytes as f64 * 8e3 / ns as f64
    } else {
        0.0
    }
}

/// `sum / n`, or `None` without samples.
fn mean(sum: u128, n: u64) -> Option<f64> {
    (n > 0).then(|| sum as f64 / n as f64)
}

/// Whole nanoseconds as milliseconds, converted once.
fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

fn summarise(scenario: &Scenario, sim: &Sim, stats: &SampleStats, seed: u64) -> Summary {
    let end = sim.now();
    let flows: Vec<FlowSummary> = sim
        .flows()
        .iter()
        .enumerate()
        .map(|(f, spec)| {
            let out = sim.outcome(f);
            let [delay_p50_ms, delay_p95_ms, delay_p99_ms] = out.delay.quantiles_ms([0.5, 0.95, 0.99]);
            let active = out.completed_at.unwrap_or(end).saturating_since(spec.start).as_nanos();
            let subflows = (0..spec.subflows.len())
                .map(|s| {
                    let tx = sim.sender(f).subflow_stats(s).unwrap_or_default();
                    let rx = sim.receiver(f).subflow_stats(s).unwrap_or_default();
                    let sampled = stats.subflow(f, s);
                    SubflowSummary {
                        path: scenario.flow_paths[f][s].clone(),
                        backup: spec.subflows[s].1,
                        goodput_mbps: mbps(rx.counters.bytes_received_new, active),
                        bytes_delivered: rx.counters.bytes_received_new,
                        packets_sent: tx.counters.packets_sent,
                        retransmissions: tx.counters.retransmissions,
                        reinjected_bytes: tx.counters.reinjected_bytes,
                        rtos: tx.counters.rtos,
                        srtt_mean_ms: mean(sampled.srtt_sum_ns, sampled.srtt_samples).map(|ns| ns / 1e6),
                        min_rtt_ms: tx.min_rtt.map(ms),
                        cwnd_mean_bytes: mean(sampled.cwnd_sum, sampled.samples).unwrap_or(0.0),
                        mss: tx.mss,
                        closed_at_s: out.closed_subflows.iter().find(|c| c.0 == s).map(|c| secs(c.1.as_nanos())),
                    }
                })
                .collect();
            let ooo = &stats.flows[f];
            FlowSummary {
                name: spec.name.clone(),
                cc: spec.cc.clone(),
                scheduler: spec.scheduler.clone(),
                start_s: secs(spec.start.as_nanos()),
                size_bytes: spec.size,
                app_rate_mbps: match spec.source {
                    Source::Bulk => None,
                    Source::ConstantRate { bits_per_sec, .. } => Some(bits_per_sec as f64 / 1e6),
                },
                completion_time_s: out.completed_at.map(|t| secs(t.saturating_since(spec.start).as_nanos())),
                goodput_mbps: mbps(out.delivered, active),
                bytes_delivered: out.delivered,
                corrupted_bytes: out.corrupted_bytes,
                error: out.failed.map(|(at, why)| format!("failed at {:.3} s: {why}", at.as_secs_f64())),
                reinjected_bytes: sim.sender(f).stats().reinjected_bytes,
                send_buffer_bytes: sim.sender(f).stats().send_buffer,
                recv_buffer_bytes: sim.receiver(f).stats().recv_buffer,
                ooo_bytes_mean: mean(ooo.ooo_sum, ooo.samples).unwrap_or(0.0),
                ooo_bytes_max: ooo.ooo_max,
                per_packet_delay_ms: (out.delivered > 0)
                    .then(|| SEED004_FRAME_BYTES * active as f64 / 1e6 / out.delivered as f64),
                delay_mean_ms: out.delay.mean_ms(),
                delay_p50_ms,
                delay_p95_ms,
                delay_p99_ms,
                subflows,
            }
        })
        .collect();
    let groups = scenario.groups.iter().map(|g| group(g, &flows, secs(end.as_nanos()))).collect();
    let links = sim
        .links()
        .iter()
        .map(|l| {
            let stats = l.stats(end);
            LinkSummary {
                name: l.spec().name.clone(),
                rate_mbps: l.spec().rate_bps as f64 / 1e6,
                utilization: utilisation(l.busy_time(end), end - Instant::ZERO),
                bytes_sent: stats.bytes_sent,
                packets_offered: stats.arrivals,
                loss_rate: stats.loss_rate(),
                drops_queue: stats.drops_queue,
                drops_early: stats.drops_early,
                drops_random: stats.drops_random,
                drops_down: stats.drops_down,
                drops_policed: stats.drops_policed,
                drops_mtu: stats.drops_mtu,
            }
        })
        .collect();
    Summary {
        schema: SUMMARY_SCHEMA,
        scenario: scenario.name.clone(),
        seed,
        duration_s: secs(end.as_nanos()),
        flows,
        groups,
        links,
        cross_traffic: sim
            .cross_traffic()
            .map(|(c, out)| CrossSummary {
                name: c.name.clone(),
                path: scenario.topology.paths[c.path].name.clone(),
                rate_mbps: c.bits_per_sec as f64 / 1e6,
                mean_rate_mbps: c.mean_bits_per_sec() / 1e6,
                packets_sent: out.packets_sent,
                packets_delivered: out.packets_delivered,
            })
            .collect(),
        events: sim.events_run(),
        packets: sim.packets_sent(),
    }
}

/// A group's figures from its flows' summaries.
fn group(g: &FlowGroup, flows: &[FlowSummary], end_s: f64) -> GroupSummary {
    let members = &flows[g.flows.clone()];
    let goodputs: Vec<f64> = members.iter().filter(|f| f.start_s < end_s).map(|f| f.goodput_mbps).collect();
    let (lowest, highest) = goodputs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &g| (lo.min(g), hi.max(g)));
    let mut fct: Vec<f64> = members.iter().filter_map(|f| f.completion_time_s).map(|s| s * 1e3).collect();
    fct.sort_by(f64::total_cmp);
    let n = fct.len() as f64;
    let mean = (!fct.is_empty()).then(|| fct.iter().sum::<f64>() / n);
    let sd = mean.map(|m| (fct.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt());
    // Nearest rank: the smallest value with at least q of the flows at or below it.
    let pct = |q: f64| (!fct.is_empty()).then(|| fct[((q * n).ceil() as usize).clamp(1, fct.len()) - 1]);
    GroupSummary {
        name: g.name.clone(),
        flows: members.len(),
        completed: fct.len(),
        bytes_delivered: members.iter().map(|f| f.bytes_delivered).sum(),
        goodput_mbps_mean: if goodputs.is_empty() { 0.0 } else { goodputs.iter().sum::<f64>() / goodputs.len() as f64 },
        goodput_mbps_min: if goodputs.is_empty() { 0.0 } else { lowest },
        goodput_mbps_max: highest,
        fct_mean_ms: mean,
        fct_sd_ms: sd,
        fct_p50_ms: pct(0.5),
        fct_p95_ms: pct(0.95),
        fct_p99_ms: pct(0.99),
    }
}

/// Fraction of `elapsed` a link spent transmitting: at most 1.
pub fn utilisation(busy: Duration, elapsed: Duration) -> f64 {
    if elapsed > Duration::ZERO {
        busy.as_nanos() as f64 / elapsed.as_nanos() as f64
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples come every interval after every event at that instant, and
    /// once at the end; a zero interval (possible only when a scenario is
    /// built in code) gives just the start and the end, not a loop.
    #[test]
    fn samples_fall_on_the_interval_and_the_end() {
        let mut s = crate::parse(crate::DEFAULT_SCENARIO, "t").unwrap();
        let opts = RunOptions { seed: None, duration: Some(Duration::from_millis(250)) };
        let times = |s: &Scenario| {
            let mut rec = Recorder::default();
            run_with(s, opts, &mut rec, &mut |_| {}).unwrap();
            let mut t: Vec<u64> = rec.subflows.iter().map(|r| r.time.as_nanos() / 1_000_000).collect();
            t.dedup();
            t
        };
        assert_eq!(times(&s), [0, 100, 200, 250]);
        s.sample_interval = Duration::ZERO;
        assert_eq!(times(&s), [0, 250]);
    }
}
