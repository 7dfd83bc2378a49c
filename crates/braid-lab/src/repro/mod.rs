//! Reproductions of the seeds' published experiments: `braid repro NAME`.
//!
//! Each reproduction builds its scenarios as scenario files (the format
//! users write, so any run can be replayed with `braid run`), runs them
//! (in parallel, over several seeds where the paper averages), and
//! returns an [`Outcome`]: the published figures beside Braid's with a
//! tolerance per row, the paper's qualitative conclusions checked one by
//! one, figures as SVG, and notes on the setup where the paper is silent.
//! `docs/reproductions.md` records the choices and every difference.
//!
//! A reduced version ([`Options::reduced`]: fewer points, shorter runs)
//! keeps each conclusion checkable in seconds; the test suite runs those.

mod bcube;
mod buffer_size;
mod bursty_cbr;
mod congestion_shift;
mod fattree;
mod flappiness;
mod khalili;
mod mobility;
mod resource_pooling;
mod server_balance;
mod shared_bottleneck;
mod short_flows;
mod torus;
mod wifi_3g;

use braid_proto::{Duration, Instant};
use braid_sim::{LinkStats, Recorder, SubflowSample};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use crate::run::{run, run_with, RunOptions, Runner, Summary};
use crate::scenario::{parse, Scenario};

/// Start times drawn from the seed, uniform over the first second, as a
/// testbed's users would start. Without them a scenario with no random
/// element (drop-tail queues, no random loss, CBR) gives the same run for
/// every seed, and averaging over seeds averages one run.
struct Starts(ChaCha8Rng);

impl Starts {
    fn new(seed: u64) -> Self {
        Starts(ChaCha8Rng::seed_from_u64(seed))
    }

    /// The next flow's `start = "..."` line.
    fn line(&mut self) -> String {
        self.line_after(0.0)
    }

    /// The next flow's `start = "..."` line, in the second from `t` s.
    fn line_after(&mut self, t: f64) -> String {
        format!("start = \"{:.4}s\"\n", t + self.0.gen_range(0.0..1.0))
    }
}

/// The head of a graph scenario with two parallel links of `rate` from `S`
/// to `D` (one-way `delay`, `queue` each) and a path over each, named as
/// its link.
fn two_links(name: &str, seed: u64, secs: u32, links: [&str; 2], rate: &str, delay: &str, queue: &str) -> String {
    let mut t = format!("name = \"{name}\"\nseed = {seed}\nduration = \"{secs}s\"\n[topology]\nkind = \"graph\"\n");
    for l in links {
        t += &format!(
            "[[topology.link]]\nname = \"{l}\"\nfrom = \"S\"\nto = \"D\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"{queue}\"\n\
             [[topology.path]]\nname = \"{l}\"\nlinks = [\"{l}\"]\n"
        );
    }
    t
}

/// Two parallel 10 Mbit/s links, 40 ms RTT, 1-BDP queues, a two-path
/// flow `mp` running `cc` over both and one Reno flow on each (`tcp1`,
/// `tcp2`), all starting in the first second; with the start times drawn
/// so far, for flows added after.
fn shared_pair(name: &str, seed: u64, secs: u32, cc: &str) -> (String, Starts) {
    let mut t = two_links(name, seed, secs, ["p1", "p2"], "10Mbit", "20ms", "34p");
    let mut starts = Starts::new(seed);
    t += &format!("[[flow]]\nname = \"mp\"\ncc = \"{cc}\"\npaths = [\"p1\", \"p2\"]\n{}", starts.line());
    for k in 1..=2 {
        t += &format!("[[flow]]\nname = \"tcp{k}\"\ncc = \"reno\"\npaths = [\"p{k}\"]\n{}", starts.line());
    }
    (t, starts)
}

/// Runs a scenario and keeps every sample.
fn recorded(toml: &str, what: &str) -> Result<Recorder, String> {
    let s = scenario(toml, what)?;
    let mut rec = Recorder::default();
    run_with(&s, RunOptions::default(), &mut rec, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok(rec)
}

fn secs(r: &SubflowSample) -> f64 {
    r.time.as_nanos() as f64 / 1e9
}

/// The last sample of `flow`'s `subflow` taken at or before `t` s.
fn sample_at(rec: &Recorder, flow: u32, subflow: u32, t: f64) -> Option<&SubflowSample> {
    rec.subflows.iter().rev().find(|r| r.flow == flow && r.subflow == subflow && secs(r) <= t)
}

/// How fast `count`, a counter of `flow`'s `subflow` in bytes, grew
/// between `from` and `to` s, in Mbit/s.
fn mbps_between(
    rec: &Recorder,
    (flow, subflow): (u32, u32),
    (from, to): (f64, f64),
    count: fn(&SubflowSample) -> u64,
) -> f64 {
    let at = |t: f64| sample_at(rec, flow, subflow, t).map_or(0, count);
    at(to).saturating_sub(at(from)) as f64 * 8.0 / (to - from) / 1e6
}

/// Subflow `k`'s share of a two-subflow `flow`'s window, sample by sample.
fn window_share(rec: &Recorder, flow: u32, k: usize) -> Vec<(f64, f64)> {
    let mine: Vec<_> = rec.subflows.iter().filter(|r| r.flow == flow).collect();
    mine.chunks(2)
        .filter_map(|pair| match pair {
            [a, b] => Some((secs(a), pair[k].cwnd as f64 / (a.cwnd + b.cwnd).max(1) as f64)),
            _ => None,
        })
        .collect()
}

/// How to run a reproduction.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Seeds to average over; `None` takes the reproduction's default.
    pub seeds: Option<u64>,
    /// Fewer points and shorter runs: the conclusions, in seconds.
    pub reduced: bool,
}

impl Options {
    /// The seeds to run: 1 to `n`, `n` from the options or else the
    /// reproduction's own count for the `full` or the `reduced` version.
    pub fn seeds(&self, full: u64, reduced: u64) -> Vec<u64> {
        let n = self.seeds.unwrap_or(self.pick(full, reduced));
        (1..=n.max(1)).collect()
    }

    /// `full` normally, `reduced` for the reduced version.
    pub fn pick<T>(&self, full: T, reduced: T) -> T {
        if self.reduced {
            reduced
        } else {
            full
        }
    }
}

/// One published figure beside Braid's.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub what: String,
    /// The paper's figure, when it gives one.
    pub published: Option<f64>,
    pub braid: f64,
    pub unit: &'static str,
    /// Largest difference counted as agreement, in `unit`.
    pub tolerance: Option<f64>,
}

impl Row {
    /// Whether Braid agrees within the tolerance (`None` without a published figure).
    pub fn agrees(&self) -> Option<bool> {
        Some((self.braid - self.published?).abs() <= self.tolerance?)
    }
}

/// One of the paper's conclusions and whether Braid's run bears it out.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub claim: String,
    pub holds: bool,
}

/// What a reproduction found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Outcome {
    pub name: String,
    pub source: String,
    pub rows: Vec<Row>,
    pub checks: Vec<Check>,
    pub notes: Vec<String>,
    /// Named figures of the run (`mean_throughput_pct`, ...), for `--json`.
    pub metrics: serde_json::Map<String, serde_json::Value>,
    /// Figure files and their SVG text.
    #[serde(skip)]
    pub figures: Vec<(String, String)>,
    pub seeds: Vec<u64>,
    pub runs: usize,
}

impl Outcome {
    fn new(r: &Repro, seeds: &[u64]) -> Outcome {
        Outcome { name: r.name.into(), source: r.source.into(), seeds: seeds.to_vec(), ..Default::default() }
    }

    fn row(
        &mut self,
        what: impl Into<String>,
        published: Option<f64>,
        braid: f64,
        unit: &'static str,
        tol: Option<f64>,
    ) {
        self.rows.push(Row { what: what.into(), published, braid, unit, tolerance: tol });
    }

    fn check(&mut self, claim: impl Into<String>, holds: bool) {
        self.checks.push(Check { claim: claim.into(), holds });
    }

    fn metric(&mut self, key: &str, v: impl Into<serde_json::Value>) {
        self.metrics.insert(key.into(), v.into());
    }

    fn figure(&mut self, file: &str, svg: Result<String, String>) -> Result<(), String> {
        self.figures.push((file.into(), svg?));
        Ok(())
    }

    /// Every conclusion holds.
    pub fn conclusions_hold(&self) -> bool {
        self.checks.iter().all(|c| c.holds)
    }

    /// The side-by-side table, the conclusions and the notes, as text.
    pub fn table(&self) -> String {
        let mut out = format!("{} ({})\n\n", self.name, self.source);
        out += &format!("{:<48} {:>11} {:>11} {:>11}  {}\n", "what", "published", "Braid", "tolerance", "agrees");
        let num = |v: Option<f64>| {
            v.map_or_else(|| "-".into(), |v| format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string())
        };
        for r in &self.rows {
            let agrees = match r.agrees() {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "",
            };
            out += &format!(
                "{:<48} {:>11} {:>11} {:>11}  {}\n",
                format!("{} ({})", r.what, r.unit),
                num(r.published),
                num(Some(r.braid)),
                r.tolerance.map_or_else(|| "-".into(), |t| format!("±{}", num(Some(t)))),
                agrees
            );
        }
        out += "\nconclusions:\n";
        for c in &self.checks {
            out += &format!("  [{}] {}\n", if c.holds { "holds" } else { "FAILS" }, c.claim);
        }
        for n in &self.notes {
            out += &format!("note: {n}\n");
        }
        out += &format!("\n{} runs, seeds {:?}\n", self.runs, self.seeds);
        out
    }
}

/// A reproduction: its name (fixed: docs and users refer to it), source,
/// what it compares, and how to run it.
pub struct Repro {
    pub name: &'static str,
    pub source: &'static str,
    pub compares: &'static str,
    run: fn(&Repro, &Options) -> Result<Outcome, String>,
}

impl Repro {
    pub fn run(&self, opts: &Options) -> Result<Outcome, String> {
        (self.run)(self, opts)
    }
}

/// Every reproduction, in the order of issue 10's table (server load
/// balancing and the congestion shift, added later, beside the experiments
/// of their seeds).
pub const ALL: &[Repro] = &[
    Repro {
        name: "shared-bottleneck",
        source: "seed 000 Fig. 1, seed 001 Fig. 2-3",
        compares: "multipath share vs subflow count and single-path flows, equal and unequal RTTs; EWTCP vs LIA vs uncoupled",
        run: shared_bottleneck::run,
    },
    Repro {
        name: "torus",
        source: "seed 000 Fig. 7-8",
        compares: "p_C / p_A as link C's capacity drops, EWTCP vs COUPLED vs LIA",
        run: torus::run,
    },
    Repro {
        name: "bursty-cbr",
        source: "seed 000 Fig. 9",
        compares: "top/bottom link throughput % with on/off CBR on the top link: EWTCP 85/100, LIA 83/99.8, COUPLED 55/99.4",
        run: bursty_cbr::run,
    },
    Repro {
        name: "fattree",
        source: "seed 000 FatTree table, Fig. 12",
        compares: "TP1/TP2/TP3 throughput: single-path ECMP, EWTCP, LIA; utilisation vs subflow count",
        run: fattree::run_tables,
    },
    Repro {
        name: "fattree-permutation",
        source: "htsim's data-centre experiment (main_tcp_permutation)",
        compares: "k = 8 FatTree, 100 Mbit/s, 100-packet queues, permutation, 8 LIA subflows, 5 s: mean throughput % of the host link",
        run: fattree::run_permutation,
    },
    Repro {
        name: "bcube",
        source: "seed 000 BCube table",
        compares: "TP1/TP2/TP3 Mbit/s per host: single-path, EWTCP, LIA",
        run: bcube::run,
    },
    Repro {
        name: "server-balance",
        source: "seed 000 Fig. 10",
        compares: "a dual-homed server, 5 TCP flows on one 100 Mbit/s uplink and 15 on the other, then MPTCP flows join: per-flow Mbit/s before and after",
        run: server_balance::run,
    },
    Repro {
        name: "wifi-3g",
        source: "seed 000 Fig. 15-16",
        compares: "multipath vs best single path as link 2's RTT varies; COUPLED < EWTCP < LIA",
        run: wifi_3g::run,
    },
    Repro {
        name: "mobility",
        source: "seed 000 Fig. 17",
        compares: "Wi-Fi lost and regained: the connection never stalls",
        run: mobility::run,
    },
    Repro {
        name: "khalili-a",
        source: "seed 002 Scenario A",
        compares: "normalised throughput of type-1 and type-2 users, LIA vs OLIA vs the optimum with probing cost",
        run: khalili::run,
    },
    Repro {
        name: "resource-pooling",
        source: "seed 001 Table 1",
        compares: "flows A-D throughput for EWTCP, COUPLED, LIA",
        run: resource_pooling::run,
    },
    Repro {
        name: "congestion-shift",
        source: "seed 001 Fig. 5",
        compares: "a two-path LIA flow as one path's congestion rises: the window moves to the other path",
        run: congestion_shift::run,
    },
    Repro {
        name: "flappiness",
        source: "seed 001 Fig. 6-7, Table 2; seed 002",
        compares: "window traces on two equally good paths: COUPLED flaps, LIA, OLIA and EWTCP do not",
        run: flappiness::run,
    },
    Repro {
        name: "short-flows",
        source: "seed 002 last table",
        compares: "4:1 oversubscribed FatTree, long and short flows: short-flow completion time and core utilisation, LIA vs OLIA vs TCP",
        run: short_flows::run,
    },
    Repro {
        name: "buffer-size",
        source: "seed 003",
        compares: "throughput vs receive buffer, low-latency and heterogeneous paths, opportunistic retransmission on/off, models' recommendations",
        run: buffer_size::run,
    },
];

/// The reproduction called `name`.
pub fn find(name: &str) -> Option<&'static Repro> {
    ALL.iter().find(|r| r.name == name)
}

/// Parses a scenario a reproduction built (its own text: an error here is a bug).
fn scenario(toml: &str, what: &str) -> Result<Scenario, String> {
    parse(toml, what).map_err(|e| format!("reproduction scenario: {e}"))
}

/// Runs scenario texts in parallel (each with the seed it names); the
/// summaries come back in order.
fn run_all(scenarios: &[String]) -> Result<Vec<Summary>, String> {
    scenarios
        .par_iter()
        .enumerate()
        .map(|(i, toml)| {
            let s = scenario(toml, &format!("run {i}"))?;
            run(&s, RunOptions::default(), &mut |_| {}).map(|(_, sum)| sum).map_err(|e| e.to_string())
        })
        .collect()
}

/// Runs scenario texts in parallel and returns each run's link counters
/// over the run after `warmup` (counters at the end minus those at the
/// warm-up's end), in the scenario's link order: steady-state figures that
/// start-up transients (slow start's overshoot) do not dominate.
fn link_stats_after(scenarios: &[String], warmup: Duration) -> Result<Vec<Vec<(String, LinkStats)>>, String> {
    scenarios
        .par_iter()
        .enumerate()
        .map(|(i, toml)| {
            let s = scenario(toml, &format!("run {i}"))?;
            let mut runner = Runner::new(&s, RunOptions::default()).map_err(|e| e.to_string())?;
            let mut none = None::<braid_sim::Recorder>;
            let counters = |r: &Runner| r.sim().links().iter().map(|l| l.stats(r.sim().now())).collect::<Vec<_>>();
            runner.advance(Instant::ZERO + warmup, &mut none);
            let before = counters(&runner);
            runner.advance(Instant::ZERO + s.duration, &mut none);
            let after = counters(&runner);
            Ok(runner
                .sim()
                .links()
                .iter()
                .zip(before.iter().zip(&after))
                .map(|(l, (b, a))| (l.spec().name.clone(), a.since(b)))
                .collect())
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The goodput of the flow named `name`.
fn goodput(s: &Summary, name: &str) -> f64 {
    s.flows.iter().find(|f| f.name == name).map_or(0.0, |f| f.goodput_mbps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_issues_and_unique() {
        let names: Vec<&str> = ALL.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "shared-bottleneck",
                "torus",
                "bursty-cbr",
                "fattree",
                "fattree-permutation",
                "bcube",
                "server-balance",
                "wifi-3g",
                "mobility",
                "khalili-a",
                "resource-pooling",
                "congestion-shift",
                "flappiness",
                "short-flows",
                "buffer-size"
            ]
        );
        assert!(find("torus").is_some() && find("nope").is_none());
        let r = Row { what: "x".into(), published: Some(10.0), braid: 12.0, unit: "%", tolerance: Some(2.0) };
        assert_eq!(r.agrees(), Some(true));
        assert_eq!(Row { braid: 12.5, ..r.clone() }.agrees(), Some(false));
        assert_eq!(Row { published: None, ..r }.agrees(), None);
    }
}
