//! Load balancing on the torus (seed 000 Fig. 7-8): five bottleneck links
//! A-E in a ring and five two-path flows, flow i over links i and i+1. As
//! link C's capacity drops, a controller that balances congestion moves
//! traffic off C, so C's loss rate p_C stays close to A's p_A: COUPLED
//! balances perfectly (ratio near 1), EWTCP not at all, LIA nearly as
//! well as COUPLED.
//!
//! Setup: links of 1000 packets/s (12 Mbit/s), C from 100 to 1000,
//! drop-tail queues of one bandwidth-delay product at 90 ms (at least 10
//! packets), 5 ms each; access and egress links add 20 ms each way (about
//! 90 ms RTT). A fixed queue in packets would make C's queue ten times
//! deeper in time than the others' and hide its congestion in delay. Loss rates are the links' drops over
//! packets offered (`links[].loss_rate` of the summary).

use super::{link, mean, run_all, Options, Outcome, Repro};
use crate::sweep_charts::lines;

const LINKS: [&str; 5] = ["A", "B", "C", "D", "E"];

fn toml(seed: u64, secs: u32, cc: &str, c_pkts: u32) -> String {
    let mut t = format!("name = \"torus\"\nseed = {seed}\nduration = \"{secs}s\"\n[topology]\nkind = \"graph\"\n");
    for x in LINKS {
        let pkts = if x == "C" { c_pkts } else { 1000 };
        t += &format!(
            "[[topology.link]]\nname = \"{x}\"\nfrom = \"{x}.in\"\nto = \"{x}.out\"\nrate = \"{}bit\"\ndelay = \"5ms\"\nqueue = \"{}p\"\n",
            pkts * 12_000,
            (pkts * 9 / 100).max(10)
        );
    }
    for i in 0..5 {
        for (side, x) in [("a", LINKS[i]), ("b", LINKS[(i + 1) % 5])] {
            let (access, egress) = (format!("s{i}>{x}"), format!("{x}>d{i}"));
            t += &format!(
                "[[topology.link]]\nname = \"{access}\"\nfrom = \"S{i}\"\nto = \"{x}.in\"\nrate = \"1Gbit\"\ndelay = \"20ms\"\nqueue = \"10000p\"\n\
                 [[topology.link]]\nname = \"{egress}\"\nfrom = \"{x}.out\"\nto = \"D{i}\"\nrate = \"1Gbit\"\ndelay = \"20ms\"\nqueue = \"10000p\"\n\
                 [[topology.path]]\nname = \"f{i}{side}\"\nlinks = [\"{access}\", \"{x}\", \"{egress}\"]\n"
            );
        }
        t += &format!("[[flow]]\nname = \"f{i}\"\ncc = \"{cc}\"\npaths = [\"f{i}a\", \"f{i}b\"]\n");
    }
    t
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(3);
    let secs = o.pick(60, 30);
    let caps: &[u32] = o.pick(&[100, 250, 500, 750, 1000], &[100, 1000]);
    let ccs = ["ewtcp", "coupled", "lia"];
    let configs: Vec<(&str, u32)> = ccs.iter().flat_map(|&cc| caps.iter().map(move |&c| (cc, c))).collect();
    let runs: Vec<String> =
        seeds.iter().flat_map(|&s| configs.iter().map(move |&(cc, c)| toml(s, secs, cc, c))).collect();
    let sums = run_all(&runs)?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    let ratio = |i: usize| {
        mean(
            &(0..seeds.len())
                .map(|s| {
                    let sum = &sums[s * configs.len() + i];
                    let p = |x: &str| link(sum, x).map_or(0.0, |l| l.loss_rate);
                    p("C") / p("A").max(1e-6)
                })
                .collect::<Vec<_>>(),
        )
    };
    let ratios: Vec<f64> = (0..configs.len()).map(ratio).collect();
    let at = |cc: &str, c: u32| configs.iter().position(|x| *x == (cc, c)).map_or(f64::NAN, |i| ratios[i]);
    for &(cc, c) in &configs {
        out.row(format!("{cc}, C = {c} pkt/s"), None, at(cc, c), "p_C / p_A", None);
    }
    let low = caps[0];
    let (ew, co, li) = (at("ewtcp", low), at("coupled", low), at("lia", low));
    out.check(format!("C = {low} pkt/s: EWTCP balances worst (its ratio is the largest)"), ew > li && ew > co);
    out.check(format!("C = {low} pkt/s: LIA balances about as well as COUPLED (ratio within 25%)"), li <= 1.25 * co);
    out.check(
        "EWTCP's ratio rises as C's capacity drops",
        at("ewtcp", low) > at("ewtcp", *caps.last().unwrap_or(&1000)),
    );
    out.notes.push(format!(
        "the paper gives curves, not numbers: the conclusions are checked; links 1000 pkt/s, C varied, 1-BDP drop-tail queues, ~90 ms RTT, {secs} s"
    ));
    let series: Vec<(String, Vec<(f64, f64)>)> =
        ccs.iter().map(|&cc| (cc.to_uppercase(), caps.iter().map(|&c| (f64::from(c), at(cc, c))).collect())).collect();
    out.figure(
        "torus.svg",
        lines(
            "torus: p_C / p_A vs capacity of link C",
            "capacity of C (pkt/s)",
            "p_C / p_A",
            &series,
            None,
            true,
            (700, 400),
        ),
    )?;
    out.metric("ratio_at_lowest_capacity", serde_json::json!({"ewtcp": ew, "coupled": co, "lia": li}));
    Ok(out)
}
