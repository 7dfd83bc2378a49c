//! Human-readable table and the results folder (`summary.json`,
//! `subflows.csv`, `links.csv`, `timeseries.svg`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use braid_proto::{Duration, Instant};
use braid_sim::{LinkSample, SampleSink, SubflowSample};

use crate::plot::PlotData;
use crate::run::Summary;
use crate::scenario::Scenario;

/// The summary as an aligned text table.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scenario {}  seed {}  simulated {:.3} s  ({} events)",
        s.scenario, s.seed, s.duration_s, s.events
    );
    let _ = writeln!(
        out,
        "\n{:<14} {:<6} {:<8} {:>10} {:>12} {:>9} {:>10} {:>10}",
        "flow/path", "cc", "sched", "Mbit/s", "bytes", "retx", "srtt ms", "done s"
    );
    for f in &s.flows {
        let done = f
            .completion_time_s
            .map_or_else(|| if f.size_bytes.is_some() { "no".into() } else { "-".into() }, |t| format!("{t:.3}"));
        let _ = writeln!(
            out,
            "{:<14} {:<6} {:<8} {:>10.2} {:>12} {:>9} {:>10} {:>10}",
            f.name,
            f.cc,
            f.scheduler,
            f.goodput_mbps,
            f.bytes_delivered,
            f.subflows.iter().map(|x| x.retransmissions).sum::<u64>(),
            "",
            done
        );
        for sf in &f.subflows {
            let srtt = sf.srtt_mean_ms.map_or_else(|| "-".into(), |v| format!("{v:.2}"));
            let tag = if sf.backup { " (backup)" } else { "" };
            let _ = writeln!(
                out,
                "  {:<12} {:<6} {:<8} {:>10.2} {:>12} {:>9} {:>10} {:>10}",
                format!("{}{tag}", sf.path),
                "",
                "",
                sf.goodput_mbps,
                sf.bytes_delivered,
                sf.retransmissions,
                srtt,
                ""
            );
        }
        for (sf, t) in f.subflows.iter().filter_map(|sf| Some((sf, sf.closed_at_s?))) {
            let _ = writeln!(out, "  subflow {} closed at {t:.3} s: its controller gave the path up", sf.path);
        }
        let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} ms"));
        let _ = writeln!(
            out,
            "  out-of-order queue mean {:.1} kB, max {:.1} kB; write-to-read delay (send buffer included) mean {}, p50 {}, p99 {}",
            f.ooo_bytes_mean / 1e3,
            f.ooo_bytes_max as f64 / 1e3,
            ms(f.delay_mean_ms),
            ms(f.delay_p50_ms),
            ms(f.delay_p99_ms)
        );
        if let Some(e) = &f.error {
            let _ = writeln!(out, "  !! connection {e}");
        }
        if f.corrupted_bytes > 0 {
            let _ = writeln!(out, "  !! {} corrupted bytes", f.corrupted_bytes);
        }
    }
    if s.groups.iter().any(|g| g.flows > 1) {
        let _ = writeln!(
            out,
            "\n{:<14} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "group", "flows", "done", "mean Mb/s", "min Mb/s", "FCT ms", "sd ms", "p50 ms", "p99 ms"
        );
        let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
        for g in &s.groups {
            let _ = writeln!(
                out,
                "{:<14} {:>6} {:>6} {:>10.2} {:>10.2} {:>10} {:>10} {:>10} {:>10}",
                g.name,
                g.flows,
                g.completed,
                g.goodput_mbps_mean,
                g.goodput_mbps_min,
                ms(g.fct_mean_ms),
                ms(g.fct_sd_ms),
                ms(g.fct_p50_ms),
                ms(g.fct_p99_ms)
            );
        }
    }
    for c in &s.cross_traffic {
        let _ = writeln!(
            out,
            "\ncross traffic {} on {}: {:.1} Mbit/s when on, {:.2} Mbit/s mean; {} of {} packets delivered",
            c.name, c.path, c.rate_mbps, c.mean_rate_mbps, c.packets_delivered, c.packets_sent
        );
    }
    // A policer's and an MTU's drops get a column only in runs that have them.
    type Count = fn(&crate::run::LinkSummary) -> u64;
    let rare: [(&str, Count); 2] = [("pol-drops", |l| l.drops_policed), ("mtu-drops", |l| l.drops_mtu)];
    let rare: Vec<_> = rare.into_iter().filter(|(_, n)| s.links.iter().any(|l| n(l) > 0)).collect();
    let _ = write!(
        out,
        "\n{:<14} {:>10} {:>8} {:>8} {:>10} {:>10} {:>10}",
        "link", "Mbit/s", "util", "loss", "q-drops", "rnd-drops", "down-drops"
    );
    let _ = writeln!(out, "{}", rare.iter().map(|(h, _)| format!(" {h:>10}")).collect::<String>());
    // Every link that was offered a packet: one that dropped them all is
    // the one to see.
    for l in s.links.iter().filter(|l| l.packets_offered > 0) {
        let _ = write!(
            out,
            "{:<14} {:>10} {:>7.1}% {:>7.3}% {:>10} {:>10} {:>10}",
            l.name,
            three_digits(l.rate_mbps),
            l.utilization * 100.0,
            l.loss_rate * 100.0,
            l.drops_queue + l.drops_early,
            l.drops_random,
            l.drops_down
        );
        let _ = writeln!(out, "{}", rare.iter().map(|(_, n)| format!(" {:>10}", n(l))).collect::<String>());
    }
    out
}

/// Gives the second and later copies of a name "~2", "~3", ... so none
/// stands for two things (columns, or subflows on one route).
pub(crate) fn mark_repeats<'a>(names: impl Iterator<Item = &'a mut String>) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for name in names {
        let n = seen.entry(name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            *name = format!("{name}~{n}");
        }
    }
}

/// A rate in Mbit/s with at least three significant digits (whole
/// numbers from 100 up): a 100 kbit/s link reads 0.100, not 0.
fn three_digits(mbps: f64) -> String {
    let decimals = if mbps > 0.0 { (2 - mbps.log10().floor() as i32).clamp(0, 9) } else { 0 };
    format!("{mbps:.*}", decimals as usize)
}

/// Writes `summary.json` into `dir`.
pub fn write_summary(dir: &Path, summary: &Summary) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("summary.json"), json + "\n")
}

type CsvFile = csv::Writer<std::fs::File>;

/// The time series of `--out DIR`, written while the run samples:
/// `subflows.csv` and `links.csv` (through the `csv` crate, so names with
/// commas, quotes or newlines stay one field) and, at [`finish`], the
/// figure `timeseries.svg`. Memory stays a per-subflow constant whatever
/// the run's length.
///
/// [`finish`]: TimeSeriesWriter::finish
pub struct TimeSeriesWriter {
    dir: PathBuf,
    subflows: CsvFile,
    links: CsvFile,
    /// Flow names, and path names indexed by `first[flow] + subflow`.
    flow_names: Vec<String>,
    first: Vec<usize>,
    path_names: Vec<String>,
    link_names: Vec<String>,
    /// Previous row's time and counter, per subflow and per link, to turn
    /// cumulative counters into per-interval rates.
    prev_subflow: Vec<Option<(Instant, u64)>>,
    prev_link: Vec<Option<(Instant, Duration, u64, u64)>>,
    plot: PlotData,
    /// The first write error; reported by `finish`.
    error: Option<csv::Error>,
}

impl TimeSeriesWriter {
    /// Creates `dir` (if missing) and the CSV files with their headers, so a
    /// folder that cannot be written is reported before the run starts.
    pub fn create(dir: &Path, scenario: &Scenario, duration: Duration) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let open = |name: &str, header: &[&str]| -> std::io::Result<CsvFile> {
            let mut w = csv::Writer::from_path(dir.join(name)).map_err(std::io::Error::other)?;
            w.write_record(header).map_err(std::io::Error::other)?;
            Ok(w)
        };
        let subflows = open(
            "subflows.csv",
            &[
                "time_s",
                "flow",
                "path",
                "goodput_mbps",
                "cwnd_bytes",
                "srtt_ms",
                "in_flight_bytes",
                "retransmissions",
                "ooo_bytes",
                "delivered_bytes",
            ],
        )?;
        let links = open("links.csv", &["time_s", "link", "utilization", "drops", "queue_packets", "loss_rate"])?;
        // Two subflows of a flow hashed onto one fabric route share its
        // name: the rows tell them apart by the later one's "~2".
        let path_names: Vec<String> = (scenario.flow_paths.iter())
            .flat_map(|paths| {
                let mut names = paths.clone();
                mark_repeats(names.iter_mut());
                names
            })
            .collect();
        Ok(TimeSeriesWriter {
            dir: dir.to_path_buf(),
            subflows,
            links,
            flow_names: scenario.flows.iter().map(|f| f.name.clone()).collect(),
            first: scenario.flow_paths.iter().scan(0, |n, p| Some(std::mem::replace(n, *n + p.len()))).collect(),
            prev_subflow: vec![None; path_names.len()],
            path_names,
            link_names: scenario.topology.links.iter().map(|l| l.name.clone()).collect(),
            prev_link: vec![None; scenario.topology.links.len()],
            plot: PlotData::new(scenario, duration),
            error: None,
        })
    }

    /// Flushes the CSV files and draws `timeseries.svg`.
    pub fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        self.subflows.flush()?;
        self.links.flush()?;
        crate::plot::write_timeseries(&self.dir.join("timeseries.svg"), &self.plot).map_err(std::io::Error::other)
    }

    fn record(&mut self, which: Which, fields: &[&str]) {
        if self.error.is_some() {
            return;
        }
        let w = match which {
            Which::Subflows => &mut self.subflows,
            Which::Links => &mut self.links,
        };
        if let Err(e) = w.write_record(fields) {
            self.error = Some(e);
        }
    }
}

#[derive(Clone, Copy)]
enum Which {
    Subflows,
    Links,
}

/// Seconds, exact to the nanosecond, with at least three decimals: a run
/// that ends between two milliseconds has its last row at its own end, not
/// at the time of the row before.
fn time_s(t: Instant) -> String {
    let ns = t.as_nanos();
    let exact = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    let decimals = exact.trim_end_matches('0').len().max(exact.len() - 6);
    exact[..decimals].to_string()
}

impl SampleSink for TimeSeriesWriter {
    fn subflow(&mut self, r: &SubflowSample) {
        self.plot.subflow(r);
        let (f, i) = (r.flow as usize, self.first[r.flow as usize] + r.subflow as usize);
        let rate = match self.prev_subflow[i] {
            Some((t0, b0)) if r.time > t0 => (r.received_new - b0) as f64 * 8e3 / (r.time - t0).as_nanos() as f64,
            _ => 0.0,
        };
        self.prev_subflow[i] = Some((r.time, r.received_new));
        let srtt = r.srtt.map_or(String::new(), |d| format!("{:.3}", d.as_nanos() as f64 / 1e6));
        let flow = std::mem::take(&mut self.flow_names[f]);
        let path = std::mem::take(&mut self.path_names[i]);
        self.record(
            Which::Subflows,
            &[
                &time_s(r.time),
                &flow,
                &path,
                &format!("{rate:.3}"),
                &r.cwnd.to_string(),
                &srtt,
                &r.bytes_in_flight.to_string(),
                &r.retransmissions.to_string(),
                &r.ooo_bytes.to_string(),
                &r.delivered.to_string(),
            ],
        );
        (self.flow_names[f], self.path_names[i]) = (flow, path);
    }

    fn link(&mut self, r: &LinkSample) {
        let l = r.link as usize;
        // The interval's loss rate is over the packets the link finished
        // with in it, sent or dropped: over those offered in it, an outage
        // that flushes a queue filled earlier read as a loss rate of 500.
        let (util, loss) = match self.prev_link[l] {
            Some((t0, busy0, sent0, drops0)) if r.time > t0 => {
                let (sent, drops) = (r.packets_sent - sent0, r.drops - drops0);
                let loss = if drops > 0 { drops as f64 / (sent + drops) as f64 } else { 0.0 };
                (crate::run::utilisation(r.busy - busy0, r.time - t0), loss)
            }
            _ => (0.0, 0.0),
        };
        self.prev_link[l] = Some((r.time, r.busy, r.packets_sent, r.drops));
        let name = std::mem::take(&mut self.link_names[l]);
        self.record(
            Which::Links,
            &[
                &time_s(r.time),
                &name,
                &format!("{util:.4}"),
                &r.drops.to_string(),
                &r.queue_packets.to_string(),
                &format!("{loss:.6}"),
            ],
        );
        self.link_names[l] = name;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_proto::Duration;

    #[test]
    fn csv_times_are_exact() {
        let at = |ns| time_s(Instant::ZERO + Duration::from_nanos(ns));
        assert_eq!(at(0), "0.000");
        assert_eq!(at(100_000_000), "0.100");
        assert_eq!(at(8_540_000), "0.00854");
        assert_eq!(at(12_000_000_001), "12.000000001");
        assert_eq!(at(3_000_000_000), "3.000");
    }
}
