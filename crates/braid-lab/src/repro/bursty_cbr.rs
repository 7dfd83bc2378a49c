//! Responding to bursty cross traffic (seed 000 Fig. 9): a two-path flow
//! over two parallel links while on/off CBR traffic at the top link's full
//! rate (10 ms on, 100 ms off) hits the top link. A controller that keeps
//! probing the top path takes back its spare capacity between bursts
//! (EWTCP 85%, LIA 83%); COUPLED moves off the top path and is slow to
//! return (55%). The bottom link is used fully by all three.
//!
//! Throughput on the top link is counted against what the bursts leave
//! (capacity minus the CBR's mean rate), on the bottom against its
//! capacity; both in whole packets on the wire. Setup (the paper gives
//! none): two 10 Mbit/s links, 10 ms RTT, 1-BDP queues (at least 10
//! packets), 60 s. The flow starts at a random time in the first second,
//! drawn from the seed, so each seed meets the bursts at another phase
//! (nothing else in the scenario is random).

use super::fattree::WIRE;
use super::{mean, run_all, two_links, Options, Outcome, Repro, Starts};
use crate::sweep_charts::{bars, Bars};

fn toml(seed: u64, secs: u32, cc: &str) -> String {
    let mut t = two_links("bursty-cbr", seed, secs, ["top", "bottom"], "10Mbit", "5ms", "1bdp");
    t +=
        &format!("[[flow]]\nname = \"mp\"\ncc = \"{cc}\"\npaths = [\"top\", \"bottom\"]\n{}", Starts::new(seed).line());
    t += "[[cross]]\nname = \"cbr\"\npath = \"top\"\nrate = \"10Mbit\"\non = \"10ms\"\noff = \"100ms\"\n";
    t
}

/// Seed 000's table: top and bottom link throughput, %.
const PUBLISHED: [(&str, f64, f64); 3] = [("ewtcp", 85.0, 100.0), ("lia", 83.0, 99.8), ("coupled", 55.0, 99.4)];

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(3, 1);
    let secs = o.pick(60, 20);
    let runs: Vec<String> =
        seeds.iter().flat_map(|&s| PUBLISHED.iter().map(move |&(cc, _, _)| toml(s, secs, cc))).collect();
    let sums = run_all(&runs)?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    let mut top = [0.0; 3];
    let mut bottom = [0.0; 3];
    for (c, &(cc, pt, pb)) in PUBLISHED.iter().enumerate() {
        let pct = |sub: usize| {
            mean(
                &(0..seeds.len())
                    .map(|s| {
                        let sum = &sums[s * PUBLISHED.len() + c];
                        let mbps = sum.flows[0].subflows[sub].goodput_mbps * WIRE;
                        let spare = if sub == 0 { 10.0 - sum.cross_traffic[0].mean_rate_mbps } else { 10.0 };
                        100.0 * mbps / spare
                    })
                    .collect::<Vec<_>>(),
            )
        };
        (top[c], bottom[c]) = (pct(0), pct(1));
        out.row(format!("{cc} top link"), Some(pt), top[c], "% of spare capacity", Some(10.0));
        out.row(format!("{cc} bottom link"), Some(pb), bottom[c], "% of capacity", Some(5.0));
    }
    let (ew, li, co) = (0, 1, 2);
    out.check(
        "COUPLED uses the top link's spare capacity far less than EWTCP and LIA (15+ points)",
        top[co] < top[ew] - 15.0 && top[co] < top[li] - 15.0,
    );
    out.check("EWTCP and LIA within 10 points of each other on the top link", (top[ew] - top[li]).abs() <= 10.0);
    out.check("every controller fills the bottom link (95% or more)", bottom.iter().all(|&b| b >= 95.0));
    out.notes.push(format!(
        "two 10 Mbit/s links, 10 ms RTT, 1-BDP queues (10 packets), CBR at 10 Mbit/s for 10 ms every 110 ms on the top link, {secs} s, the flow's start drawn from the seed in the first second; \
         top-link figures count against the capacity the bursts leave (90.9%)"
    ));
    let cats: Vec<String> = PUBLISHED.iter().map(|p| p.0.to_uppercase()).collect();
    let series = [
        Bars { label: "top, paper".into(), values: PUBLISHED.iter().map(|p| p.1).collect() },
        Bars { label: "top, Braid".into(), values: top.to_vec() },
        Bars { label: "bottom, paper".into(), values: PUBLISHED.iter().map(|p| p.2).collect() },
        Bars { label: "bottom, Braid".into(), values: bottom.to_vec() },
    ];
    out.figure(
        "bursty-cbr.svg",
        bars("bursty CBR on the top link: throughput %", "%", &cats, &series, false, (800, 420)),
    )?;
    Ok(out)
}
