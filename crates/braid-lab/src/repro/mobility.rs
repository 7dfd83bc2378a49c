//! Mobility (seed 000 Fig. 17): a multipath connection over Wi-Fi and 3G
//! while Wi-Fi is lost (the user walks into a stairwell) and later
//! regained. The connection never stalls: 3G carries it through the
//! outage, and Wi-Fi is used again once it is back. A single-path TCP
//! connection over Wi-Fi stalls for the whole outage.
//!
//! Setup: Wi-Fi 10 Mbit/s, 20 ms RTT; 3G 2 Mbit/s, 150 ms RTT, 1 s of
//! buffer; Wi-Fi down from 20 s to 40 s of a 60 s run. A stall is the
//! longest time the receiving application reads nothing (samples every
//! 50 ms).

use braid_sim::Recorder;

use super::{mbps_between, mean, scenario, Options, Outcome, Repro};
use crate::run::{run_with, RunOptions};
use crate::sweep_charts::lines;

fn toml(seed: u64, secs: u32, down: (u32, u32), cc: &str, paths: &str) -> String {
    format!(
        "name = \"mobility\"\nseed = {seed}\nduration = \"{secs}s\"\nsample_interval = \"50ms\"\n[topology]\nkind = \"graph\"\n\
         [[topology.link]]\nname = \"wifi\"\nfrom = \"S\"\nto = \"D\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\n\
         down = [{{ from = \"{}s\", to = \"{}s\" }}]\n\
         [[topology.link]]\nname = \"3g\"\nfrom = \"S\"\nto = \"D\"\nrate = \"2Mbit\"\ndelay = \"75ms\"\nqueue = \"167p\"\n\
         [[topology.path]]\nname = \"wifi\"\nlinks = [\"wifi\"]\n[[topology.path]]\nname = \"3g\"\nlinks = [\"3g\"]\n\
         [[flow]]\nname = \"conn\"\ncc = \"{cc}\"\npaths = [{paths}]\n",
        down.0, down.1
    )
}

/// What one run shows: the longest stall (s), per-subflow Mbit/s per
/// second of the run, and the connection's mean Mbit/s before, during and
/// after the outage.
struct Trace {
    stall: f64,
    per_second: Vec<Vec<(f64, f64)>>,
    phases: [f64; 3],
}

fn trace(toml: &str, down: (u32, u32)) -> Result<Trace, String> {
    let s = scenario(toml, "mobility")?;
    let mut rec = Recorder::default();
    run_with(&s, RunOptions::default(), &mut rec, &mut |_| {}).map_err(|e| e.to_string())?;
    let subflows = s.flows[0].subflows.len();
    let rows: Vec<_> = rec.subflows.iter().filter(|r| r.subflow == 0).collect();
    let (mut stall, mut last_progress, mut last_bytes) = (0.0f64, 0.0, 0u64);
    for r in &rows {
        let t = r.time.as_nanos() as f64 / 1e9;
        if r.delivered > last_bytes {
            (last_bytes, last_progress) = (r.delivered, t);
        }
        stall = stall.max(t - last_progress);
    }
    let mut per_second = vec![Vec::new(); subflows];
    for (k, series) in per_second.iter_mut().enumerate() {
        let mine: Vec<_> = rec.subflows.iter().filter(|r| r.subflow as usize == k).collect();
        for w in mine.windows(21).step_by(20) {
            let (a, b) = (w[0], w[20]);
            let dt = (b.time.as_nanos() - a.time.as_nanos()) as f64 / 1e9;
            series.push((b.time.as_nanos() as f64 / 1e9, (b.received_new - a.received_new) as f64 * 8.0 / dt / 1e6));
        }
    }
    let rate = |from: f64, to: f64| mbps_between(&rec, (0, 0), (from, to), |r| r.delivered);
    let (d0, d1) = (f64::from(down.0), f64::from(down.1));
    let end = rows.last().map_or(d1, |r| r.time.as_nanos() as f64 / 1e9);
    Ok(Trace { stall, per_second, phases: [rate(2.0, d0), rate(d0, d1), rate(d1 + 2.0, end)] })
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    // Nothing in the run is random (a start time drawn from the seed would
    // count as a stall), so one seed is the run.
    let seeds = o.seeds(1, 1);
    let (secs, down) = o.pick((60, (20, 40)), (30, (10, 20)));
    let mut out = Outcome::new(r, &seeds);
    let (mut mp, mut tcp) = (Vec::new(), Vec::new());
    for &s in &seeds {
        mp.push(trace(&toml(s, secs, down, "lia", "\"wifi\", \"3g\""), down)?);
        tcp.push(trace(&toml(s, secs, down, "reno", "\"wifi\""), down)?);
    }
    out.runs = 2 * seeds.len();
    let worst = |t: &[Trace]| t.iter().map(|x| x.stall).fold(0.0, f64::max);
    let phase = |t: &[Trace], p: usize| mean(&t.iter().map(|x| x.phases[p]).collect::<Vec<_>>());
    out.row("multipath: longest stall", None, worst(&mp), "s", None);
    out.row("single-path TCP over Wi-Fi: longest stall", None, worst(&tcp), "s", None);
    for (p, name) in ["before the outage", "during the outage", "after the outage"].iter().enumerate() {
        out.row(format!("multipath goodput {name}"), None, phase(&mp, p), "Mbit/s", None);
    }
    let outage = f64::from(down.1 - down.0);
    out.check("the multipath connection never stalls (no pause of 2 s or more)", worst(&mp) < 2.0);
    out.check("single-path TCP over Wi-Fi stalls for the outage", worst(&tcp) >= outage);
    out.check("3G carries the connection during the outage (above 1 Mbit/s)", phase(&mp, 1) > 1.0);
    out.check("Wi-Fi is used again once it is back (after > 2 x during)", phase(&mp, 2) > 2.0 * phase(&mp, 1));
    out.metric("multipath_longest_stall_s", worst(&mp));
    out.notes.push(format!(
        "Wi-Fi 10 Mbit/s 20 ms, 3G 2 Mbit/s 150 ms with 1 s of buffer, Wi-Fi down {}-{} s of {secs} s, LIA; the paper's figure is a trace: its conclusion is checked",
        down.0, down.1
    ));
    let names = ["Wi-Fi subflow", "3G subflow"];
    let series: Vec<(String, Vec<(f64, f64)>)> =
        mp[0].per_second.iter().enumerate().map(|(k, pts)| (names[k].to_string(), pts.clone())).collect();
    out.figure(
        "mobility.svg",
        lines(
            "multipath goodput per subflow, Wi-Fi lost and regained",
            "time (s)",
            "Mbit/s",
            &series,
            None,
            false,
            (800, 400),
        ),
    )?;
    Ok(out)
}
