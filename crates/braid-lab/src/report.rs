//! Human-readable table and the results folder (`summary.json`,
//! `subflows.csv`, `links.csv`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use braid_sim::Sim;

use crate::run::Summary;

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
        let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} ms"));
        let _ = writeln!(
            out,
            "  out-of-order queue mean {:.1} kB, max {:.1} kB; write-to-read delay mean {}, p99 {}",
            f.ooo_bytes_mean / 1e3,
            f.ooo_bytes_max as f64 / 1e3,
            ms(f.delay_mean_ms),
            ms(f.delay_p99_ms)
        );
        if let Some(e) = &f.error {
            let _ = writeln!(out, "  !! connection {e}");
        }
        if f.corrupted_bytes > 0 {
            let _ = writeln!(out, "  !! {} corrupted bytes", f.corrupted_bytes);
        }
    }
    let _ = writeln!(
        out,
        "\n{:<14} {:>10} {:>8} {:>10} {:>10} {:>10}",
        "link", "Mbit/s", "util", "q-drops", "rnd-drops", "down-drops"
    );
    for l in s.links.iter().filter(|l| l.bytes_sent > 0 || l.drops_down > 0) {
        let _ = writeln!(
            out,
            "{:<14} {:>10.0} {:>7.1}% {:>10} {:>10} {:>10}",
            l.name,
            l.rate_mbps,
            l.utilization * 100.0,
            l.drops_queue + l.drops_early,
            l.drops_random,
            l.drops_down
        );
    }
    out
}

/// Writes `summary.json`, `subflows.csv`, `links.csv` and the figure
/// `timeseries.svg` into `dir`.
pub fn write_results(dir: &Path, summary: &Summary, sim: &Sim, flow_paths: &[Vec<String>]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("summary.json"), json + "\n")?;

    let rec = sim.recorder();
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("subflows.csv"))?);
    writeln!(
        w,
        "time_s,flow,path,goodput_mbps,cwnd_bytes,srtt_ms,in_flight_bytes,retransmissions,ooo_bytes,delivered_bytes"
    )?;
    // Rows come in time order; remember each subflow's previous row to turn
    // cumulative counters into per-interval goodput.
    let mut prev: Vec<Vec<Option<(f64, u64)>>> = flow_paths.iter().map(|p| vec![None; p.len()]).collect();
    for r in &rec.subflows {
        let (f, s) = (r.flow as usize, r.subflow as usize);
        let t = r.time.as_secs_f64();
        let rate = match prev[f][s] {
            Some((t0, b0)) if t > t0 => (r.received_new - b0) as f64 * 8.0 / (t - t0) / 1e6,
            _ => 0.0,
        };
        prev[f][s] = Some((t, r.received_new));
        let srtt = r.srtt.map_or(String::new(), |d| format!("{:.3}", d.as_millis_f64()));
        writeln!(
            w,
            "{t:.3},{},{},{rate:.3},{},{srtt},{},{},{},{}",
            sim.flows()[f].name,
            flow_paths[f][s],
            r.cwnd,
            r.bytes_in_flight,
            r.retransmissions,
            r.ooo_bytes,
            r.delivered
        )?;
    }
    w.flush()?;

    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("links.csv"))?);
    writeln!(w, "time_s,link,utilization,drops,queue_packets")?;
    let mut prev: Vec<Option<(f64, u64)>> = vec![None; sim.links().len()];
    for r in &rec.links {
        let l = r.link as usize;
        let t = r.time.as_secs_f64();
        let util = match prev[l] {
            Some((t0, b0)) if t > t0 => {
                (r.bytes_sent - b0) as f64 * 8.0 / ((t - t0) * sim.links()[l].spec.rate_bps as f64)
            }
            _ => 0.0,
        };
        prev[l] = Some((t, r.bytes_sent));
        writeln!(w, "{t:.3},{},{util:.4},{},{}", sim.links()[l].spec.name, r.drops, r.queue_packets)?;
    }
    w.flush()?;
    crate::plot::write_timeseries(&dir.join("timeseries.svg"), sim, flow_paths).map_err(std::io::Error::other)
}
