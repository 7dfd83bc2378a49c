//! Fairness at a shared bottleneck (seed 000 Fig. 1, seed 001 Fig. 2-3):
//! one multipath flow whose subflows all cross one bottleneck, against m
//! single-path TCP flows. Coupled controllers should take one TCP share,
//! 1 / (m + 1) of the link, however many subflows they open; uncoupled
//! subflows take n / (n + m).
//!
//! Setup (the papers give none): a 20 Mbit/s bottleneck with gentle RED
//! (100 packets; drop-tail with few flows shows phase effects), 5 ms each
//! way, behind private access links of 5 ms (20 ms RTT) or, for the
//! multipath flow's second subflow in the unequal case, 35 ms (80 ms RTT).
//! Single-path flows are Reno at 20 ms RTT: the fair share is then what a
//! TCP on the multipath flow's best path would get.

use super::{mean, run_all, Options, Outcome, Repro};
use crate::sweep_charts::lines;

/// A graph: the bottleneck and one access link per path; `paths` are
/// (name, one-way access delay in ms).
fn toml(seed: u64, secs: u32, mp: (&str, &[u32]), tcps: usize) -> String {
    let (cc, delays) = mp;
    let mut t = format!(
        "name = \"shared-bottleneck\"\nseed = {seed}\nduration = \"{secs}s\"\n[topology]\nkind = \"graph\"\n\
         [[topology.link]]\nname = \"neck\"\nfrom = \"L\"\nto = \"R\"\nrate = \"20Mbit\"\ndelay = \"5ms\"\nqueue = \"100p\"\naqm = \"red\"\n"
    );
    let path = |t: &mut String, name: &str, delay: u32| {
        *t += &format!(
            "[[topology.link]]\nname = \"{name}-access\"\nfrom = \"{name}\"\nto = \"L\"\nrate = \"10Gbit\"\ndelay = \"{delay}ms\"\nqueue = \"100000p\"\n\
             [[topology.path]]\nname = \"{name}\"\nlinks = [\"{name}-access\", \"neck\"]\n"
        );
    };
    let mp_paths: Vec<String> = (0..delays.len()).map(|k| format!("mp{k}")).collect();
    for (k, &d) in delays.iter().enumerate() {
        path(&mut t, &mp_paths[k], d);
    }
    for i in 0..tcps {
        path(&mut t, &format!("tcp{i}"), 5);
    }
    let list: Vec<String> = mp_paths.iter().map(|p| format!("\"{p}\"")).collect();
    t += &format!("[[flow]]\nname = \"mp\"\ncc = \"{cc}\"\npaths = [{}]\n", list.join(", "));
    for i in 0..tcps {
        t += &format!("[[flow]]\nname = \"tcp{i}\"\ncc = \"reno\"\npaths = [\"tcp{i}\"]\n");
    }
    t
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(3, 1);
    let secs = o.pick(60, 20);
    let subflow_counts: &[usize] = o.pick(&[2, 4, 8], &[2, 8]);
    let subflow_ccs: &[&str] = o.pick(&["ewtcp", "lia", "reno"], &["lia", "reno"]);
    let tcp_counts: &[usize] = o.pick(&[1, 2, 4], &[1]);
    // Part A: n subflows against 1 TCP, equal RTTs. Part B: 2 subflows
    // against m TCPs, equal and unequal RTTs.
    let mut configs: Vec<(String, &str, Vec<u32>, usize)> = Vec::new();
    for &cc in subflow_ccs {
        for &n in subflow_counts {
            configs.push((format!("{cc}, {n} subflows vs 1 TCP"), cc, vec![5; n], 1));
        }
    }
    for (rtts, delays) in [("equal RTTs", vec![5, 5]), ("RTTs 20/80 ms", vec![5, 35])] {
        for cc in ["ewtcp", "lia"] {
            for &m in tcp_counts {
                configs.push((format!("{cc}, 2 subflows ({rtts}) vs {m} TCP"), cc, delays.clone(), m));
            }
        }
    }
    let runs: Vec<String> =
        seeds.iter().flat_map(|&s| configs.iter().map(move |(_, cc, d, m)| toml(s, secs, (cc, d), *m))).collect();
    let sums = run_all(&runs)?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    // Multipath share of the bottleneck's goodput, mean over seeds.
    let share = |c: usize| {
        let v: Vec<f64> = (0..seeds.len())
            .map(|s| {
                let sum = &sums[s * configs.len() + c];
                let total: f64 = sum.flows.iter().map(|f| f.goodput_mbps).sum();
                100.0 * sum.flows[0].goodput_mbps / total.max(1e-9)
            })
            .collect();
        mean(&v)
    };
    let shares: Vec<f64> = (0..configs.len()).map(share).collect();
    for (c, (label, cc, d, m)) in configs.iter().enumerate() {
        let fair = 100.0 / (*m as f64 + 1.0);
        let (published, tol) = match *cc {
            "reno" => (Some(100.0 * d.len() as f64 / (d.len() + m) as f64), Some(10.0)),
            _ => (Some(fair), Some(10.0)),
        };
        out.row(label.clone(), published, shares[c], "% share", tol);
    }
    let find = |cc: &str, n: usize, delays: &[u32], m: usize| {
        configs.iter().position(|(_, c, d, t)| *c == cc && d.len() == n && d == delays && *t == m).map(|i| shares[i])
    };
    let lia_a: Vec<f64> = subflow_counts.iter().filter_map(|&n| find("lia", n, &vec![5; n], 1)).collect();
    out.check(
        "LIA keeps about one TCP share (50% ± 10) as its subflows double",
        lia_a.iter().all(|s| (s - 50.0).abs() <= 10.0),
    );
    let reno: Vec<f64> = subflow_counts.iter().filter_map(|&n| find("reno", n, &vec![5; n], 1)).collect();
    out.check(
        "uncoupled subflows take more as they multiply, more than LIA",
        reno.windows(2).all(|w| w[1] > w[0]) && reno.iter().zip(&lia_a).all(|(r, l)| r > l),
    );
    let dev = |cc: &str, delays: &[u32]| {
        mean(
            &tcp_counts
                .iter()
                .filter_map(|&m| find(cc, 2, delays, m).map(|s| (s - 100.0 / (m as f64 + 1.0)).abs()))
                .collect::<Vec<_>>(),
        )
    };
    out.check(
        "equal RTTs: EWTCP and LIA both within 10 points of the fair share",
        dev("ewtcp", &[5, 5]) <= 10.0 && dev("lia", &[5, 5]) <= 10.0,
    );
    out.check(
        "unequal RTTs: LIA stays closer to the fair share than EWTCP",
        dev("lia", &[5, 35]) < dev("ewtcp", &[5, 35]),
    );
    out.metric("lia_share_vs_subflows", serde_json::json!(lia_a));
    out.notes.push(format!(
        "20 Mbit/s RED bottleneck, 20 ms RTT (a second subflow at 80 ms in the unequal case), Reno competitors at 20 ms, {secs} s, seeds averaged; \
         'published' for coupled controllers is the design goal (one TCP share), for uncoupled Reno n/(n+m)"
    ));
    let curve = |cc: &str| -> (String, Vec<(f64, f64)>) {
        (
            cc.to_string(),
            subflow_counts.iter().filter_map(|&n| Some((n as f64, find(cc, n, &vec![5; n], 1)?))).collect(),
        )
    };
    let mut series: Vec<(String, Vec<(f64, f64)>)> = subflow_ccs.iter().map(|cc| curve(cc)).collect();
    series.push((
        "fair (one TCP share)".into(),
        vec![(subflow_counts[0] as f64, 50.0), (*subflow_counts.last().unwrap_or(&8) as f64, 50.0)],
    ));
    out.figure(
        "shared-bottleneck.svg",
        lines(
            "multipath share against 1 TCP vs subflows",
            "subflows",
            "% of bottleneck",
            &series,
            Some(100.0),
            true,
            (700, 400),
        ),
    )?;
    Ok(out)
}
