//! `braid compare`: one multipath scenario in Braid's simulator and, over
//! the same links emulated for real packets, in real stacks: the Linux
//! kernel's MPTCP and Braid's own UDP transport; per-subflow goodput, RTT
//! and retransmissions side by side, and a figure.

mod kernel;
mod ss;
mod testbed;
mod transport;

use std::path::{Path, PathBuf};

use braid_lab::plot::{write_panels, PlotData, Series};
use braid_lab::{scenario, RunOptions, Scenario};
use braid_proto::Duration;
use serde::Serialize;

/// Run a scenario in the simulator and in real stacks over the emulator, and compare.
#[derive(clap::Args)]
#[command(long_about = "Run one multipath scenario in Braid's simulator and, over the same links emulated for\n\
    real packets (`braid emulate`, through scripts/testbed.sh; root, Linux), in real stacks: the Linux\n\
    kernel's MPTCP (iperf3 under mptcpize, from Debian's iperf3 and mptcpd) and Braid's own UDP\n\
    transport (`braid recv` and `braid send` of this executable); print per-subflow goodput, smoothed\n\
    RTT and retransmissions side by side.\n\n\
    The scenario needs one flow over every path of its topology, in order, and nothing the real\n\
    stacks would not run: they send bulk data from the start to the end, alone (no cross traffic,\n\
    `start`, `size`, `app_rate` or backup paths). For each controller of\n\
    --cc every side runs it: the simulator and Braid with the scenario's scheduler, the kernel with\n\
    its default MPTCP scheduler, which `scheduler = \"upstream\"` models (and only its uncoupled\n\
    controllers: cubic, reno, bbr). Kernel figures come from the kernel: `ss` per subflow every\n\
    100 ms, `nstat`, and the iperf3 receiver's byte count. Braid's come from its two ends' JSON\n\
    lines: the receiver's bytes per subflow and goodput, the sender's smoothed RTT (once a second)\n\
    and retransmitted packets.\n\n\
    With --out DIR: DIR/compare.json, DIR/compare-CC-seedN.svg (goodput, congestion window and RTT\n\
    per subflow over time; the kernel's window from `ss`, Braid's from its sender's lines once a\n\
    second) and Braid's JSON lines as its two ends printed them (braid-send-CC-seedN.jsonl,\n\
    braid-recv-CC-seedN.jsonl).")]
pub struct Args {
    /// Scenario file (TOML).
    file: PathBuf,
    /// Congestion controllers to compare, comma-separated (`braid list` names Braid's; the kernel
    /// has cubic, reno and bbr).
    #[arg(long, value_delimiter = ',', default_value = "cubic,bbr")]
    cc: Vec<String>,
    /// Real stacks to run over the emulated links, comma-separated: kernel (Linux MPTCP), braid
    /// (Braid's UDP transport); default: both, the kernel only where iperf3 and mptcpize are
    /// installed and it has the controller.
    #[arg(long, value_delimiter = ',', value_enum)]
    with: Vec<Contender>,
    /// How long each side runs (whole seconds for iperf3); default: the scenario's `duration`.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::parse_duration)]
    duration: Option<Duration>,
    /// Seeds of the simulator and of the emulated links, comma-separated: each controller runs once
    /// per seed on every side, and a summary averages them; default: the scenario's seed.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_parser = crate::seed_range())]
    seeds: Vec<u64>,
    /// Write compare.json, one compare-CC-seedN.svg per run and Braid's JSON lines into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The testbed script.
    #[arg(long, default_value = "scripts/testbed.sh")]
    testbed: PathBuf,
    /// Print the comparison as JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// A real stack that runs over the emulated links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Contender {
    /// The Linux kernel's MPTCP.
    Kernel,
    /// Braid's own UDP transport.
    Braid,
}

/// Controllers both Braid and upstream Linux have (coupled ones are not upstream).
const KERNEL_CCS: [&str; 3] = ["cubic", "reno", "bbr"];

/// What the kernel contender needs installed.
const KERNEL_TOOLS: [&str; 2] = ["iperf3", "mptcpize"];

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

/// A real stack's figures, and how the simulator's differ from them.
#[derive(Clone, Debug, Serialize)]
struct Real {
    #[serde(flatten)]
    side: Side,
    /// Simulator aggregate relative to this stack's, in percent.
    aggregate_difference_pct: f64,
    /// Largest difference of a subflow's share, in percentage points.
    split_difference_points: f64,
}

impl Real {
    fn against(side: Side, sim: &Side) -> Real {
        let split = sim.subflows.iter().zip(&side.subflows).map(|(s, k)| (s.share - k.share).abs() * 100.0);
        Real {
            aggregate_difference_pct: (sim.goodput_mbps / side.goodput_mbps.max(1e-9) - 1.0) * 100.0,
            split_difference_points: split.fold(0.0, f64::max),
            side,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
struct Comparison {
    scenario: String,
    cc: String,
    /// The simulator's and Braid's scheduler (the kernel always uses its default).
    scheduler: String,
    /// The scenario's flow detects losses as Linux does (RACK-TLP), in the
    /// simulator and Braid alike (the kernel always does).
    rack_tlp: bool,
    /// ... and defers new data as Linux's segmentation offload does.
    tso_defer: bool,
    duration_s: f64,
    seed: u64,
    kernel_release: String,
    sim: Side,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<Real>,
    /// The kernel namespace's TcpRetransSegs growth (all sockets).
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel_retrans_segs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    braid: Option<Real>,
}

impl Comparison {
    /// The real stacks that ran, named as the tables name them.
    fn reals(&self) -> Vec<(&'static str, &Real)> {
        [("kernel", &self.kernel), ("braid", &self.braid)]
            .into_iter()
            .filter_map(|(n, r)| Some((n, r.as_ref()?)))
            .collect()
    }

    /// Every side, the simulator first.
    fn sides(&self) -> Vec<(&'static str, &Side)> {
        std::iter::once(("sim", &self.sim)).chain(self.reals().into_iter().map(|(n, r)| (n, &r.side))).collect()
    }
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
    // iperf3 and `braid send` send bulk data, alone, for the whole run, on
    // every path at once: a simulation of anything else would be compared
    // with a different experiment.
    let f = &sc.flows[0];
    let unlike = [
        (!sc.cross.is_empty(), "cross traffic ([[cross]])"),
        (f.start != braid_proto::Instant::ZERO, "a flow that starts late (`start`)"),
        (f.size.is_some(), "a transfer of a given size (`size`)"),
        (f.source != braid_sim::Source::Bulk, "an application rate (`app_rate`)"),
        (f.subflows.iter().any(|&(_, backup)| backup), "backup paths (`backup`)"),
    ];
    if let Some((_, what)) = unlike.iter().find(|(unlike, _)| *unlike) {
        return Err(format!(
            "{}: compare runs bulk transfers on every path, alone, for the whole run; the scenario has {what}",
            sc.name
        ));
    }
    Ok(names)
}

/// What Braid's transport cannot take from the scenario: `braid send` has
/// no send-buffer option and runs with its default.
fn braid_side_note(sc: &Scenario) -> Option<String> {
    let (c, d) = (&sc.flows[0].config, braid_proto::Config::default());
    (c.send_buffer != d.send_buffer || c.send_autotune != d.send_autotune).then(|| {
        format!(
            "Braid's transport runs with its default send buffer ({} MiB); the scenario's `send_buffer` applies to the simulator only",
            d.send_buffer >> 20
        )
    })
}

fn sim_side(sc: &Scenario, cc: &str, opts: RunOptions) -> Result<(Side, Vec<Vec<Series>>), String> {
    let mut sc = opts.scenario(sc).map_err(|e| e.to_string())?.into_owned();
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
    // Goodput, congestion window and smoothed RTT, as `braid run --out`
    // draws them.
    let [goodput, cwnd, srtt, _] = braid_lab::plot::series(&plot);
    let mut panels = vec![goodput, cwnd, srtt];
    for s in panels.iter_mut().flatten() {
        s.label = format!("simulator {}", s.label.rsplit(' ').next().unwrap_or_default());
    }
    Ok((Side { goodput_mbps: flow.goodput_mbps, subflows }, panels))
}

/// One path's figures from a real stack, before shares are known.
struct Measured {
    bytes: u64,
    srtt_mean_ms: Option<f64>,
    min_rtt_ms: Option<f64>,
    retransmissions: u64,
}

/// A real stack's side: each path gets its part of the bytes (a path
/// without a subflow none) of the connection's goodput.
fn real_side(names: &[String], goodput_mbps: f64, paths: Vec<Option<Measured>>) -> Side {
    let total: u64 = paths.iter().flatten().map(|m| m.bytes).sum();
    let subflows = names
        .iter()
        .zip(paths)
        .map(|(path, m)| {
            let m = m.unwrap_or(Measured { bytes: 0, srtt_mean_ms: None, min_rtt_ms: None, retransmissions: 0 });
            let share = m.bytes as f64 / total.max(1) as f64;
            PathFigures {
                path: path.clone(),
                goodput_mbps: share * goodput_mbps,
                share,
                srtt_mean_ms: m.srtt_mean_ms,
                min_rtt_ms: m.min_rtt_ms,
                retransmissions: m.retransmissions,
            }
        })
        .collect();
    Side { goodput_mbps, subflows }
}

/// The figure's panels for one side: goodput, congestion window and
/// smoothed RTT per path over time, each a series of points per path.
fn panels(side: &str, names: &[String], [goodput, cwnd, srtt]: [Vec<Vec<(f64, f64)>>; 3]) -> Vec<Vec<Series>> {
    let series = |points: Vec<Vec<(f64, f64)>>| {
        names.iter().zip(points).map(|(path, points)| Series { label: format!("{side} {path}"), points }).collect()
    };
    vec![series(goodput), series(cwnd), series(srtt)]
}

fn kernel_side(run: &kernel::Run, names: &[String]) -> (Side, Vec<Vec<Series>>) {
    let measured = run
        .subflows
        .iter()
        .map(|s| {
            s.as_ref().map(|s| Measured {
                bytes: s.bytes_acked,
                srtt_mean_ms: s.srtt_mean_ms,
                min_rtt_ms: s.min_rtt_ms,
                retransmissions: s.retransmissions,
            })
        })
        .collect();
    let (mut goodput, mut cwnd, mut srtt) = (vec![], vec![], vec![]);
    for k in 0..names.len() {
        let points: Vec<(f64, kernel::PathSample)> =
            run.samples.iter().filter_map(|s| Some((s.t, s.paths[k]?))).collect();
        goodput.push(
            points
                .windows(2)
                .filter(|w| w[1].0 > w[0].0)
                .map(|w| {
                    let bytes = w[1].1.bytes_acked.saturating_sub(w[0].1.bytes_acked);
                    (w[1].0, bytes as f64 * 8.0 / (w[1].0 - w[0].0) / 1e6)
                })
                .collect(),
        );
        cwnd.push(points.iter().map(|&(t, p)| (t, p.cwnd_bytes as f64 / 1e3)).collect());
        srtt.push(points.iter().filter_map(|&(t, p)| Some((t, p.srtt_ms?))).collect());
    }
    (real_side(names, run.goodput_mbps, measured), panels("kernel", names, [goodput, cwnd, srtt]))
}

fn braid_side(run: transport::Run, names: &[String]) -> (Side, Vec<Vec<Series>>) {
    let measured = run
        .subflows
        .iter()
        .map(|s| {
            s.as_ref().map(|s| Measured {
                bytes: s.bytes_received,
                srtt_mean_ms: s.srtt_mean_ms,
                min_rtt_ms: None,
                retransmissions: s.retransmissions,
            })
        })
        .collect();
    let transport::Samples { goodput, cwnd, srtt } = run.samples;
    let panels = panels("braid", names, [goodput, cwnd, srtt]);
    (real_side(names, run.goodput_mbps, measured), panels)
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// One group of columns (a figure, one column per side) of the table.
fn columns(out: &mut String, cells: impl IntoIterator<Item = String>) {
    *out += "  ";
    for c in cells {
        *out += &format!(" {c:>8}");
    }
}

fn table(c: &Comparison) -> String {
    let sides = c.sides();
    let names: Vec<&str> = sides.iter().map(|s| s.0).collect();
    let ours = if c.braid.is_some() { "simulator and braid" } else { "simulator" };
    let kernel = match c.kernel {
        Some(_) => format!("; kernel {}: default scheduler", c.kernel_release),
        None => String::new(),
    };
    let mut out = format!(
        "{}  cc {}  {:.0} s  seed {}  ({ours}: {} scheduler{}{}{kernel}; real stacks over braid emulate)\n\n",
        c.scenario,
        c.cc,
        c.duration_s,
        c.seed,
        c.scheduler,
        if c.rack_tlp { ", RACK-TLP" } else { "" },
        if c.tso_defer { ", TSO deferral" } else { "" }
    );
    out += &format!("{:<10}", "path");
    for unit in ["Mb/s", "%", "srtt ms", "rtx"] {
        columns(
            &mut out,
            names.iter().enumerate().map(|(i, n)| if i == 0 { format!("{n} {unit}") } else { n.to_string() }),
        );
    }
    out += "\n";
    for k in 0..c.sim.subflows.len() {
        let path =
            |f: &dyn Fn(&PathFigures) -> String| sides.iter().map(|(_, s)| f(&s.subflows[k])).collect::<Vec<_>>();
        out += &format!("{:<10}", c.sim.subflows[k].path);
        columns(&mut out, path(&|p| format!("{:.2}", p.goodput_mbps)));
        columns(&mut out, path(&|p| format!("{:.1}", p.share * 100.0)));
        columns(&mut out, path(&|p| opt(p.srtt_mean_ms)));
        columns(&mut out, path(&|p| p.retransmissions.to_string()));
        out += "\n";
    }
    out += &format!("{:<10}", "total");
    columns(&mut out, sides.iter().map(|(_, s)| format!("{:.2}", s.goodput_mbps)));
    columns(&mut out, sides.iter().map(|_| String::new()));
    columns(&mut out, sides.iter().map(|_| String::new()));
    columns(&mut out, sides.iter().map(|(_, s)| s.subflows.iter().map(|p| p.retransmissions).sum::<u64>().to_string()));
    if let Some(n) = c.kernel_retrans_segs {
        out += &format!("  (kernel nstat {n})");
    }
    out += "\n";
    let verdict = |ok: bool| if ok { "within target" } else { "OUTSIDE target" };
    for (name, r) in c.reals() {
        out += &format!(
            "simulator against {name}: aggregate {:+.1}% ({} of {AGGREGATE_TARGET_PCT}%), largest split difference {:.1} points ({} of {SPLIT_TARGET_POINTS})\n",
            r.aggregate_difference_pct,
            verdict(r.aggregate_difference_pct.abs() <= AGGREGATE_TARGET_PCT),
            r.split_difference_points,
            verdict(r.split_difference_points <= SPLIT_TARGET_POINTS)
        );
    }
    out
}

/// Means over the runs of one controller (several seeds).
fn summary(runs: &[Comparison]) -> String {
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&Comparison) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let side = |c: &Comparison, k: usize| c.sides()[k].1.clone();
    let names: Vec<&str> = runs[0].sides().iter().map(|s| s.0).collect();
    let sim = mean(&|c| c.sim.goodput_mbps);
    let mut out = format!("{} cc {} over {} seeds: sim {sim:.1} Mbit/s", runs[0].scenario, runs[0].cc, runs.len());
    for (k, name) in names.iter().enumerate().skip(1) {
        let v: Vec<f64> = runs.iter().map(|c| side(c, k).goodput_mbps).collect();
        let (lo, hi) =
            (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let m = v.iter().sum::<f64>() / n;
        out += &format!(", {name} {m:.1} Mbit/s (runs {lo:.1} to {hi:.1}; sim {:+.1}%)", (sim / m - 1.0) * 100.0);
    }
    out += "\n";
    let per_side = |f: &dyn Fn(&PathFigures) -> f64, k: usize, digits: usize| {
        (0..names.len())
            .map(|j| format!("{:.digits$}", mean(&|c| f(&side(c, j).subflows[k]))))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    for k in 0..runs[0].sim.subflows.len() {
        out += &format!(
            "  {} ({}): share % {}; srtt ms {}; retransmissions {}\n",
            runs[0].sim.subflows[k].path,
            names.join(" / "),
            per_side(&|p| p.share * 100.0, k, 1),
            per_side(&|p| p.srtt_mean_ms.unwrap_or(0.0), k, 1),
            per_side(&|p| p.retransmissions as f64, k, 0),
        );
    }
    out + "\n"
}

fn compare_one(
    a: &Args,
    sc: &Scenario,
    names: &[String],
    (cc, seed, with): (&str, u64, &[Contender]),
    out: Option<&Path>,
) -> Result<Comparison, String> {
    let duration = a.duration.unwrap_or(sc.duration);
    let (sim, mut panels) = sim_side(sc, cc, RunOptions { seed: Some(seed), duration: Some(duration) })?;
    let std_duration = std::time::Duration::from_nanos(duration.as_nanos());
    let scheduler = sc.flows[0].scheduler.clone();
    let (rack_tlp, tso_defer) = (sc.flows[0].config.rack_tlp, sc.flows[0].config.tso_defer);
    let mut c = Comparison {
        scenario: sc.name.clone(),
        cc: cc.to_string(),
        scheduler: scheduler.clone(),
        rack_tlp,
        tso_defer,
        duration_s: duration.as_secs_f64(),
        seed,
        kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        sim,
        kernel: None,
        kernel_retrans_segs: None,
        braid: None,
    };
    if with.contains(&Contender::Kernel) {
        let run = kernel::run(&a.testbed, &a.file, seed, cc, std_duration, names.len())?;
        if let Some(used) = run.subflows.iter().flatten().find(|s| s.cc != cc) {
            return Err(format!("the kernel ran {} instead of {cc}", used.cc));
        }
        let (side, p) = kernel_side(&run, names);
        panels.iter_mut().zip(p).for_each(|(all, p)| all.extend(p));
        c.kernel = Some(Real::against(side, &c.sim));
        c.kernel_retrans_segs = Some(run.retrans_segs);
    }
    if with.contains(&Contender::Braid) {
        let sender = transport::Sender { cc, scheduler: &scheduler, rack_tlp, tso_defer };
        let (run, lines) = transport::run(&a.testbed, &a.file, seed, sender, std_duration, names.len())?;
        if let Some(dir) = out {
            for (end, text) in ["send", "recv"].iter().zip(lines) {
                let file = dir.join(format!("braid-{end}-{cc}-seed{seed}.jsonl"));
                std::fs::write(&file, text + "\n").map_err(|e| format!("{}: {e}", file.display()))?;
            }
        }
        let (side, p) = braid_side(run, names);
        panels.iter_mut().zip(p).for_each(|(all, p)| all.extend(p));
        c.braid = Some(Real::against(side, &c.sim));
    }
    if let Some(dir) = out {
        let file = dir.join(format!("compare-{cc}-seed{seed}.svg"));
        let titles =
            ["goodput per subflow (Mbit/s)", "congestion window per subflow (kB)", "smoothed RTT per subflow (ms)"];
        write_panels(&file, &titles, &panels, duration.as_secs_f64())
            .map_err(|e| format!("{}: cannot write the figure: {e}", file.display()))?;
    }
    Ok(c)
}

/// The programs of `tools` not found in any folder of `path` (a PATH value).
fn missing_tools<'a>(path: &std::ffi::OsStr, tools: &[&'a str]) -> Vec<&'a str> {
    tools.iter().copied().filter(|t| !std::env::split_paths(path).any(|dir| dir.join(t).is_file())).collect()
}

/// The real stacks to run with controller `cc`: `--with` as given (an
/// error where the kernel is asked for and cannot run), or by default
/// Braid, and the kernel where it can, with a note saying why not.
/// `kernel_missing` names the kernel's tools that are not installed.
fn contenders(
    with: &[Contender],
    cc: &str,
    kernel_missing: &[&str],
) -> Result<(Vec<Contender>, Option<String>), String> {
    let kernel_cc = KERNEL_CCS.contains(&cc);
    let missing = || {
        format!(
            "{} are needed on PATH ({} missing; apt-get install iperf3 mptcpd)",
            KERNEL_TOOLS.join(" and "),
            kernel_missing.join(", ")
        )
    };
    let not_kernel_cc = || format!("upstream Linux has only {KERNEL_CCS:?} of Braid's controllers, not {cc}");
    if !with.is_empty() {
        if with.contains(&Contender::Kernel) {
            if !kernel_missing.is_empty() {
                return Err(format!("--with kernel: {}", missing()));
            }
            if !kernel_cc {
                return Err(format!("--with kernel --cc {cc}: {}", not_kernel_cc()));
            }
        }
        let mut list = with.to_vec();
        list.dedup();
        return Ok((list, None));
    }
    let skipped = if !kernel_missing.is_empty() {
        Some(missing())
    } else if !kernel_cc {
        Some(not_kernel_cc())
    } else {
        None
    };
    let list = if skipped.is_none() { vec![Contender::Kernel, Contender::Braid] } else { vec![Contender::Braid] };
    Ok((list, skipped.map(|why| format!("cc {cc}: running without the kernel: {why}"))))
}

pub fn run(a: Args) -> Result<(), String> {
    let sc = scenario::load(&a.file).map_err(|e| e.to_string())?;
    crate::warn_about(&sc, a.duration.unwrap_or(sc.duration));
    let names = check_scenario(&sc)?;
    if let Some(bad) = a.cc.iter().find(|c| braid_proto::cc::by_name(c).is_none()) {
        let known: Vec<&str> = braid_proto::cc::ALGORITHMS.iter().map(|(n, _)| *n).collect();
        return Err(format!("--cc {bad}: unknown congestion controller; one of {}", known.join(", ")));
    }
    let kernel_missing = missing_tools(&std::env::var_os("PATH").unwrap_or_default(), &KERNEL_TOOLS);
    let plans = a.cc.iter().map(|cc| contenders(&a.with, cc, &kernel_missing)).collect::<Result<Vec<_>, _>>()?;
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
    // Ctrl-C or a SIGTERM ends the waits with an error, so the children
    // and the testbed are taken down on the way out.
    braid_emu::signals::install();
    if plans.iter().any(|(with, _)| with.contains(&Contender::Braid)) {
        if let Some(note) = braid_side_note(&sc) {
            eprintln!("compare: {note}");
        }
    }
    let mut all = vec![];
    for (cc, (with, note)) in a.cc.iter().zip(&plans) {
        if let Some(note) = note {
            eprintln!("compare: {note}");
        }
        for &seed in &seeds {
            testbed::interrupted()?;
            let c = compare_one(&a, &sc, &names, (cc, seed, with), a.out.as_deref())?;
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
        assert_eq!(n, 7);
    }

    /// A scenario that sets the send buffer is told that Braid's transport
    /// keeps its default.
    #[test]
    fn a_send_buffer_the_transport_cannot_take_is_noted() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/validation");
        let load = |name: &str| scenario::load(std::path::Path::new(&format!("{dir}/{name}"))).unwrap();
        assert_eq!(braid_side_note(&load("fig6-intense.toml")), None);
        let note = braid_side_note(&load("fig6-intense-upstream.toml")).expect("944 KiB");
        assert!(note.contains("default send buffer (4 MiB)"), "{note}");
    }

    #[test]
    fn refuses_a_flow_over_some_paths_only() {
        let text = braid_lab::DEFAULT_SCENARIO.replace(r#"paths = ["L1", "L2"]"#, r#"paths = ["L2"]"#);
        let sc = scenario::parse(&text, "t").unwrap();
        assert!(check_scenario(&sc).unwrap_err().contains("every path"));
    }

    /// The real sides run bulk transfers alone for the whole run, so a
    /// scenario whose simulation would run anything else is refused.
    #[test]
    fn refuses_what_the_real_stacks_would_not_run() {
        let flow = r#"paths = ["L1", "L2"]"#;
        for (extra, says) in [
            ("\nstart = \"1s\"", "`start`"),
            ("\nsize = \"1MB\"", "`size`"),
            ("\napp_rate = \"1Mbit\"", "`app_rate`"),
            ("\nbackup = [\"L2\"]", "`backup`"),
            ("\n[[cross]]\npath = \"L1\"\nrate = \"1Mbit\"", "[[cross]]"),
        ] {
            let text = braid_lab::DEFAULT_SCENARIO.replace(flow, &format!("{flow}{extra}"));
            let sc = scenario::parse(&text, "t").unwrap_or_else(|e| panic!("{extra}: {e}"));
            let e = check_scenario(&sc).unwrap_err();
            assert!(e.contains(says), "{extra}: {e}");
        }
    }

    #[test]
    fn contenders_default_to_both_and_name_what_is_missing() {
        use Contender::{Braid, Kernel};
        assert_eq!(contenders(&[], "cubic", &[]).unwrap(), (vec![Kernel, Braid], None));
        let (list, note) = contenders(&[], "cubic", &["mptcpize"]).unwrap();
        assert_eq!(list, vec![Braid]);
        assert!(note.unwrap().contains("mptcpize missing"));
        let (list, note) = contenders(&[], "lia", &[]).unwrap();
        assert_eq!(list, vec![Braid]);
        assert!(note.unwrap().contains("not lia"));
        let e = contenders(&[Kernel, Braid], "bbr", &["iperf3", "mptcpize"]).unwrap_err();
        assert!(e.starts_with("--with kernel: iperf3 and mptcpize are needed") && e.contains("apt-get"), "{e}");
        assert!(contenders(&[Kernel], "olia", &[]).unwrap_err().contains("--with kernel --cc olia"));
        // Braid alone needs no kernel tools and takes any controller.
        assert_eq!(contenders(&[Braid], "olia", &["iperf3"]).unwrap(), (vec![Braid], None));
    }

    #[test]
    fn tools_are_looked_up_on_the_path() {
        assert_eq!(missing_tools(std::ffi::OsStr::new(""), &KERNEL_TOOLS), KERNEL_TOOLS);
        let path = std::env::join_paths(["/nonexistent", "/bin", "/usr/bin"]).unwrap();
        assert_eq!(missing_tools(&path, &["sh", "no-such-tool-here"]), ["no-such-tool-here"]);
    }

    /// Every side draws goodput, congestion window and SRTT, in that
    /// order, the figure's three titles: the simulator from its samples
    /// (in kB), the kernel from its `ss` samples (segments times the MSS).
    #[test]
    fn each_side_draws_goodput_window_and_rtt() {
        let sc = scenario::parse(braid_lab::DEFAULT_SCENARIO, "t").unwrap();
        let opts = RunOptions { seed: Some(1), duration: Some(braid_proto::Duration::from_secs(1)) };
        let (_, sim) = sim_side(&sc, "cubic", opts).unwrap();
        assert_eq!(sim.len(), 3);
        let window = &sim[1][0];
        assert_eq!(window.label, "simulator L1");
        assert_eq!(window.points[0], (0.0, 14.48), "ten segments of 1448 bytes at the start");
        assert!(window.points.iter().any(|&(_, kb)| kb > 14.48), "the window grows: {:?}", window.points);
        let at = |t, acked: u64, cwnd_bytes| kernel::Sample {
            t,
            paths: vec![Some(kernel::PathSample { bytes_acked: acked, srtt_ms: Some(10.0), cwnd_bytes }), None],
        };
        let run = kernel::Run {
            goodput_mbps: 1.0,
            seconds: 1.0,
            subflows: vec![None, None],
            retrans_segs: 0,
            samples: vec![at(0.1, 0, 14_480), at(0.2, 125_000, 28_960)],
        };
        let names: Vec<String> = ["L1", "L2"].map(String::from).to_vec();
        let (_, kernel) = kernel_side(&run, &names);
        assert_eq!(kernel.len(), 3);
        assert_eq!(kernel[0][0].points, [(0.2, 10.0)], "125 kB in 0.1 s");
        assert_eq!(kernel[1][0].points, [(0.1, 14.48), (0.2, 28.96)]);
        assert_eq!(kernel[2][0].points, [(0.1, 10.0), (0.2, 10.0)]);
    }

    fn measured(bytes: u64) -> Option<Measured> {
        Some(Measured { bytes, srtt_mean_ms: Some(10.0), min_rtt_ms: None, retransmissions: 3 })
    }

    #[test]
    fn a_real_side_splits_its_goodput_by_bytes() {
        let names: Vec<String> = ["L1", "L2", "L3"].map(String::from).to_vec();
        let side = real_side(&names, 100.0, vec![measured(300), measured(100), None]);
        let shares: Vec<f64> = side.subflows.iter().map(|p| p.share).collect();
        assert_eq!(shares, [0.75, 0.25, 0.0]);
        assert_eq!(side.subflows[0].goodput_mbps, 75.0);
        assert_eq!((side.subflows[2].retransmissions, side.subflows[2].srtt_mean_ms), (0, None));
        let sim = real_side(&names, 110.0, vec![measured(200), measured(200), None]);
        let r = Real::against(side, &sim);
        assert!((r.aggregate_difference_pct - 10.0).abs() < 1e-9);
        assert!((r.split_difference_points - 25.0).abs() < 1e-9);
    }

    #[test]
    fn the_table_has_a_column_per_side_that_ran() {
        let names: Vec<String> = ["L1", "L2"].map(String::from).to_vec();
        let sim = real_side(&names, 110.0, vec![measured(200), measured(200)]);
        let braid = Real::against(real_side(&names, 100.0, vec![measured(300), measured(100)]), &sim);
        let mut c = Comparison {
            scenario: "t".into(),
            cc: "lia".into(),
            scheduler: "minrtt".into(),
            rack_tlp: false,
            tso_defer: false,
            duration_s: 10.0,
            seed: 1,
            kernel_release: "6.18".into(),
            sim,
            kernel: None,
            kernel_retrans_segs: None,
            braid: Some(braid),
        };
        let t = table(&c);
        assert!(t.contains("sim Mb/s    braid") && !t.contains("kernel"), "{t}");
        assert!(t.contains("simulator against braid: aggregate +10.0%"), "{t}");
        c.kernel = c.braid.clone();
        c.kernel_retrans_segs = Some(7);
        let t = table(&c);
        assert!(t.contains("sim Mb/s   kernel    braid") && t.contains("(kernel nstat 7)"), "{t}");
        assert!(t.contains("(simulator and braid: minrtt scheduler; kernel 6.18: default scheduler;"), "{t}");
        c.rack_tlp = true;
        assert!(table(&c).contains("(simulator and braid: minrtt scheduler, RACK-TLP; kernel 6.18:"), "{t}");
        c.tso_defer = true;
        assert!(table(&c).contains("minrtt scheduler, RACK-TLP, TSO deferral; kernel 6.18:"), "{t}");
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["braid"]["subflows"][0]["share"], 0.75);
        assert_eq!(json["braid"]["goodput_mbps"], 100.0);
        let sum = summary(&[c.clone(), c]);
        assert!(sum.contains("braid 100.0 Mbit/s (runs 100.0 to 100.0; sim +10.0%)"), "{sum}");
    }
}
