//! Wi-Fi and 3G (seed 000 Fig. 14-16): a multipath flow M over a Wi-Fi-like
//! link 1 (short RTT, random loss) and a 3G-like link 2 (long RTT, deep
//! buffer, few losses), competing with single-path TCP S1 on link 1 and S2
//! on link 2. COUPLED moves M onto the least lossy path (3G) and gets
//! little; EWTCP ignores the RTTs; LIA compensates and does at least as
//! well as the better single-path flow whatever link 2's RTT (Fig. 16:
//! ratio about 1.15 on average).
//!
//! Setup (the paper gives none for this figure): link 1 4 Mbit/s, 10 ms
//! RTT, 0.5% random loss, 10-packet queue; link 2 2 Mbit/s with one second
//! of buffer (167 packets), RTT varied from 50 to 800 ms; 60 s, Reno
//! single-path flows.

use super::{goodput, mean, run_all, Options, Outcome, Repro};
use crate::sweep_charts::lines;

fn toml(seed: u64, secs: u32, cc: &str, rtt2_ms: u32) -> String {
    format!(
        "name = \"wifi-3g\"\nseed = {seed}\nduration = \"{secs}s\"\n[topology]\nkind = \"graph\"\n\
         [[topology.link]]\nname = \"wifi\"\nfrom = \"S\"\nto = \"D\"\nrate = \"4Mbit\"\ndelay = \"5ms\"\nloss = \"0.5%\"\nqueue = \"10p\"\n\
         [[topology.link]]\nname = \"3g\"\nfrom = \"S\"\nto = \"D\"\nrate = \"2Mbit\"\ndelay = \"{}us\"\nqueue = \"167p\"\n\
         [[topology.path]]\nname = \"wifi\"\nlinks = [\"wifi\"]\n[[topology.path]]\nname = \"3g\"\nlinks = [\"3g\"]\n\
         [[flow]]\nname = \"M\"\ncc = \"{cc}\"\npaths = [\"wifi\", \"3g\"]\n\
         [[flow]]\nname = \"S1\"\ncc = \"reno\"\npaths = [\"wifi\"]\n[[flow]]\nname = \"S2\"\ncc = \"reno\"\npaths = [\"3g\"]\n",
        rtt2_ms * 500
    )
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(3, 1);
    let secs = o.pick(60, 30);
    let rtts: &[u32] = o.pick(&[50, 100, 200, 400, 800], &[100, 800]);
    let ccs = ["coupled", "ewtcp", "lia"];
    let configs: Vec<(&str, u32)> = ccs.iter().flat_map(|&c| rtts.iter().map(move |&r| (c, r))).collect();
    let runs: Vec<String> =
        seeds.iter().flat_map(|&s| configs.iter().map(move |&(c, r)| toml(s, secs, c, r))).collect();
    let sums = run_all(&runs)?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = sums.len();
    // Per config: M's goodput and M / max(S1, S2), averaged over seeds.
    let figures = |i: usize| {
        let per_seed: Vec<(f64, f64)> = (0..seeds.len())
            .map(|s| {
                let sum = &sums[s * configs.len() + i];
                let m = goodput(sum, "M");
                (m, m / goodput(sum, "S1").max(goodput(sum, "S2")).max(1e-9))
            })
            .collect();
        (
            mean(&per_seed.iter().map(|p| p.0).collect::<Vec<_>>()),
            mean(&per_seed.iter().map(|p| p.1).collect::<Vec<_>>()),
        )
    };
    let figs: Vec<(f64, f64)> = (0..configs.len()).map(figures).collect();
    let by = |cc: &str| -> Vec<(f64, f64)> {
        configs.iter().zip(&figs).filter(|((c, _), _)| *c == cc).map(|((_, r), f)| (f64::from(*r), f.1)).collect()
    };
    let m_mean = |cc: &str| {
        mean(&configs.iter().zip(&figs).filter(|((c, _), _)| *c == cc).map(|(_, f)| f.0).collect::<Vec<_>>())
    };
    let (co, ew, li) = (m_mean("coupled"), m_mean("ewtcp"), m_mean("lia"));
    // Fig. 15's mean throughputs, relative to LIA's: 1.41 and 1.66 of 2.21 Mb/s.
    out.row("COUPLED's throughput relative to LIA's (Fig. 15)", Some(1.41 / 2.21), co / li, "ratio", Some(0.15));
    out.row("EWTCP's throughput relative to LIA's (Fig. 15)", Some(1.66 / 2.21), ew / li, "ratio", Some(0.15));
    let lia_ratio = mean(&by("lia").iter().map(|p| p.1).collect::<Vec<_>>());
    out.row("LIA: M / best single path, mean over RTT2 (Fig. 16)", Some(1.15), lia_ratio, "ratio", Some(0.15));
    for &(cc, rtt) in &configs {
        let i = configs.iter().position(|x| *x == (cc, rtt)).unwrap_or(0);
        out.row(format!("{cc}, RTT2 {rtt} ms: M / best single path"), None, figs[i].1, "ratio", None);
    }
    out.check("COUPLED < EWTCP < LIA in M's mean throughput", co < ew && ew < li);
    let (l, e, c) = (by("lia"), by("ewtcp"), by("coupled"));
    out.check(
        "LIA gives M the most at every RTT2 (above EWTCP and COUPLED)",
        l.iter().zip(&e).zip(&c).all(|((l, e), c)| l.1 > e.1 && l.1 > c.1),
    );
    out.notes.push(format!(
        "link 1 4 Mbit/s 10 ms 0.5% loss, link 2 2 Mbit/s with 1 s of buffer and RTT2 varied, Reno single-path flows, {secs} s, seeds averaged; \
         Fig. 15's absolute Mb/s depend on the testbed's links, so their ratios to LIA's are compared"
    ));
    let series: Vec<(String, Vec<(f64, f64)>)> = ccs.iter().map(|&c| (c.to_uppercase(), by(c))).collect();
    out.figure(
        "wifi-3g.svg",
        lines("M / best single path vs RTT of link 2", "RTT2 (ms)", "ratio", &series, None, true, (700, 400)),
    )?;
    Ok(out)
}
