//! Moving off a path whose congestion rises (seed 001 Fig. 5): a two-path
//! LIA flow over two equally congested paths; at 100 s the congestion of
//! one of them is raised. "At first the two paths are about equally
//! congested and the windows move alike; after 100 s one path's congestion
//! was raised, its window fell at once, and all the traffic moved to the
//! other path." The figure is a trace: the conclusions are checked, and
//! "all" is read as most (LIA keeps probing the worse path; what stays
//! there is reported).
//!
//! Setup where the survey is silent (it ran NS2 and gives no figures): two
//! 10 Mbit/s links with 40 ms RTT and 1-BDP queues, each shared with one
//! Reno flow (as `flappiness`); the congestion is raised by four more Reno
//! flows on path 2, starting in the second after the change. 200 s, the
//! change at 100 s; windows sampled every 100 ms; starts drawn from the
//! seed.

use super::{mbps_between, mean, recorded, shared_pair, window_share, Options, Outcome, Repro};
use crate::sweep_charts::lines;

/// Reno flows that join path 2 at the change.
const JOINING: usize = 4;

fn toml(seed: u64, secs: u32, change: u32) -> String {
    let (mut t, mut starts) = shared_pair("congestion-shift", seed, secs, "lia");
    for k in 0..JOINING {
        let at = starts.line_after(f64::from(change));
        t += &format!("[[flow]]\nname = \"late{k}\"\ncc = \"reno\"\npaths = [\"p2\"]\n{at}");
    }
    t
}

/// The multipath flow's share of its window on path 2 over time, and its
/// goodput on each path before and after the change.
struct Trace {
    share: Vec<(f64, f64)>,
    mbps: [[f64; 2]; 2],
}

fn trace(toml: &str, before: (f64, f64), after: (f64, f64)) -> Result<Trace, String> {
    let rec = recorded(toml, "congestion-shift")?;
    let rate = |sub: u32, window: (f64, f64)| mbps_between(&rec, (0, sub), window, |r| r.received_new);
    Ok(Trace {
        share: window_share(&rec, 0, 1),
        mbps: [[rate(0, before), rate(1, before)], [rate(0, after), rate(1, after)]],
    })
}

/// Mean of the points of `series` within `[from, to)`.
fn mean_over(series: &[(f64, f64)], (from, to): (f64, f64)) -> f64 {
    mean(&series.iter().filter(|p| p.0 >= from && p.0 < to).map(|p| p.1).collect::<Vec<_>>())
}

pub(super) fn run(r: &Repro, o: &Options) -> Result<Outcome, String> {
    let seeds = o.seeds(5, 3);
    let (secs, change) = o.pick((200, 100), (60, 30));
    let (end, at) = (f64::from(secs), f64::from(change));
    // Before: the `2 * settle` s before the change; after: from `settle` s
    // past it to the end (full version 40 s and 20 s, reduced 12 s and 6 s).
    let settle = (at / 5.0).min(20.0);
    let (before, after) = ((at - 2.0 * settle, at), (at + settle, end));
    let traces: Vec<Trace> =
        seeds.iter().map(|&s| trace(&toml(s, secs, change), before, after)).collect::<Result<_, _>>()?;
    let mut out = Outcome::new(r, &seeds);
    out.runs = traces.len();
    let avg = |f: &dyn Fn(&Trace) -> f64| mean(&traces.iter().map(f).collect::<Vec<_>>());
    let (share_before, share_after) = (avg(&|t| mean_over(&t.share, before)), avg(&|t| mean_over(&t.share, after)));
    // How long after the change the share, averaged over 2 s, first falls
    // halfway from its level before to its level after (the window's
    // middle, so an immediate fall reads about 1 s).
    let halfway = (share_before + share_after) / 2.0;
    let response = avg(&|t| {
        (0..)
            .map(|k| at + 0.1 * f64::from(k))
            .take_while(|&from| from + 2.0 <= end)
            .find(|&from| mean_over(&t.share, (from, from + 2.0)) < halfway)
            .map_or(end - at, |from| from + 1.0 - at)
    });
    out.row("path 2's share of the window before the change", None, 100.0 * share_before, "%", None);
    out.row("path 2's share of the window after the change", None, 100.0 * share_after, "%", None);
    for (p, name) in ["path 1", "path 2"].iter().enumerate() {
        out.row(format!("{name} goodput before"), None, avg(&|t| t.mbps[0][p]), "Mbit/s", None);
        out.row(format!("{name} goodput after"), None, avg(&|t| t.mbps[1][p]), "Mbit/s", None);
    }
    out.row("time to move halfway (2 s averages)", None, response, "s", None);
    out.check(
        "before the change both paths carry the flow alike (path 2's share of the window 35-65%)",
        (0.35..=0.65).contains(&share_before),
    );
    out.check(
        "after it the window moves to the other path (path 2's share below half of what it was)",
        share_after < share_before / 2.0,
    );
    out.check(
        "path 1 carries more after the change and path 2 less",
        avg(&|t| t.mbps[1][0]) > avg(&|t| t.mbps[0][0]) && avg(&|t| t.mbps[1][1]) < avg(&|t| t.mbps[0][1]),
    );
    out.check("the window falls at once: halfway within 10 s", response <= 10.0);
    out.notes.push(format!(
        "two 10 Mbit/s links, 40 ms RTT, 1-BDP queues, one Reno flow on each; {JOINING} more Reno flows on path 2 from {change} s of {secs} s; LIA; \
         windows sampled every 100 ms; the survey's figure is a trace: its conclusions are checked"
    ));
    let series = vec![("LIA: path 2's share of the window".to_string(), traces[0].share.clone())];
    out.figure(
        "congestion-shift.svg",
        lines(
            "path 2's congestion raised: the window moves to path 1",
            "time (s)",
            "w2 / (w1 + w2)",
            &series,
            Some(1.0),
            false,
            (900, 400),
        ),
    )?;
    Ok(out)
}
