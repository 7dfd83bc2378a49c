//! What a run will cost, estimated before it starts, so that a run that
//! would take hours (`duration = "1000000s"`) or write gigabytes of time
//! series (1 ms samples of hundreds of subflows) is announced, with figures,
//! before the user waits for it.
//!
//! The packet count is a fluid estimate: each subflow gets the slowest
//! link on its path, links shared by more than they carry scale their
//! subflows down (slowest link first), constant-rate sources and sized
//! transfers cap what their flow sends. It is an upper bound in spirit and
//! right within a factor of two or so for bulk traffic; good enough to tell
//! seconds from hours. Cross traffic adds its packets, and every flow a
//! fixed cost (its handshake and close, and setting up its state), which
//! dominates runs of many short transfers.

use braid_proto::Duration;
use braid_sim::Source;

use crate::scenario::Scenario;

/// CPU time per packet (data or ACK) assumed by the estimate: a generous
/// figure for a 2-core machine of 2024, so the estimate errs on the long side.
const NS_PER_PACKET: f64 = 1_000.0;
/// Packets of a flow's opening and closing exchanges.
const PACKETS_PER_FLOW: f64 = 6.0;
/// CPU time to set up and tear down one flow (its connections, subflows and
/// records), beyond its packets: measured about 40 us with a million flows.
const NS_PER_FLOW: f64 = 40_000.0;
/// CPU time per sampled row (a subflow or a link at one sample time).
const NS_PER_ROW: f64 = 200.0;
/// CSV bytes per row of `subflows.csv` and of `links.csv`, typical.
const SUBFLOW_ROW_BYTES: u64 = 90;
const LINK_ROW_BYTES: u64 = 35;
/// Wire bytes of a full data packet beyond its payload.
const HEADER_BYTES: f64 = braid_proto::packet::DATA_HEADER_BYTES as f64;

/// Runs longer than this get a warning.
const WARN_CPU_SECONDS: f64 = 600.0;
/// Time series larger than this get a warning.
const WARN_CSV_BYTES: u64 = 1 << 30;

/// The estimated cost of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Packets (data and ACKs) the endpoints will send.
    pub packets: f64,
    /// Sample times, and rows (subflows + links) per sample.
    pub samples: u64,
    pub rows_per_sample: u64,
    /// CPU seconds at [`NS_PER_PACKET`] and [`NS_PER_ROW`].
    pub cpu_seconds: f64,
    /// Bytes of CSV written with `--out` (0 without).
    pub csv_bytes: u64,
}

/// Estimates a run of `scenario` for `duration`; `timeseries` when the
/// time series will be written (`--out`).
pub fn estimate(scenario: &Scenario, duration: Duration, timeseries: bool) -> Estimate {
    let topo = &scenario.topology;
    // Every subflow's forward links, flattened, and per link the subflows crossing it.
    let forward: Vec<&[usize]> =
        scenario.flows.iter().flat_map(|f| f.subflows.iter().map(|&(p, _)| topo.paths[p].forward.as_slice())).collect();
    let mut crossing: Vec<Vec<usize>> = vec![Vec::new(); topo.links.len()];
    for (s, links) in forward.iter().enumerate() {
        for &l in *links {
            crossing[l].push(s);
        }
    }
    // Fluid rate per subflow, in bit/s: the slowest link of its path...
    let link_rate = |l: usize| topo.links[l].rate_bps as f64;
    let mut rates: Vec<f64> =
        forward.iter().map(|ls| ls.iter().map(|&l| link_rate(l)).fold(f64::MAX, f64::min)).collect();
    // ...scaled down where a link carries more than its rate, slowest first.
    let mut order: Vec<usize> = (0..topo.links.len()).collect();
    order.sort_by_key(|&l| topo.links[l].rate_bps);
    for l in order {
        let load: f64 = crossing[l].iter().map(|&s| rates[s]).sum();
        if load > link_rate(l) {
            for &s in &crossing[l] {
                rates[s] *= link_rate(l) / load;
            }
        }
    }
    let mut next = 0;
    let packets = scenario
        .flows
        .iter()
        .map(|f| {
            let mut bps: f64 = rates[next..next + f.subflows.len()].iter().sum();
            next += f.subflows.len();
            if let Source::ConstantRate { bits_per_sec, .. } = f.source {
                bps = bps.min(bits_per_sec as f64);
            }
            let active = duration.as_nanos().saturating_sub(f.start.as_nanos()) as f64 / 1e9;
            let mss = f64::from(f.config.mss);
            let mut bytes = bps / 8.0 * active * mss / (mss + HEADER_BYTES);
            if let Some(size) = f.size {
                bytes = bytes.min(size as f64);
            }
            bytes / mss * (1.0 + 1.0 / f64::from(f.config.ack_every)) + PACKETS_PER_FLOW
        })
        .sum::<f64>();
    let end = braid_proto::Instant::ZERO + duration;
    let cross_packets: f64 = scenario
        .cross
        .iter()
        .map(|c| {
            let until = c.stop.map_or(end, |s| s.min(end));
            let active = until.as_nanos().saturating_sub(c.start.as_nanos()) as f64 / 1e9;
            c.mean_bits_per_sec() * active / (8.0 * f64::from(c.packet_bytes.max(1)))
        })
        .sum();
    let packets = packets + cross_packets;
    let flows = scenario.flows.len() as f64;
    let samples = duration.as_nanos() / scenario.sample_interval.as_nanos().max(1) + 1;
    let subflows = scenario.flow_paths.iter().map(Vec::len).sum::<usize>() as u64;
    let links = topo.links.len() as u64;
    let csv_bytes =
        if timeseries { samples.saturating_mul(subflows * SUBFLOW_ROW_BYTES + links * LINK_ROW_BYTES) } else { 0 };
    Estimate {
        packets,
        samples,
        rows_per_sample: subflows + links,
        cpu_seconds: (packets * NS_PER_PACKET
            + flows * NS_PER_FLOW
            + (samples * (subflows + links)) as f64 * NS_PER_ROW)
            / 1e9,
        csv_bytes,
    }
}

impl Estimate {
    /// One line of figures.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "estimate: about {:.3} M packets and {} samples of {} rows, roughly {} of CPU",
            self.packets / 1e6,
            self.samples,
            self.rows_per_sample,
            human_time(self.cpu_seconds)
        );
        if self.csv_bytes > 0 {
            s += &format!(", {} of CSV time series", human_bytes(self.csv_bytes));
        }
        s
    }

    /// Warnings for a run that will obviously take long or write a lot.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.cpu_seconds > WARN_CPU_SECONDS {
            out.push(format!(
                "this run will take long: {}; shorten `duration` (or --duration) or the topology",
                self.describe()
            ));
        }
        if self.csv_bytes > WARN_CSV_BYTES {
            out.push(format!(
                "the time series will be large: {} rows of CSV ({}); a longer `sample_interval` writes fewer",
                self.samples.saturating_mul(self.rows_per_sample),
                human_bytes(self.csv_bytes)
            ));
        }
        out
    }
}

fn human_time(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b < 1 << 20 => format!("{:.0} KB", b as f64 / 1e3),
        b if b < 1 << 30 => format!("{:.0} MB", b as f64 / 1e6),
        b => format!("{:.1} GB", b as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn default_scenario_is_cheap_and_a_million_seconds_is_not() {
        let s = parse(crate::DEFAULT_SCENARIO, "default").unwrap();
        let short = estimate(&s, s.duration, true);
        // Two 100 Mbit/s paths for 30 s: about 0.5 M data packets and half as many ACKs.
        assert!((5e5..1e6).contains(&short.packets), "{short:?}");
        assert!(short.warnings().is_empty(), "{:?}", short.warnings());
        let long = estimate(&s, Duration::from_secs(1_000_000), false);
        assert_eq!(long.warnings().len(), 1, "{:?}", long.warnings());
        assert!(
            long.warnings()[0].contains("h of CPU") || long.warnings()[0].contains("days"),
            "{:?}",
            long.warnings()
        );
    }

    /// Cross traffic's packets count, and so does each flow's fixed cost.
    #[test]
    fn cross_traffic_and_many_short_flows_count() {
        let base = "duration = \"2s\"\n[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n";
        let cost = |extra: &str| {
            let s = parse(&format!("{base}{extra}"), "t.toml").unwrap();
            estimate(&s, s.duration, false)
        };
        let alone = cost("[[flow]]\n");
        let cross = cost("[[flow]]\n[[cross]]\npath = \"L1\"\nrate = \"10000Gbit\"\nstart = \"1s\"\n");
        // 10^13 bit/s for 1 s in 1500-byte packets: 8.3 x 10^8 packets.
        assert!((8.0e8..8.7e8).contains(&(cross.packets - alone.packets)), "{cross:?}");
        assert!(cross.warnings().iter().any(|w| w.contains("take long")), "{:?}", cross.warnings());
        let many = cost("[[flow]]\ncount = 100000\nsize = \"10KB\"\n");
        // A hundred thousand flows: at least their handshakes and setup.
        assert!(many.cpu_seconds > 4.0 && many.packets > 6e5, "{many:?}");
    }

    #[test]
    fn shared_links_scale_subflows_down() {
        let flows: String = (0..400).map(|i| format!("[[flow]]\nname = \"f{i}\"\nsubflows = 2\n")).collect();
        let toml = format!(
            "duration = \"30s\"\nsample_interval = \"1ms\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"100Mbit\"\n{flows}"
        );
        let s = parse(&toml, "t.toml").unwrap();
        let e = estimate(&s, s.duration, true);
        // 100 Mbit/s for 30 s, not 800 x 10 Gbit/s of access links.
        assert!((2e5..6e5).contains(&e.packets), "{e:?}");
        // 800 subflows sampled every ms for 30 s: 24 M rows, gigabytes of CSV.
        let w = e.warnings();
        assert!(w.len() == 1 && w[0].contains("time series will be large"), "{w:?}");
        assert!(estimate(&s, s.duration, false).warnings().is_empty(), "no CSV, no warning");
    }
}
