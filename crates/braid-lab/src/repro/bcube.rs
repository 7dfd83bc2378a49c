//! BCube (seed 000's BCube table): BCube(5, 2), 125 hosts with three
//! 100 Mbit/s interfaces each, traffic patterns TP1-TP3, single-path TCP
//! on the shortest of BCube's parallel paths against EWTCP and LIA with
//! one subflow on each of the three parallel paths (BCube's source
//! routing, as htsim's BCube experiments route them).
//!
//! Throughput per sending host in Mbit/s, in whole packets on the wire,
//! summed over the host's flows. TP2 is seed 000's locality pattern ("each
//! host to 12 destinations, a stress test of traffic locality"): in
//! BCube(5, 2) every host has exactly 12 one-hop neighbours (4 per level),
//! so each host sends to those (`matrix = "neighbours"`); the published
//! 297 Mbit/s for single-path TCP, three interfaces full, needs exactly
//! that. Twelve random destinations give single-path TCP about 117.

use super::fattree::host_throughput_pct;
use super::{mean, run_all, Options, Outcome, Repro};
use crate::sweep_charts::{bars, Bars};

fn toml(n: u32, k: u32, secs: f64, seed: u64, tp: &str, cc: &str, subflows: u32) -> String {
    let matrix = match tp {
        "TP1" => "matrix = \"permutation\"",
        "TP2" => "matrix = \"neighbours\"",
        _ => "matrix = \"sparse\"\nfraction = 0.3",
    };
    format!(
        "name = \"bcube\"\nseed = {seed}\nduration = \"{secs}s\"\nsample_interval = \"500ms\"\n\
         [topology]\nkind = \"bcube\"\nn = {n}\nk = {k}\nrate = \"100Mbit\"\nqueue = \"100p\"\n\
         [[flow]]\nname = \"f\"\n{matrix}\ncc = \"{cc}\"\nsubflows = {subflows}\n"
    )
}

const TPS: [&str; 3] = ["TP1", "TP2", "TP3"];
/// Seed 000's table, Mbit/s per host.
const PUBLISHED: [(&str, &str, [f64; 3]); 3] = [
    ("reno", "single-path TCP", [64.5, 297.0, 78.0]),
    ("ewtcp", "EWTCP", [84.0, 229.0, 139.0]),
    ("lia", "LIA", [86.5, 272.0, 135.0]),
];

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(1, 1);
    let (n, k, secs) = o.pick((5, 2, 2.0), (3, 1, 1.0));
    let tps: &[&str] = o.pick(&TPS, &["TP1", "TP3"]);
    let mut runs = Vec::new();
    for &seed in &seeds {
        for (cc, _, _) in PUBLISHED {
            for tp in tps {
                runs.push(toml(n, k, secs, seed, tp, cc, if cc == "reno" { 1 } else { k + 1 }));
            }
        }
    }
    let sums = run_all(&runs)?;
    let per_seed = sums.len() / seeds.len();
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    let mut table = [[0.0; 3]; 3];
    for (c, (_, label, published)) in PUBLISHED.iter().enumerate() {
        for (t, tp) in tps.iter().enumerate() {
            let i = TPS.iter().position(|x| x == tp).unwrap_or(0);
            let v: Vec<f64> = (0..seeds.len())
                .map(|s| mean(&host_throughput_pct(&sums[s * per_seed + c * tps.len() + t], 100.0)))
                .collect();
            table[c][i] = mean(&v);
            let tol = published[i] * 0.15;
            out.row(format!("{tp} {label}"), Some(published[i]), table[c][i], "Mbit/s per host", Some(tol));
        }
    }
    let (single, ewtcp, lia) = (table[0], table[1], table[2]);
    out.check("TP1: multipath above single-path TCP", lia[0] > single[0] && ewtcp[0] > single[0]);
    out.check(
        "TP3: multipath uses several interfaces, far above single-path TCP (1.3x or more)",
        lia[2] > 1.3 * single[2] && ewtcp[2] > 1.3 * single[2],
    );
    if tps.contains(&"TP2") {
        out.check(
            "TP2: single-path TCP on shortest paths beats EWTCP, LIA in between",
            single[1] > ewtcp[1] && lia[1] > ewtcp[1],
        );
    }
    out.notes.push(format!(
        "BCube({n}, {k}), 100 Mbit/s links, 100-packet queues, 1 µs links, {secs} s; multipath: one subflow per parallel path; \
         tolerance 15% of the published figure"
    ));
    let cats: Vec<String> = tps.iter().map(|s| s.to_string()).collect();
    let idx: Vec<usize> = tps.iter().map(|tp| TPS.iter().position(|x| x == tp).unwrap_or(0)).collect();
    let mut series = Vec::new();
    for (c, (_, label, published)) in PUBLISHED.iter().enumerate() {
        series.push(Bars { label: format!("{label} (paper)"), values: idx.iter().map(|&i| published[i]).collect() });
        series.push(Bars { label: format!("{label} (Braid)"), values: idx.iter().map(|&i| table[c][i]).collect() });
    }
    out.figure("bcube.svg", bars("BCube: throughput per host (Mbit/s)", "Mbit/s", &cats, &series, false, (900, 450)))?;
    Ok(out)
}
