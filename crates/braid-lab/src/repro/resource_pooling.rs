//! Resource pooling (seed 001 §3.2, Table 1): four two-path flows A-D over
//! five 10 Mbit/s links, each flow on two neighbouring links (A: 1-2,
//! B: 2-3, C: 3-4, D: 4-5), 80 ms RTT. Perfect pooling gives every flow
//! 12.5 Mbit/s (the 50 Mbit/s shared equally). The survey finds LIA gets
//! the most throughput overall, EWTCP next, COUPLED the least, and the
//! middle flows B and C below the equal share.
//!
//! The survey's figure of the topology (Fig. 4) did not survive in the
//! seed's text; the chain above is the standard resource-pooling example
//! matching "each path 10 Mbit/s, 80 ms" and "the 50 Mbit/s shared by all".
//! Its published figures are asymmetric (A 13.6, D 9.5 under LIA) where the
//! chain is symmetric, so the rows have a wide tolerance and the
//! conclusions are checked.

use super::{goodput, run_all, Options, Outcome, Repro};
use crate::sweep_charts::{bars, Bars};

const FLOWS: [&str; 4] = ["A", "B", "C", "D"];

fn toml(seed: u64, secs: u32, cc: &str) -> String {
    let mut t =
        format!("name = \"resource-pooling\"\nseed = {seed}\nduration = \"{secs}s\"\n[topology]\nkind = \"graph\"\n");
    for l in 1..=5 {
        t += &format!("[[topology.link]]\nname = \"L{l}\"\nfrom = \"L{l}.in\"\nto = \"L{l}.out\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\nqueue = \"67p\"\n");
    }
    for (i, f) in FLOWS.iter().enumerate() {
        let mut paths = Vec::new();
        for l in [i + 1, i + 2] {
            let (a, e) = (format!("{f}>L{l}"), format!("L{l}>{f}"));
            t += &format!(
                "[[topology.link]]\nname = \"{a}\"\nfrom = \"{f}\"\nto = \"L{l}.in\"\nrate = \"1Gbit\"\ndelay = \"15ms\"\nqueue = \"10000p\"\n\
                 [[topology.link]]\nname = \"{e}\"\nfrom = \"L{l}.out\"\nto = \"{f}.dst\"\nrate = \"1Gbit\"\ndelay = \"15ms\"\nqueue = \"10000p\"\n\
                 [[topology.path]]\nname = \"{f}{l}\"\nlinks = [\"{a}\", \"L{l}\", \"{e}\"]\n"
            );
            paths.push(format!("\"{f}{l}\""));
        }
        t += &format!("[[flow]]\nname = \"{f}\"\ncc = \"{cc}\"\npaths = [{}]\n", paths.join(", "));
    }
    t
}

/// Survey Table 1 (Mbit/s): A, B, C, D per controller.
const PUBLISHED: [(&str, [f64; 4]); 3] = [
    ("ewtcp", [13.950_12, 4.417_01, 4.648_31, 9.057_78]),
    ("coupled", [7.332_67, 0.565_04, 0.565_25, 0.567_51]),
    ("lia", [13.551_21, 5.013_89, 5.248_89, 9.471_58]),
];

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    // Nothing in the run is random: every flow starts at 0, as in the
    // survey's NS2 runs, so one seed is the run. (With starts drawn in the
    // first second, B or C alone exceeds the equal share in about a third
    // of the runs; see docs/reproductions.md.)
    let seeds = o.seeds(1, 1);
    let secs = o.pick(60, 30);
    let runs: Vec<String> = seeds.iter().flat_map(|&s| PUBLISHED.iter().map(move |p| toml(s, secs, p.0))).collect();
    let sums = run_all(&runs)?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    let mut got = [[0.0; 4]; 3];
    for (c, (cc, published)) in PUBLISHED.iter().enumerate() {
        for (i, f) in FLOWS.iter().enumerate() {
            got[c][i] =
                (0..seeds.len()).map(|s| goodput(&sums[s * PUBLISHED.len() + c], f)).sum::<f64>() / seeds.len() as f64;
            out.row(format!("{cc} flow {f}"), Some(published[i]), got[c][i], "Mbit/s", Some(3.0));
        }
    }
    let total = |c: usize| got[c].iter().sum::<f64>();
    for (c, (cc, _)) in PUBLISHED.iter().enumerate() {
        out.row(format!("{cc} total"), Some(PUBLISHED[c].1.iter().sum()), total(c), "Mbit/s", None);
    }
    let (ew, co, li) = (0, 1, 2);
    out.check("LIA's total throughput at least EWTCP's (within 2%)", total(li) >= 0.98 * total(ew));
    out.check("COUPLED's total throughput the lowest", total(co) < total(li) && total(co) < total(ew));
    out.check(
        "the middle flows B and C stay below the equal share under LIA and EWTCP",
        [ew, li].iter().all(|&c| got[c][1] < 12.5 && got[c][2] < 12.5),
    );
    out.notes.push(format!(
        "chain of five 10 Mbit/s links, 80 ms RTT, 67-packet (1 BDP) queues, {secs} s, every flow starting at 0"
    ));
    let cats: Vec<String> = FLOWS.iter().map(|f| format!("flow {f}")).collect();
    let mut series = Vec::new();
    for (c, (cc, published)) in PUBLISHED.iter().enumerate() {
        series.push(Bars { label: format!("{cc} (paper)"), values: published.to_vec() });
        series.push(Bars { label: format!("{cc} (Braid)"), values: got[c].to_vec() });
    }
    out.figure(
        "resource-pooling.svg",
        bars("resource pooling: throughput per flow", "Mbit/s", &cats, &series, false, (900, 420)),
    )?;
    Ok(out)
}
