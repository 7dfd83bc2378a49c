//! Server load balancing (seed 000 Fig. 10): a dual-homed server with two
//! 100 Mbit/s uplinks, 5 single-path TCP (NewReno) flows on link 1 and 15
//! on link 2. Before multipath flows join, link 1's TCP flows get about
//! 18 Mbit/s each and link 2's about 6; once they join (after 1.5 minutes
//! in the slides' testbed), MPTCP takes 6-9 Mbit/s a flow, link 1's TCP
//! flows fall to 6-8 and link 2's stay at 5-6: the multipath flows put
//! most of their traffic on the link that was lightly loaded, and the two
//! links end up balanced.
//!
//! Setup where the slides are silent: 10 LIA flows join (the slides do not
//! say how many; ten make the published figures an equal share of the
//! 200 Mbit/s among 30 flows, 6.7 each), 10 ms RTT on both links, 1-BDP
//! drop-tail queues, every flow starting at a time drawn from the seed in
//! the first second of its phase. Rates are each flow's goodput over the
//! 30 s before the join (the reduced version: the 20 s after a 10 s
//! warm-up) and over the second half of the time after it.

use super::{mbps_between, mean, recorded, two_links, Options, Outcome, Repro, Starts};
use crate::sweep_charts::{bars, Bars};
use braid_sim::SubflowSample;

/// Single-path flows on link 1 and on link 2, then multipath flows.
const TCP1: usize = 5;
const TCP2: usize = 15;
const MPTCP: usize = 10;

fn toml(seed: u64, secs: u32, join: u32) -> String {
    let mut t = two_links("server-balance", seed, secs, ["link1", "link2"], "100Mbit", "5ms", "1bdp");
    let mut starts = Starts::new(seed);
    for (link, n) in [("link1", TCP1), ("link2", TCP2)] {
        for k in 0..n {
            t += &format!("[[flow]]\nname = \"{link}-tcp{k}\"\ncc = \"reno\"\npaths = [\"{link}\"]\n{}", starts.line());
        }
    }
    for k in 0..MPTCP {
        let at = starts.line_after(f64::from(join));
        t += &format!("[[flow]]\nname = \"mptcp{k}\"\ncc = \"lia\"\npaths = [\"link1\", \"link2\"]\n{at}");
    }
    t
}

/// Mean goodput per flow (Mbit/s) of link 1's TCP flows, link 2's and the
/// multipath flows, over `[from, to)` s; and the multipath flows' share of
/// their bytes on link 1 over the same time.
struct Phase {
    tcp1: f64,
    tcp2: f64,
    mptcp: f64,
    mptcp_on_link1: f64,
}

fn phases(toml: &str, windows: [(f64, f64); 2]) -> Result<[Phase; 2], String> {
    let rec = recorded(toml, "server-balance")?;
    let phase = |window: (f64, f64)| {
        let mbps = |flow: usize, sub: u32, count: fn(&SubflowSample) -> u64| {
            mbps_between(&rec, (flow as u32, sub), window, count)
        };
        let rate =
            |flows: std::ops::Range<usize>| mean(&flows.map(|f| mbps(f, 0, |r| r.delivered)).collect::<Vec<_>>());
        let mp = TCP1 + TCP2..TCP1 + TCP2 + MPTCP;
        let on = |sub: u32| mp.clone().map(|f| mbps(f, sub, |r| r.received_new)).sum::<f64>();
        Phase {
            tcp1: rate(0..TCP1),
            tcp2: rate(TCP1..TCP1 + TCP2),
            mptcp: rate(mp.clone()),
            mptcp_on_link1: on(0) / (on(0) + on(1)).max(f64::MIN_POSITIVE),
        }
    };
    Ok(windows.map(phase))
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(3, 2);
    let (secs, join) = o.pick((180, 90), (60, 30));
    let (end, join_s) = (f64::from(secs), f64::from(join));
    let windows = [(join_s - (join_s * 2.0 / 3.0).min(30.0), join_s), ((end + join_s) / 2.0, end)];
    let per_seed: Vec<[Phase; 2]> =
        seeds.iter().map(|&s| phases(&toml(s, secs, join), windows)).collect::<Result<_, _>>()?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = per_seed.len();
    let avg = |p: usize, f: fn(&Phase) -> f64| mean(&per_seed.iter().map(|x| f(&x[p])).collect::<Vec<_>>());
    let (before1, before2) = (avg(0, |p| p.tcp1), avg(0, |p| p.tcp2));
    let (after1, after2, mp) = (avg(1, |p| p.tcp1), avg(1, |p| p.tcp2), avg(1, |p| p.mptcp));
    let on_link1 = avg(1, |p| p.mptcp_on_link1);
    out.row("before: link 1 TCP flows, each", Some(18.0), before1, "Mbit/s", Some(3.0));
    out.row("before: link 2 TCP flows, each", Some(6.0), before2, "Mbit/s", Some(1.5));
    // The slides' ranges, as their middles with half the range and a
    // megabit of reading error either side.
    out.row("after: link 1 TCP flows, each", Some(7.0), after1, "Mbit/s", Some(2.0));
    out.row("after: MPTCP flows, each", Some(7.5), mp, "Mbit/s", Some(2.5));
    out.row("after: link 2 TCP flows, each", Some(5.5), after2, "Mbit/s", Some(1.5));
    // The slides' ranges, 6-8 against 5-6: from 1.0 to 1.6.
    out.row("after: link 1 TCP / link 2 TCP, per flow", Some(7.0 / 5.5), after1 / after2, "ratio", Some(0.35));
    out.row("after: MPTCP bytes on link 1", None, 100.0 * on_link1, "%", None);
    // "绝大部分": the great majority, read as two thirds.
    out.check(
        "MPTCP puts the great majority of its traffic (2/3) on link 1, the lightly loaded one",
        on_link1 > 2.0 / 3.0,
    );
    out.check(
        "MPTCP takes its share from link 1: its TCP flows lose more than half their rate, more than link 2's lose",
        after1 < 0.5 * before1 && after1 / before1 < after2 / before2,
    );
    // RFC 6356's goal: no more than a TCP flow on the better path gets
    // (the slides: 6-9 against 6-8). Uncoupled subflows take more.
    out.check("MPTCP flows take no more than link 1's TCP flows (within 10%)", mp < 1.1 * after1);
    out.check(
        "the uplinks end up nearer balance: link 1's TCP flows get under twice link 2's (three times before)",
        after1 < 2.0 * after2,
    );
    out.notes.push(format!(
        "two 100 Mbit/s links, 10 ms RTT, 1-BDP queues; {TCP1} Reno flows on link 1, {TCP2} on link 2, {MPTCP} LIA flows on both from {join} s of {secs} s; \
         rates over {:.0}-{:.0} s and {:.0}-{:.0} s, seeds averaged; the slides do not give the number of MPTCP flows, the RTT or the queues",
        windows[0].0, windows[0].1, windows[1].0, windows[1].1
    ));
    let cats: Vec<String> = ["link 1 TCP", "link 2 TCP", "MPTCP"].map(String::from).to_vec();
    let series = vec![
        Bars { label: "before MPTCP joins".into(), values: vec![before1, before2, 0.0] },
        Bars { label: "after".into(), values: vec![after1, after2, mp] },
    ];
    out.figure(
        "server-balance.svg",
        bars("server load balancing: per-flow goodput", "Mbit/s", &cats, &series, false, (800, 420)),
    )?;
    Ok(out)
}
