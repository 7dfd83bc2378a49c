//! `braid compare`: one multipath scenario in Braid's simulator and, over
//! the same links emulated for real packets, in the Linux kernel's MPTCP;
//! per-subflow goodput, RTT and retransmissions side by side, and a figure.

mod kernel;
mod ss;

use std::path::{Path, PathBuf};

use braid_lab::plot::{write_panels, PlotData, Series};
use braid_lab::{scenario, RunOptions, Scenario};
use braid_proto::Duration;
use serde::Serialize;

/// Run a scenario in the simulator and in the Linux kernel over the emulator, and compare.
#[derive(clap::Args)]
#[command(long_about = "Run one multipath scenario in Braid's simulator and in the Linux kernel's MPTCP over the\n\
    same links emulated for real packets (`braid emulate`, through scripts/testbed.sh; root, Linux,\n\
    with iperf3 and mptcpize from Debian's mptcpd installed), and print per-subflow goodput, smoothed\n\
    RTT and retransmissions side by side.\n\n\
    The scenario needs one flow over every path of its topology, in order. For each controller of\n\
    --cc (the kernel's uncoupled ones: cubic, reno, bbr) both sides run it; the kernel uses its\n\
    default MPTCP scheduler whatever the scenario names. Kernel figures come from the kernel: `ss`\n\
    per subflow every 100 ms, `nstat`, and the iperf3 receiver's byte count.\n\n\
    With --out DIR: DIR/compare.json and DIR/compare-CC-seedN.svg (goodput and RTT per subflow over\n\
    time).")]
pub struct Args {
    /// Scenario file (TOML).
    file: PathBuf,
    /// Congestion controllers to compare, comma-separated: cubic, reno, bbr.
    #[arg(long, value_delimiter = ',', default_value = "cubic,bbr")]
    cc: Vec<String>,
    /// How long each side runs (whole seconds for iperf3); default: the scenario's `duration`.
    #[arg(long, value_parser = crate::parse_duration)]
    duration: Option<Duration>,
    /// Seeds of the simulator and of the emulated links, comma-separated: each controller runs once
    /// per seed on both sides, and a summary averages them; default: the scenario's seed.
    #[arg(long, value_delimiter = ',')]
    seeds: Vec<u64>,
    /// Write compare.json and one compare-CC-seedN.svg per run into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The testbed script.
    #[arg(long, default_value = "scripts/testbed.sh")]
    testbed: PathBuf,
    /// Print the comparison as JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// Controllers both Braid and upstream Linux have (coupled ones are not upstream).
const KERNEL_CCS: [&str; 3] = ["cubic", "reno", "bbr"];

#[derive(Clone, Debug, Serialize)]
struct PathFigures {
    path: String,
    goodput_mbps: f64,
    /// Fraction of the connection's bytes this subflow carried.
    share: f64,
    srtt_mean_ms: Option<f64>,
    min_rtt_ms: Option<f64>,
    retransmissions: u64,
}

#[derive(Clone, Debug, Serialize)]
struct Side {
    goodput_mbps: f64,
    subflows: Vec<PathFigures>,
}

#[derive(Clone, Debug, Serialize)]
struct Comparison {
    scenario: String,
    cc: String,
    /// The simulator's scheduler (the kernel always uses its default).
    sim_scheduler: String,
    duration_s: f64,
    seed: u64,
    kernel_release: String,
    sim: Side,
    kernel: Side,
    /// The kernel namespace's TcpRetransSegs growth (all sockets).
    kernel_retrans_segs: u64,
    /// Simulator aggregate relative to the kernel's, in percent.
    aggregate_difference_pct: f64,
    /// Largest difference of a subflow's share, in percentage points.
    split_difference_points: f64,
}

/// Target of issue 12: aggregate within 10%, split within 15 points.
const AGGREGATE_TARGET_PCT: f64 = 10.0;
const SPLIT_TARGET_POINTS: f64 = 15.0;

fn check_scenario(sc: &Scenario) -> Result<Vec<String>, String> {
    let names: Vec<String> = sc.topology.paths.iter().map(|p| p.name.clone()).collect();
    if sc.flows.len() != 1 || sc.flow_paths[0] != names {
        return Err(format!(
            "{}: compare needs exactly one flow over every path of the topology in order ({names:?})",
            sc.name
        ));
    }
    Ok(names)
}

fn sim_side(sc: &Scenario, cc: &str, opts: RunOptions) -> Result<(Side, Vec<Vec<Series>>), String> {
    let mut sc = sc.clone();
    sc.flows[0].cc = cc.to_string();
    let mut plot = PlotData::new(&sc, opts.duration.unwrap_or(sc.duration));
    let (_, summary) = braid_lab::run_with(&sc, opts, &mut plot, &mut |_| {}).map_err(|e| e.to_string())?;
    let flow = &summary.flows[0];
    let total: u64 = flow.subflows.iter().map(|s| s.bytes_delivered).sum();
    let subflows = flow
        .subflows
        .iter()
        .map(|s| PathFigures {
            path: s.path.clone(),
            goodput_mbps: s.goodput_mbps,
            share: s.bytes_delivered as f64 / total.max(1) as f64,
            srtt_mean_ms: s.srtt_mean_ms,
            min_rtt_ms: s.min_rtt_ms,
            retransmissions: s.retransmissions,
        })
        .collect();
    // Goodput and smoothed RTT, as `braid run --out` draws them.
    let [goodput, _, srtt, _] = braid_lab::plot::series(&plot);
    let mut panels = vec![goodput, srtt];
    for s in panels.iter_mut().flatten() {
        s.label = format!("simulator {}", s.label.rsplit(' ').next().unwrap_or_default());
    }
    Ok((Side { goodput_mbps: flow.goodput_mbps, subflows }, panels))
}

fn kernel_side(run: &kernel::Run, names: &[String]) -> (Side, Vec<Vec<Series>>) {
    let total: u64 = run.subflows.iter().flatten().map(|s| s.bytes_acked).sum();
    let subflows = names
        .iter()
        .zip(&run.subflows)
        .map(|(path, s)| {
            let s = s.clone().unwrap_or_default();
            let share = s.bytes_acked as f64 / total.max(1) as f64;
            PathFigures {
                path: path.clone(),
                goodput_mbps: share * run.goodput_mbps,
                share,
                srtt_mean_ms: s.srtt_mean_ms,
                min_rtt_ms: s.min_rtt_ms,
                retransmissions: s.retransmissions,
            }
        })
        .collect();
    let mut panels = vec![vec![], vec![]];
    for (k, path) in names.iter().enumerate() {
        let points: Vec<(f64, u64, Option<f64>)> =
            run.samples.iter().filter_map(|s| s.paths[k].map(|(b, r)| (s.t, b, r))).collect();
        let goodput = points
            .windows(2)
            .filter(|w| w[1].0 > w[0].0)
            .map(|w| (w[1].0, w[1].1.saturating_sub(w[0].1) as f64 * 8.0 / (w[1].0 - w[0].0) / 1e6))
            .collect();
        let srtt = points.iter().filter_map(|&(t, _, r)| Some((t, r?))).collect();
        panels[0].push(Series { label: format!("kernel {path}"), points: goodput });
        panels[1].push(Series { label: format!("kernel {path}"), points: srtt });
    }
    (Side { goodput_mbps: run.goodput_mbps, subflows }, panels)
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

fn table(c: &Comparison) -> String {
    let mut out = format!(
        "{}  cc {}  {:.0} s  seed {}  (simulator: {} scheduler; kernel {}: default scheduler, over braid emulate)\n\n",
        c.scenario, c.cc, c.duration_s, c.seed, c.sim_scheduler, c.kernel_release
    );
    out += &format!(
        "{:<10} {:>9} {:>9}   {:>7} {:>7}   {:>8} {:>8}   {:>7} {:>7}\n",
        "path", "sim Mb/s", "kernel", "sim %", "kernel", "sim srtt", "kernel", "sim rtx", "kernel"
    );
    for (s, k) in c.sim.subflows.iter().zip(&c.kernel.subflows) {
        out += &format!(
            "{:<10} {:>9.2} {:>9.2}   {:>7.1} {:>7.1}   {:>8} {:>8}   {:>7} {:>7}\n",
            s.path,
            s.goodput_mbps,
            k.goodput_mbps,
            s.share * 100.0,
            k.share * 100.0,
            opt(s.srtt_mean_ms),
            opt(k.srtt_mean_ms),
            s.retransmissions,
            k.retransmissions
        );
    }
    let sum = |side: &Side| side.subflows.iter().map(|s| s.retransmissions).sum::<u64>();
    out += &format!(
        "{:<10} {:>9.2} {:>9.2}   {:>7} {:>7}   {:>8} {:>8}   {:>7} {:>7}  (nstat {})\n",
        "total",
        c.sim.goodput_mbps,
        c.kernel.goodput_mbps,
        "",
        "",
        "",
        "",
        sum(&c.sim),
        sum(&c.kernel),
        c.kernel_retrans_segs
    );
    let verdict = |ok: bool| if ok { "within target" } else { "OUTSIDE target" };
    out += &format!(
        "aggregate {:+.1}% ({} of {AGGREGATE_TARGET_PCT}%), largest split difference {:.1} points ({} of {SPLIT_TARGET_POINTS})\n",
        c.aggregate_difference_pct,
        verdict(c.aggregate_difference_pct.abs() <= AGGREGATE_TARGET_PCT),
        c.split_difference_points,
        verdict(c.split_difference_points <= SPLIT_TARGET_POINTS)
    );
    out
}

/// Means over the runs of one controller (several seeds).
fn summary(runs: &[Comparison]) -> String {
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&Comparison) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let range = |f: &dyn Fn(&Comparison) -> f64| {
        let v: Vec<f64> = runs.iter().map(f).collect();
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    };
    let (lo, hi) = range(&|c| c.kernel.goodput_mbps);
    let mut out = format!(
        "{} cc {} over {} seeds: simulator {:.1} Mbit/s, kernel {:.1} Mbit/s (runs {lo:.1} to {hi:.1}); aggregate {:+.1}%\n",
        runs[0].scenario,
        runs[0].cc,
        runs.len(),
        mean(&|c| c.sim.goodput_mbps),
        mean(&|c| c.kernel.goodput_mbps),
        (mean(&|c| c.sim.goodput_mbps) / mean(&|c| c.kernel.goodput_mbps) - 1.0) * 100.0,
    );
    for k in 0..runs[0].sim.subflows.len() {
        out += &format!(
            "  {}: share simulator {:.1}%, kernel {:.1}%; srtt {:.1} / {:.1} ms; retransmissions {:.0} / {:.0}\n",
            runs[0].sim.subflows[k].path,
            mean(&|c| c.sim.subflows[k].share) * 100.0,
            mean(&|c| c.kernel.subflows[k].share) * 100.0,
            mean(&|c| c.sim.subflows[k].srtt_mean_ms.unwrap_or(0.0)),
            mean(&|c| c.kernel.subflows[k].srtt_mean_ms.unwrap_or(0.0)),
            mean(&|c| c.sim.subflows[k].retransmissions as f64),
            mean(&|c| c.kernel.subflows[k].retransmissions as f64),
        );
    }
    out + "\n"
}

fn compare_one(
    a: &Args,
    sc: &Scenario,
    names: &[String],
    (cc, seed): (&str, u64),
    out: Option<&Path>,
) -> Result<Comparison, String> {
    let duration = a.duration.unwrap_or(sc.duration);
    let (sim, mut panels) = sim_side(sc, cc, RunOptions { seed: Some(seed), duration: Some(duration) })?;
    let std_duration = std::time::Duration::from_nanos(duration.as_nanos());
    let run = kernel::run(&a.testbed, &a.file, seed, cc, std_duration, names.len())?;
    if let Some(used) = run.subflows.iter().flatten().find(|s| s.cc != cc) {
        return Err(format!("the kernel ran {} instead of {cc}", used.cc));
    }
    let (kernel, kernel_panels) = kernel_side(&run, names);
    for (p, k) in panels.iter_mut().zip(kernel_panels) {
        p.extend(k);
    }
    let split = sim.subflows.iter().zip(&kernel.subflows).map(|(s, k)| (s.share - k.share).abs() * 100.0);
    let c = Comparison {
        scenario: sc.name.clone(),
        cc: cc.to_string(),
        sim_scheduler: sc.flows[0].scheduler.clone(),
        duration_s: duration.as_secs_f64(),
        seed,
        kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        aggregate_difference_pct: (sim.goodput_mbps / kernel.goodput_mbps.max(1e-9) - 1.0) * 100.0,
        split_difference_points: split.fold(0.0, f64::max),
        sim,
        kernel,
        kernel_retrans_segs: run.retrans_segs,
    };
    if let Some(dir) = out {
        let file = dir.join(format!("compare-{cc}-seed{seed}.svg"));
        let titles = ["goodput per subflow (Mbit/s)", "smoothed RTT per subflow (ms)"];
        write_panels(&file, &titles, &panels, duration.as_secs_f64())
            .map_err(|e| format!("{}: cannot write the figure: {e}", file.display()))?;
    }
    Ok(c)
}

pub fn run(a: Args) -> Result<(), String> {
    let sc = scenario::load(&a.file).map_err(|e| e.to_string())?;
    let names = check_scenario(&sc)?;
    if let Some(bad) = a.cc.iter().find(|c| !KERNEL_CCS.contains(&c.as_str())) {
        return Err(format!("--cc {bad}: allowed {KERNEL_CCS:?} (the uncoupled controllers upstream Linux has)"));
    }
    if !a.testbed.is_file() {
        return Err(format!(
            "{}: no testbed script here (run from the repository, or give --testbed)",
            a.testbed.display()
        ));
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let seeds = if a.seeds.is_empty() { vec![sc.seed] } else { a.seeds.clone() };
    let mut all = vec![];
    for cc in &a.cc {
        for &seed in &seeds {
            let c = compare_one(&a, &sc, &names, (cc, seed), a.out.as_deref())?;
            if !a.json {
                crate::emit(&(table(&c) + "\n"));
            }
            all.push(c);
        }
        if !a.json && seeds.len() > 1 {
            crate::emit(&summary(&all[all.len() - seeds.len()..]));
        }
    }
    let json = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())? + "\n";
    if a.json {
        crate::emit(&json);
    }
    if let Some(dir) = &a.out {
        let file = dir.join("compare.json");
        std::fs::write(&file, json).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validation scenarios of docs/validation.md are comparable: one
    /// flow over every path, in order.
    #[test]
    fn validation_scenarios_are_comparable() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/validation");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let sc = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(check_scenario(&sc).is_ok(), "{}", path.display());
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn refuses_a_flow_over_some_paths_only() {
        let text = braid_lab::DEFAULT_SCENARIO.replace(r#"paths = ["L1", "L2"]"#, r#"paths = ["L2"]"#);
        let sc = scenario::parse(&text, "t").unwrap();
        assert!(check_scenario(&sc).unwrap_err().contains("every path"));
    }
}
