//! Simulator speed: the experiments `braid bench` measures and how.
//!
//! The scaling series puts N two-subflow LIA flows on one dumbbell
//! bottleneck of N x 10 Mbit/s (20 ms RTT, one BDP of queue), so every flow
//! keeps the same handful of packets in flight whatever N is, and measures
//! the cost per delivered data packet after a warm-up: a simulator whose
//! cost is flat in N gives the same figure for 10 and 10,000 flows.
//! Each point runs the real run loop (sampling included) and counts data
//! packets as delivered bytes / mss, as the htsim side-by-side harness does.

use braid_proto::{Duration, Instant};
use braid_sim::Recorder;

use crate::run::{RunError, RunOptions, Runner};
use crate::scenario::{parse, Scenario};

/// Bottleneck capacity per flow in the scaling series.
pub const MBIT_PER_FLOW: u64 = 10;

/// The scaling series' scenario for `flows` flows, acknowledging every
/// `ack_every`-th packet, with access links of `access_rate` (a scenario
/// rate such as `"1000Gbit"`; the dumbbell's default when `None`).
pub fn dumbbell(flows: usize, ack_every: u32, access_rate: Option<&str>) -> Result<Scenario, String> {
    let access = access_rate.map_or(String::new(), |r| format!("access_rate = {r:?}\n"));
    let mut toml = format!(
        "name = \"bench-dumbbell-{flows}\"\n[topology]\nkind = \"dumbbell\"\n{access}\
         [topology.bottleneck]\nrate = \"{}Mbit\"\nrtt = \"20ms\"\nqueue = \"1bdp\"\n",
        flows as u64 * MBIT_PER_FLOW
    );
    for i in 0..flows {
        toml += &format!("[[flow]]\nname = \"f{i}\"\ncc = \"lia\"\nsubflows = 2\nack_every = {ack_every}\n");
    }
    parse(&toml, "bench").map_err(|e| e.to_string())
}

/// What one measured run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// CPU seconds of the measured window (the run is single-threaded; on a
    /// machine shared with other work, CPU time is steadier than wall time).
    pub cpu_s: f64,
    /// Data packets delivered in the window (bytes read / mss).
    pub delivered_packets: u64,
    /// Simulator events run in the window.
    pub events: u64,
    /// Packets the endpoints sent (data and ACKs) in the window.
    pub endpoint_packets: u64,
    /// CPU time the hypervisor gave to other machines during the window
    /// (see [`stolen_cpu_ms`]): a figure measured while it was more than a
    /// few per cent of the window is the host's as much as Braid's.
    pub stolen_ms: Option<u64>,
}

impl Measurement {
    pub fn ns_per_packet(&self) -> f64 {
        self.cpu_s * 1e9 / self.delivered_packets.max(1) as f64
    }
    pub fn events_per_packet(&self) -> f64 {
        self.events as f64 / self.delivered_packets.max(1) as f64
    }
}

/// The flows counted are the run's: a run longer than the file draws its
/// Poisson arrivals again, to its own end.
fn counters(runner: &Runner) -> (u64, u64, u64) {
    let (sim, scenario) = (runner.sim(), runner.scenario());
    let delivered =
        (0..scenario.flows.len()).map(|f| sim.outcome(f).delivered / u64::from(scenario.flows[f].config.mss)).sum();
    (delivered, sim.events_run(), sim.packets_sent())
}

/// Runs `scenario` for `warmup + duration` and measures the last `duration`.
pub fn measure(scenario: &Scenario, warmup: Duration, duration: Duration) -> Result<Measurement, RunError> {
    let opts = RunOptions { seed: None, duration: Some(warmup + duration) };
    let mut runner = Runner::new(scenario, opts)?;
    let mut none = None::<Recorder>;
    runner.advance(Instant::ZERO + warmup, &mut none);
    let (d0, e0, p0) = counters(&runner);
    // Steal time is read outside the timed window, which it must not cost.
    let stolen0 = stolen_cpu_ms();
    let t0 = CpuClock::start();
    runner.advance(Instant::ZERO + warmup + duration, &mut none);
    let cpu_s = t0.elapsed_s();
    let stolen_ms = stolen0.zip(stolen_cpu_ms()).map(|(a, b)| b.saturating_sub(a));
    let (d1, e1, p1) = counters(&runner);
    Ok(Measurement { cpu_s, delivered_packets: d1 - d0, events: e1 - e0, endpoint_packets: p1 - p0, stolen_ms })
}

/// The calling thread's CPU time (Linux's `/proc/thread-self/schedstat`,
/// in nanoseconds but brought up to date only at scheduler ticks, so a few
/// milliseconds' resolution: measure windows of a second or more), or wall
/// time where that is not available.
pub enum CpuClock {
    Cpu(u64),
    Wall(std::time::Instant),
}

impl CpuClock {
    fn thread_cpu_ns() -> Option<u64> {
        std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
    }

    pub fn start() -> Self {
        Self::thread_cpu_ns().map_or_else(|| CpuClock::Wall(std::time::Instant::now()), CpuClock::Cpu)
    }

    pub fn elapsed_s(&self) -> f64 {
        match self {
            CpuClock::Cpu(t0) => Self::thread_cpu_ns().unwrap_or(*t0).saturating_sub(*t0) as f64 / 1e9,
            CpuClock::Wall(t0) => t0.elapsed().as_secs_f64(),
        }
    }
}

/// CPU time (ms, summed over this machine's CPUs) that the hypervisor has
/// given to other virtual machines since boot: the `steal` column of
/// Linux's `/proc/stat`. `None` where it is not available. On a shared
/// cloud machine it marks the measurements (and timing tests) the host
/// disturbed: while it steals, neighbours also share the caches.
pub fn stolen_cpu_ms() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    steal_ms(&std::fs::read_to_string("/proc/stat").ok()?, hz)
}

/// The steal time in a `/proc/stat` text whose ticks are `hz` a second.
fn steal_ms(stat: &str, hz: u64) -> Option<u64> {
    let ticks: u64 = stat.lines().next()?.strip_prefix("cpu ")?.split_whitespace().nth(7)?.parse().ok()?;
    (hz > 0).then(|| ticks * 1000 / hz)
}

/// Peak resident memory of this process so far, in bytes (Linux; `None`
/// elsewhere).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim();
    kb.parse::<u64>().ok().map(|k| k * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_scales_the_bottleneck_with_the_flows() {
        let s = dumbbell(100, 1, None).unwrap();
        assert_eq!(s.flows.len(), 100);
        assert_eq!(s.topology.links[0].rate_bps, 1_000_000_000);
        assert!(s.flows.iter().all(|f| f.subflows.len() == 2 && f.config.ack_every == 1));
        let m =
            measure(&dumbbell(10, 2, None).unwrap(), Duration::from_millis(500), Duration::from_millis(500)).unwrap();
        // 100 Mbit/s for 0.5 s: about 4,300 data packets of 1448 bytes.
        assert!((3_000..4_500).contains(&m.delivered_packets), "{m:?}");
        assert!(m.events_per_packet() > 1.0 && m.endpoint_packets > m.delivered_packets, "{m:?}");
    }

    /// Steal time is the eighth value of the all-CPU line, in ticks.
    #[test]
    fn steal_time_is_read_from_proc_stat() {
        let stat = "cpu  2724734 359 241166 2263406 10747 0 6366 6145 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(steal_ms(stat, 100), Some(61_450));
        assert_eq!(steal_ms(stat, 250), Some(24_580));
        assert_eq!(steal_ms(stat, 0), None);
        assert_eq!(steal_ms("cpu0 1 2 3 4 5 6 7 8 0 0\n", 100), None);
        assert_eq!(steal_ms("cpu  1 2 3 4 5 6 7\n", 100), None);
        assert_eq!(steal_ms("cpu  1 2 3 4 5 6 7 x\n", 100), None);
        if std::path::Path::new("/proc/stat").exists() {
            let a = stolen_cpu_ms().expect("Linux reports steal time");
            assert!(stolen_cpu_ms().unwrap() >= a);
        }
    }
}
